"""Holds: a recorded reason why a worktree stays, who owns it, and the event to revisit it at.

Second document, "Cleanup: isolation worktrees" / "feature worktrees": ``retire`` records a hold
(owner, reason, revisit event) when a gate blocks; ``--hold`` records one explicitly for what the
tool cannot see; ``--release`` ends it; ``--list-holds`` lists them.

Stored in ``<common dir>/branchkeeper/holds.json`` as ``{"version": 1, "holds": {path: {...}}}``,
keyed by the worktree's absolute path. Every change is read-modify-write under the ``holds`` lock
(``fcntl.flock``) and written atomically (temp file + ``os.replace``). A corrupt file is moved
aside to ``holds.json.corrupt-<unix time>``, never overwritten, and the caller is told.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from branchkeeper import clock
from branchkeeper.git.locate import STATE_DIRNAME
from branchkeeper.state.lock import repo_lock
from branchkeeper.state.statedir import state_dir

HOLDS_NAME = "holds.json"
_VERSION = 1
_LOCK_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class Hold:
    """One hold. ``since`` is unix seconds; ``auto`` is True when ``retire`` recorded it because a
    gate blocked, with ``blockers`` naming each blocking reason (one line each)."""

    path: str
    owner: str
    reason: str
    revisit: str
    since: float
    auto: bool = False
    blockers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``blockers`` as a list)."""
        data = asdict(self)
        data["blockers"] = list(self.blockers)
        return data


#: Warnings produced while reading (e.g. a corrupt file moved aside); read and cleared by callers.
_NOTES: list[str] = []


def take_notes() -> list[str]:
    """Return and clear the notes (one line each) the last operations produced."""
    notes = list(_NOTES)
    _NOTES.clear()
    return notes


def default_owner(cwd: Path | None = None) -> str:
    """``$USER``, else git's ``user.name``, else ``"unknown"``."""
    user = os.environ.get("USER", "").strip()
    if user:
        return user
    from branchkeeper.git.run import run_git

    try:
        res = run_git(["config", "user.name"], cwd=cwd or Path.cwd(), check=False, timeout=10)
    except Exception:  # an owner name is cosmetic; never fail a hold over it
        return "unknown"
    return res.text.strip() or "unknown"


def _key(path: Path | str) -> str:
    return os.path.abspath(os.fspath(path))


def _file(common_dir: Path) -> Path:
    return state_dir(common_dir) / HOLDS_NAME


def _parse(data: Any) -> dict[str, Hold]:
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        raise ValueError("not a holds file of version 1")
    holds = data.get("holds")
    if not isinstance(holds, dict):
        raise ValueError("'holds' is not a mapping")
    out: dict[str, Hold] = {}
    for key, rec in holds.items():
        if not isinstance(rec, dict):
            raise ValueError(f"hold for {key!r} is not a mapping")
        blockers = rec.get("blockers", [])
        fields = (rec.get("owner"), rec.get("reason"), rec.get("revisit"))
        if not all(isinstance(v, str) for v in fields) or not isinstance(
                rec.get("since"), (int, float)) or not isinstance(blockers, list):
            raise ValueError(f"hold for {key!r} has a field of the wrong type")
        out[key] = Hold(path=key, owner=rec["owner"], reason=rec["reason"],
                        revisit=rec["revisit"], since=float(rec["since"]),
                        auto=bool(rec.get("auto", False)),
                        blockers=tuple(str(b) for b in blockers))
    return out


def _read(common_dir: Path) -> dict[str, Hold]:
    path = _file(common_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        return _parse(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:
        aside = path.with_name(f"{HOLDS_NAME}.corrupt-{int(time.time())}")
        n = 0
        while aside.exists():
            n += 1
            aside = path.with_name(f"{HOLDS_NAME}.corrupt-{int(time.time())}-{n}")
        os.replace(path, aside)
        _NOTES.append(f"holds file {path} was unreadable ({exc}); moved aside to {aside}; "
                      "starting with no holds")
        return {}


def _write(common_dir: Path, holds: dict[str, Hold]) -> None:
    path = _file(common_dir)
    payload = {"version": _VERSION, "holds": {
        k: {f: v for f, v in h.to_json().items() if f != "path"} for k, h in sorted(holds.items())}}
    fd, tmp = tempfile.mkstemp(prefix=".holds-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            # ASCII: a path git gave in bytes that are not UTF-8 (held as surrogates, e.g. an
            # ignored file's name in a blocker) round-trips as a \u escape
            json.dump(payload, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def record_hold(common_dir: Path, path: Path | str, *, reason: str, revisit: str, owner: str,
                auto: bool, blockers: Sequence[str] = ()) -> Hold:
    """Record (or replace) the hold on the worktree at ``path``; return it.

    An automatic hold never replaces an explicit one (the explicit one is returned unchanged).
    Raises :class:`~branchkeeper.state.lock.LockBusyError` when the lock stays busy.
    """
    key = _key(path)
    with repo_lock(common_dir, "holds", wait_s=_LOCK_WAIT_S):
        holds = _read(common_dir)
        current = holds.get(key)
        if auto and current is not None and not current.auto:
            return current
        hold = Hold(path=key, owner=owner, reason=reason, revisit=revisit, since=clock.now(),
                    auto=auto, blockers=tuple(blockers))
        holds[key] = hold
        _write(common_dir, holds)
    return hold


def release_hold(common_dir: Path, path: Path | str, *, auto_only: bool = False) -> Hold | None:
    """End the hold on ``path``; return it, or ``None`` when there was none. With ``auto_only``
    an explicit hold is left in place (and ``None`` returned)."""
    key = _key(path)
    with repo_lock(common_dir, "holds", wait_s=_LOCK_WAIT_S):
        holds = _read(common_dir)
        hold = holds.get(key)
        if hold is None or (auto_only and not hold.auto):
            return None
        del holds[key]
        _write(common_dir, holds)
    return hold


def list_holds(common_dir: Path) -> list[Hold]:
    """Every open hold, oldest first. A corrupt file is moved aside (see :func:`take_notes`).
    Reading creates nothing: without a holds file there is no state directory to make."""
    if not (common_dir / STATE_DIRNAME / HOLDS_NAME).exists():
        return []
    with repo_lock(common_dir, "holds", wait_s=_LOCK_WAIT_S):
        holds = _read(common_dir)
    return sorted(holds.values(), key=lambda h: (h.since, h.path))


def hold_for(common_dir: Path, path: Path | str) -> Hold | None:
    """The hold on the worktree at ``path``, or ``None``."""
    key = _key(path)
    for hold in list_holds(common_dir):
        if hold.path == key:
            return hold
    return None

