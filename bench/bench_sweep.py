"""Benchmark ``branchkeeper sweep`` on generated repositories, and on a real one (``--real``).

Issues 2, 11 (section 6) and 20. For each size (``--sizes``, default 1,000, 5,000 and 10,000
branches) and once more for 10,000 branches over a long default branch (``--long``, default
50,000 main commits): generate the repository with ``genrepo.py`` (cached under
``--work-dir``/<name>, reused while its ground truth matches), then run ``python -m branchkeeper
-C <repo> sweep --json`` as a child process twice: cold (after deleting the cache directory
``$(git rev-parse --git-common-dir)/branchkeeper/``) and warm. For each run: wall time, peak memory
(the largest single process of the child's tree, from ``os.wait4``'s rusage; and the largest
sum over the whole tree at once, sampled from ``/proc``, which the 500 MB target is judged
on), git processes
(the ``branchkeeper-stats: git_processes=N`` line ``BRANCHKEEPER_STATS=1`` prints) and, against
``ground-truth.json``:

- recall per kind the generator made (merged, squash-merged, squash-merged on a moved base that
  only merging proves, rebase-merged) and the superseded branches found as ``superseded``;
- ``wrong``: unmerged or superseded branches called preserved (must be 0);
- ``unknown``: branches left unjudged (must be 0 on a generated repository: no window);
- per proof tier, how many branches it proved (kind and how it was verified).

``--real PATH --warm-only`` runs only ``--runs`` warm sweeps there (a cold run takes
minutes at real scale: run it once, then this), with how many took the stored whole-sweep
result. ``--real PATH`` runs the same cold and warm sweeps on a copy-free existing repository (it only
writes under its ``branchkeeper/`` state dir, which a cold run deletes first) and prints the
issue 20 table: cold and warm seconds and CPU, git processes, peak memory, verdicts by state and
``unknown`` by reason, and the floor (``for-each-ref`` and ``rev-list --count --all``).

Targets: cold 10,000 branches <= 6 s, warm 5,000 <= 1 s, git processes flat in branch count,
recall 100%, wrong 0, unknown 0 (issue 11); on the real repository cold <= 3 min, warm <= 3 s,
<= 30 git processes, <= 500 MB (issue 20).

``--baseline SRC --cold [--runs N]`` measures the cold row paired: cold sweeps of the largest
size over the ``--long`` base, this tree against ``SRC``, alternating; medians and ratios of
wall and CPU seconds (CPU counts git too), peak memory and git processes.

``--baseline SRC`` measures only issue 16's warm row: ``sweep --json`` warm at ``--warm-size``
(5,000) branches, this tree against the package source ``SRC`` (for example ``git archive`` of
an older main's ``src``), each on its own copy of the repository, alternating, ``--runs`` (15)
each: medians of wall and CPU seconds, git processes and the ratios. With ``--real PATH`` too,
the same pairing on that repository's warm sweep (issue 20's warm row; both share its cache,
which must be of the same format: run a cold sweep first).

Usage: ``.venv/bin/python bench/bench_sweep.py [--sizes 1000,5000,10000] [--long 50000]
[--work-dir DIR] [--json]``, ``... --real PATH``, ``... --baseline SRC --cold [--runs N]`` or
``... --baseline SRC [--warm-size N] [--runs N]`` (with ``--real PATH``: that repository's warm
sweep). Benchmarks are not tests: this prints
figures; it exits non-zero only when it cannot measure or a branch is wrongly called preserved.
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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import TreeMemory, compile_package
from genrepo import generate

PRESERVED_STATES = frozenset({"merged", "merged_into_line", "patch_equivalent"})
RECALL_KINDS = ("merged", "squash_merged", "squash_moved", "rebase_merged")
_STATS = re.compile(rb"^branchkeeper-stats: git_processes=(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Run:
    """One sweep run: wall and CPU seconds, peak RSS in MB (the largest single process, and
    ``total_mb``: the largest sum over the sweep and every git it ran at once), git
    processes, the report."""

    seconds: float
    cpu: float
    peak_mb: float
    git_processes: int | None
    report: dict[str, Any]
    total_mb: float = 0.0
    #: the run took the stored whole-sweep result (its ``--stats`` line says so)
    stored: bool = False


def repository(work_dir: Path, size: int, seed: int, main_steps: int | None
               ) -> tuple[Path, dict[str, Any], float]:
    """The cached repository: (path, ground truth, seconds to generate)."""
    path = work_dir / (f"{size}" if main_steps is None else f"{size}-base{main_steps}")
    truth_file = path / "ground-truth.json"
    if truth_file.is_file():
        truth: dict[str, Any] = json.loads(truth_file.read_text())
        if truth.get("branches") == size and truth.get("seed") == seed \
                and "squash_moved" in truth["categories"]:
            return path, truth, float(truth.get("seconds", 0.0))
    shutil.rmtree(path, ignore_errors=True)
    truth = generate(path, size, seed, main_steps=main_steps)
    return path, truth, float(truth["seconds"])


def drop_cache(repo: Path) -> None:
    """Delete branchkeeper's state directory under the repository's common git dir."""
    out = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout.strip()
    shutil.rmtree((repo / out) / "branchkeeper", ignore_errors=True)


def sweep_once(repo: Path, *extra: str, src: Path | None = None) -> Run:
    """Run the sweep as a child process and measure it (``src``: the package source to run,
    for a baseline; default: this venv's). Raises RuntimeError if it fails."""
    argv = [sys.executable, "-m", "branchkeeper", "-C", str(repo), "sweep", "--json", *extra]
    env = dict(os.environ, BRANCHKEEPER_STATS="1")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        with TreeMemory(proc.pid) as memory:
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
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
               int(match.group(1)) if match else None, json.loads(stdout), memory.peak_mb,
               b"stored result" in stderr)


