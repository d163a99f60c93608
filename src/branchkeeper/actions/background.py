"""Start branchkeeper detached (issue 18): the background ``worktree reap`` of ``prune`` and
the background ``prune`` of SessionStart (docs/cleanup.md, "The session-start routine").

The child runs ``python -m branchkeeper -C ROOT ARGS`` with the same interpreter, in a session
(and so a process group) of its own, with no stdin, its stdout and stderr appended to a log
under the common dir. It writes its own header and end line there
(:mod:`branchkeeper.state.routine`: the ``--log-run`` option of the command it runs), so a
reader can wait for the end line instead of guessing how long it takes. Whatever removes
anything takes the same cleanup lock as every other removal, in the child, on fresh state.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from branchkeeper.state.routine import open_log

#: Set in a child started here (a background run never starts another of the same kind).
CHILD_ENV = "BRANCHKEEPER_BACKGROUND"


def start_detached(root: Path, common_dir: Path, args: list[str], *, log: str) -> int:
    """Start ``branchkeeper -C root ARGS`` detached, appending to the log ``log``; its pid.
    Raises ``OSError`` when the log cannot be opened or the process cannot be started."""
    return spawn_detached(root, common_dir, args, log=log).pid


def spawn_detached(root: Path, common_dir: Path, args: list[str], *, log: str
                   ) -> subprocess.Popen[bytes]:
    """:func:`start_detached`, returning the child (a caller may wait for it a while; the
    child outlives this process when it does not). Raises ``OSError`` likewise."""
    fd = open_log(common_dir, log)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "branchkeeper", "-C", str(root), *args],
            stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, cwd=str(root), close_fds=True,
            start_new_session=True, env={**os.environ, CHILD_ENV: log})
    finally:
        os.close(fd)
