"""The progress bar of a long pass and the ``--stats`` line (issue 20; the meter it draws is
:mod:`branchkeeper.model.progress`).

:class:`DelayedBar` draws the meter's phase, done/total and rate with rich on a terminal, and
only once the command has run :data:`DELAY_S` seconds, counted from the start of the process
(start-up counts): a warm run that finishes sooner shows nothing (no flicker). A phase that
reaches its total is drawn at N/N before the next one replaces it. The bar is transient: it is
gone when the pass ends, and the report is
printed below nothing. ``BRANCHKEEPER_PROGRESS_DELAY_S`` sets the delay (``0``: draw at once,
every change, which is what the pseudo-terminal tests use). :func:`stats_line` is the one line
``--stats`` prints on stderr: total seconds, each phase's seconds, git processes, branches and
cache hits.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from branchkeeper.model.progress import Meter

#: Seconds a pass runs before its bar appears.
DELAY_S = 1.0
#: Least seconds between two redraws within a phase (the counts move per item).
REDRAW_S = 0.05
#: The environment variable that overrides :data:`DELAY_S` (seconds, >= 0).
DELAY_ENV = "BRANCHKEEPER_PROGRESS_DELAY_S"


def delay_s() -> float:
    """:data:`DELAY_S`, or the value of :data:`DELAY_ENV` when it is a number >= 0."""
    try:
        value = float(os.environ.get(DELAY_ENV, ""))
    except ValueError:
        return DELAY_S
    return value if value >= 0 and value == value and value != float("inf") else DELAY_S


class DelayedBar:
    """A :class:`~branchkeeper.model.progress.ProgressSink` drawing on ``console`` (stderr, a
    terminal) once ``delay`` seconds have passed since ``started`` (a ``time.monotonic()``
    value; default: now): a timer thread starts the rich display, later updates move it.
    Thread-safe; :meth:`close` stops the timer and removes the bar."""

    def __init__(self, console: Console, delay: float, started: float | None = None) -> None:
        self.console = console
        self.delay = delay
        self._lock = threading.Lock()
        self._state: tuple[str, int, int | None, str] | None = None
        self._phase_at = time.monotonic()
        self._drawn_at = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._closed = False
        self._timer: threading.Timer | None = None
        if delay > 0:
            waited = 0.0 if started is None else max(0.0, time.monotonic() - started)
            self._timer = threading.Timer(max(0.0, delay - waited), self._start)
            self._timer.daemon = True
            self._timer.start()

    def update(self, phase: str, done: int, total: int | None, unit: str) -> None:
        with self._lock:
            now = time.monotonic()
            moved = self._state is None or self._state[0] != phase
            if moved:
                self._phase_at = now
            self._state = (phase, done, total, unit)
            if self._progress is None and self.delay == 0 and not self._closed:
                self._start_locked()
            # counts come per item (thousands a second): redraw at most every REDRAW_S,
            # and always on a new phase or the last item
            if moved or done == total or self.delay == 0 or now - self._drawn_at >= REDRAW_S:
                self._drawn_at = now
                self._draw_locked()
            # a phase's last count is shown before the next phase replaces it (rich redraws
            # on its own clock, which would skip it): N/N, never a count left at 0/N
            if self._progress is not None and (self.delay == 0 or done == total):
                self._progress.refresh()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._progress is not None:
                self._progress.stop()
                self._progress = None

    def _start(self) -> None:
        with self._lock:
            if not self._closed and self._progress is None:
                self._start_locked()
                self._draw_locked()

    def _start_locked(self) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
            TextColumn("{task.fields[count]}"), TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(), console=self.console, transient=True)
        self._task = self._progress.add_task("", total=None, count="", rate="")
        self._progress.start()

    def _draw_locked(self) -> None:
        if self._progress is None or self._task is None or self._state is None:
            return
        phase, done, total, unit = self._state
        seconds = time.monotonic() - self._phase_at
        rate = f"{done / seconds:,.0f} {unit}/s" if done and seconds > 0 else ""
        count = f"{done:,}/{total:,} {unit}" if total is not None else f"{done:,} {unit}"
        self._progress.update(self._task, description=phase, completed=done, total=total,
                              count=count, rate=rate)


def stats_line(meter: Meter, *, seconds: float, git: int) -> str:
    """The ``--stats`` line: ``branchkeeper: stats: <seconds> s; <phase> <s> s, ...; <git> git
    processes; <n> branches; cache hits: <count> <what>, ...`` (seconds with two decimals;
    the cache part only when a counter is set). A phase run more than once (one per
    repository of a report) is summed under its name, in first-run order."""
    seconds_of: dict[str, float] = {}
    for p in meter.phases:
        seconds_of[p.name] = seconds_of.get(p.name, 0.0) + p.seconds
    phases = ", ".join(f"{name} {s:.2f} s" for name, s in seconds_of.items())
    counters = dict(meter.counters)
    branches = counters.pop("branches", 0)
    hits = ", ".join(f"{n} {key}" for key, n in counters.items())
    line = (f"branchkeeper: stats: {seconds:.2f} s; {phases or 'no phase'}; {git} git "
            f"processes; {branches} branches")
    return line + (f"; cache hits: {hits}" if hits else "")
