"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path


def compile_package(src: Path | None = None) -> None:
    """Byte-compile branchkeeper as ``pip install`` does for a regular install, so the figures
    are not compile time (an editable install writes the same files on its first run, unless
    PYTHONDONTWRITEBYTECODE is set, as it is on some CI machines; ``branchkeeper install``
    also writes them). ``src``: a baseline's package source (a directory holding
    ``branchkeeper/``) instead of the imported package, for the same reason."""
    if src is None:
        import branchkeeper

        where = Path(branchkeeper.__file__).parent
    else:
        where = src / "branchkeeper"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(where)], check=True)


def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant, from ``/proc/<pid>/task/<tid>/children``."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class TreeMemory:
    """Samples the summed resident memory of a process and all its descendants every
    ``interval`` seconds while it runs (Linux ``/proc``): :attr:`peak_mb` is the largest sum
    seen, the figure a memory target on the whole sweep (every git it runs at once) is
    judged on. ``ru_maxrss`` only gives the largest single process. Use as ``with
    TreeMemory(pid) as mem: ...``; the sum counts pages two processes share (a pack both
    map) twice, so it errs high."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def peak_mb(self) -> float:
        return self.peak_kib / 1024

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_kib = max(self.peak_kib, sum(_rss_kib(p) for p in _tree(self.pid)))

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
