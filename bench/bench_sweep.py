"""Benchmark ``branchkeeper sweep`` on generated repositories of 1,000 to 10,000 branches.

Issue 2, section 8. For each size: generate the repository with ``genrepo.py`` (cached under
``--work-dir``/<n>, reused while its ground truth matches the size and seed), then run
``python -m branchkeeper -C <repo> sweep --json`` as a child process twice: cold (after deleting
the cache directory ``$(git rev-parse --git-common-dir)/branchkeeper/``) and warm. For each run:
wall time, peak RSS (the largest single process of the child's tree, from ``os.wait4``'s
rusage), the number of git processes (from the ``branchkeeper-stats: git_processes=N`` line that
``BRANCHKEEPER_STATS=1`` makes the sweep print to stderr) and the accuracy against
``ground-truth.json``: preserved branches found per kind, unmerged branches wrongly reported
preserved (must be 0) and branches left ``unknown``.

Targets (issue 2): 5,000 branches cold < 3 s, warm < 1 s; 10,000 cold < 6 s; peak < 150 MB.

Usage: ``.venv/bin/python bench/bench_sweep.py [--sizes 1000,5000,10000] [--work-dir DIR]``.
Benchmarks are not tests: this prints figures; it exits non-zero only when it cannot measure or
when a branch is wrongly reported preserved.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import compile_package
from genrepo import generate

PRESERVED_STATES = frozenset({"merged", "merged_into_line", "patch_equivalent"})
_STATS = re.compile(rb"^branchkeeper-stats: git_processes=(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Run:
    """One sweep run: seconds, peak RSS in MB, git processes (None if not reported), report."""

    seconds: float
    peak_mb: float
    git_processes: int | None
    report: dict[str, Any]


def repository(work_dir: Path, size: int, seed: int) -> tuple[Path, dict[str, Any], float]:
    """The cached repository of ``size`` branches: (path, ground truth, seconds to generate)."""
    path = work_dir / str(size)
    truth_file = path / "ground-truth.json"
    if truth_file.is_file():
        truth: dict[str, Any] = json.loads(truth_file.read_text())
        if truth.get("branches") == size and truth.get("seed") == seed:
            return path, truth, float(truth.get("seconds", 0.0))
    shutil.rmtree(path, ignore_errors=True)
    truth = generate(path, size, seed)
    return path, truth, float(truth["seconds"])


def drop_cache(repo: Path) -> None:
    """Delete branchkeeper's cache directory under the repository's common git dir."""
    out = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout.strip()
    shutil.rmtree((repo / out) / "branchkeeper", ignore_errors=True)


def sweep_once(repo: Path) -> Run:
    """Run the sweep as a child process and measure it. Raises RuntimeError if it fails."""
    argv = [sys.executable, "-m", "branchkeeper", "-C", str(repo), "sweep", "--json"]
    env = dict(os.environ, BRANCHKEEPER_STATS="1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in (0, 1):  # 1 = findings (lost work risk), still a full report
        raise RuntimeError(f"sweep exited {proc.returncode}:\n{stderr.decode(errors='replace')}")
    match = _STATS.search(stderr)
    # ru_maxrss is in KiB on Linux; it is the largest of the child and its waited descendants
    return Run(seconds, usage.ru_maxrss / 1024, int(match.group(1)) if match else None,
               json.loads(stdout))


def accuracy(report: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    """Compare a sweep report with the ground truth: found per kind, wrong, unknown, missing."""
    states = {b["name"]: b["state"] for b in report["branches"]}
    cats: dict[str, list[str]] = truth["categories"]
    found = {k: sum(states.get(n) in PRESERVED_STATES for n in names)
             for k, names in cats.items() if k != "unmerged"}
    wrong = sorted(n for n in cats["unmerged"] if states.get(n) in PRESERVED_STATES)
    every = [n for names in cats.values() for n in names]
    return {
        "found": found,
        "of": {k: len(v) for k, v in cats.items() if k != "unmerged"},
        "wrongly_preserved": wrong,
        "unknown": sum(states.get(n) == "unknown" for n in every),
        "missing": sum(n not in states for n in every),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print one table; return 1 on a wrong "preserved" verdict."""
    parser = argparse.ArgumentParser(description="benchmark branchkeeper sweep")
    parser.add_argument("--sizes", default="1000,5000,10000",
                        help="comma-separated branch counts (default: 1000,5000,10000)")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/bk-bench"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args(argv)
    compile_package()
    if importlib.util.find_spec("branchkeeper.adapters.commands.sweep") is None:
        print("bench_sweep: `branchkeeper sweep` is not built yet "
              "(branchkeeper.adapters.commands.sweep does not import); nothing to measure. "
              "Run this with the project's venv python once it exists.", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    head = (f"{'branches':>8} {'gen s':>6} {'cold s':>7} {'warm s':>7} {'cold MB':>8} "
            f"{'warm MB':>8} {'git cold':>8} {'git warm':>8}  {'merged':>11} {'squash':>11} "
            f"{'rebase':>11} {'wrong':>5} {'unknown':>7}")
    rows, results = [head], []
    failed = False
    for size in sizes:
        repo, truth, gen_s = repository(args.work_dir, size, args.seed)
        drop_cache(repo)
        cold = sweep_once(repo)
        warm = sweep_once(repo)
        acc = accuracy(warm.report, truth)
        cold_acc = accuracy(cold.report, truth)
        wrong = sorted(set(acc["wrongly_preserved"]) | set(cold_acc["wrongly_preserved"]))
        failed |= bool(wrong)

        def frac(kind: str, acc: dict[str, Any] = acc) -> str:
            return f"{acc['found'][kind]}/{acc['of'][kind]}"

        rows.append(
            f"{size:>8} {gen_s:>6.1f} {cold.seconds:>7.2f} {warm.seconds:>7.2f} "
            f"{cold.peak_mb:>8.1f} {warm.peak_mb:>8.1f} {cold.git_processes!s:>8} "
            f"{warm.git_processes!s:>8}  {frac('merged'):>11} {frac('squash_merged'):>11} "
            f"{frac('rebase_merged'):>11} {len(wrong):>5} {acc['unknown']:>7}")
        results.append({"branches": size, "cold_s": round(cold.seconds, 3),
                        "warm_s": round(warm.seconds, 3), "cold_peak_mb": round(cold.peak_mb, 1),
                        "warm_peak_mb": round(warm.peak_mb, 1),
                        "git_processes_cold": cold.git_processes,
                        "git_processes_warm": warm.git_processes,
                        "accuracy_warm": acc, "accuracy_cold": cold_acc})
        if wrong:
            rows.append(f"  WRONGLY PRESERVED ({len(wrong)}): {', '.join(wrong[:10])}")
    print("\n".join(rows))
    print("targets: 5000 cold < 3 s, warm < 1 s; 10000 cold < 6 s; peak < 150 MB; wrong = 0")
    if args.json:
        print(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
