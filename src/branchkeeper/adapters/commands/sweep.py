"""``branchkeeper sweep``: the inventory of every branch, lost work first (issue 2, section 6)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from branchkeeper.adapters.commands.argtypes import positive_int
from branchkeeper.adapters.common import (
    add_ignored_options,
    add_stats_option,
    open_repository,
    open_repository_cached,
    stdout_console,
    watched,
)
from branchkeeper.analysis.inventory import Inventory, build_inventory, record_sweep
from branchkeeper.analysis.kept import KeptTip, read_kept
from branchkeeper.analysis.lost_work import LocalWork, LostWork, survey_local_work, worktree_risks
from branchkeeper.analysis.worktree_record import UNINSPECTED_NOTE, WorktreeRecord
from branchkeeper.errors import ExitCode, UsageError
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import GitError
from branchkeeper.model.progress import Meter
from branchkeeper.model.records import Stage
from branchkeeper.render.sweep import inventory_json, render_text
from branchkeeper.state.config_cache import load_config_cached


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sweep",
        help="classify every branch; LOST WORK RISK first",
        description=(
            "Inventory every local and remote-tracking branch: merged, merged into an "
            "integration line, patch-equivalent (rebase or squash merged), parked, dormant or "
            "live, with where unmerged work lives; first, every piece of work that exists only "
            "in this clone (LOST WORK RISK: unpushed branches, detached commits, dirty "
            "worktrees, stashes, refs of ours, kept ignored files) with the command that "
            "secures it. Read-only unless --clean."
        ),
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (docs/sweep-json.md)")
    p.add_argument("--all", dest="show_all", action="store_true",
                   help="also list exempt branches, the default branch and integration lines")
    p.add_argument("--fail-on-risk", action="store_true",
                   help="exit 1 when any work is at LOST WORK RISK (a branch, a worktree, a stash) "
                        "or a branch is at the dormancy block stage, or when --budget-ms left a "
                        "worktree unread")
    p.add_argument("--budget-ms", type=positive_int, default=None, metavar="MS",
                   help="stop proof work after MS milliseconds; the rest is 'unknown' (reason "
                        "budget) and the next run continues from the cache (default: unbounded)")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the cache")
    p.add_argument("--finish-pass", action="store_true",
                   help="run the pass to the end in rounds, saving the cache after each, and "
                        "print one line per round instead of the report (what SessionStart "
                        "starts in the background in a large repository; one at a time)")
    p.add_argument("--clean", action="store_true",
                   help="delete every merged, merged-into-line and patch-equivalent branch "
                        "behind one verified bundle and one journal operation; remove a proven "
                        "branch's linked worktree only when nothing in it would be lost "
                        "(docs/cleanup.md). Exit 0 done, 5 raced, 4 error")
    p.add_argument("--dry-run", action="store_true",
                   help="with --clean: list what would go and why, and what is kept and why")
    add_stats_option(p)
    add_ignored_options(p)
    p.set_defaults(func=run)


def exit_code(inv: Inventory, *, fail_on_risk: bool, lost: Sequence[LostWork] = (),
              notes: Sequence[str] = ()) -> int:
    """0, or 1 with ``fail_on_risk`` when any work is at LOST WORK RISK, a branch is at the
    block stage, or the time budget left a worktree unread (its work is not ruled out: the
    survey's ``notes`` say so)."""
    unread = any(n.endswith(UNINSPECTED_NOTE) for n in notes)
    if fail_on_risk and (lost or unread or any(r.lost_work_risk or r.stage is Stage.BLOCK
                                               for r in inv.records)):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def lost_work_of(inv: Inventory, *, budget_ms: int | None, started: float,
                 record: bool = True) -> LocalWork:
    """Every piece of local-only work and the worktree records it was read from, the worktrees
    read inside what is left of ``budget_ms`` (at least a quarter of it) since ``started``
    (``time.monotonic``); unbounded without one. With ``record``, the last-sweep file is
    written once the worktrees are read (with what they hold: the creation denials print what
    this sweep prints), or without them when reading them fails."""
    deadline = None
    if budget_ms is not None:
        deadline = max(started + budget_ms / 1000.0, time.monotonic() + budget_ms / 4000.0)
    worktrees: Sequence[WorktreeRecord] = ()
    risks = None
    try:
        work = survey_local_work(inv, deadline=deadline)
        worktrees, risks = work.worktrees, worktree_risks(work.lost)
        return work
    finally:
        if record:
            record_sweep(inv, worktrees, risks)


def _inventory(facts_dir: Path | None, args: argparse.Namespace | None, *, budget_ms: int | None,
               use_cache: bool) -> Inventory:
    if args is not None:
        facts, config = open_repository_cached(args)
    else:
        assert facts_dir is not None
        facts = repo_facts(facts_dir)
        config = load_config_cached(facts.main_root, facts.common_dir)
    # the last-sweep file is written after the worktrees are read (lost_work_of)
    return build_inventory(facts, config, budget_ms=budget_ms, use_cache=use_cache, record=False,
                           reuse=True)


def _kept(inv: Inventory) -> list[KeptTip]:
    """The git hook's kept tips (one for-each-ref; a rev-list only when there are some)."""
    try:
        return read_kept(inv.facts.root)
    except GitError:
        return []


def emit(inv: Inventory, *, as_json: bool, show_all: bool, lost: LocalWork | None = None,
         meter: Meter | None = None) -> None:
    """Print the report. With ``meter`` (a watched text run) rendering is its last phase,
    "rendering the report": the text is rendered while the bar shows, then the bar goes
    (``meter.finish()``) and the text is written."""
    items, notes = (lost.lost, lost.notes) if lost is not None else (None, [])
    worktrees = lost.worktrees if lost is not None else []
    kept = _kept(inv)
    if as_json:
        if meter is not None:
            meter.finish()
        # Indented for a person at a terminal; compact (the C encoder, fast) for scripts.
        indent = 2 if sys.stdout.isatty() else None
        doc = inventory_json(inv, show_all=True, lost=items, lost_notes=notes, kept=kept,
                             worktrees=worktrees)
        sys.stdout.write(json.dumps(doc, indent=indent, ensure_ascii=False) + "\n")
        return
    console = stdout_console()
    if meter is None:
        render_text(inv, console, show_all=show_all, lost=items, lost_notes=notes, kept=kept,
                    worktrees=worktrees)
        return
    meter.phase("rendering the report", len(inv.records))
    with console.capture() as captured:
        render_text(inv, console, show_all=show_all, lost=items, lost_notes=notes, kept=kept,
                    worktrees=worktrees)
    meter.complete()
    meter.finish()
    sys.stdout.write(captured.get())


def run_clean(args: argparse.Namespace) -> int:
    """``sweep --clean [--dry-run] [--json]`` (issue 3, section 4)."""
    from branchkeeper.actions.cleanup_run import run_sweep_clean
    from branchkeeper.adapters.commands.delete import emit as emit_cleanup
    from branchkeeper.adapters.commands.delete import exit_code as cleanup_exit

    facts, loaded = open_repository(args)
    with watched(args, as_json=args.json) as meter:
        outcome = run_sweep_clean(facts, loaded.config, dry=args.dry_run, polarity=args.ignored,
                                  archive_ignored=args.archive_ignored)
        meter.finish()
        code = cleanup_exit(outcome)
        emit_cleanup(outcome, as_json=args.json, code=code)
    return code


def run_finish_pass(args: argparse.Namespace) -> int:
    """``sweep --finish-pass``: the background pass of SessionStart (actions.sweep_pass), one
    line per round (a detached run's header and end line are the CLI's)."""
    from branchkeeper.actions.sweep_pass import finish_pass

    if args.clean or args.json or args.no_cache or args.budget_ms is not None:
        raise UsageError("--finish-pass takes none of --clean, --json, --no-cache, --budget-ms")
    facts, loaded = open_repository(args)
    finish_pass(facts, loaded.config, say=lambda line: print(line, flush=True))
    return int(ExitCode.OK)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "finish_pass", False):
        return run_finish_pass(args)
    if getattr(args, "clean", False):
        return run_clean(args)
    if getattr(args, "dry_run", False):
        raise UsageError("--dry-run is used with --clean")
    started = time.monotonic()
    with watched(args, as_json=args.json) as meter:
        inv = _inventory(None, args, budget_ms=args.budget_ms, use_cache=not args.no_cache)
        meter.phase("reading local-only work", len(inv.worktrees), unit="worktrees")
        lost = lost_work_of(inv, budget_ms=args.budget_ms, started=started,
                            record=not args.no_cache)
        code = exit_code(inv, fail_on_risk=args.fail_on_risk, lost=lost.lost, notes=lost.notes)
        args.exit_code_hint = code  # known before printing (see cli: a closed pipe keeps it)
        emit(inv, as_json=args.json, show_all=args.show_all, lost=lost, meter=meter)
    return code


def sweep_main(repo: Path, *, as_json: bool = False, show_all: bool = False,
               fail_on_risk: bool = False) -> int:
    """Sweep the repository at ``repo`` and print the report; return the exit code."""
    inv = _inventory(repo, None, budget_ms=None, use_cache=True)
    lost = lost_work_of(inv, budget_ms=None, started=time.monotonic())
    emit(inv, as_json=as_json, show_all=show_all, lost=lost)
    return exit_code(inv, fail_on_risk=fail_on_risk, lost=lost.lost, notes=lost.notes)
