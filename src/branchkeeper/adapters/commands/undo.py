"""``branchkeeper undo [ID]``: restore what a journaled operation deleted (issue 3, section 6)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from branchkeeper.actions.undo import UndoOutcome, UndoReport, undo_operation
from branchkeeper.errors import ExitCode
from branchkeeper.state.statedir import common_dir_of


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``undo`` to the command parser."""
    parser = subparsers.add_parser(
        "undo", help="restore the refs the last (or a named) operation deleted",
        description="Recreate the local refs an operation deleted, at their recorded tips, from "
                    "the object store or the operation's bundle, and put back the ignored files "
                    "it archived (re-creating their worktree first). A ref that exists again "
                    "at another tip, or a file that exists again, is never overwritten. Remote "
                    "branches are not pushed: the push command is printed. Exit 0 restored, "
                    "5 conflicts, 4 errors.",
    )
    parser.add_argument("id", nargs="?", default=None, metavar="ID",
                        help="operation id from 'branchkeeper log' (default: the newest)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be restored")
    parser.add_argument("--json", action="store_true", help="print a JSON record")
    parser.set_defaults(func=run)


_WORDS = {
    UndoOutcome.RESTORED: ("restored", "would restore"),
    UndoOutcome.PRESENT: ("present", "present"),
    UndoOutcome.CONFLICT: ("conflict", "conflict"),
    UndoOutcome.FAILED: ("failed", "would fail"),
    UndoOutcome.PUSH: ("push", "push"),
    UndoOutcome.SKIPPED: ("skipped", "skipped"),
}


def report_json(report: UndoReport) -> dict[str, Any]:
    """The JSON record ``undo --json`` prints."""
    op = report.operation
    return {
        "id": op.id,
        "op": op.op,
        "dry_run": report.dry_run,
        "already_undone": report.already_undone.time if report.already_undone else None,
        "status": None if report.already_undone else report.status,
        "items": [
            {"ref": i.ref, "old": i.old, "remote": i.remote, "outcome": i.outcome.value,
             "reason": i.reason, "command": i.command,
             "worktree_not_restored": i.worktree_not_restored or None}
            for i in report.items
        ],
        "archives": [
            {"archive": str(a.archive.path), "worktree": a.archive.worktree,
             "outcome": a.outcome.value, "restored": list(a.restored), "kept": list(a.kept),
             "recreated": a.recreated, "reason": a.reason, "command": a.command}
            for a in report.archives
        ],
    }


def render_text(report: UndoReport) -> str:
    """Human-readable lines: a header, one line per item, commands indented below."""
    op = report.operation
    if report.already_undone is not None:
        return (f"operation {op.id} ({op.op}) was already undone at "
                f"{report.already_undone.time}; nothing to do\n")
    lines = [f"{'dry run: ' if report.dry_run else ''}undo {op.id} ({op.op}, "
             f"{len(op.items)} ref{'s' if len(op.items) != 1 else ''})"]
    for item in report.items:
        word = _WORDS[item.outcome][1 if report.dry_run else 0]
        where = f"{item.remote} {item.ref}" if item.remote else item.ref
        text = f"  {word:<13} {where} at {item.old.short}"
        if item.reason:
            text += f": {item.reason}"
        lines.append(text)
        if item.command:
            lines.append(f"      {item.command}")
    for a in report.archives:
        word = _WORDS[a.outcome][1 if report.dry_run else 0]
        lines.append(f"  {word:<13} ignored files into {a.archive.worktree}: {a.reason}")
        if a.recreated:
            lines.append(f"      (re-created the checkout: {a.archive.checkout_command()})")
        if a.command:
            lines.append(f"      {a.command}")
    return "\n".join(lines) + "\n"


def exit_code(report: UndoReport) -> int:
    """0 restored (or nothing to do), 4 when an item failed, 5 when one conflicted."""
    outcomes = {i.outcome for i in report.items} | {a.outcome for a in report.archives}
    if UndoOutcome.FAILED in outcomes:
        return int(ExitCode.ERROR)
    if UndoOutcome.CONFLICT in outcomes:
        return int(ExitCode.REFUSED)
    return int(ExitCode.OK)


def run(args: argparse.Namespace) -> int:
    """Undo the named or newest operation and print what happened."""
    repo = Path(args.directory or ".").resolve()
    report = undo_operation(repo, common_dir_of(repo), args.id, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report_json(report), indent=2))
    else:
        sys.stdout.write(render_text(report))
    return exit_code(report)
