"""Benchmark ``branchkeeper sweep --clean --dry-run --json`` against two peers (issue 3, section 7).

For each size (``--sizes``, default 1000,5000,10000) a repository is generated with
``genrepo.py`` (cached under ``--work-dir``/<n>), then timed in one run:

- ``branchkeeper sweep --clean --dry-run --json``: branches it would delete ("preserved
  branches found") and how many of them the ground truth says are unmerged ("wrong", must be 0);
- ``git-delete-merged-branches`` (PyPI; pip-installed into this venv when missing) on a
  throwaway copy, non-interactively (``--yes --effort 3``, with ``main`` configured as the
  required target through its ``branch.main.dmb-required`` key), counting the local branches it
  deleted;
- ``git delete-squashed-branches main`` (Debian's git-extras; ``apt-get install -y git-extras``
  when missing) on another throwaway copy, counting the local branches it deleted.

Prints one table: tool, size, preserved branches found, wrong ones, seconds. Benchmarks are not
tests; this exits non-zero only when branchkeeper picks a wrong branch.

Usage: ``.venv/bin/python bench/bench_cleanup.py [--sizes 1000] [--work-dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genrepo import generate

PRESERVED = ("merged", "squash_merged", "rebase_merged")


def repository(work_dir: Path, size: int, seed: int) -> tuple[Path, dict[str, Any]]:
    path = work_dir / str(size)
    truth_file = path / "ground-truth.json"
    if truth_file.is_file():
        truth: dict[str, Any] = json.loads(truth_file.read_text())
        if truth.get("branches") == size and truth.get("seed") == seed:
            return path, truth
    shutil.rmtree(path, ignore_errors=True)
    return path, generate(path, size, seed)


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,10000")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work-dir", type=Path,
                    default=Path(tempfile.gettempdir()) / "branchkeeper-bench")
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    peers = {} if args.no_peers else ensure_peers()
    rows: list[tuple[str, int, int, int, float | None, str]] = []
    failed = False
    for size in [int(s) for s in args.sizes.split(",")]:
        repo, truth = repository(args.work_dir, size, args.seed)
        unmerged = set(truth["categories"]["unmerged"])
        preserved = {n for k in PRESERVED for n in truth["categories"][k]}
        env = dict(os.environ)
        secs, proc = timed([sys.executable, "-m", "branchkeeper", "-C", str(repo), "sweep",
                            "--clean", "--dry-run", "--json"], repo, env)
        if proc.returncode != 0:
            print(proc.stderr.decode(), file=sys.stderr)
            return 2
        doc = json.loads(proc.stdout)
        found = {b["name"] for b in doc["branches"] if b["action"] == "delete"}
        wrong = len(found & unmerged)
        failed |= wrong > 0
        rows.append(("branchkeeper sweep --clean", size, len(found), wrong, secs,
                     f"of {len(preserved)} preserved"))
        for tool, cmd in peers.items():
            if cmd is None:
                rows.append((tool, size, 0, 0, None, "not installed"))
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
                rows.append((tool, size, len(gone), len(gone & unmerged), secs, note))
    print(f"{'tool':<32} {'size':>6} {'found':>6} {'wrong':>6} {'seconds':>9}  note")
    for tool, size, found_n, wrong_n, secs, note in rows:
        shown = f"{secs:9.2f}" if secs is not None else f"{'-':>9}"
        print(f"{tool:<32} {size:>6} {found_n:>6} {wrong_n:>6} {shown}  {note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
