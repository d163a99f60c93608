"""Time `parse_command` plus the git argv classifiers in-process (issue 5 section 5).

Run: .venv/bin/python bench/bench_parse.py [repeats]. Prints the median microseconds per
command after warm-up, for parse alone and for parse + git_invocations + classifiers, and the
one-off cost of the first call (tree-sitter import and parser creation).
"""

from __future__ import annotations

import statistics
import sys
import time

COMMANDS = [
    "git status",
    "git switch -c feat/new-thing origin/main",
    "git branch -D old-feature",
    "git worktree add -b agent-7 .claude/worktrees/agent-7 main",
    "cd ../wt && git diff > /tmp/save.patch && git worktree remove --force ../wt",
    "git add -A && git commit -m 'fix: git branch -D is not run here' && git push -u origin HEAD",
    "git branch --merged main | grep -v main | xargs -r git branch -d",
    "bash -c 'cd sub && git push origin --delete stale'",
    "for b in $(git for-each-ref --format='%(refname:short)' refs/heads); do echo $b; done",
    "npm test 2>&1 | tail -20 && git -C /repo log --oneline -5",
]


def _classify(text: str) -> None:
    from branchkeeper.shell.gitargv import creation, destruction
    from branchkeeper.shell.gitevac import evacuation
    from branchkeeper.shell.parse import git_invocations, parse_command

    for g in git_invocations(parse_command(text, cwd="/repo")):
        creation(g)
        destruction(g)
        evacuation(g)


def _median_us(fn: object, text: str, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        fn(text)  # type: ignore[operator]
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    start = time.perf_counter_ns()
    from branchkeeper.shell.parse import parse_command

    import_us = (time.perf_counter_ns() - start) / 1000
    start = time.perf_counter_ns()
    parse_command("git status", cwd="/repo")
    first_us = (time.perf_counter_ns() - start) / 1000

    def parse(text: str) -> None:
        parse_command(text, cwd="/repo")

    for text in COMMANDS:  # warm-up
        _classify(text)
    print(f"import branchkeeper.shell.parse:  {import_us:8.0f} us")
    print(f"first parse (tree-sitter load):   {first_us:8.0f} us")
    print(f"{'parse us':>9} {'+classify us':>13}  command")
    for text in COMMANDS:
        p = _median_us(parse, text, repeats)
        c = _median_us(_classify, text, repeats)
        print(f"{p:9.1f} {c:13.1f}  {text[:70]}")


if __name__ == "__main__":
    main()
