"""The hook's log, ``<common git dir>/branchkeeper/hook.log`` (one JSON line per problem,
rotated to ``hook.log.1`` past :data:`LOG_MAX_BYTES`), and the common dir lookup the hook
uses (cached per process). Never raises.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1024 * 1024
_COMMON: dict[str, Path | None] = {}


def common_dir(where: Path) -> Path | None:
    """The common git dir of the repository at ``where``, or None outside a repository."""
    key = str(where)
    if key not in _COMMON:
        from branchkeeper.errors import NotARepositoryError
        from branchkeeper.state.statedir import find_common_dir

        try:
            _COMMON[key] = find_common_dir(where)
        except (NotARepositoryError, OSError):
            _COMMON[key] = None
    return _COMMON[key]


def log(where: Path | None, event: str, message: str) -> None:
    """Append one JSON line to the repository's hook log; never raises."""
    try:
        common = common_dir(where) if where is not None else None
        if common is None:
            return
        directory = common / "branchkeeper"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = directory / LOG_NAME
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, directory / (LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        import json
        import time

        line = json.dumps({"time": int(time.time()), "pid": os.getpid(), "event": event,
                           "message": message[:4000]}, ensure_ascii=True)
        with open(path, "a", encoding="ascii") as handle:
            handle.write(line + "\n")
    except Exception:  # logging must never turn into a failure of its own
        pass


def describe(exc: BaseException) -> str:
    """``Type: first line at file:line`` of where ``exc`` was raised (for the log)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}" if tb else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}{where}"
