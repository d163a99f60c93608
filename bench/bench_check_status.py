"""Time `branchkeeper check` for commands that need a `git status`, against a baseline.

Issue 17, section 3: the median `check` time for a command that needs a `git status` must not
get worse. Each command is decided by a fresh `python -m branchkeeper check` process (what a
person or the hook pays), alternately with this checkout's code and with the baseline's
(`git archive BASELINE src`, default `main`), in a small repository with uncommitted work, so
both see the same machine load. Prints median and p90 seconds of each, wall and CPU (user +
sys of the process and its git children), and their ratios; then
the modules the PreToolUse hook imports for commands it answers without git (the no-git path,
which must not import more), baseline and this checkout.

Run: ``nice -n 10 .venv/bin/python bench/bench_check_status.py [--runs 31] [--baseline main]``.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import compile_package

ROOT = Path(__file__).resolve().parent.parent
#: Commands that each need one `git status` (the first two in both versions; `rm` of a
#: modified file only in the new one, where it is judged).
COMMANDS = ["git reset --hard", "git checkout -- src", "rm -f src/app.py"]


def _repo() -> Path:
    d = Path(tempfile.mkdtemp(prefix="bk-check-status-"))
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    (d / "src").mkdir()
    for i in range(200):
        (d / "src" / f"m{i}.py").write_text(f"x = {i}\n")
    (d / "src" / "app.py").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=d, check=True, env=env)
    (d / "src" / "app.py").write_text("edited\n")
    return d


def _baseline(rev: str) -> Path:
    """The baseline's ``src`` tree, unpacked into a temporary directory and byte-compiled."""
    out = Path(tempfile.mkdtemp(prefix="bk-baseline-"))
    data = subprocess.run(["git", "archive", rev, "src"], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(out, filter="data")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(out / "src")], check=True)
    return out / "src"


def _time(src: Path | None, repo: Path, command: str) -> tuple[float, float]:
    """(wall, CPU = user + sys of the process and its git children) seconds of one check."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--cwd", str(repo), "--",
                    command], env=env, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _row(label: str, old: list[float], new: list[float]) -> str:
    o, n = statistics.median(old), statistics.median(new)
    o90, n90 = statistics.quantiles(old, n=10)[-1], statistics.quantiles(new, n=10)[-1]
    return (f"{label:<30} {o:>15.3f}s {o90:>6.3f}s {n:>11.3f}s {n90:>6.3f}s {n / o:>6.2f} "
            f"{n90 / o90:>6.2f}")


#: Commands the hook answers without starting git: from the raw bytes, and after a parse.
NO_GIT = ["ls -la", "make test && pytest -q", "git status", "git log --oneline -5"]
_LIST_IMPORTS = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "from branchkeeper.adapters.hookrun import run\n"
    "code = run('claude', 'PreToolUse')\n"
    "sys.stderr.write(repr(len(set(sys.modules) - before)))\n")


def _imports(src: Path | None, repo: Path, command: str) -> int:
    """How many modules the Claude Code PreToolUse hook imports to answer ``command``."""
    import json

    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    payload = {"session_id": "s", "cwd": str(repo), "tool_name": "Bash",
               "tool_input": {"command": command}}
    done = subprocess.run([sys.executable, "-c", _LIST_IMPORTS], env=env, cwd=repo,
                          input=json.dumps(payload).encode(), capture_output=True, check=True)
    return int(done.stderr.decode().strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=31)
    ap.add_argument("--baseline", default="main", help="the revision to compare with")
    args = ap.parse_args()
    compile_package()
    repo, base = _repo(), _baseline(args.baseline)
    print(f"{'command (wall / cpu)':<30} {'baseline median':>16} {'p90':>7} {'this median':>12} "
          f"{'p90':>7} {'ratio':>6} {'p90 r':>6}")
    for command in COMMANDS:
        old: list[tuple[float, float]] = []
        new: list[tuple[float, float]] = []
        for _ in range(args.runs):  # alternately, so both see the same load
            old.append(_time(base, repo, command))
            new.append(_time(None, repo, command))
        print(_row(f"{command} wall", [w for w, _ in old], [w for w, _ in new]))
        print(_row(f"{command} cpu", [c for _, c in old], [c for _, c in new]))
    print(f"\n{'hook, no git path':<24} {'baseline modules':>16} {'this':>7}")
    for command in NO_GIT:
        print(f"{command:<24} {_imports(base, repo, command):>16} {_imports(None, repo, command):>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
