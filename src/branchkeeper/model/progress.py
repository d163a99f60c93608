"""What a long pass tells a person watching it: phases, counts done of a total, and the figures
``--stats`` prints (issue 20: "a progress bar on a terminal for a cold run longer than a second:
phase, done/total, rate; nothing on a pipe or in --json except a final timing line on stderr
with --stats").

The analysis never prints: it reports to the :class:`Meter` of the pass in progress
(:func:`current`, a no-op unless a caller opened one with :func:`metering`), and the meter
forwards each change to a :class:`ProgressSink` the adapters give it (``render.progress`` draws
one with rich). The meter also keeps, per phase, its wall seconds and the git processes it
started (``git.run.processes_started``), and named counters (cache hits), for ``--stats``.

No rich here, and nothing heavier than the standard library: the hook path imports this module.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from branchkeeper.git.run import processes_started


class ProgressSink(Protocol):
    """Draws a pass's progress: ``update`` after each change, ``close`` once at the end."""

    def update(self, phase: str, done: int, total: int | None, unit: str) -> None: ...

    def close(self) -> None: ...


@dataclass(slots=True)
class PhaseFigures:
    """One finished (or current) phase: its name, wall ``seconds``, the git processes it
    started and the items it finished (``done``) of ``total``."""

    name: str
    seconds: float = 0.0
    git: int = 0
    done: int = 0
    total: int | None = None


@dataclass
class Meter:
    """The progress and figures of one pass. ``sink`` (optional) is told every change;
    ``clock`` is ``time.monotonic`` unless a test injects another."""

    sink: ProgressSink | None = None
    clock: Callable[[], float] = time.monotonic
    phases: list[PhaseFigures] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    unit: str = "branches"
    _started: float | None = None
    _git_at: int = 0
    #: ``advance`` comes from worker threads too (the worktree reads, the commit streams)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def phase(self, name: str, total: int | None = None, *, unit: str = "branches") -> None:
        """Close the current phase and open ``name`` with ``total`` items (None: unknown)."""
        self._close_phase()
        self.phases.append(PhaseFigures(name, total=total))
        self.unit = unit
        self._started = self.clock()
        self._git_at = processes_started()
        self._tell()

    def advance(self, n: int = 1) -> None:
        """``n`` more items of the current phase are done: the counting callback the work
        calls as each item finishes (thread-safe), so the count moves while the phase runs."""
        with self._lock:
            if self.phases:
                self.phases[-1].done += n
                self._tell()

    def work(self, total: int, *, unit: str) -> None:
        """The current phase's work is counted in ``total`` items of ``unit`` from here on
        (``done`` back to 0): a phase judged per tip whose real work streams per commit
        counts the commits as they come."""
        with self._lock:
            if self.phases:
                self.phases[-1].done, self.phases[-1].total = 0, total
                self.unit = unit
                self._tell()

    def complete(self) -> None:
        """The current phase's work is all done (``done`` = its total, when one is known)."""
        with self._lock:
            if self.phases and self.phases[-1].total is not None:
                self.phases[-1].done = self.phases[-1].total
                self._tell()

    def count(self, key: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``key`` (``cache hits``...); shown by ``--stats``."""
        self.counters[key] = self.counters.get(key, 0) + n

    def finish(self) -> None:
        """Close the last phase and the sink (the bar disappears). Idempotent."""
        self._close_phase()
        if self.sink is not None:
            self.sink.close()
            self.sink = None

    def _close_phase(self) -> None:
        if self.phases and self._started is not None:
            last = self.phases[-1]
            last.seconds += self.clock() - self._started
            last.git += processes_started() - self._git_at
            self._started = None

    def _tell(self) -> None:
        if self.sink is not None and self.phases:
            last = self.phases[-1]
            self.sink.update(last.name, last.done, last.total, self.unit)


class _Unwatched(Meter):
    """The meter of a pass nobody watches: every call does nothing (nothing accumulates)."""

    def phase(self, name: str, total: int | None = None, *, unit: str = "branches") -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def work(self, total: int, *, unit: str) -> None:
        return None

    def complete(self) -> None:
        return None

    def count(self, key: str, n: int = 1) -> None:
        return None


#: The meter of the pass in progress in this context (None: nobody watches).
_CURRENT: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("meter", default=None)
_UNWATCHED = _Unwatched()


def current() -> Meter:
    """The meter opened by the innermost :func:`metering`, or one that records nothing."""
    meter = _CURRENT.get()
    return _UNWATCHED if meter is None else meter


@contextlib.contextmanager
def metering(meter: Meter) -> Iterator[Meter]:
    """Make ``meter`` the :func:`current` one inside the block; finish it on the way out
    (also on an exception or an interruption: the bar never stays on the screen)."""
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)
        meter.finish()
