"""An exclusive, process-safe lock per repository and purpose (issue 3, section 5).

``fcntl.flock`` on ``<state dir>/locks/<name>.lock``: the kernel releases it when the holder
exits, even on a crash, so a stale lock file never blocks anyone. The holder writes its pid into
the file so a refused caller can name it. Two cleanups started at once therefore serialise (the
second waits up to ``wait_s`` seconds, then gives up with :class:`LockBusyError`) and never
interleave their ref updates or journal writes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from branchkeeper.errors import BranchkeeperError
from branchkeeper.state.statedir import locks_dir

#: The lock every command that changes refs or worktrees takes (delete, sweep --clean, prune,
#: park, undo), so two of them never act on one repository at once.
MUTATION_LOCK = "mutate"

_NAME = re.compile(r"\A[a-z0-9][a-z0-9-]{0,63}\Z")
_POLL_S = 0.05


class LockBusyError(BranchkeeperError):
    """Another process holds the lock and did not release it within the wait."""

    def __init__(self, name: str, pid: int | None) -> None:
        self.name = name
        self.pid = pid
        who = f" (pid {pid})" if pid is not None else ""
        super().__init__(
            f"another branchkeeper {name} is running in this repository{who}; "
            "try again when it finishes"
        )


def _holder_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


@contextmanager
def repo_lock(common_dir: Path, name: str, *, wait_s: float) -> Iterator[Path]:
    """Hold the exclusive lock ``name`` of the repository at ``common_dir`` for the block.

    ``name`` is a short lower-case word (``[a-z0-9-]``, at most 64 characters); ``wait_s`` is how
    long to wait for a holder to finish, in seconds (0 = try once). Yields the lock file's path.
    Raises :class:`LockBusyError` (naming the holder's pid when known) after ``wait_s`` seconds,
    ``ValueError`` for a malformed name. The lock is released when the block exits, however it
    exits. Not re-entrant: taking the same lock twice in one process blocks on itself.
    """
    if not _NAME.match(name):
        raise ValueError(f"bad lock name: {name!r}")
    path = locks_dir(common_dir) / f"{name}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + max(wait_s, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    raise LockBusyError(name, _holder_pid(fd)) from None
                time.sleep(_POLL_S)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
