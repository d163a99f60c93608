"""The ``reference-transaction`` hook's hand-off from ``prepared`` to ``committed`` (issue 15).

Git gives no old value for some deletions and rewinds (``git branch -D``, ``git branch -f``,
``update-ref -d REF``), and once the transaction is committed the ref is gone. So the hook reads
each branch's tip in ``prepared``, while git still holds it locked, and leaves it here for the
``committed`` run of the same git process (the hook's parent), which keeps what was lost:

    <state dir>/git-hook/pending-<git pid>.json   {"pid": N, "entries": {REF: {"old", "new"}}}

The shim (docs/git-hook.md) tests only whether this file exists, without a process, so a
``committed`` run with nothing pending costs no Python start. A file whose git process has died
(killed between the two states) is stale: :func:`stale_files` lists those for recovery.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import NamedTuple

from branchkeeper.git.types import Oid
from branchkeeper.process import pid_alive
from branchkeeper.state.statedir import state_dir

DIRNAME = "git-hook"
_PREFIX = "pending-"
_SUFFIX = ".json"


class Pending(NamedTuple):
    """A branch whose tip was read in ``prepared``: ``old`` its tip then, ``new`` the value the
    transaction gives it (``None``: deleted)."""

    ref: str
    old: Oid
    new: Oid | None


def pending_dir(common_dir: Path) -> Path:
    """``<state dir>/git-hook/`` (created on demand)."""
    path = state_dir(common_dir) / DIRNAME
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def pending_path(common_dir: Path, pid: int) -> Path:
    """The hand-off file of git process ``pid`` (the name the shim tests)."""
    return pending_dir(common_dir) / f"{_PREFIX}{pid}{_SUFFIX}"


def load(path: Path) -> dict[str, Pending]:
    """The entries of a hand-off file, by ref; ``{}`` when absent or unreadable."""
    try:
        data = json.loads(path.read_text("utf-8"))
        entries = data["entries"]
        return {str(ref): Pending(str(ref), Oid.parse(str(e["old"])),
                                  Oid.parse(str(e["new"])) if e.get("new") else None)
                for ref, e in dict(entries).items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save(path: Path, pid: int, entries: dict[str, Pending]) -> None:
    """Write ``entries`` (atomically), or remove the file when there are none. Raises
    ``OSError`` when it cannot be written."""
    if not entries:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    data = {"pid": pid, "entries": {ref: {"old": e.old, "new": e.new}
                                    for ref, e in sorted(entries.items())}}
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, sort_keys=True))
        os.replace(tmp, path)
    except BaseException:  # a full disk, Ctrl-C: no temp file is left behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stale_files(common_dir: Path, *, current: int) -> list[tuple[int, Path]]:
    """Hand-off files whose git process no longer runs (never ``current``'s), as (pid, path)."""
    directory = common_dir / "branchkeeper" / DIRNAME
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    out: list[tuple[int, Path]] = []
    for name in names:
        if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
            continue
        try:
            pid = int(name[len(_PREFIX):-len(_SUFFIX)])
        except ValueError:
            continue
        if pid != current and not pid_alive(pid):
            out.append((pid, directory / name))
    return sorted(out)
