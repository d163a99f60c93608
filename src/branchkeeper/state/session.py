"""Per-session hook state under ``<common git dir>/branchkeeper/sessions/`` (issue 6, section 2).

One JSON file per agent session (a Claude Code session today; nothing here is specific to
it). Hooks run in parallel, so every change is a read-modify-write under an exclusive
``fcntl.flock`` on a sibling ``.lock`` file, and the new content replaces the old one
atomically (write a temporary file, ``os.replace``). A corrupt or
unreadable file is replaced by a fresh state (the caller logs it), never a crash.

Fields (spec sections 6 and 13):

- ``turn``: the main thread's turn counter, advanced at UserPromptSubmit;
- ``touched``: thread (``agent_id``, ``""`` for the main thread) -> branches whose touch record
  this session already wrote, so a touch costs one git config write per branch per session;
- ``evacuations``: key -> list of evacuation records; the key is ``turn:<n>`` on the main thread
  and ``agent:<agent_id>`` for a sub-agent (its lifetime is its turn);
- ``stop_blocks``: thread key (``main`` or ``agent:<id>``) -> consecutive Stop blocks;
- ``rate``: key -> unix time of the last noisy message (at most one per period);
- ``isolated_spawns``: agent spawns into a new worktree allowed but whose worktree was not made
  yet; ``pending_worktrees``: worktrees made for such spawns, waiting for their sub-agent's
  start event to bind them (both optional in the file: older files read as 0 and ``[]``).

Files untouched for :data:`EXPIRY_S` are removed opportunistically, at most once an hour and
at most :data:`EXPIRY_SCAN_LIMIT` directory entries per call.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SESSIONS_DIRNAME = "sessions"
#: Session files untouched for longer than this (seconds) are removed.
EXPIRY_S = 7 * 86400
#: Directory entries looked at per expiry pass (bounded work per hook call).
EXPIRY_SCAN_LIMIT = 200
#: How long a writer waits for the lock, in seconds, before giving up (the hook fails open).
LOCK_WAIT_S = 3.0
_EXPIRY_MARK = ".expiry-mark"
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_VERSION = 1


class SessionLockTimeout(OSError):
    """Another hook held the session lock for longer than :data:`LOCK_WAIT_S`."""


def state_filename(session_id: str) -> str:
    """The file name for ``session_id``.

    An id of 1-64 characters from ``[A-Za-z0-9_-]`` (Claude Code's are UUIDs) is its own name:
    ``"abc"`` -> ``"abc.json"``. Any other id keeps only those characters, plus a dot and a hash
    of the whole id: ``"../../x"`` -> ``"x.<16 hex>.json"``, so no id can name a path outside
    the sessions directory and distinct ids stay distinct (a plain id has no dot). The hash
    module is loaded only then: the hook path pays for it on no ordinary call.
    """
    if _PLAIN_ID.match(session_id):
        return f"{session_id}.json"
    import hashlib

    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    prefix = _SAFE.sub("", session_id)[:48]
    return f"{prefix or 'session'}.{digest}.json"


class SessionState:
    """The mutable state of one session (see the module docstring for the fields).

    A plain class, not a dataclass: the hook imports this module on every tool call. Equal when
    every field is equal."""

    __slots__ = ("evacuations", "isolated_spawns", "pending_worktrees", "rate", "session_id",
                 "stop_blocks", "touched", "turn")

    def __init__(self, session_id: str, turn: int = 0,
                 touched: dict[str, list[str]] | None = None,
                 evacuations: dict[str, list[dict[str, Any]]] | None = None,
                 stop_blocks: dict[str, int] | None = None,
                 rate: dict[str, float] | None = None, isolated_spawns: int = 0,
                 pending_worktrees: list[str] | None = None) -> None:
        self.session_id = session_id
        self.turn = turn
        self.touched: dict[str, list[str]] = {} if touched is None else touched
        self.evacuations: dict[str, list[dict[str, Any]]] = {} if evacuations is None \
            else evacuations
        self.stop_blocks: dict[str, int] = {} if stop_blocks is None else stop_blocks
        self.rate: dict[str, float] = {} if rate is None else rate
        self.isolated_spawns = isolated_spawns
        self.pending_worktrees: list[str] = [] if pending_worktrees is None \
            else pending_worktrees

    def _values(self) -> tuple[Any, ...]:
        return (self.session_id, self.turn, self.touched, self.evacuations, self.stop_blocks,
                self.rate, self.isolated_spawns, self.pending_worktrees)

    def __eq__(self, other: object) -> bool:  # defining it leaves the class unhashable
        if not isinstance(other, SessionState) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        return (f"SessionState(session_id={self.session_id!r}, turn={self.turn!r}, "
                f"touched={self.touched!r}, evacuations={self.evacuations!r}, "
                f"stop_blocks={self.stop_blocks!r}, rate={self.rate!r}, "
                f"isolated_spawns={self.isolated_spawns!r}, "
                f"pending_worktrees={self.pending_worktrees!r})")

    # -- turn and keys ----------------------------------------------------------------------
    def advance_turn(self) -> int:
        """Start the main thread's next turn; drop the previous turns' evacuation records."""
        self.turn += 1
        current = f"turn:{self.turn}"
        for key in [k for k in self.evacuations if k.startswith("turn:") and k != current]:
            del self.evacuations[key]
        return self.turn

    def turn_key(self, agent_id: str) -> str:
        """``turn:<n>`` for the main thread, ``agent:<id>`` for a sub-agent."""
        return f"agent:{agent_id}" if agent_id else f"turn:{self.turn}"

    @staticmethod
    def thread_key(agent_id: str) -> str:
        """``main`` or ``agent:<id>``: the key of per-thread counters."""
        return f"agent:{agent_id}" if agent_id else "main"

    # -- touches ------------------------------------------------------------------------------
    def is_touched(self, agent_id: str, branch: str) -> bool:
        """Whether this session already recorded ``branch`` as touched by ``agent_id``."""
        return branch in self.touched.get(agent_id, [])

    def mark_touched(self, agent_id: str, branch: str) -> bool:
        """Remember the touch; True when it is new (the caller then writes the record)."""
        seen = self.touched.setdefault(agent_id, [])
        if branch in seen:
            return False
        seen.append(branch)
        return True

    # -- evacuations --------------------------------------------------------------------------
    def add_evacuation(self, agent_id: str, record: dict[str, Any]) -> None:
        """Record an evacuation (worktree, branch, target path) for the current turn."""
        self.evacuations.setdefault(self.turn_key(agent_id), []).append(record)

    def current_evacuations(self, agent_id: str) -> list[dict[str, Any]]:
        """The evacuation records of the thread's current turn (a copy)."""
        return list(self.evacuations.get(self.turn_key(agent_id), []))

    # -- stop blocks and rate limits ----------------------------------------------------------
    def bump_stop_blocks(self, agent_id: str) -> int:
        """Count one more blocked stop of the thread; return the new count."""
        key = self.thread_key(agent_id)
        self.stop_blocks[key] = self.stop_blocks.get(key, 0) + 1
        return self.stop_blocks[key]

    def reset_stop_blocks(self, agent_id: str) -> None:
        """The thread stopped cleanly: its next refusal starts counting from zero."""
        self.stop_blocks.pop(self.thread_key(agent_id), None)

    def rate_ok(self, key: str, *, now: float, period_s: float = 3600.0) -> bool:
        """True (and remembered) when ``key`` was not used in the last ``period_s`` seconds."""
        last = self.rate.get(key)
        if last is not None and 0 <= now - last < period_s:
            return False
        self.rate[key] = now
        return True

    # -- worktrees made for sub-agents --------------------------------------------------------
    def add_pending_worktree(self, path: str) -> None:
        """A worktree made for an isolated spawn, waiting for its sub-agent's start."""
        if path not in self.pending_worktrees:
            self.pending_worktrees.append(path)

    def take_pending_worktrees(self) -> list[str]:
        """Every pending worktree, oldest first; none is pending afterwards."""
        taken, self.pending_worktrees = self.pending_worktrees, []
        return taken

    # -- serialisation ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "version": _VERSION,
            "session_id": self.session_id,
            "turn": self.turn,
            "touched": self.touched,
            "evacuations": self.evacuations,
            "stop_blocks": self.stop_blocks,
            "rate": self.rate,
            "isolated_spawns": self.isolated_spawns,
            "pending_worktrees": self.pending_worktrees,
        }

    @classmethod
    def from_json(cls, data: Any, session_id: str) -> SessionState:
        """Validate a decoded file; raises ValueError on any shape problem (corrupt file)."""
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            raise ValueError("not a version-1 session state object")
        if data.get("session_id") != session_id:
            raise ValueError("session state belongs to another session id")
        turn = data.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
            raise ValueError("bad turn counter")
        touched = data.get("touched")
        if not isinstance(touched, dict) or not all(
            isinstance(v, list) and all(isinstance(b, str) for b in v) for v in touched.values()
        ):
            raise ValueError("bad touched map")
        evac = data.get("evacuations")
        if not isinstance(evac, dict) or not all(
            isinstance(v, list) and all(isinstance(r, dict) for r in v) for v in evac.values()
        ):
            raise ValueError("bad evacuations map")
        blocks = data.get("stop_blocks")
        if not isinstance(blocks, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in blocks.values()
        ):
            raise ValueError("bad stop_blocks map")
        rate = data.get("rate")
        if not isinstance(rate, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in rate.values()
        ):
            raise ValueError("bad rate map")
        spawns = data.get("isolated_spawns", 0)
        if not isinstance(spawns, int) or isinstance(spawns, bool) or spawns < 0:
            raise ValueError("bad isolated_spawns counter")
        pending = data.get("pending_worktrees", [])
        if not isinstance(pending, list) or not all(isinstance(p, str) for p in pending):
            raise ValueError("bad pending_worktrees list")
        return cls(session_id, turn, touched, evac, blocks, {k: float(v) for k, v in rate.items()},
                   spawns, pending)


