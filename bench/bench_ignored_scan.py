"""Benchmark: the scan of a wholly ignored directory (``node_modules/``) for a nested repository
or a protected file, paired with that worktree's one ``git status`` (the per-worktree cost every
removal already pays) in one run, rounds alternating; prints the medians and their ratio.
Usage: ``.venv/bin/python bench/bench_ignored_scan.py [N_FILES] [ROUNDS]`` (default 50000, 7).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from branchkeeper.analysis.ignored import IgnoredRules, judge_ignored, read_status


def build(root: Path, n_files: int) -> None:
    """A repository whose ignored ``node_modules/`` holds ``n_files`` files, 25 per package."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".gitignore").write_text("node_modules/\n")
    subprocess.run(["git", "-C", str(root), "add", ".gitignore"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@e",
                    "commit", "-qm", "init"], check=True)
    for i in range(0, n_files, 25):
        pkg = root / "node_modules" / f"pkg{i // 25}" / "lib"
        pkg.mkdir(parents=True)
        for j in range(min(25, n_files - i)):
            (pkg / f"f{j}.js").write_text("x\n")


def run(n_files: int, rounds: int) -> None:
    rules = IgnoredRules(regenerable=("node_modules/",))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        build(root, n_files)
        status_s: list[float] = []
        scan_s: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            _t, _u, ignored = read_status(root)
            t1 = time.perf_counter()
            verdict = judge_ignored(root, ignored, rules, scan_cap=max(n_files * 2, 100_000))
            t2 = time.perf_counter()
            status_s.append(t1 - t0)
            scan_s.append(t2 - t1)
        assert verdict.ok, verdict
        st, sc = statistics.median(status_s), statistics.median(scan_s)
        print(f"node_modules files: {n_files}  rounds: {rounds}  cpus: {os.cpu_count()}")
        print(f"git status (baseline): median {st * 1000:.1f} ms")
        print(f"scan (judge_ignored):  median {sc * 1000:.1f} ms")
        print(f"ratio scan / status:   {sc / st:.2f}")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 50000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 7)
