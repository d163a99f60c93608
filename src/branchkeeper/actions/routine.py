"""The session-start routine (issue 18; second document, "Session-start prune" and "Ad-hoc
cleanup obligation + the automatic reaper"; docs/cleanup.md, docs/worktrees.md).

- :func:`start_background_reap`: ``prune`` starts ``worktree reap`` detached after ``git
  worktree prune``, with ``--min-age-hours`` pinned at the call (every unattended caller
  supplies it: ``worktrees.reap_min_age_hours``, default 3). It waits for the prune's cleanup
  lock, re-checks every gate on fresh state and appends to ``worktree-reap.log``.
- :func:`prune_due`: the prune is due when none was recorded, the last one is older than
  ``session_start.prune_due_minutes`` (30), or the checkout's branch changed since.
- :func:`start_background_prune`: ``session_start.prune: background`` starts ``prune``
  detached instead of suggesting it (it fetches: a network call the hook itself never makes).
- :func:`nudge_line`: the passive nudge past ``worktrees.nudge_threshold`` linked worktrees.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.actions.background import start_detached
from branchkeeper.state.routine import PRUNE_LOG, REAP_LOG, LastPrune, log_path, write_last_prune

if TYPE_CHECKING:  # the hook reads a cached view of the config: no pydantic import
    from branchkeeper.model.config import Config

#: Set to 1 to keep ``prune`` from starting the background reap.
REAP_DISABLE_ENV = "BRANCHKEEPER_REAP_DISABLE"
#: How long the background reap waits for the prune's lock, in seconds.
REAP_LOCK_WAIT_S = 900.0
#: The command the nudges name.
REAP_DRY_RUN = "branchkeeper worktree reap --dry-run --explain"


def reap_args(config: Config) -> list[str]:
    """The background reap's arguments, ``--min-age-hours`` pinned."""
    hours = config.worktrees.reap_min_age_hours
    return ["worktree", "reap", "--min-age-hours", f"{hours:g}", "--lock-wait",
            f"{REAP_LOCK_WAIT_S:g}"]


def reap_off(config: Config, *, no_reap: bool, env: Mapping[str, str]) -> str:
    """Why the background reap is not started (``""``: it is)."""
    if no_reap:
        return "--no-reap"
    if env.get(REAP_DISABLE_ENV, "") not in ("", "0"):
        return f"{REAP_DISABLE_ENV}={env[REAP_DISABLE_ENV]}"
    if not config.worktrees.reap_from_prune:
        return "worktrees.reap_from_prune is false"
    return ""


def start_background_reap(root: Path, common_dir: Path, config: Config, *, no_reap: bool,
                          env: Mapping[str, str] | None = None) -> str:
    """Start the background reap unless switched off; the note ``prune`` shows. Never
    raises: a reap that cannot be started is a note, and the prune goes on."""
    why = reap_off(config, no_reap=no_reap, env=os.environ if env is None else env)
    if why:
        return f"worktree reap not started ({why})"
    args = reap_args(config)
    try:
        pid = start_detached(root, common_dir, args, log=REAP_LOG)
    except OSError as exc:
        return f"worktree reap could not be started ({exc})"
    return (f"worktree reap started in the background (pid {pid}, "
            f"--min-age-hours {config.worktrees.reap_min_age_hours:g}); "
            f"it waits for this prune, then logs to {log_path(common_dir, REAP_LOG)}")


def prune_due(last: LastPrune | None, *, now: float, branch: str | None,
              worktree: str | None, minutes: int) -> str:
    """Why the prune is due (``""``: it is not): none recorded, older than ``minutes``, or the
    branch of the checkout ``worktree`` changed since the prune recorded there."""
    if last is None:
        return "no prune recorded"
    age = now - last.time
    if age >= minutes * 60:
        return f"the last prune ran {int(age // 60)} minutes ago"
    if branch is not None and (last.worktree is None or last.worktree == worktree) \
            and last.branch != branch:
        return f"the branch changed since the last prune ({last.branch or 'none'} -> {branch})"
    return ""


def record_prune(common_dir: Path, *, now: float, branch: str | None,
                 worktree: str | None) -> None:
    """Record a prune's time and branch (what :func:`prune_due` reads next)."""
    write_last_prune(common_dir, LastPrune(now, branch, worktree))


def start_background_prune(root: Path, common_dir: Path, *, now: float, branch: str | None,
                           worktree: str | None) -> str:
    """Start ``prune`` detached (its log: ``prune.log``) and record it, so the next
    SessionStart does not start another; the context line. Never raises."""
    try:
        pid = start_detached(root, common_dir, ["prune"], log=PRUNE_LOG)
    except OSError as exc:
        return f"branchkeeper: the session-start prune could not be started ({exc}); run: " \
               "branchkeeper prune"
    record_prune(common_dir, now=now, branch=branch, worktree=worktree)
    return (f"branchkeeper: started `branchkeeper prune` in the background (pid {pid}; log "
            f"{log_path(common_dir, PRUNE_LOG)})")


def nudge_line(linked: int, threshold: int) -> str:
    """The passive nudge past ``threshold`` linked worktrees (``""`` at or below it)."""
    if linked <= threshold:
        return ""
    return (f"branchkeeper: {linked} linked worktrees (more than {threshold}); see which can "
            f"go: {REAP_DRY_RUN}")
