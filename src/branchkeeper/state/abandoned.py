"""Branches recorded "abandoned at stop" (first document, section 6; issue 6, section 1;
issue 14).

Three causes append branches to ``<common git dir>/branchkeeper/abandoned-at-stop.json``:
:data:`STOP` (the Stop guard gave way after ``stop_guard.max_blocks`` blocks in a row),
:data:`STOP_FAILURE` (the agent died on an API error, the host's StopFailure event) and
:data:`SESSION_END` (the session ended with unfinished work on branches it touched). The next
SessionStart reports them and clears the file (:func:`take_abandoned`). The file is small,
written atomically under an exclusive lock, and a corrupt file reads as empty; an entry written
before causes existed reads as :data:`STOP`.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchkeeper import clock

FILE_NAME = "abandoned-at-stop.json"
#: The Stop guard gave way.
STOP = "stop"
#: The agent stopped on an API error (rate limit, overload, ...).
STOP_FAILURE = "stop_failure"
#: The session ended with unfinished work.
SESSION_END = "session_end"
CAUSES = (STOP, STOP_FAILURE, SESSION_END)
#: Entries kept at most (the oldest are dropped first).
MAX_ENTRIES = 200


@dataclass(frozen=True, slots=True)
class Abandoned:
    """One branch a session stopped on: ``branch``, the ``thread`` (``<session>:<agent>``),
    ``checks`` that still failed, ``time`` (unix seconds) and the ``cause`` (one of
    :data:`CAUSES`)."""

    branch: str
    thread: str
    checks: tuple[str, ...]
    time: int
    cause: str = STOP

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "thread": self.thread, "checks": list(self.checks),
                "time": self.time, "cause": self.cause}


def _path(common_dir: Path) -> Path:
    return common_dir / "branchkeeper" / FILE_NAME


def _load(path: Path) -> list[Abandoned]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out: list[Abandoned] = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict):
            continue
        branch, thread, checks, stamp = (item.get(k) for k in ("branch", "thread", "checks",
                                                               "time"))
        cause = item.get("cause", STOP)
        if isinstance(branch, str) and isinstance(thread, str) and isinstance(stamp, int) \
                and isinstance(checks, list) and all(isinstance(c, str) for c in checks):
            out.append(Abandoned(branch, thread, tuple(checks), stamp,
                                 cause if cause in CAUSES else STOP))
    return out


def _locked_update(common_dir: Path, change: Any) -> list[Abandoned]:
    path = _path(common_dir)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = _load(path)
        after: list[Abandoned] = change(before)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([a.to_json() for a in after[-MAX_ENTRIES:]]), encoding="utf-8")
        os.replace(tmp, path)
        return before
    finally:
        os.close(fd)


def record_abandoned(common_dir: Path, branches: Sequence[tuple[str, Sequence[str]]], *,
                     thread: str, now: float | None = None, cause: str = STOP) -> None:
    """Append ``(branch, failed checks)`` pairs for ``thread`` with ``cause``. Raises OSError
    when the state directory cannot be written, ValueError for an unknown cause."""
    if cause not in CAUSES:
        raise ValueError(f"unknown cause {cause!r}")
    stamp = int(clock.now() if now is None else now)
    new = [Abandoned(b, thread, tuple(c), stamp, cause) for b, c in branches]
    _locked_update(common_dir, lambda old: [*old, *new])


def take_abandoned(common_dir: Path) -> list[Abandoned]:
    """Every recorded entry, oldest first, and clear the file (reported once). Missing file ->
    ``[]`` with nothing written."""
    if not _path(common_dir).exists():
        return []
    return _locked_update(common_dir, lambda old: [])
