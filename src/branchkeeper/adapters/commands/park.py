"""``branchkeeper park``: mark a branch as waiting, with a reason (first document, section 5)."""

from __future__ import annotations

import argparse
import json
import sys

from branchkeeper.actions.park import ParkResult, clear, park
from branchkeeper.adapters.common import open_repository
from branchkeeper.errors import ExitCode, RefusedError, UsageError
from branchkeeper.git.repo import RepoFacts
from branchkeeper.model.config import Config


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "park",
        help="park a branch with a reason (exempts it from dormancy, not from the cap)",
        description=(
            "Write an empty commit with Parked-Reason and Parked-By trailers at the tip of NAME "
            "(no checkout needed), then push it as a fast-forward when the branch has a remote "
            "copy. A branch that exists only on the remote gets the marker on its remote tip, "
            "pushed (no local branch is made; --no-push is refused for it). The next commit on "
            "the branch, or --clear, ends the park. Undo with 'branchkeeper undo'."
        ),
    )
    p.add_argument("name", metavar="NAME", help="the branch, local or only on the remote (use -- "
                   "before a name starting with '-')")
    p.add_argument("--reason", help="why the branch waits (one line); required unless --clear")
    p.add_argument("--by", help="who parks it (default: git config user.name)")
    p.add_argument("--clear", action="store_true",
                   help="write the Unparked: commit instead (restarts the dormancy clock)")
    p.add_argument("--no-push", action="store_true", help="do not push the marker")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _refusal(name: str, facts: RepoFacts, config: Config) -> str | None:
    """Why ``name`` can never be parked: the default branch, an integration line, an exempt
    or protected name (they are not work; a marker pushed there lands on a shared line)."""
    from branchkeeper.analysis.refs import protected_role, read_refs, resolve_default_branch

    b = config.branches
    default = resolve_default_branch(b.default, read_refs(facts.root, b.remote))
    role = protected_role(name, b, default.name)
    return None if role is None else f"it is {role}"


def run(args: argparse.Namespace) -> int:
    if args.clear and args.reason:
        raise UsageError("--clear takes no --reason")
    if not args.clear and not args.reason:
        raise UsageError("park needs --reason TEXT (why the branch waits)")
    facts, loaded = open_repository(args)
    remote = loaded.config.branches.remote
    why = _refusal(args.name, facts, loaded.config)
    if why is not None:
        raise RefusedError(f"{args.name} cannot be parked: {why}; only work branches are")
    if args.clear:
        result = clear(facts, args.name, by=args.by, remote=remote, push=not args.no_push)
    else:
        result = park(facts, args.name, reason=args.reason, by=args.by, remote=remote,
                      push=not args.no_push)
    _print(result, cleared=args.clear, as_json=args.json, remote=remote)
    return int(ExitCode.OK) if result.pushed is not False else int(ExitCode.FINDINGS)


def _print(r: ParkResult, *, cleared: bool, as_json: bool, remote: str) -> None:
    if as_json:
        json.dump({"name": r.name, "action": "unpark" if cleared else "park", "old": r.old,
                   "new": r.new, "journal_id": r.op_id, "pushed": r.pushed,
                   "push_message": r.push_message, "restore": r.restore}, sys.stdout)
        sys.stdout.write("\n")
        return
    verb = "unparked" if cleared else "parked"
    where = f" on {remote} (it exists only there)" if r.remote_only else ""
    if not r.op_id:
        print(f"{r.name} is already unparked at {r.new[:10]}")
    elif r.remote_only and r.pushed is False:
        print(f"{r.name}: the push to {remote} failed, nothing changed: {r.push_message}")
    else:
        print(f"{verb} {r.name}{where}: {r.old[:10]} -> {r.new[:10]} (journal {r.op_id})")
    if r.pushed is True:
        print(f"pushed to {remote}")
    elif r.pushed is False and not r.remote_only:
        print(f"push to {remote} failed (the marker is local only): {r.push_message}")
    if r.op_id:
        print(f"undo: branchkeeper undo {r.op_id}")
