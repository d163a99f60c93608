"""``branchkeeper worktree retire PATH`` and its hold verbs (issue 4, section 2; issue 12,
sections 1, 2 and 6): the command-line face of :mod:`branchkeeper.actions.retire`.

Exit codes: 0 the checkout was removed (or a hold verb done); 3 an automatic hold was recorded
instead (the blockers are printed, with the command that resolves ignored files when that is
all that stands in the way); 5 refused: this worktree is never retired (the main worktree, the
checkout of the default branch, an integration line, an exempt or protected branch), or its
directory is gone (an entry that holds nothing says ``branchkeeper prune`` drops it); 4 error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from branchkeeper.actions.retire import RetireResult, find_worktree, retire_worktree
from branchkeeper.adapters.commands.worktree_shared import emit_notes, show, verdict_json
from branchkeeper.adapters.common import add_ignored_options
from branchkeeper.analysis.suggest import PRUNE_COMMAND
from branchkeeper.errors import BranchkeeperError, ExitCode, UsageError
from branchkeeper.git.repo import RepoFacts, repo_facts
from branchkeeper.model.config_file import load_config
from branchkeeper.state import holds as hold_store


def register_retire(sub: Any) -> None:
    """Add ``worktree retire`` to the ``worktree`` subparsers."""
    ret = sub.add_parser(
        "retire", help="remove a finished worktree's checkout, or hold it",
        description="Remove the checkout at PATH when it is unlocked, clean, holds no nested "
                    "checkout and no ignored file that is not regenerable, and every commit it "
                    "pins keeps a ref; the branch is kept. Otherwise an automatic hold records "
                    "why (exit 3). The checkout of the default branch, an integration line or "
                    "an exempt branch is never retired (exit 5); nor is an entry whose directory "
                    "is gone (exit 5: when it holds nothing, branchkeeper prune drops it). "
                    "Never forces, never deletes a "
                    "branch. With --dry-run: say what it would do, change nothing, same exit "
                    "code.")
    ret.add_argument("path", nargs="?", metavar="PATH")
    ret.add_argument("--pin", action="store_true",
                     help="pin a detached HEAD under refs/branchkeeper/pinned/ before judging, "
                          "so one that no ref holds may go (a detached HEAD is always pinned "
                          "when its checkout is removed)")
    ret.add_argument("--dry-run", action="store_true",
                     help="say what retire would do (remove, hold or refuse); change nothing")
    ret.add_argument("--json", action="store_true", help="print JSON")
    add_ignored_options(ret)
    ret.add_argument("--hold", action="store_true", help="record an explicit hold on PATH")
    ret.add_argument("--reason", help="why it is held (with --hold)")
    ret.add_argument("--revisit", help="the event at which to revisit it (with --hold)")
    ret.add_argument("--owner", help="who owns the hold (default: $USER or git user.name)")
    ret.add_argument("--release", action="store_true", help="end the hold on PATH")
    ret.add_argument("--list-holds", action="store_true", help="list open holds")
    ret.set_defaults(func=run_retire)


def _where(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "directory", None) or os.getcwd())


def _out(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(text)


def run_retire(args: argparse.Namespace) -> int:
    """``worktree retire``: remove a checkout (exit 0), record a hold (exit 3), refuse (exit 5),
    or a hold verb."""
    base = _where(args)
    facts = repo_facts(base)
    if args.list_holds:
        return _list_holds(args, facts)
    if not args.path:
        raise UsageError("worktree retire needs PATH (or --list-holds)")
    if args.dry_run and (args.hold or args.release):
        raise UsageError("--dry-run applies to a retire, not to --hold or --release")
    if args.release:
        return _release(args, facts, base)
    if args.hold and (not args.reason or not args.revisit):
        raise UsageError("--hold needs --reason TEXT and --revisit EVENT")
    wt, _worktrees = find_worktree(facts, args.path, base)
    owner = args.owner or hold_store.default_owner(facts.root)
    if args.hold:
        hold = hold_store.record_hold(facts.common_dir, str(wt.path), reason=args.reason,
                                      revisit=args.revisit, owner=owner, auto=False)
        emit_notes()
        _out(args, {"held": hold.to_json()},
             f"hold recorded on {show(wt.path)}: {hold.reason} (revisit: {hold.revisit}, "
             f"owner {hold.owner})")
        return int(ExitCode.OK)
    config = load_config(facts.main_root).config
    result = retire_worktree(facts, config, wt, owner=owner, pin=args.pin,
                             polarity=args.ignored, archive_ignored=args.archive_ignored,
                             dry_run=args.dry_run)
    emit_notes()
    if result.removed:
        return _removed(args, result)
    return _kept(args, result)


def _removed(args: argparse.Namespace, r: RetireResult) -> int:
    wt = r.verdict.worktree
    branch = wt.branch.removeprefix("refs/heads/") if wt.branch else None
    data: dict[str, Any] = {
        "dry_run": r.dry_run, "removed": str(wt.path), "branch": branch,
        "head": str(wt.head) if wt.head else None, "kept": r.kept, "pinned": r.pinned,
        "salvaged": list(r.salvaged), "operation": r.op_id,
        "archive": r.archive.to_json() if r.archive else None, "restore": list(r.restore)}
    lines = ["dry run: nothing is changed"] if r.dry_run else []
    lines.append(f"{'would remove' if r.dry_run else 'removed'} worktree {show(wt.path)}")
    if branch and wt.head:
        lines.append(f"branch {branch} kept at {wt.head}")
    elif r.kept:
        lines.append(f"kept: {r.kept}")
    if r.pinned:
        lines.append(f"would pin as {r.pinned}" if r.dry_run else f"pinned as {r.pinned}")
    lines += [f"salvaged: {show(p)}" for p in r.salvaged]
    if r.dry_run:
        data.update(would_salvage=list(r.would_salvage), would_archive=list(r.would_archive))
        lines += [f"would salvage: {show(p)}" for p in r.would_salvage]
        if r.would_archive:
            lines.append(f"would archive {len(r.would_archive)} ignored file(s): "
                         + ", ".join(show(p) for p in r.would_archive))
    if r.archive is not None:
        lines.append(f"archived {len(r.archive.members)} ignored file(s): "
                     f"{show(r.archive.path)}")
    lines += [f"restore: {c}" for c in r.restore]
    if r.op_id:
        lines.append(f"undo: branchkeeper undo {r.op_id}")
    _out(args, data, "\n".join(lines))
    return int(ExitCode.OK)


def _kept(args: argparse.Namespace, r: RetireResult) -> int:
    wt = r.verdict.worktree
    hint = PRUNE_COMMAND if r.gone else _archive_hint(r)
    data = {"dry_run": r.dry_run, "held": r.hold.to_json() if r.hold else None,
            "refused": r.refused, "gone": r.gone, "disposition": r.verdict.disposition.value,
            "blockers": list(r.blockers), "triage": r.verdict.triage, "pinned": r.pinned,
            "hint": hint, "retire": verdict_json(r.verdict)}
    lines = ["dry run: nothing is changed"] if r.dry_run else []
    lines.append(f"{'would keep' if r.dry_run else 'kept'} worktree {show(wt.path)}: "
                 f"{r.verdict.disposition.value}")
    lines += [f"  blocker: {show(b)}" for b in r.blockers]
    if r.verdict.triage:
        lines.append(f"  triage: {r.verdict.triage}")
    if r.pinned:
        lines.append(f"  {'would pin' if r.dry_run else 'pinned'} as {r.pinned}")
    if r.gone:
        lines.append(f"nothing to retire: its directory is gone and the entry holds nothing; "
                     f"{hint} drops the entry (git worktree prune) and deletes its branch "
                     "when proven")
        _out(args, data, "\n".join(lines))
        return int(ExitCode.REFUSED)
    if hint:
        lines.append(f"  to keep those files and remove it: {hint}")
    if r.refused:
        lines.append("never retired; no hold recorded")
        _out(args, data, "\n".join(lines))
        return int(ExitCode.REFUSED)
    hold = r.hold
    assert hold is not None
    if r.dry_run:
        lines.append("would record an automatic hold: it says why the worktree stays and "
                     "ends when a later retire removes it")
    elif hold.auto:
        lines.append(f"recorded an automatic hold (owner {hold.owner}): it says why the "
                     "worktree stays and ends when a later retire removes it; see: "
                     "branchkeeper worktree retire --list-holds")
    else:
        release = shlex.join(["branchkeeper", "worktree", "retire", "--release", str(wt.path)])
        lines.append(f"held by {hold.owner} since {_when(hold.since)}; end it with: {release}")
    _out(args, data, "\n".join(lines))
    return int(ExitCode.HELD)


def _archive_hint(r: RetireResult) -> str | None:
    """``branchkeeper worktree retire --archive-ignored PATH`` when kept ignored files are all
    that stand in the way and an archive can hold them."""
    blockers = r.verdict.blockers
    if [g.name for g in blockers] != ["ignored_disposable"]:
        return None
    return shlex.join(["branchkeeper", "worktree", "retire", "--archive-ignored",
                       str(r.verdict.worktree.path)])


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _release(args: argparse.Namespace, facts: RepoFacts, base: Path) -> int:
    try:
        key = str(find_worktree(facts, args.path, base)[0].path)
    except BranchkeeperError:
        key = os.path.abspath(base / args.path)  # the worktree may be gone already
    hold = hold_store.release_hold(facts.common_dir, key)
    emit_notes()
    if hold is None:
        raise BranchkeeperError(f"no hold recorded for {show(args.path)}")
    _out(args, {"released": hold.to_json()}, f"hold released on {show(hold.path)}")
    return int(ExitCode.OK)


def _list_holds(args: argparse.Namespace, facts: RepoFacts) -> int:
    holds = hold_store.list_holds(facts.common_dir)
    emit_notes()
    if args.json:
        _out(args, {"holds": [h.to_json() for h in holds]}, "")
        return int(ExitCode.OK)
    if not holds:
        print("no open holds")
        return int(ExitCode.OK)
    for h in holds:
        kind = "auto" if h.auto else "explicit"
        print(f"{show(h.path)}\n  owner: {h.owner}  since: {_when(h.since)}  ({kind})\n"
              f"  reason: {show(h.reason)}\n  revisit: {show(h.revisit)}")
        for b in h.blockers:
            print(f"  blocker: {show(b)}")
    return int(ExitCode.OK)
