"""Time the command guard (issue 5 section 5).

- in-process parse + decide for typical commands on a small repository (target < 5 ms each
  for commands with nothing to judge; commands that must ask git include its process time);
- the git time of a creation decision on a 5,000-branch repository (target < 50 ms): the one
  ``for-each-ref`` the decision runs, timed alone, and the whole in-process decision;
- the whole ``branchkeeper check`` process on the 5,000-branch repository.

The 5,000-branch repository comes from ``bench/genrepo.py`` (``/tmp/bk-bench/5000`` when it
exists; the guard only reads it). Run: ``.venv/bin/python bench/bench_guard.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genrepo import generate

from branchkeeper.analysis.guard_facts import _LEAN_FORMAT, read_lean_refs
from branchkeeper.git.locate import locate
from branchkeeper.git.run import processes_started, run_git
from branchkeeper.policy.command import decide_command

TYPICAL = ["ls -la", "git status", "git log --oneline -5", "npm test && git diff --stat",
           "git commit -m 'fix: use -D flag'", "cat <<EOF\ngit branch -D x\nEOF",
           "cd sub && git add -A && git commit -m wip", "git switch -c new-branch",
           "git branch -D some-branch", "git push origin --delete some-branch"]


def _median_ms(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _small_repo() -> Path:
    d = Path(tempfile.mkdtemp(prefix="bk-guard-"))
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "x"],
                 ["branch", "some-branch"]):
        subprocess.run(["git", *args], cwd=d, check=True, env=env)
    return d


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    runs = ap.parse_args().runs
    small = _small_repo()
    rows: list[tuple[str, float, str]] = []
    decide_command("git status", cwd=str(small))  # warm the parser
    for cmd in TYPICAL:
        before = processes_started()
        decide_command(cmd, cwd=str(small))
        n = processes_started() - before
        ms = _median_ms(lambda c=cmd: decide_command(c, cwd=str(small)), runs)
        rows.append((f"parse+decide {cmd.splitlines()[0][:40]!r} ({n} git)", ms,
                     "< 5 ms" if n == 0 else "incl. git"))
    big = Path("/tmp/bk-bench/5000")
    if not (big / "HEAD").exists() and not (big / ".git").exists():
        big = Path(tempfile.mkdtemp(prefix="bk-guard-5000-")) / "repo"
        generate(big, 5000)
    repo = locate(str(big))
    assert repo is not None
    rows.append(("5000 branches: the creation for-each-ref, git process only",
                 _median_ms(lambda: run_git(["for-each-ref", f"--format={_LEAN_FORMAT}",
                                             "refs/heads", "refs/remotes/origin"], cwd=repo.root),
                            runs), "< 50 ms"))
    rows.append(("5000 branches: for-each-ref + parse into names and tips",
                 _median_ms(lambda: read_lean_refs(repo, "origin"), runs), ""))
    rows.append(("5000 branches: whole creation decision, in-process",
                 _median_ms(lambda: decide_command("git switch -c bench-new", cwd=str(big)), runs),
                 ""))
    exe = str(Path(sys.executable).parent / "branchkeeper")
    for cmd in ("git status", "git switch -c bench-new"):
        rows.append((f"5000 branches: `branchkeeper check -- {cmd!r}` process",
                     _median_ms(lambda c=cmd: subprocess.run(
                         [exe, "check", "--cwd", str(big), "--", c], capture_output=True),
                         max(5, runs // 2)), ""))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'median ms':>10}  target")
    for name, ms, target in rows:
        print(f"{name.ljust(width)}  {ms:10.2f}  {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
