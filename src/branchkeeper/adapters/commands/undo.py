"""``branchkeeper undo [ID]``: restore what a journaled operation deleted (issue 3, section 6)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from branchkeeper.actions.undo import UndoItem, UndoReport, undo_operation
from branchkeeper.actions.undo_checkouts import UndoOutcome, WorktreeUndo
from branchkeeper.adapters.commands.worktree_shared import show
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
                    "5 conflicts, 4 errors or nothing to undo (an empty journal, every "
                    "operation undone already, or the named one), so "
                    "'while branchkeeper undo; do :; done' ends.",
    )
    parser.add_argument("id", nargs="?", default=None, metavar="ID",
                        help="operation id from 'branchkeeper log' (default: the newest one "
                             "not undone yet)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be restored")
    parser.add_argument("--json", action="store_true", help="print a JSON record")
    parser.set_defaults(func=run)


_WORKTREE_WORDS = {
    UndoOutcome.RESTORED: ("added back", "would add"),
    UndoOutcome.PRESENT: ("present", "present"),
    UndoOutcome.CONFLICT: ("conflict", "conflict"),
    UndoOutcome.FAILED: ("failed", "would fail"),
    UndoOutcome.SKIPPED: ("skipped", "skipped"),
}

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
        "passed_undone": [o.id for o in report.passed],
        "none_left": report.already_undone is not None and bool(report.passed),
        "status": None if report.already_undone else report.status,
        "items": [
            {"ref": i.ref, "old": i.old, "remote": i.remote, "outcome": i.outcome.value,
             "reason": i.reason, "command": i.command}
            for i in report.items
        ],
        "worktrees": [
            {"path": w.path, "branch": w.branch, "commit": w.commit, "outcome": w.outcome.value,
             "reason": w.reason, "command": w.command}
            for w in report.worktrees
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
    if report.already_undone is not None and report.passed:
        return (f"nothing to undo: every operation in the journal is undone already (the "
                f"newest, {op.id} ({op.op}), at {report.already_undone.time}); see: "
                "branchkeeper log\n")
    if report.already_undone is not None:
        return (f"operation {op.id} ({op.op}) was already undone at "
                f"{report.already_undone.time}; nothing to do\n")
    lines = [f"{'dry run: ' if report.dry_run else ''}undo {op.id} ({op.op}, "
             f"{len(op.items)} ref{'s' if len(op.items) != 1 else ''})"]
    if report.passed:
        lines.append("  the newest operation not undone yet; undone already: "
                     + ", ".join(f"{o.id} ({o.op})" for o in report.passed))
    skipped = [i for i in report.items if i.outcome is UndoOutcome.SKIPPED]
    grouped = len(skipped) > MAX_SKIPPED_LINES
    for item in report.items:
        if grouped and item.outcome is UndoOutcome.SKIPPED:
            continue
        word = _WORDS[item.outcome][1 if report.dry_run else 0]
        where = f"{item.remote} {item.ref}" if item.remote else item.ref
        text = f"  {word:<13} {where} at {item.old.short}"
        if item.reason:
            text += f": {item.reason}"
        lines.append(text)
        if item.command:
            lines.append(f"      {item.command}")
    if grouped:
        lines.append(_skipped_line(skipped))
    lines += _worktree_lines(report.worktrees, dry_run=report.dry_run)
    for a in report.archives:
        word = _WORDS[a.outcome][1 if report.dry_run else 0]
        lines.append(f"  {word:<13} ignored files into {a.archive.worktree}: {a.reason}")
        if a.recreated:
            lines.append(f"      (re-created the checkout: {a.archive.checkout_command()})")
        if a.command:
            lines.append(f"      {a.command}")
    return "\n".join(lines) + "\n"


#: More refs than this that undo skipped (the operation never deleted them: an interrupted run)
#: are one line, with how many of them each outcome had; ``--json`` lists each.
MAX_SKIPPED_LINES = 5


def _skipped_line(skipped: list[UndoItem]) -> str:
    """``  skipped       N refs the operation did not delete (K were kept); --json lists
    each``: one line for the refs undo skipped, counted by their recorded outcome."""
    counts: dict[str, int] = {}
    for item in skipped:
        word = item.reason.removeprefix("was ")
        counts[word] = counts.get(word, 0) + 1
    told = ", ".join(f"{k} {'was' if k == 1 else 'were'} {word}"
                     for word, k in sorted(counts.items()))
    return (f"  {'skipped':<13} {len(skipped)} refs the operation did not delete ({told}); "
            "--json lists each")


def _worktree_lines(worktrees: tuple[WorktreeUndo, ...], *, dry_run: bool) -> list[str]:
    lines = []
    for w in worktrees:
        word = _WORKTREE_WORDS[w.outcome][1 if dry_run else 0]
        on = w.branch if w.branch is not None else f"detached {(w.commit or '')[:10]}"
        text = f"  {word:<13} worktree {show(w.path)} ({show(on)})"
        if w.outcome is not UndoOutcome.RESTORED:
            text += f": {w.reason}"
        lines.append(text)
        if w.command:
            lines.append(f"      {w.command}")
    return lines


def exit_code(report: UndoReport) -> int:
    """0 restored, 4 when an item failed or there was nothing to undo (the operation was
    undone already: the one named, or every one), 5 when one conflicted. Nothing to undo is
    the empty journal's code (:class:`~branchkeeper.errors.BranchkeeperError`), so a loop of
    bare ``undo`` ends."""
    if report.already_undone is not None:
        return int(ExitCode.ERROR)
    outcomes = {i.outcome for i in report.items} | {a.outcome for a in report.archives} | \
        {w.outcome for w in report.worktrees}
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
