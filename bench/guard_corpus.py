"""The peer corpus, run for real: what each command loses, and what the guard decides.

``record``: build the oracle's two worlds (tests/peer_oracle.py), run every distinct command of
tests/corpus/peer-corpus.json for real in both, and write what each lost to
tests/corpus/peer-oracle.json (about 15 minutes on two cores; install GNU parallel, ruby,
busybox, zsh, gawk, ksh and expect first, or the commands that need them fail to run and
lose nothing).

``report``: ask the guard about every command in both worlds (in the sandbox, on untouched
copies) and print, per category: losing commands (the oracle saw work lost) and how many of
them the guard let through; harmless ones and how many it denied (or asked a person about),
and those by rule and world; ``--list`` also prints each of those pairs with the guard's reason,
and each losing pair let through.
``--src DIR`` measures the guard of another checkout (its ``src``), for a before/after pair
(e.g. ``git archive REV src | tar -x -C build/before``); DIR must lie outside ``/tmp``, ``/home``
and ``/srv``, which the sandbox replaces with the world's own (the guard would then be this
checkout's).

Run: ``nice -n 10 .venv/bin/python bench/guard_corpus.py record|report [--src DIR]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import peer_oracle as po


def record(jobs: int) -> int:
    commands = po.corpus_commands()
    scratch = Path(tempfile.mkdtemp(prefix="bk-oracle-", dir=po.scratch_root()))
    try:
        worlds = po.Worlds(scratch)
        t0 = time.monotonic()
        done = 0

        def one(item: tuple[str, str]) -> tuple[str, str, po.Outcome]:
            command, state = item
            return command, state, po.run_live(worlds, state, command, scratch)

        results: dict[str, dict[str, po.Outcome]] = defaultdict(dict)
        work = [(c.command, s) for c in commands for s in po.STATES]
        with ThreadPoolExecutor(jobs) as pool:
            for command, state, outcome in pool.map(one, work):
                results[command][state] = outcome
                done += 1
                if done % 200 == 0:
                    print(f"{done}/{len(work)} runs, {time.monotonic() - t0:.0f} s", flush=True)
        po.write_outcomes(worlds, commands, results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"wrote {po.OUTCOMES}")
    return 0


def report(src: str | None, listing: bool) -> int:
    recorded = po.read_outcomes()
    scratch = Path(tempfile.mkdtemp(prefix="bk-oracle-", dir=po.scratch_root()))
    try:
        worlds = po.Worlds(scratch)
        rows: dict[str, Counter[str]] = defaultdict(Counter)
        by_rule: Counter[str] = Counter()
        stopped: list[str] = []
        for state in po.STATES:
            commands = [r.command for r in recorded]
            decisions = po.guard_decisions(worlds, state, commands, scratch, src=src)
            for r, d in zip(recorded, decisions, strict=True):
                lost = bool(r.outcomes[state].lost)
                denied = d["verdict"] in ("deny", "ask")  # an ask waits for a person's yes
                c = rows[r.category]
                c["losing" if lost else "harmless"] += 1
                if lost and not denied:
                    c["let through"] += 1
                    stopped.append(f"LET THROUGH ({state}) {r.command!r}: {d['verdict']} "
                                   f"{d['rule_id']}")
                if not lost and denied:
                    c["denied"] += 1
                    by_rule[f"{d['verdict']} {d['rule_id']} ({state})"] += 1
                    stopped.append(f"{d['rule_id']} ({state}) {r.command!r}: "
                                   f"{' '.join(d.get('reason', '').split())[:160]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    total: Counter[str] = Counter()
    print(f"{'category':<22} {'losing':>7} {'let through':>12} {'harmless':>9} {'denied':>7}")
    for category in sorted(rows, key=lambda k: -sum(rows[k].values())):
        c = rows[category]
        total.update(c)
        print(f"{category:<22} {c['losing']:>7} {c['let through']:>12} {c['harmless']:>9} "
              f"{c['denied']:>7}")
    print(f"{'all (command x world)':<22} {total['losing']:>7} {total['let through']:>12} "
          f"{total['harmless']:>9} {total['denied']:>7}")
    print("\nharmless command x world pairs denied or asked, by rule (and world):")
    for rule, n in by_rule.most_common():
        print(f"  {n:>5} {rule}")
    if listing:
        print("\neach harmless pair denied or asked:")
        for line in sorted(stopped):
            print(f"  {line}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["record", "report"])
    ap.add_argument("--jobs", type=int, default=2, help="commands run at once (record)")
    ap.add_argument("--src", default=None, help="the src directory of the guard to measure")
    ap.add_argument("--list", action="store_true",
                    help="print each harmless pair denied or asked, with the reason, and each "
                         "losing pair let through (report)")
    args = ap.parse_args()
    why = po.sandbox.available()
    if why is not None:
        print(f"no sandbox: {why}", file=sys.stderr)
        return 4
    return record(args.jobs) if args.what == "record" else report(args.src, args.list)


if __name__ == "__main__":
    raise SystemExit(main())
