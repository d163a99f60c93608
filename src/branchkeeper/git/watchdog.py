"""What bounds a running git stream: a whole-run timeout, or silence (no output, no CPU time).

Issue 20: a batched stream of a sweep does work that grows with the repository, so it is ended
only once it has neither written output nor used CPU time for a while
(:data:`branchkeeper.git.run.STREAM_IDLE_S`), never at a fixed time. The processes themselves are
started by :mod:`branchkeeper.git.run`; this module only watches and feeds them.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Sequence


def cpu_ticks(pid: int) -> int | None:
    """User plus system CPU time of process ``pid`` in clock ticks (``/proc/<pid>/stat``);
    None where that cannot be read (not Linux, the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return None


class Watchdog:
    """Ends ``procs`` (SIGTERM) on a whole-run ``timeout``, or with ``idle`` set, once none
    has shown a sign of life (output, CPU time) for ``idle`` seconds."""

    def __init__(self, procs: Sequence[subprocess.Popen[bytes]], timeout: float,
                 idle: float | None) -> None:
        self.procs = list(procs)
        self.timeout = timeout
        self.idle = idle
        self.expired = threading.Event()
        self._stop = threading.Event()
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def answered(self) -> None:
        self._last = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def message(self) -> str:
        if self.idle is None:
            return f"git timed out after {self.timeout:g} s"
        return f"git stopped answering: no output and no CPU time for {self.idle:g} s"

    def _run(self) -> None:
        if self.idle is None:
            if not self._stop.wait(self.timeout):
                self._expire()
            return
        ticks: list[int | None] = [None] * len(self.procs)
        while not self._stop.wait(min(self.idle / 4, 5.0)):
            now_ticks = [cpu_ticks(p.pid) for p in self.procs]
            if any(n is not None for n in now_ticks) and now_ticks != ticks:
                ticks = now_ticks
                self.answered()
            if time.monotonic() - self._last > self.idle:
                self._expire()
                return

    def _expire(self) -> None:
        self.expired.set()
        for proc in self.procs:
            with contextlib.suppress(OSError):
                proc.terminate()


def feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write(data)
    except (BrokenPipeError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]

