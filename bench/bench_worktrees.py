"""Benchmark: ``worktree list``, ``reap --count-only``, ``reap --dry-run`` and ``sweep`` (whose
LOST WORK RISK reads one ``git status`` per worktree) with 200 worktrees, and ``report`` over 50
small repositories. Prints a table of wall times and git processes (targets: count-only < 100 ms,
reap --dry-run < 5 s), and the sweep paired with the inventory alone (its baseline) as a ratio.
Usage: ``.venv/bin/python bench/bench_worktrees.py [N_WORKTREES] [N_REPOS]``.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from branchkeeper.adapters.cli import main
from branchkeeper.git.run import processes_started


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def small_repo(path: Path) -> None:
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    (path / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)


def timed(argv: list[str]) -> tuple[float, int, int]:
    before = processes_started()
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return time.perf_counter() - start, processes_started() - before, rc


def run(n_wt: int, n_repos: int) -> None:
    os.environ.setdefault("GIT_AUTHOR_NAME", "b")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "b@example.com")
    os.environ.setdefault("GIT_COMMITTER_NAME", "b")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "b@example.com")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = base / "repo"
        small_repo(repo)
        t0 = time.perf_counter()
        for i in range(n_wt):
            git("worktree", "add", "-q", "-b", f"wt-{i}", str(base / "wts" / f"w{i}"), cwd=repo)
        setup = time.perf_counter() - t0
        rows = [("setup: worktree add", n_wt, setup, None, 0)]
        for label, argv in (
            ("worktree list --json", ["-C", str(repo), "worktree", "list", "--json", "--no-gh"]),
            ("reap --count-only", ["-C", str(repo), "worktree", "reap", "--count-only"]),
            ("reap --dry-run", ["-C", str(repo), "worktree", "reap", "--dry-run", "--no-gh"]),
            ("sweep --json", ["-C", str(repo), "sweep", "--json"]),
        ):
            secs, procs, rc = timed(argv)
            rows.append((label, n_wt, secs, procs, rc))
        base_secs, base_procs = _inventory_only(repo)
        rows.append(("inventory alone (base)", n_wt, base_secs, base_procs, 0))
        sweep_secs = next(r[2] for r in rows if r[0] == "sweep --json")
        for i in range(n_repos):
            small_repo(base / "many" / f"r{i:02d}")
        for label, extra in (("report", []), ("report --count-only", ["--count-only"])):
            secs, procs, rc = timed(["report", str(base / "many"), "--json", *extra])
            rows.append((label, n_repos, secs, procs, rc))
    print(f"{'command':<24} {'items':>6} {'seconds':>9} {'git procs':>10} {'rc':>3}")
    for label, items, secs, procs, rc in rows:
        print(f"{label:<24} {items:>6} {secs:>9.3f} {('-' if procs is None else procs):>10} "
              f"{rc:>3}")
    print(f"sweep with LOST WORK RISK / inventory alone: {sweep_secs / base_secs:.2f}x "
          f"({n_wt} worktrees)")


def _inventory_only(repo: Path) -> tuple[float, int]:
    """The sweep's inventory without the worktree reads: the baseline the sweep is paired with."""
    from branchkeeper.analysis.inventory import build_inventory
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.model.config_file import load_config

    before = processes_started()
    start = time.perf_counter()
    facts = repo_facts(repo)
    build_inventory(facts, load_config(facts.main_root).config)
    return time.perf_counter() - start, processes_started() - before


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 200,
        int(sys.argv[2]) if len(sys.argv) > 2 else 50)
