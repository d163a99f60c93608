"""Shared pieces of the command modules: locating the repository and its configuration."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.git.repo import RepoFacts, repo_facts

if TYPE_CHECKING:
    from rich.console import Console

    from branchkeeper.model.config import Config
    from branchkeeper.model.config_file import LoadedConfig
    from branchkeeper.model.progress import Meter


def start_dir(args: argparse.Namespace) -> Path:
    """The directory a command runs in: the global ``-C DIR`` option, else the cwd."""
    directory = getattr(args, "directory", None)
    return Path(directory) if directory else Path(os.getcwd())


def open_repository(args: argparse.Namespace) -> tuple[RepoFacts, LoadedConfig]:
    """Repository facts and the loaded ``.branchkeeper.yaml`` for the command's directory.

    Raises :class:`NotARepositoryError`, :class:`GitTooOldError` or :class:`ConfigError`.
    """
    from branchkeeper.model.config_file import load_config

    facts = repo_facts(start_dir(args))
    return facts, load_config(facts.main_root)


def open_repository_cached(args: argparse.Namespace) -> tuple[RepoFacts, Config]:
    """Like :func:`open_repository`, with the configuration from the validated cache when it
    is current (no pydantic import): for read-only commands on the hot side."""
    from branchkeeper.state.config_cache import load_config_cached

    facts = repo_facts(start_dir(args))
    return facts, load_config_cached(facts.main_root, facts.common_dir)


def stdout_console() -> Console:
    """A console for reports: colour only on a terminal, never wrapped mid-command in pipes.
    rich is imported here, not at module load: ``--json`` output never needs it."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(highlight=False)
    # Piped or captured (logs, scripts): never cut or fold a value to fit 80 columns; tables
    # take the width their content needs.
    return Console(highlight=False, width=1000)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def add_ignored_options(p: argparse.ArgumentParser, *, archive: bool = True) -> None:
    """``--ignored {strict,lenient}``, its old spelling ``--strict-ignored`` (hidden), and (with
    ``archive``) ``--archive-ignored``: the ignored-content options every removal command
    takes."""
    p.add_argument("--ignored", choices=("strict", "lenient"), default=None,
                   help="which ignored files may be lost with a worktree: strict (default: only "
                        "branches.cleanup_after_merge.regenerable) or lenient (all but "
                        "worktrees.protected_ignored); default: worktrees.ignored")
    p.add_argument("--strict-ignored", dest="ignored", action="store_const", const="strict",
                   help=argparse.SUPPRESS)
    if archive:
        p.add_argument("--archive-ignored", action="store_true",
                       help="archive the ignored files that would be lost (a verified tar under "
                            "the git dir; branchkeeper undo puts them back), then remove")


def add_stats_option(p: argparse.ArgumentParser) -> None:
    """``--stats``: the pass's timing line on stderr when it ends (see :func:`watched`)."""
    p.add_argument("--stats", action="store_true",
                   help="print one timing line on stderr at the end: each phase's seconds, "
                        "git processes, branches, cache hits")


@contextlib.contextmanager
def watched(args: argparse.Namespace, *, as_json: bool = False, bar: bool = True
            ) -> Iterator[Meter]:
    """Run the block as a watched pass: a progress bar on stderr when it is a terminal and the
    output is not ``--json`` (once the process has run ``render.progress.DELAY_S``;
    ``bar=False``: a command that draws its own), and with ``--stats`` one
    timing line on stderr at the end (also after ``--json``, also when the block fails).
    The block calls the meter's ``finish`` before it prints its report (the bar goes). Nothing
    is imported from rich unless the bar is drawn."""
    import time

    from branchkeeper.git.run import processes_started
    from branchkeeper.model.progress import Meter, metering

    sink = None
    if bar and sys.stderr.isatty() and not as_json:
        from branchkeeper.clock import STARTED
        from branchkeeper.render.progress import DelayedBar, delay_s

        sink = DelayedBar(stderr_console(), delay_s(), started=STARTED)
    meter = Meter(sink)
    started, git_at = time.monotonic(), processes_started()
    try:
        with metering(meter):
            yield meter
    finally:
        if getattr(args, "stats", False):
            from branchkeeper.render.progress import stats_line

            sys.stderr.write(stats_line(meter, seconds=time.monotonic() - started,
                                        git=processes_started() - git_at) + "\n")
            sys.stderr.flush()