def tiers(report: dict[str, Any]) -> dict[str, int]:
    """Branches proven per tier: ``kind/verified`` -> count."""
    return dict(Counter(f"{b['proof']['kind']}/{b['proof']['verified']}"
                        for b in report["branches"] if b["proof"] is not None))


def accuracy(report: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    """Compare a sweep report with the ground truth: recall per kind, superseded found, wrong
    verdicts, unknown and missing branches."""
    states = {b["name"]: b["state"] for b in report["branches"]}
    cats: dict[str, list[str]] = truth["categories"]
    found = {k: sum(states.get(n) in PRESERVED_STATES for n in cats.get(k, []))
             for k in RECALL_KINDS}
    never = [*cats["unmerged"], *cats.get("superseded", [])]
    wrong = sorted(n for n in never if states.get(n) in PRESERVED_STATES)
    every = [n for names in cats.values() for n in names]
    return {
        "found": found,
        "of": {k: len(cats.get(k, [])) for k in RECALL_KINDS},
        "superseded_found": sum(states.get(n) == "superseded" for n in cats.get("superseded", [])),
        "superseded_of": len(cats.get("superseded", [])),
        "wrongly_preserved": wrong,
        "unknown": sum(states.get(n) == "unknown" for n in every),
        "unknown_window": sum(1 for b in report["branches"]
                              if b["state"] == "unknown" and "window" in b["reason"]),
        "missing": sum(n not in states for n in every),
    }


def _generated(args: argparse.Namespace) -> int:
    sizes = [(int(s), None) for s in args.sizes.split(",") if s.strip()]
    if args.long:
        sizes.append((max(n for n, _ in sizes), args.long))
    head = (f"{'branches':>8} {'base':>7} {'gen s':>6} {'cold s':>7} {'warm s':>7} "
            f"{'cold MB':>8} {'git cold':>8} {'git warm':>8}  {'merged':>11} {'squash':>11} "
            f"{'moved':>9} {'rebase':>11} {'supersed':>9} {'wrong':>5} {'unknown':>7}")
    rows, results = [head], []
    failed = False
    for size, steps in sizes:
        repo, truth, gen_s = repository(args.work_dir, size, args.seed, steps)
        drop_cache(repo)
        cold = sweep_once(repo)
        warm = sweep_once(repo)
        acc = accuracy(warm.report, truth)
        cold_acc = accuracy(cold.report, truth)
        wrong = sorted(set(acc["wrongly_preserved"]) | set(cold_acc["wrongly_preserved"]))
        failed |= bool(wrong)

        def frac(kind: str, acc: dict[str, Any] = cold_acc) -> str:
            return f"{acc['found'][kind]}/{acc['of'][kind]}"

        rows.append(
            f"{size:>8} {truth['main_commits']:>7} {gen_s:>6.1f} {cold.seconds:>7.2f} "
            f"{warm.seconds:>7.2f} {cold.peak_mb:>8.1f} {cold.git_processes!s:>8} "
            f"{warm.git_processes!s:>8}  {frac('merged'):>11} {frac('squash_merged'):>11} "
            f"{frac('squash_moved'):>9} {frac('rebase_merged'):>11} "
            f"{cold_acc['superseded_found']}/{cold_acc['superseded_of']:<4} {len(wrong):>5} "
            f"{cold_acc['unknown']:>7}")
        rows.append("         tiers: " + ", ".join(f"{k} {v}" for k, v in
                                                     sorted(tiers(cold.report).items())))
        results.append({"branches": size, "main_commits": truth["main_commits"],
                        "cold_s": round(cold.seconds, 3), "warm_s": round(warm.seconds, 3),
                        "cold_cpu_s": round(cold.cpu, 3), "cold_peak_mb": round(cold.peak_mb, 1),
                        "warm_peak_mb": round(warm.peak_mb, 1),
                        "git_processes_cold": cold.git_processes,
                        "git_processes_warm": warm.git_processes, "tiers": tiers(cold.report),
                        "accuracy_cold": cold_acc, "accuracy_warm": acc})
        if wrong:
            rows.append(f"  WRONGLY PRESERVED ({len(wrong)}): {', '.join(wrong[:10])}")
    print("\n".join(rows))
    print("targets: 10000 cold <= 6 s; 5000 warm <= 1 s; git processes flat; recall 100%; "
          "wrong = 0; unknown = 0")
    if args.json:
        print(json.dumps(results, indent=1))
    return 1 if failed else 0


def _floor(repo: Path) -> dict[str, float]:
    """Seconds of the two git commands no sweep can beat (median of 3)."""
    out: dict[str, float] = {}
    for label, argv in (("for-each-ref", ["git", "for-each-ref", "--format=%(objectname)"]),
                        ("rev-list --count --all", ["git", "rev-list", "--count", "--all"])):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run(argv, cwd=repo, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        out[label] = sorted(times)[1]
    return out


def _real_warm(args: argparse.Namespace) -> int:
    """``--real PATH --warm-only``: the warm row alone, over the state a cold run left (none
    is deleted): ``--runs`` warm sweeps, their medians, and how many took the stored result."""
    import statistics

    repo: Path = args.real
    runs = [sweep_once(repo, "--stats") for _ in range(args.runs)]
    print(f"repository: {repo} ({len(runs[-1].report['branches'])} branches), warm only, "
          f"{args.runs} runs")
    print(f"warm: median {statistics.median(r.seconds for r in runs):.2f} s wall, "
          f"{statistics.median(r.cpu for r in runs):.2f} s CPU (min "
          f"{min(r.cpu for r in runs):.2f}, max {max(r.cpu for r in runs):.2f}); git processes "
          f"{runs[-1].git_processes}; peak {max(r.total_mb for r in runs):.0f} MB all at once; "
          f"stored result taken {sum(r.stored for r in runs)} of {args.runs}")
    print("target: warm <= 3 s")
    return 0


def _real(args: argparse.Namespace) -> int:
    if args.warm_only:
        return _real_warm(args)
    repo: Path = args.real
    drop_cache(repo)
    cold = sweep_once(repo)
    warm = sweep_once(repo)
    floor = _floor(repo)
    branches = cold.report["branches"]
    states = Counter(b["state"] for b in branches)
    unknown = Counter(re.sub(r"[0-9a-f]{40}", "<oid>", b["reason"])
                      for b in branches if b["state"] == "unknown")
    rows = [
        f"repository: {repo} ({len(branches)} branches)",
        f"{'':18} {'measured':>24}",
        f"{'cold':18} {cold.seconds:>10.1f} s ({cold.cpu:.0f} s CPU)",
        f"{'warm':18} {warm.seconds:>10.2f} s ({warm.cpu:.1f} s CPU)",
        f"{'git processes':18} {cold.git_processes!s:>10} cold, {warm.git_processes} warm",
        f"{'peak memory':18} {max(cold.total_mb, warm.total_mb):>10.0f} MB all processes at "
        f"once ({max(cold.peak_mb, warm.peak_mb):.0f} MB the largest one)",
        "verdicts: " + ", ".join(f"{n} {s}" for s, n in states.most_common()),
        "unknown: " + ("; ".join(f"{n} {r}" for r, n in unknown.most_common()) or "none"),
        "tiers: " + ", ".join(f"{k} {v}" for k, v in sorted(tiers(cold.report).items())),
        "notes: " + (" | ".join(cold.report["notes"]) or "none"),
        "floor: " + ", ".join(f"{k} {v:.2f} s" for k, v in floor.items()),
        "targets: cold <= 3 min, warm <= 3 s, git processes <= 30, peak <= 500 MB, every "
        "branch classified or unknown naming its own missing object",
    ]
    print("\n".join(rows))
    if args.json:
        print(json.dumps({"cold_s": cold.seconds, "warm_s": warm.seconds, "cold_cpu_s": cold.cpu,
                          "warm_cpu_s": warm.cpu, "git_processes_cold": cold.git_processes,
                          "git_processes_warm": warm.git_processes,
                          "peak_mb": max(cold.peak_mb, warm.peak_mb),
                          "peak_total_mb": max(cold.total_mb, warm.total_mb),
                          "states": dict(states),
                          "unknown": dict(unknown), "tiers": tiers(cold.report),
                          "floor": floor}, indent=1))
    return 0


def _warm_pair(args: argparse.Namespace) -> int:
    """Issue 16's warm row: ``sweep --json`` warm at ``--warm-size`` branches, this tree vs the
    baseline source ``--baseline`` (a ``src`` directory, e.g. ``git archive`` of the old main),
    each on its own copy of the repository (their caches differ), alternating, ``--runs``
    each; medians and the ratio."""
    import statistics

    src = {"ours": None, "baseline": args.baseline}
    compile_package(args.baseline)  # the baseline's bytecode too: not compile time per run
    if args.real is not None:  # one repository, its cache shared (same format), never dropped
        copies = {"ours": args.real, "baseline": args.real}
        counted = 0
        for label in copies:  # a warm-up each (a cold one if no cache)
            counted = len(sweep_once(args.real, src=src[label]).report["branches"])
        size = f"{counted} branches of {args.real}"
    else:
        repo, _, _ = repository(args.work_dir, args.warm_size, args.seed, None)
        copies = {}
        for label in ("ours", "baseline"):
            copy = args.work_dir / f"{args.warm_size}-{label}"
            if not copy.exists():
                shutil.copytree(repo, copy, symlinks=True)
            drop_cache(copy)
            copies[label] = copy
        for label, copy in copies.items():  # cold, then one warm-up
            sweep_once(copy, src=src[label])
            sweep_once(copy, src=src[label])
        size = f"{args.warm_size} branches"
    wall: dict[str, list[float]] = {"ours": [], "baseline": []}
    cpu: dict[str, list[float]] = {"ours": [], "baseline": []}
    procs: dict[str, int | None] = {}
    for _ in range(args.runs):
        for label, copy in copies.items():
            run = sweep_once(copy, src=src[label])
            wall[label].append(run.seconds)
            cpu[label].append(run.cpu)
            procs[label] = run.git_processes
    med = {k: statistics.median(v) for k, v in wall.items()}
    medc = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"warm sweep --json at {size}, median of {args.runs} (alternating runs):")
    for label in ("ours", "baseline"):
        print(f"  {label:<9} {med[label]:6.3f} s wall  {medc[label]:6.3f} s CPU  "
              f"git processes {procs[label]}")
    print(f"  ratio     {med['ours'] / med['baseline']:6.2f} wall  "
          f"{medc['ours'] / medc['baseline']:6.2f} CPU   (target: "
          f"{'<= 3 s' if args.real is not None else '<= 0.5 s'})")
    return 0


def _cold_pair(args: argparse.Namespace) -> int:
    """The cold row paired: ``sweep --json`` cold (cache deleted before every run) on the
    ``--sizes`` maximum over a ``--long`` base, this tree against the package source
    ``--baseline``, alternating on one repository, ``--runs`` each: medians of wall and CPU
    seconds (CPU: user + system of the sweep and every git it started), peak memory, git
    processes, and the ratios. A loaded machine inflates wall time; the CPU ratio is the
    figure to compare."""
    import statistics

    size = max(int(n) for n in args.sizes.split(",") if n.strip())
    repo, truth, _ = repository(args.work_dir, size, args.seed, args.long or None)
    src = {"ours": None, "baseline": args.baseline}
    runs: dict[str, list[Run]] = {"ours": [], "baseline": []}
    for _ in range(args.runs):
        for label in ("ours", "baseline"):
            drop_cache(repo)
            runs[label].append(sweep_once(repo, src=src[label]))
    wrong = sorted({n for r in runs["ours"] for n in accuracy(r.report, truth)["wrongly_preserved"]})
    print(f"cold sweep --json, {size} branches over {truth['main_commits']} base commits, "
          f"median of {args.runs} (alternating runs):")
    med: dict[str, tuple[float, float]] = {}
    for label in ("ours", "baseline"):
        rs = runs[label]
        med[label] = (statistics.median(r.seconds for r in rs), statistics.median(r.cpu for r in rs))
        print(f"  {label:<9} {med[label][0]:7.2f} s wall  {med[label][1]:7.2f} s CPU  "
              f"peak {max(r.total_mb for r in rs):6.0f} MB all at once "
              f"({max(r.peak_mb for r in rs):.0f} largest)  git processes "
              f"{rs[-1].git_processes}")
    print(f"  ratio     {med['ours'][0] / med['baseline'][0]:7.2f} wall  "
          f"{med['ours'][1] / med['baseline'][1]:7.2f} CPU   (target: <= 6 s)")
    acc = accuracy(runs["ours"][-1].report, truth)
    print(f"  ours: recall {acc['found']} of {acc['of']}, superseded "
          f"{acc['superseded_found']}/{acc['superseded_of']}, wrong {len(wrong)}, "
          f"unknown {acc['unknown']}")
    return 1 if wrong else 0


def main(argv: list[str] | None = None) -> int:
    """Measure and print one table; return 1 on a wrong "preserved" verdict."""
    parser = argparse.ArgumentParser(description="benchmark branchkeeper sweep")
    parser.add_argument("--sizes", default="1000,5000,10000",
                        help="comma-separated branch counts (default: 1000,5000,10000)")
    parser.add_argument("--long", type=int, default=50_000, metavar="COMMITS",
                        help="also the largest size over a default branch of this many "
                             "commits (default 50000; 0: skip)")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/bk-bench"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--real", type=Path, default=None, metavar="PATH",
                        help="measure an existing repository instead (issue 20's table)")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument("--baseline", type=Path, default=None, metavar="SRC",
                        help="only the warm row of issue 16: this tree vs the package source "
                             "SRC, paired (see --warm-size, --runs)")
    parser.add_argument("--cold", action="store_true",
                        help="with --baseline: the cold row instead (largest --sizes over "
                             "--long), paired, --runs each")
    parser.add_argument("--warm-only", action="store_true",
                        help="with --real: only warm sweeps (--runs of them) over the state a "
                             "cold run left; nothing is deleted")
    parser.add_argument("--warm-size", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    compile_package()
    if importlib.util.find_spec("branchkeeper.adapters.commands.sweep") is None:
        print("bench_sweep: `branchkeeper sweep` is not importable; run this with the "
              "project's venv python.", file=sys.stderr)
        return 2
    if args.baseline is not None:
        return _cold_pair(args) if args.cold else _warm_pair(args)
    return _real(args) if args.real is not None else _generated(args)


if __name__ == "__main__":
    sys.exit(main())
