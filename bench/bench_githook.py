"""What the reference-transaction hook costs ordinary git work (issue 15, "Tests and figures").

In one run, on one repository, with the variants interleaved round by round (so a change of
machine load hits all of them alike):

- ``none``: no hook;
- ``empty``: a hook that is ``#!/bin/sh`` and ``exit 0``: the floor any reference-transaction
  hook costs, since git starts it once per state of every ref transaction;
- ``shim``: branchkeeper's shim as ``install --git-hooks`` writes it (program: this
  installation's ``branchkeeper``).

Workloads: COMMITS ``git commit -a`` (each one edit of one file; default 1,000 per variant) and
a REBASE of a 200-commit branch onto a main that moved (``git rebase``, each commit a real pick).
Printed: total seconds per variant and the ratios shim/none (the issue's target: <= 1.10),
empty/none (the floor) and shim/empty (what the shim itself adds to a hook git starts anyway).

Run: ``nice -n 10 .venv/bin/python bench/bench_githook.py [--commits N] [--rebase N]
[--rounds R] [--files F]``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import compile_package

from branchkeeper.adapters.git_hooks import shim_text

VARIANTS = ("none", "empty", "shim")
EMPTY = "#!/bin/sh\nexit 0\n"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b",
               GIT_AUTHOR_EMAIL="b@example.com", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@example.com", GIT_EDITOR="true")
    return env


def _git(repo: Path, env: dict[str, str], *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, input=stdin,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _build(repo: Path, env: dict[str, str], files: int, rebase: int) -> None:
    """main: ``files`` files in 50 directories, one commit; topic: ``rebase`` commits on it,
    each adding a file of its own; then main moves by one commit."""
    _git(repo.parent, env, "init", "-q", "-b", "main", str(repo))
    lines: list[bytes] = []
    stamp = "1700000000 +0000"
    lines.append(f"commit refs/heads/main\nmark :1\ncommitter b <b@example.com> {stamp}\n"
                 "data 4\nbase\n".encode())
    for i in range(files):
        body = f"file {i}\n".encode()
        lines.append(f"M 100644 inline src/d{i % 50}/f{i}.txt\ndata {len(body)}\n".encode() + body)
    prev = ":1"
    for i in range(rebase):
        body = f"topic {i}\n".encode()
        lines.append(f"commit refs/heads/topic\nmark :{i + 2}\ncommitter b <b@example.com> "
                     f"{stamp}\ndata 8\ntopic {i % 10}\nfrom {prev}\n"
                     f"M 100644 inline topic/t{i}.txt\ndata {len(body)}\n".encode() + body)
        prev = f":{i + 2}"
    lines.append(f"commit refs/heads/main\ncommitter b <b@example.com> {stamp}\ndata 6\nmoved\n"
                 "from :1\nM 100644 inline main.txt\ndata 2\nm\n".encode())
    _git(repo, env, "fast-import", "--quiet", stdin=b"".join(lines))
    _git(repo, env, "checkout", "-q", "-f", "main")


def _set_hook(repo: Path, variant: str, program: str) -> None:
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(parents=True, exist_ok=True)
    if hook.exists():
        hook.unlink()
    if variant == "none":
        return
    hook.write_text(EMPTY if variant == "empty" else shim_text(program))
    hook.chmod(0o755)


def _commits(repo: Path, env: dict[str, str], n: int, tag: str) -> float:
    target = repo / "src" / "d0" / "f0.txt"
    start = time.perf_counter()
    for i in range(n):
        with target.open("a") as fh:
            fh.write(f"{tag} {i}\n")
        _git(repo, env, "commit", "-q", "-a", "-m", f"{tag} {i}")
    return time.perf_counter() - start


def _rebase(repo: Path, env: dict[str, str], topic: str, variant: str, program: str) -> float:
    _set_hook(repo, "none", program)
    _git(repo, env, "checkout", "-q", "-f", "-B", "topic", topic)
    _set_hook(repo, variant, program)
    start = time.perf_counter()
    _git(repo, env, "rebase", "-q", "main")
    took = time.perf_counter() - start
    _set_hook(repo, "none", program)
    _git(repo, env, "checkout", "-q", "-f", "main")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000, help="commits per variant")
    parser.add_argument("--rebase", type=int, default=200, help="commits of the rebased branch")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--files", type=int, default=2000, help="files in the repository")
    args = parser.parse_args()
    compile_package()
    program = shlex.quote(str(Path(sys.executable).parent / "branchkeeper"))
    work = Path(tempfile.mkdtemp(prefix="bk-bench-githook."))
    try:
        env = _env(work)
        repo = work / "repo"
        _build(repo, env, args.files, args.rebase)
        topic = subprocess.run(["git", "rev-parse", "topic"], cwd=repo, env=env, check=True,
                               capture_output=True, text=True).stdout.strip()
        commit_s = dict.fromkeys(VARIANTS, 0.0)
        rebase_s = dict.fromkeys(VARIANTS, 0.0)
        per_round = max(1, args.commits // args.rounds)
        for r in range(args.rounds):
            for variant in VARIANTS:
                _set_hook(repo, variant, program)
                commit_s[variant] += _commits(repo, env, per_round, f"{variant}-{r}")
                rebase_s[variant] += _rebase(repo, env, topic, variant, program)
        total = per_round * args.rounds
        print(f"repository: {args.files} files; {total} commits and {args.rounds} rebases of "
              f"{args.rebase} commits per variant, {args.rounds} interleaved rounds")
        for name, figures, count in (("commit", commit_s, total), ("rebase", rebase_s, args.rounds)):
            per = {v: figures[v] / count for v in VARIANTS}
            unit = "ms per commit" if name == "commit" else f"s per {args.rebase}-commit rebase"
            scale = 1000.0 if name == "commit" else 1.0
            print(f"{name}: " + ", ".join(f"{v} {per[v] * scale:.2f}" for v in VARIANTS)
                  + f" ({unit})")
            print(f"  ratio shim/none {figures['shim'] / figures['none']:.3f} (target <= 1.10); "
                  f"floor empty/none {figures['empty'] / figures['none']:.3f}; "
                  f"shim/empty {figures['shim'] / figures['empty']:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
