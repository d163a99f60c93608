"""``branchkeeper demo [--keep DIR] [--json]``: build the demo repository and sweep it.

Issue 2, section 7: the embedded default. The repository is built in a temporary directory
(deleted afterwards) or in ``--keep DIR`` (which must be empty or not exist), then the ordinary
sweep runs on its clone. The exit status is the sweep's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from branchkeeper.adapters.demo_repository import DEMO_BRANCHES, build_demo_repository
from branchkeeper.errors import BranchkeeperError


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "demo",
        help="build a sample repository full of agent branches and sweep it",
        description=(
            "Build a repository that looks like what a team of coding agents leaves behind "
            "after a few weeks (a bare remote plus a clone with merged, squash-merged, "
            "rebase-merged, superseded, parked, dormant and unpushed branches and worktrees), "
            "then run `branchkeeper sweep` on it."
        ),
    )
    parser.add_argument(
        "--keep", metavar="DIR", type=Path, default=None,
        help="build in DIR (empty or new) and keep it, instead of a temporary directory",
    )
    parser.add_argument("--json", action="store_true", help="print the sweep as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the demo, print where it is, sweep it; return the sweep's exit code."""
    from branchkeeper.adapters.commands.sweep import sweep_main

    return demo_main(keep=args.keep, as_json=bool(args.json), sweep=sweep_main)


def _check_keep_dir(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise BranchkeeperError(f"--keep {path}: exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        raise BranchkeeperError(
            f"--keep {path}: directory is not empty; give a new or empty directory"
        )


def demo_main(*, keep: Path | None, as_json: bool, sweep: Any) -> int:
    """Build the demo repository (in ``keep`` or a temporary directory) and run ``sweep`` on it.

    ``sweep`` is called as ``sweep(work_tree, as_json=as_json)`` and returns the exit code. The
    one announcing line goes to stdout, or to stderr with ``as_json`` so stdout stays one JSON
    document. Raises :class:`BranchkeeperError` when ``keep`` exists and is not an empty
    directory. A temporary directory is removed afterwards, whatever happens.
    """
    if keep is not None:
        _check_keep_dir(keep)
        root = keep.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="branchkeeper-demo-"))
    try:
        work = build_demo_repository(root)
        where = f"kept in {root}" if keep is not None else "deleted afterwards (--keep DIR keeps it)"
        print(
            f"branchkeeper demo: {len(DEMO_BRANCHES)} branches left by a team of coding agents "
            "(beside main and the release/1.x line), "
            f"clone at {work} with its bare remote origin.git beside it, {where}; sweeping it:",
            file=sys.stderr if as_json else sys.stdout,
            flush=True,
        )
        return int(sweep(work, as_json=as_json))
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
