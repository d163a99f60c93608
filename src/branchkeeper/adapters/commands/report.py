"""``branchkeeper report``: many repositories, worst first (issue 4, section 5).

Read-only. Exit codes: 0 the report printed and every repository was read; 4 no repository to
report on, an unreadable ``repos.json``, or the report printed with at least one repository that
could not be read (its row comes first: its work is not ruled out; one line on stderr says so).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from branchkeeper.adapters.commands.argtypes import positive_int
from branchkeeper.adapters.common import (
    add_stats_option,
    stderr_console,
    stdout_console,
    watched,
)
from branchkeeper.analysis.report import (
    SCAN_DEPTH,
    RepoReport,
    config_path,
    discover,
    init_config,
    read_config,
    run_all,
)
from branchkeeper.errors import BranchkeeperError, ExitCode, UsageError


def register(sub: Any) -> None:
    """Add ``report``."""
    p = sub.add_parser(
        "report", help="many repositories ranked worst first (read-only)",
        description="Rank repositories worst first: lost-work risks, dirty or unproven "
                    "worktrees, branches at the dormancy block stage, then the rest. "
                    "Repositories come from --repo, ROOT directories (scanned 3 levels deep) "
                    "or $XDG_CONFIG_HOME/branchkeeper/repos.json.")
    p.add_argument("roots", nargs="*", metavar="ROOT", help="directories to scan for repositories")
    p.add_argument("--repo", action="append", default=[], metavar="DIR",
                   help="a repository (repeatable)")
    p.add_argument("--max-repos", type=positive_int, default=None, metavar="N",
                   help="analyse only the first N repositories found (before any git work)")
    p.add_argument("--count-only", action="store_true",
                   help="fast tier: ref and worktree counts only")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--init-config", action="store_true",
                   help="create repos.json if it does not exist (never overwrites)")
    add_stats_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the ranked report; see the module docstring for exit codes."""
    cfg = config_path()
    if args.init_config:
        try:
            created = init_config(cfg)
        except OSError as exc:
            raise BranchkeeperError(f"could not write {cfg}: {exc}") from None
        print(f"created {cfg}" if created else f"{cfg} already exists; left unchanged")
        return int(ExitCode.OK)
    repos = [Path(r) for r in args.repo]
    roots = [Path(r) for r in args.roots]
    if not repos and not roots:
        if not cfg.is_file():
            raise BranchkeeperError(f"no repositories: pass --repo DIR or ROOT, or list them in "
                                    f"{cfg} (branchkeeper report --init-config creates it)")
        repos, roots = read_config(cfg)
    if args.max_repos is not None and args.max_repos < 1:
        raise UsageError("--max-repos must be at least 1")
    def empty(root: Path) -> None:
        what = "not a directory" if not root.is_dir() else f"none within {SCAN_DEPTH} levels"
        stderr_console().print(f"note: no repository under {root} ({what}); skipped",
                               markup=False, highlight=False, soft_wrap=True)

    paths = discover(repos, roots, max_repos=args.max_repos, empty=empty)
    if not paths:
        raise BranchkeeperError("no repositories found")
    with watched(args, bar=False):  # its own bar counts repositories
        rows = _run(paths, count_only=args.count_only)
        if args.json:
            json.dump({"count_only": args.count_only,
                       "repositories": [r.to_json() for r in rows]},
                      sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        else:
            _table(rows, count_only=args.count_only)
    broken = sum(1 for r in rows if r.error is not None)
    if broken:
        stderr_console().print(
            f"error: {broken} of {len(rows)} repositories could not be read; their work is not "
            f"ruled out (listed first)", markup=False, highlight=False, soft_wrap=True)
        return int(ExitCode.ERROR)
    return int(ExitCode.OK)


def _run(paths: list[Path], *, count_only: bool) -> list[RepoReport]:
    err = stderr_console()
    if not err.is_terminal:
        return run_all(paths, count_only=count_only)
    from rich.progress import Progress

    with Progress(console=err, transient=True) as progress:
        task = progress.add_task("repositories", total=len(paths))
        return run_all(paths, count_only=count_only,
                       progress=lambda _row: progress.advance(task))


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def _table(rows: list[RepoReport], *, count_only: bool) -> None:
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    cols = (["#", "repository", "branches", "remote", "worktrees", "locked", "prunable", "why"]
            if count_only else
            ["#", "repository", "lost", "dirty wt", "unproven wt", "block", "merged",
             "superseded", "dormant", "why"])
    for col in cols:
        table.add_column(col, overflow="fold")
    for i, r in enumerate(rows, start=1):
        why = f"error: {r.error}" if r.error else "; ".join(r.why)
        if count_only:
            cells = [_n(r.branches), _n(r.remote_branches), _n(r.worktrees), _n(r.locked),
                     _n(r.prunable)]
        else:
            cells = [_n(r.lost_work), _n(r.dirty_worktrees), _n(r.unproven_worktrees),
                     _n(r.block_stage), _n(r.merged_not_deleted), _n(r.superseded),
                     _n(r.dormant)]
        table.add_row(str(i), r.path, *cells, why)
    stdout_console().print(table)
