"""One-line logs of the hooks under ``<common git dir>/branchkeeper/`` (``hook.log`` for the
agent hooks, ``git-hook.log`` for git's ``reference-transaction`` hook).

A hook that fails open (lets the tool call or the ref update through) still says why in its
log: one JSON object per line (``time``, ``pid``, ``event``, ``message``), the file rotated to
``<name>.1`` past :data:`LOG_MAX_BYTES`. Writing a log line never raises.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

#: Size past which a log is rotated to ``<name>.1``, in bytes.
LOG_MAX_BYTES = 1024 * 1024


def append_log(common_dir: Path, name: str, event: str, message: str) -> None:
    """Append one line to ``<common_dir>/branchkeeper/<name>``; never raises."""
    try:
        directory = common_dir / "branchkeeper"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = directory / name
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, directory / (name + ".1"))
        except FileNotFoundError:
            pass
        line = json.dumps({"time": int(time.time()), "pid": os.getpid(), "event": event,
                           "message": message[:4000]}, ensure_ascii=True)
        with open(path, "a", encoding="ascii") as handle:
            handle.write(line + "\n")
    except Exception:  # logging must never turn into a failure of its own
        pass
