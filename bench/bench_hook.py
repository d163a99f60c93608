"""Time the whole ``branchkeeper hook`` process as Claude Code runs it (issue 6, section 4).

Medians over RUNS runs, in milliseconds, from process start to exit, with the event JSON on stdin:

- PreToolUse, a Bash command that is not git (target < 60 ms), in a small repository, plain
  and with quotes and a glob (which the textual fast path sends to the parser);
- PreToolUse, ``git status`` on the 5,000-branch repository;
- PreToolUse, ``git switch -c x`` on the 5,000-branch repository (target < 150 ms);
- SessionStart (source ``startup``) on the 5,000-branch repository (target: within
  ``branches.sweep.budget_ms``, 3,000 ms by default).

The 5,000-branch repository comes from ``bench/genrepo.py`` (cached at /tmp/bk-bench/5000 when
present); the benchmark works on a ``git clone --mirror``-free copy (``cp -a``), never on the
cache itself. Run: ``.venv/bin/python bench/bench_hook.py [--runs N]``. For where import time
goes: ``python -X importtime -m branchkeeper hook PreToolUse < event.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import compile_package
from genrepo import generate

CACHE = Path("/tmp/bk-bench/5000")
HEAVY = ("tree_sitter", "pydantic", "rich", "branchkeeper.analysis.inventory", "yaml")


def _time(event: str, payload: dict[str, object], runs: int) -> tuple[float, float, bytes]:
    argv = [sys.executable, "-m", "branchkeeper", "hook", event]
    data = json.dumps(payload).encode()
    subprocess.run(argv, input=data, capture_output=True, check=True)  # warm the OS caches
    times = []
    out = b""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, input=data, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
        out = proc.stdout
    return statistics.median(times), max(times), out


def _imports(payload: dict[str, object]) -> list[str]:
    """Heavy modules imported for ``payload`` (``-X importtime``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "branchkeeper", "hook",
                           "PreToolUse"], input=json.dumps(payload).encode(),
                          capture_output=True, check=True)
    names = [line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
             if line.startswith("import time:")]
    return sorted({n for n in names if n.startswith(HEAVY)})


def _big_repo(tmp: Path) -> Path:
    target = tmp / "big"
    if CACHE.is_dir():
        shutil.copytree(CACHE, target, symlinks=True)
    else:
        generate(target, 5000)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args(argv).runs
    compile_package()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        small = tmp / "small"
        subprocess.run(["git", "init", "-q", str(small)], check=True)
        plain = {"session_id": "bench", "cwd": str(small), "hook_event_name": "PreToolUse",
                 "tool_name": "Bash", "tool_input": {"command": "ls -la"}}
        median, worst, out = _time("PreToolUse", plain, runs)
        assert out == b"", out
        print(f"PreToolUse non-git Bash:      median {median:7.1f} ms (max {worst:.1f}; target "
              f"< 60); heavy imports: {_imports(plain) or 'none'}")
        quoted = {**plain, "tool_input": {"command": 'echo "hello" *.py | grep -c x'}}
        median, worst, out = _time("PreToolUse", quoted, runs)
        assert out == b"", out
        print(f"PreToolUse quoted non-git:    median {median:7.1f} ms (max {worst:.1f}; target "
              f"< 60; quotes and globs go to the parser)")
        big = _big_repo(tmp)
        for label, command, target in (("git status", "git status", ""),
                                       ("git switch -c x", "git switch -c x", "; target < 150")):
            payload = {**plain, "cwd": str(big), "tool_input": {"command": command}}
            median, worst, out = _time("PreToolUse", payload, runs)
            print(f"PreToolUse {label:<18} median {median:7.1f} ms (max {worst:.1f}{target}); "
                  f"5,000 branches; answer {len(out)} bytes")
        start = {"session_id": "bench", "cwd": str(big), "hook_event_name": "SessionStart",
                 "source": "startup"}
        median, worst, out = _time("SessionStart", start, max(3, runs // 4))
        print(f"SessionStart (startup):       median {median:7.1f} ms (max {worst:.1f}; target "
              f"within budget_ms 3000); 5,000 branches; answer {len(out)} bytes")


if __name__ == "__main__":
    main()
