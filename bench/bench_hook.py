"""Time the whole ``branchkeeper hook PreToolUse`` process for a Bash command that is not git.

Prints the median of 20 runs, in milliseconds (target: under 60 ms). Run:
``.venv/bin/python bench/bench_hook.py``. Also see ``python -X importtime -m branchkeeper hook
PreToolUse < event.json`` for where the import time goes.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 20


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        payload = json.dumps({"session_id": "bench", "cwd": tmp, "hook_event_name": "PreToolUse",
                              "tool_name": "Bash", "tool_input": {"command": "ls -la"}}).encode()
        argv = [sys.executable, "-m", "branchkeeper", "hook", "PreToolUse"]
        subprocess.run(argv, input=payload, capture_output=True, check=True)  # warm the caches
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            proc = subprocess.run(argv, input=payload, capture_output=True, check=True)
            times.append((time.perf_counter() - start) * 1000)
            assert proc.stdout == b"", proc.stdout
        print(f"hook PreToolUse, non-git Bash: median {statistics.median(times):.1f} ms, "
              f"min {min(times):.1f} ms, max {max(times):.1f} ms over {RUNS} runs (target < 60)")


if __name__ == "__main__":
    main()
