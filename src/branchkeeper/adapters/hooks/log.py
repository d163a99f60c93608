"""The hook's log, ``<common git dir>/branchkeeper/hook.log`` (one JSON line per problem,
rotated to ``hook.log.1`` past 1 MiB by :mod:`branchkeeper.state.hooklog`, which git's hook
writes its own log with too), and the common dir lookup the hook uses (cached per process).
Never raises.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

LOG_NAME = "hook.log"
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
        from branchkeeper.state.hooklog import append_log

        append_log(common, LOG_NAME, event, message)
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
