"""Benchmark the cleanup commands against two peers (issues 3 and 11, section 6).

For each size (``--sizes``, default 1000,5000,10000) and once more for the largest size over a
long default branch (``--long``, default 50,000 main commits) a repository is generated with
``genrepo.py`` (cached under ``--work-dir``/<name>), then timed in one run:

- ``branchkeeper sweep --clean --dry-run --json`` and ``branchkeeper prune --no-fetch
  --dry-run --json``, each cold (no cache) and warm: branches each would delete ("found", per
  proof tier), how many of them the ground truth says are unmerged or superseded ("wrong",
  must be 0), seconds and git processes (``BRANCHKEEPER_STATS=1``);
- ``git-delete-merged-branches`` (PyPI; pip-installed into this venv when missing) on a
  throwaway copy, non-interactively (``--yes --effort 3``, with ``main`` configured as the
  required target through its ``branch.main.dmb-required`` key), counting the local branches it
  deleted;
- ``git delete-squashed-branches main`` (Debian's git-extras; ``apt-get install -y git-extras``
  when missing) on another throwaway copy, counting the local branches it deleted.

Prints one table: tool, size, preserved branches found, wrong ones, seconds, git processes.
Benchmarks are not tests; this exits non-zero only when branchkeeper picks a wrong branch.

Usage: ``.venv/bin/python bench/bench_cleanup.py [--sizes 1000] [--long 0] [--work-dir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sweep import drop_cache, repository
from benchutil import compile_package

PRESERVED = ("merged", "squash_merged", "squash_moved", "rebase_merged")
NEVER = ("unmerged", "superseded")
_STATS = re.compile(rb"^branchkeeper-stats: git_processes=(\d+)\s*$", re.MULTILINE)


def local_branches(repo: Path) -> set[str]:
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def ensure_peers() -> dict[str, list[str] | None]:
    bindir = Path(sys.executable).parent
    gdmb = bindir / "git-delete-merged-branches"
    if not gdmb.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "git-delete-merged-branches"],
                       check=False)
    if shutil.which("git-delete-squashed-branches") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "git-extras"], check=False,
                       stdout=subprocess.DEVNULL)
    squashed = shutil.which("git-delete-squashed-branches")
    return {"git-delete-merged-branches": [str(gdmb), "--yes", "--effort", "3"]
            if gdmb.exists() else None,
            "git delete-squashed-branches": [squashed, "main"] if squashed else None}


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None
          ) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL,
                          env=env, timeout=3600)
    return time.monotonic() - t0, proc


def ours(repo: Path, *argv: str) -> tuple[float, int | None, dict[str, Any]]:
    """One branchkeeper command with ``--json``: seconds, git processes, the document."""
    import json

    env = dict(os.environ, BRANCHKEEPER_STATS="1")
    secs, proc = timed([sys.executable, "-m", "branchkeeper", "-C", str(repo), *argv, "--json"],
                       repo, env)
    if proc.returncode not in (0, 5):
        raise RuntimeError(proc.stderr.decode(errors="replace"))
    match = _STATS.search(proc.stderr)
    return secs, int(match.group(1)) if match else None, json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,10000")
    ap.add_argument("--long", type=int, default=50_000, metavar="COMMITS")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/bk-bench"))
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    compile_package()
    peers = {} if args.no_peers else ensure_peers()
    sizes: list[tuple[int, int | None]] = [(int(s), None) for s in args.sizes.split(",")]
    if args.long:
        sizes.append((max(n for n, _ in sizes), args.long))
    rows: list[tuple[str, str, int, int, float | None, str, str]] = []
    failed = False
    for size, steps in sizes:
        repo, truth, _ = repository(args.work_dir, size, args.seed, steps)
        label = f"{size}" if steps is None else f"{size}/{truth['main_commits']}"
        never = {n for k in NEVER for n in truth["categories"].get(k, [])}
        preserved = {n for k in PRESERVED for n in truth["categories"].get(k, [])}
        for command in (["sweep", "--clean", "--dry-run"], ["prune", "--no-fetch", "--dry-run"]):
            for temp in ("cold", "warm"):
                if temp == "cold":
                    drop_cache(repo)
                secs, procs, doc = ours(repo, *command)
                found = [b for b in doc["branches"] if b["action"] == "delete"]
                names = {b["name"] for b in found}
                wrong = len(names & never)
                failed |= wrong > 0
                per_tier = Counter(f"{b['proof']['kind']}/{b['proof']['verified']}"
                                   for b in found)
                rows.append((f"branchkeeper {command[0]} {temp}", label, len(names), wrong,
                             secs, str(procs), f"of {len(preserved)} preserved; "
                             + ", ".join(f"{k} {v}" for k, v in sorted(per_tier.items()))))
        for tool, cmd in peers.items():
            if cmd is None:
                rows.append((tool, label, 0, 0, None, "-", "not installed"))
                continue
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / "copy"
                shutil.copytree(repo, copy, symlinks=True)
                if tool == "git-delete-merged-branches":
                    # its non-interactive setup: main is the required merge target
                    for key, value in (("branch.main.dmb-required", "true"),
                                       ("delete-merged-branches.configured", "5.0.0+")):
                        subprocess.run(["git", "config", key, value], cwd=copy, check=True)
                before = local_branches(copy)
                secs, proc = timed(cmd, copy)
                gone = before - local_branches(copy)
                note = "" if proc.returncode == 0 else f"exit {proc.returncode}"
                rows.append((tool, label, len(gone), len(gone & never), secs, "-", note))
    print(f"{'tool':<32} {'size':>12} {'found':>6} {'wrong':>6} {'seconds':>9} {'git':>5}  note")
    for tool, size_label, found_n, wrong_n, secs, procs, note in rows:
        shown = f"{secs:9.2f}" if secs is not None else f"{'-':>9}"
        print(f"{tool:<32} {size_label:>12} {found_n:>6} {wrong_n:>6} {shown} {procs:>5}  {note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
