"""``branchkeeper sweep``: the inventory of every branch, lost work first (issue 2, section 6)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from branchkeeper.adapters.common import (
    open_repository,
    open_repository_cached,
    stderr_console,
    stdout_console,
)
from branchkeeper.analysis.inventory import Inventory, build_inventory
from branchkeeper.errors import ExitCode, UsageError
from branchkeeper.git.repo import repo_facts
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
            "live, with where unmerged work lives. Read-only unless --clean."
        ),
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (docs/sweep-json.md)")
    p.add_argument("--all", dest="show_all", action="store_true",
                   help="also list exempt branches, the default branch and integration lines")
    p.add_argument("--fail-on-risk", action="store_true",
                   help="exit 1 when any branch is at LOST WORK RISK or at the dormancy block stage")
    p.add_argument("--budget-ms", type=int, default=None, metavar="MS",
                   help="stop proof work after MS milliseconds; the rest is 'unknown' (reason "
                        "budget) and the next run continues from the cache (default: unbounded)")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the cache")
    p.add_argument("--clean", action="store_true",
                   help="delete every merged, merged-into-line and patch-equivalent branch "
                        "behind one verified bundle and one journal operation; remove a proven "
                        "branch's linked worktree only when nothing in it would be lost "
                        "(docs/cleanup.md). Exit 0 done, 5 raced, 4 error")
    p.add_argument("--dry-run", action="store_true",
                   help="with --clean: list what would go and why, and what is kept and why")
    p.set_defaults(func=run)


def exit_code(inv: Inventory, *, fail_on_risk: bool) -> int:
    """0, or 1 with ``fail_on_risk`` when a branch is at LOST WORK RISK or the block stage."""
    if fail_on_risk and any(r.lost_work_risk or r.stage is Stage.BLOCK for r in inv.records):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def _inventory(facts_dir: Path | None, args: argparse.Namespace | None, *, budget_ms: int | None,
               use_cache: bool) -> Inventory:
    if args is not None:
        facts, config = open_repository_cached(args)
    else:
        assert facts_dir is not None
        facts = repo_facts(facts_dir)
        config = load_config_cached(facts.main_root, facts.common_dir)
    err = stderr_console()
    if err.is_terminal:
        with err.status("classifying branches...", spinner="dots"):
            return build_inventory(facts, config, budget_ms=budget_ms, use_cache=use_cache)
    return build_inventory(facts, config, budget_ms=budget_ms, use_cache=use_cache)


def emit(inv: Inventory, *, as_json: bool, show_all: bool) -> None:
    if as_json:
        # Indented for a person at a terminal; compact (the C encoder, fast) for scripts.
        indent = 2 if sys.stdout.isatty() else None
        sys.stdout.write(json.dumps(inventory_json(inv, show_all=True), indent=indent,
                                    ensure_ascii=False) + "\n")
    else:
        render_text(inv, stdout_console(), show_all=show_all)


def run_clean(args: argparse.Namespace) -> int:
    """``sweep --clean [--dry-run] [--json]`` (issue 3, section 4)."""
    from branchkeeper.actions.cleanup_run import run_sweep_clean
    from branchkeeper.adapters.commands.delete import emit as emit_cleanup
    from branchkeeper.adapters.commands.delete import exit_code as cleanup_exit

    facts, loaded = open_repository(args)
    outcome = run_sweep_clean(facts, loaded.config, dry=args.dry_run)
    code = cleanup_exit(outcome)
    emit_cleanup(outcome, as_json=args.json, code=code)
    return code


def run(args: argparse.Namespace) -> int:
    if getattr(args, "clean", False):
        return run_clean(args)
    if getattr(args, "dry_run", False):
        raise UsageError("--dry-run is used with --clean")
    inv = _inventory(None, args, budget_ms=args.budget_ms, use_cache=not args.no_cache)
    code = exit_code(inv, fail_on_risk=args.fail_on_risk)
    args.exit_code_hint = code  # known before printing (see cli: a closed pipe keeps it)
    emit(inv, as_json=args.json, show_all=args.show_all)
    return code


def sweep_main(repo: Path, *, as_json: bool = False, show_all: bool = False,
               fail_on_risk: bool = False) -> int:
    """Sweep the repository at ``repo`` and print the report; return the exit code."""
    inv = _inventory(repo, None, budget_ms=None, use_cache=True)
    emit(inv, as_json=as_json, show_all=show_all)
    return exit_code(inv, fail_on_risk=fail_on_risk)
