"""SessionStart bounded at scale (issue 20): every call within ``budget_ms`` + 0.5 s, from the
first one on (no cache at all), until every branch is classified.

    python bench/bench_session_start.py --real /tmp/copy-of-a-big-repo [--interval 10]

PATH must be a writable copy (``cp -a``) of the repository: the branchkeeper state under its
common dir is deleted first (``--keep-cache`` keeps it). In one run it prints:

1. the baseline: the same first call with the inventory run inline (what SessionStart did
   before the background pass), no cache;
2. then, from no cache again, the real hook (``branchkeeper hook SessionStart``) every
   ``--interval`` seconds: per call its wall and CPU seconds (the hook process only; the
   background pass runs in its own process), wall / (budget + 0.5 s), and how many branches it
   said were not yet classified; until it says none, or ``--max-calls``;
3. the background pass's log (one line per round) and a summary paired against the baseline.

Wall time on a loaded machine is inflated by the others' load; CPU time is not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

NOT_YET = re.compile(r"(\d+) branches not yet classified")
_BASELINE = """
import sys, time
from branchkeeper.analysis.session_summary import session_summary
from branchkeeper.git.repo import repo_facts
from branchkeeper.render.session_start import session_start_text
from branchkeeper.state.config_cache import load_config_cached
facts = repo_facts(sys.argv[1])
view = load_config_cached(facts.main_root, facts.common_dir)
summary = session_summary(facts, view, budget_ms=int(sys.argv[2]), take_abandoned_entries=False)
print(session_start_text(summary, source="startup"))
"""


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _timed(argv: list[str], stdin: bytes | None, env: dict[str, str]
           ) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one process."""
    cpu, wall = _cpu(), time.monotonic()
    ran = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    wall, cpu = time.monotonic() - wall, _cpu() - cpu
    if ran.returncode != 0:
        raise SystemExit(f"{argv[2:]} failed ({ran.returncode}): {ran.stderr.decode()[-2000:]}")
    return wall, cpu, ran.stdout.decode("utf-8", "replace")


def _state_dir(repo: Path) -> Path:
    out = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    return Path(out) / "branchkeeper"


def _wait_pass_end(state: Path, timeout: float) -> None:
    """Wait until no background pass holds the lock (a baseline must not overlap one)."""
    import fcntl

    lock = state / "locks" / "sweep-pass.lock"
    end = time.monotonic() + timeout
    while lock.exists() and time.monotonic() < end:
        with open(lock, "rb") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                time.sleep(1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", type=Path, required=True, metavar="PATH",
                    help="a writable copy of the repository (its branchkeeper state is deleted)")
    ap.add_argument("--budget-ms", type=int, default=3000,
                    help="the budget the figures are judged against (branches.sweep.budget_ms)")
    ap.add_argument("--interval", type=float, default=10.0, help="seconds between calls")
    ap.add_argument("--max-calls", type=int, default=200)
    ap.add_argument("--keep-cache", action="store_true", help="do not delete the state first")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    repo = args.real.resolve()
    state = _state_dir(repo)
    env = {**os.environ, "BRANCHKEEPER_REAP_DISABLE": "1"}
    env.pop("BRANCHKEEPER_DEBUG", None)
    bound = args.budget_ms / 1000.0 + 0.5
    print(f"repository {repo}; budget {args.budget_ms} ms; bound {bound:.1f} s wall")
    base_wall = base_cpu = None
    if not args.no_baseline:
        _wait_pass_end(state, 3600)
        if not args.keep_cache:
            shutil.rmtree(state, ignore_errors=True)
        base_wall, base_cpu, text = _timed(
            [sys.executable, "-c", _BASELINE, str(repo), str(args.budget_ms)], None, env)
        left = NOT_YET.search(text)
        print(f"baseline (inline inventory, no cache): wall {base_wall:.2f} s, CPU "
              f"{base_cpu:.2f} s, {bound and base_wall / bound:.2f}x the bound; "
              f"{left.group(1) if left else 0} not yet classified")
    if not args.keep_cache:
        shutil.rmtree(state, ignore_errors=True)
    payload = json.dumps({"session_id": "bench", "cwd": str(repo), "source": "startup",
                          "hook_event_name": "SessionStart",
                          "transcript_path": "/dev/null"}).encode()
    hook = [sys.executable, "-m", "branchkeeper", "hook", "SessionStart"]
    print(f"{'call':>4} {'at s':>7} {'wall s':>7} {'CPU s':>6} {'/bound':>6} "
          f"{'/base':>6} {'not yet classified':>19}")
    started = time.monotonic()
    walls: list[float] = []
    cpus: list[float] = []
    for call in range(1, args.max_calls + 1):
        at = time.monotonic() - started
        wall, cpu, out = _timed(hook, payload, env)
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        left = NOT_YET.search(context)
        walls.append(wall)
        cpus.append(cpu)
        vs_base = f"{wall / base_wall:6.2f}" if base_wall else "     -"
        print(f"{call:>4} {at:7.1f} {wall:7.2f} {cpu:6.2f} {wall / bound:6.2f} {vs_base} "
              f"{left.group(1) if left else 0:>19}", flush=True)
        if left is None:
            break
        time.sleep(args.interval)
    log = state / "sweep-pass.log"
    print("background pass log:")
    print(log.read_text().rstrip() if log.exists() else "(none)")
    print(f"calls {len(walls)}; all classified after {time.monotonic() - started:.0f} s; "
          f"wall max {max(walls):.2f} s ({max(walls) / bound:.2f}x the bound), median "
          f"{sorted(walls)[len(walls) // 2]:.2f} s; CPU max {max(cpus):.2f} s")
    if base_wall is not None and base_cpu is not None:
        print(f"first call vs baseline: wall {walls[0]:.2f} / {base_wall:.2f} s = "
              f"{walls[0] / base_wall:.2f}x; CPU {cpus[0]:.2f} / {base_cpu:.2f} s = "
              f"{cpus[0] / base_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
