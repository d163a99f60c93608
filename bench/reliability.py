"""The reliability figures (issue 7, section 4): run the whole reliability suite at a larger size
than CI and print one table.

    .venv/bin/python bench/reliability.py [--examples N] [--property-examples N] [--rounds N]
                                          [--workers N]

Runs ``pytest`` on the crash, race and hostile-input suites plus the cleanup property test with
``BK_RELIABILITY_EXAMPLES``, ``BK_PROPERTY_EXAMPLES`` and ``BK_RACE_ROUNDS`` set, and
``BK_RELIABILITY_REPORT`` naming a file the tests append one JSON line to per case. Every crash
case is run (every kill point of every operation). "unexpected errors" counts failed tests;
"lost" counts what the tests measured before asserting. Exit 0 only when every lost and
unexpected cell is zero. Not a test: a figure printer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["tests/test_reliability_crash.py", "tests/test_reliability_races.py",
          "tests/test_reliability_hostile.py", "tests/test_cleanup_property.py"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000, help="hypothesis examples per "
                    "reliability property (BK_RELIABILITY_EXAMPLES)")
    ap.add_argument("--property-examples", type=int, default=1000,
                    help="examples of tests/test_cleanup_property.py (BK_PROPERTY_EXAMPLES)")
    ap.add_argument("--rounds", type=int, default=10, help="race rounds (BK_RACE_ROUNDS)")
    ap.add_argument("--workers", type=int, default=2, help="pytest-xdist workers")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.jsonl"
        env = {**os.environ, "BK_RELIABILITY_EXAMPLES": str(args.examples),
               "BK_PROPERTY_EXAMPLES": str(args.property_examples),
               "BK_RACE_ROUNDS": str(args.rounds), "BK_RELIABILITY_REPORT": str(report)}
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-n", str(args.workers), *SUITES], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        elapsed = time.monotonic() - start
        rows = [json.loads(line) for line in report.read_text().splitlines()] \
            if report.exists() else []
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    failed = sum(int(n) for n in re.findall(r"(\d+) (?:failed|error)", tail))
    passed = sum(int(n) for n in re.findall(r"(\d+) passed", tail))
    crash = [r for r in rows if r["kind"] == "crash"]
    races = [r for r in rows if r["kind"] == "race"]
    hostile = [r for r in rows if r["kind"] == "hostile"]
    figures = {
        "operations tried": len({r["op"] for r in crash}),
        "kill points tried": len(crash),
        "distinct kill points": len({r["point"] for r in crash}),
        "races run": len(races),
        "hostile inputs tried": sum(int(r.get("tried", 1)) for r in hostile),
        "cleanup property examples (random histories and commands)":
            args.property_examples if failed == 0 else 0,
        "commits lost": sum(int(r.get("commits_lost", 0)) for r in crash + races),
        "files lost": sum(int(r.get("files_lost", 0)) for r in crash + races),
        "unexpected errors": failed + sum(int(r.get("unexpected", 0)) for r in hostile),
    }
    print("| figure | value |\n| --- | --- |")
    for key, value in figures.items():
        print(f"| {key} | {value} |")
    print(f"\npytest: {tail} ({elapsed:.0f} s, {args.workers} workers; examples "
          f"{args.examples}, property examples {args.property_examples}, race rounds "
          f"{args.rounds}); crash cases by operation: "
          f"{dict(sorted(Counter(r['op'] for r in crash).items()))}")
    if failed:
        print(proc.stdout[-4000:], file=sys.stderr)
    bad = figures["commits lost"] + figures["files lost"] + figures["unexpected errors"]
    return 0 if bad == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
