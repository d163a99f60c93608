"""Interruptions: a change stops at a safe point, never in the middle of a git transaction (issue
12, section 3; DESIGN.md guarantee 8).

A Ctrl-C used to kill the ``update-ref --stdin`` transaction of a large cleanup (Python's
``subprocess.run`` answers ``KeyboardInterrupt`` by SIGKILLing its child), leaving hundreds of
``refs/heads/*.lock`` files that made every later delete fail. Inside :func:`deferred_signals`:

- SIGINT and SIGTERM are recorded instead of acted on at once;
- every git child runs shielded (:func:`branchkeeper.git.run.shielded`): in its own session, so
  a terminal's Ctrl-C does not reach it, and never SIGKILLed on a timeout;
- the change asks :attr:`Signals.stop` between steps and starts no new step once a signal came,
  journals what it did and what it left, and leaves the block;
- leaving the block with a recorded signal raises :class:`Interrupted` (exit 130), whose message
  says where to look (``branchkeeper log``) and how to go back (``branchkeeper undo``).

Outside the main thread signals cannot be handled; the block then only shields git.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from branchkeeper.errors import BranchkeeperError, ExitCode
from branchkeeper.git.run import shielded

_NAMES = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}


class Interrupted(BranchkeeperError):
    """A change stopped at a safe point because of SIGINT or SIGTERM (exit 130)."""

    exit_code = ExitCode.INTERRUPTED


class Signals:
    """The signals received inside one :func:`deferred_signals` block."""

    def __init__(self) -> None:
        self.received: list[int] = []

    @property
    def stop(self) -> bool:
        """True once SIGINT or SIGTERM arrived: start no new step."""
        return bool(self.received)

    def describe(self) -> str:
        """The first signal's name, e.g. ``SIGINT (Ctrl-C)``."""
        return _NAMES.get(signal.Signals(self.received[0]), str(self.received[0]))


def interrupted_message(signals: Signals, what: str) -> str:
    """The one interruption message of a change that stopped at a safe point."""
    return (f"interrupted by {signals.describe()}: {what} stopped at a safe point, no git "
            "command was cut off; `branchkeeper log` shows what was done and `branchkeeper "
            "undo` restores it")


#: The blocks open now, outermost first: a signal is recorded in each (a nested block stops
#: its own steps, and the block around it learns of it too).
_OPEN: list[Signals] = []


def _record(signum: int, _frame: FrameType | None) -> None:
    for signals in _OPEN:
        signals.received.append(signum)


@contextmanager
def deferred_signals(what: str, *, raise_after: bool = True) -> Iterator[Signals]:
    """Defer SIGINT and SIGTERM (and shield git) while ``what`` (a short phrase: "the
    cleanup") changes the repository. With ``raise_after``, leaving the block raises
    :class:`Interrupted` when one arrived; without, the caller reads :attr:`Signals.stop`
    afterwards (to report what was done first). Blocks nest. See the module docstring."""
    signals = Signals()
    if threading.current_thread() is not threading.main_thread():
        with shielded():
            yield signals
        return
    outermost = not _OPEN
    _OPEN.append(signals)
    previous = {s: signal.signal(s, _record) for s in (signal.SIGINT, signal.SIGTERM)} \
        if outermost else {}
    try:
        with shielded():
            yield signals
    finally:
        _OPEN.remove(signals)
        for s, handler in previous.items():
            # None: a handler not set from Python; the default is the closest we can restore
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
    if signals.stop and raise_after:
        raise Interrupted(interrupted_message(signals, what))
