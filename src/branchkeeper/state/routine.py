"""What the session-start routine keeps under ``<common dir>/branchkeeper/`` (issue 18; second
document, "Session-start prune"; docs/cleanup.md).

- ``worktree-reap.log`` (and ``prune.log``): what the background runs printed, appended, each
  run opened by a header line and closed by an end line (the completion marker)::

      === worktree reap: 2026-12-02T03:15:00Z pid 4242 args: worktree reap --min-age-hours 3
      ...the run's own output...
      === end pid 4242: exit 0

  Rotated to ``<name>.1`` past :data:`LOG_MAX_BYTES` when a run starts.
- ``last-prune.json``: when the last prune ran and on which branch of which checkout
  (``{"time": unix seconds, "branch": NAME or null, "worktree": PATH or null}``); the due rule
  reads it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import NamedTuple

from branchkeeper.state.jsonfile import read_json, write_json_atomic
from branchkeeper.state.statedir import state_dir

REAP_LOG = "worktree-reap.log"
PRUNE_LOG = "prune.log"
LAST_PRUNE = "last-prune.json"
#: Size past which a log is rotated to ``<name>.1`` when a run starts, in bytes.
LOG_MAX_BYTES = 1024 * 1024
HEADER = "=== "
END = "=== end pid "


def log_path(common_dir: Path, name: str) -> Path:
    """``<state dir>/<name>`` (the directory is created)."""
    return state_dir(common_dir) / name


def open_log(common_dir: Path, name: str) -> int:
    """The log ``name`` opened for appending (an fd the caller closes), rotated first when it
    is past :data:`LOG_MAX_BYTES`. Raises ``OSError``."""
    path = log_path(common_dir, name)
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(name + ".1"))
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def header_line(what: str, args: list[str], *, now: float) -> str:
    """A run's header: what, UTC time, this process's pid, the arguments."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    return f"{HEADER}{what}: {stamp} pid {os.getpid()} args: {' '.join(args)}"


def end_line(code: int) -> str:
    """A run's last line (what a waiting reader looks for)."""
    return f"{END}{os.getpid()}: exit {code}"


class LastPrune(NamedTuple):
    """The last prune: ``time`` (unix seconds), the ``branch`` checked out where it ran
    (``None``: detached or unknown) and that ``worktree``."""

    time: float
    branch: str | None
    worktree: str | None


def write_last_prune(common_dir: Path, record: LastPrune) -> None:
    """Record a prune (atomically; a write that fails is ignored: the prune is then due
    again sooner, which is harmless)."""
    write_json_atomic(log_path(common_dir, LAST_PRUNE), record._asdict())


def read_last_prune(common_dir: Path) -> LastPrune | None:
    """The last prune recorded, ``None`` when there is none or the file is unreadable."""
    path = common_dir / "branchkeeper" / LAST_PRUNE
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("time"), int | float):
        return None
    branch, worktree = data.get("branch"), data.get("worktree")
    return LastPrune(float(data["time"]), branch if isinstance(branch, str) else None,
                     worktree if isinstance(worktree, str) else None)
