"""``branchkeeper worktree list`` (issue 4, section 1; issue 11, section 5): every worktree with
its contents, its idle time and BOTH dispositions, read from the one worktree record
(:mod:`branchkeeper.analysis.worktree_record`): ``retire`` (may the checkout go, its branch
kept?) and ``reap`` (may the reaper remove it: also needs the branch's work proven preserved).
``worktree retire`` and ``worktree reap`` live in their own modules.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from branchkeeper.adapters.commands.worktree_shared import emit_notes, show, verdict_json
from branchkeeper.adapters.common import add_ignored_options, stdout_console
from branchkeeper.analysis.pr_evidence import GhProvider, NoProvider, PrEvidence
from branchkeeper.analysis.worktree_model import nested_entries
from branchkeeper.analysis.worktree_record import (
    PrAsker,
    WorktreeRecord,
    WorktreeSettings,
    survey_worktrees,
)
from branchkeeper.errors import ExitCode
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config_file import load_config


def register(subparsers: Any) -> None:
    """Add ``worktree list``, ``worktree retire`` and ``worktree reap``."""
    from branchkeeper.adapters.commands.worktree_reap import register_reap
    from branchkeeper.adapters.commands.worktree_retire import register_retire

    parser = subparsers.add_parser(
        "worktree", help="list, retire and reap worktrees",
        description="List worktrees with what each holds and what retire and reap would do; "
                    "retire one finished checkout, or reap every one proven safe to remove.")
    sub = parser.add_subparsers(dest="worktree_command", metavar="SUBCOMMAND", required=True)
    lst = sub.add_parser(
        "list", help="every worktree with its contents and both dispositions",
        description="Every worktree: branch and its state, dirty and ignored files, how long it "
                    "has been idle, holds, and what `worktree retire` and `worktree reap` would "
                    "do with it (each with its reason). Read-only; PR evidence from gh, as the "
                    "reaper asks it.")
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.add_argument("--no-gh", action="store_true", help="do not ask gh (degraded mode)")
    add_ignored_options(lst, archive=False)
    lst.set_defaults(func=run_list)
    register_retire(sub)
    register_reap(sub)


def _where(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "directory", None) or os.getcwd())


def _branch_state(r: WorktreeRecord) -> dict[str, Any] | None:
    rec = r.branch_record
    if rec is None or rec.local_tip is None:
        return None
    return {"state": rec.state.value,
            "containment": rec.containment.value if rec.containment else None,
            "containing_ref": rec.containing_ref,
            "proof": ({"kind": rec.proof.kind.value, "base": rec.proof.base}
                      if rec.proof else None),
            "ahead": rec.ahead, "reason": rec.reason}


def record_json(r: WorktreeRecord) -> dict[str, Any]:
    """One worktree as ``worktree list --json`` prints it (docs/worktrees.md)."""
    wt = r.worktree
    st, ig = r.status, r.inputs.base.ignored
    idle, added = r.idle_hours, r.added_hours
    return {
        "path": str(wt.path), "branch": r.branch, "head": str(wt.head) if wt.head else None,
        "detached": wt.detached, "main": wt.is_main, "bare": wt.bare,
        "locked": wt.locked, "lock_reason": wt.lock_reason or None,
        "prunable": wt.prunable, "prunable_reason": wt.prunable_reason or None,
        "dirty": None if st is None else {"tracked": len(st.tracked),
                                          "untracked": len(st.untracked)},
        "ignored": None if st is None or ig is None else {
            "count": len(st.ignored), "kept": [b.path for b in ig.blocking]},
        "nested": [str(path) for kind, path in nested_entries(r.inputs.base)
                   if kind != "unscanned"],
        "last_activity": r.inputs.activity,
        "idle_hours": None if idle is None else round(idle, 2),
        "added_hours": None if added is None else round(added, 2),
        "activity_capped": r.inputs.activity_capped,
        "hold": r.hold.to_json() if r.hold is not None else None,
        "retire": verdict_json(r.retire), "reap": verdict_json(r.reap),
        "branch_state": _branch_state(r),
    }


def hours_text(hours: float | None) -> str:
    """``45m``, ``7h``, ``3d``; ``-`` when unknown."""
    if hours is None:
        return "-"
    if hours < 1:
        return f"{int(hours * 60)}m"
    if hours < 48:
        return f"{hours:.0f}h"
    return f"{hours / 24:.0f}d"


def _provider(args: argparse.Namespace, root: Path) -> PrEvidence:
    if getattr(args, "no_gh", False):
        return NoProvider("--no-gh: PR evidence disabled")
    return GhProvider(root)


def run_list(args: argparse.Namespace) -> int:
    """``worktree list [--json]``: every worktree record."""
    facts = repo_facts(_where(args))
    config = load_config(facts.main_root).config
    survey = survey_worktrees(facts, config, settings=WorktreeSettings(polarity=args.ignored),
                              asker=PrAsker(_provider(args, facts.root)))
    emit_notes()
    records = [record_json(r) for r in survey.records]
    if args.json:
        json.dump({"pr_evidence": survey.pr_note, "notes": survey.notes, "worktrees": records},
                  sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return int(ExitCode.OK)
    _table(records, survey.pr_note, survey.notes)
    return int(ExitCode.OK)


def _table(records: list[dict[str, Any]], pr_note: str, notes: list[str]) -> None:
    from rich.table import Table
    from rich.text import Text

    console = stdout_console()
    console.print(Text(pr_note))
    for note in notes:
        console.print(Text(f"note: {show(note)}"))
    table = Table(show_header=True, header_style="bold")
    for col in ("path", "branch (state)", "dirty", "ignored kept", "idle", "hold"):
        table.add_column(col)
    # a disposition word must never be cut: it is what a reader (or a grep) looks for
    for col in ("retire", "reap"):
        table.add_column(col, min_width=len("SKIP_UNREFERENCED_COMMIT:"))
    for r in records:
        branch = r["branch"] or (f"(detached {r['head'][:10]})" if r["head"] else "(bare)")
        if r["locked"]:
            branch += f" [locked{': ' + r['lock_reason'] if r['lock_reason'] else ''}]"
        bs = r["branch_state"]
        if bs:  # the inventory's state, and where unmerged work lives
            branch += f" ({bs['state']}{', ' + bs['containment'] if bs['containment'] else ''})"
        d = r["dirty"]
        dirty = "-" if d is None else f"{d['tracked']}M {d['untracked']}?"
        ign = "-" if r["ignored"] is None else (", ".join(r["ignored"]["kept"]) or "none")
        hold = ""
        if r["hold"]:
            hold = ("auto: " if r["hold"]["auto"] else "") + r["hold"]["reason"]
        cells = [f"{v['disposition']}: {show(v['reason'])}" if v else "-"
                 for v in (r["retire"], r["reap"])]
        table.add_row(show(r["path"]), show(branch), dirty, show(ign),
                      hours_text(r["idle_hours"]), show(hold), *cells)
    console.print(table)