class SessionStore:
    """The state file of one session in one repository.

    ``common_dir`` is the repository's common git dir; ``on_corrupt`` (optional) is called with a
    one-line message when a corrupt file is replaced by a fresh state.
    """

    def __init__(self, common_dir: Path, session_id: str) -> None:
        self.session_id = session_id
        self.directory = common_dir / "branchkeeper" / SESSIONS_DIRNAME
        self.path = self.directory / state_filename(session_id)
        self.lock_path = self.path.with_suffix(".lock")
        self.problems: list[str] = []

    def _load(self) -> SessionState:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return SessionState(self.session_id)
        try:
            return SessionState.from_json(json.loads(raw.decode("utf-8")), self.session_id)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self.problems.append(f"corrupt session state {self.path.name} replaced ({exc})")
            return SessionState(self.session_id)

    def read(self) -> SessionState:
        """The current state, without the lock (a consistent snapshot: writes are atomic)."""
        return self._load()

    @contextmanager
    def update(self) -> Iterator[SessionState]:
        """Lock, load, yield the state for changes, write it back atomically, unlock.

        Raises :class:`SessionLockTimeout` when the lock stays busy for :data:`LOCK_WAIT_S`, and
        OSError when the directory cannot be written. Nothing is written if the block raises.
        """
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise
                    if time.monotonic() >= deadline:
                        raise SessionLockTimeout(
                            f"session state {self.path.name} stayed locked") from None
                    time.sleep(0.005)
            # Keep the lock file's age that of its last use, so expiry never removes a lock
            # file a live session still uses.
            os.utime(fd)
            state = self._load()
            yield state
            self._write(state)
        finally:
            os.close(fd)  # closing releases the flock
        self._expire()

    def _write(self, state: SessionState) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        data = json.dumps(state.to_json(), ensure_ascii=True, separators=(",", ":"))
        with open(tmp, "w", encoding="ascii") as handle:
            handle.write(data)
        os.replace(tmp, self.path)

    def _expire(self, *, now: float | None = None) -> int:
        """Remove session files untouched for :data:`EXPIRY_S`; return how many were removed."""
        now = time.time() if now is None else now
        mark = self.directory / _EXPIRY_MARK
        try:
            if now - mark.stat().st_mtime < 3600:
                return 0
        except FileNotFoundError:
            pass
        try:
            mark.touch()
        except OSError:
            return 0
        removed = 0
        try:
            with os.scandir(self.directory) as entries:
                for count, entry in enumerate(entries):
                    if count >= EXPIRY_SCAN_LIMIT:
                        break
                    if not entry.name.endswith((".json", ".lock", ".tmp")):
                        continue
                    try:
                        if now - entry.stat(follow_symlinks=False).st_mtime > EXPIRY_S:
                            os.unlink(entry.path)
                            removed += 1
                    except OSError:
                        continue
        except OSError:
            return removed
        return removed
