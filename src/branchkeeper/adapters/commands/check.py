"""``branchkeeper check``: what the command guard would decide (issue 5 section 4).

Prints the decision for a shell command as if an agent in DIR were about to run it, exactly as
the PreToolUse hook decides it. Exit 0 allow, 1 warn, 2 deny. See docs/guard.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from branchkeeper.errors import BranchkeeperError


def _epilog() -> str:
    """The exit statuses and every rule id (from the rules themselves), wrapped for a terminal."""
    import textwrap

    from branchkeeper.policy.command import rule_ids

    rules = textwrap.fill("rules: " + ", ".join(rule_ids()) + " (docs/guard.md).", width=79,
                          break_on_hyphens=False)
    return ("exit status: 0 allow, 1 warn (allowed, with a message), 2 deny, 3 ask (a person\n"
            "must agree), 4 error.\n" + rules)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "check",
        help="show what the command guard would decide for a shell command",
        description=(
            "Decide COMMAND as if a coding agent in DIR were about to run it: creation routes "
            "(WIP cap, dormancy block, duplicate stem), lossless force removal, deletions of "
            "files or repositories that hold work at risk, discards, force pushes, remote "
            "deletes and evacuate-then-destroy. Prints the decision; nothing is run."),
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cwd", metavar="DIR", default=None,
                   help="the directory the command would run in (default: -C, else the "
                        "current directory)")
    p.add_argument("--json", action="store_true", help="print the decision as one JSON object")
    p.add_argument("--creation", metavar="NAME", default=None,
                   help="judge the WorktreeCreate route for the worktree NAME (the name must be "
                        "usable; the branch is worktree-NAME) instead of a command ('' for the "
                        "Agent route, whose name is not known yet)")
    p.add_argument("command", nargs="*", metavar="COMMAND",
                   help="the shell command (after --, as one quoted argument or several words)")
    p.set_defaults(func=run)


def _warn_unread_config(cwd: str) -> None:
    """A ``.branchkeeper.yaml`` that does not validate is not read: the guard decides with the
    default settings (the strict side, as the hook does). Say so on stderr (no git process:
    the repository is located from the filesystem; the config load is the guard's, cached)."""
    from branchkeeper.analysis.guard_facts import load_guard_config
    from branchkeeper.git.locate import locate

    repo = locate(cwd)
    if repo is None:
        return
    _config, note = load_guard_config(repo)
    if note:
        reason = note.removeprefix("branchkeeper: .branchkeeper.yaml ignored (")
        reason = reason.removesuffix("); defaults used.")
        print(f"branchkeeper: warning: {repo.main_root}/.branchkeeper.yaml was not read "
              f"({reason}); decided with the default settings instead (see: branchkeeper "
              "config check)", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Decide and print; return 0 allow, 1 warn, 2 deny, 3 ask (a person decides)."""
    from branchkeeper.policy.command import decide_command
    from branchkeeper.policy.creation import decide_creation, decide_worktree_creation

    base = args.cwd or getattr(args, "directory", None) or os.getcwd()
    cwd = os.path.abspath(base)
    if not os.path.isdir(cwd):
        raise BranchkeeperError(f"{cwd}: no such directory")
    words = [w for w in args.command]
    if words[:1] == ["--"]:
        words = words[1:]
    if args.creation is not None:
        if words:
            raise BranchkeeperError("give either --creation NAME or a command, not both")
        decision = (decide_worktree_creation(args.creation, cwd=cwd) if args.creation else
                    decide_creation(None, cwd=cwd, route="check"))
    else:
        if not words:
            raise BranchkeeperError('nothing to check: branchkeeper check -- "<command>"')
        decision = decide_command(" ".join(words), cwd=cwd)
    _warn_unread_config(cwd)
    # Known before printing: a reader that closes the pipe early still gets the verdict.
    args.exit_code_hint = decision.verdict.exit_code
    if args.json:
        json.dump(decision.to_json(), sys.stdout)
        sys.stdout.write("\n")
    else:
        print(f"{decision.verdict.value}{': ' + decision.rule_id if decision.rule_id else ''}")
        if decision.text:
            print(decision.text)
    return decision.verdict.exit_code
