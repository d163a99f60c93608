"""Ask the command guard about each command, inside the sandbox, on the untouched world.

Run with the Python that has branchkeeper installed: ``python guard.py`` reads a JSON list of
commands on stdin and prints one JSON list of ``{"verdict", "rule_id", "reason", "hook"}``: what
``decide_command`` (``branchkeeper check``) decides for it in the main worktree, and what the
PreToolUse hook would answer (``allow`` when its fast path skips the guard). The guard sees
the same paths, ``HOME`` and ``TMPDIR`` as the command does when the oracle runs it.
"""

from __future__ import annotations

import json
import sys

from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.policy.command import decide_command

CWD = "/home/agent/project"


def main() -> None:
    out = []
    for command in json.load(sys.stdin):
        d = decide_command(command, cwd=CWD)
        hook = d.verdict.value if needs_guard(command, cwd=CWD) else "allow"
        out.append({"verdict": d.verdict.value, "rule_id": d.rule_id, "reason": d.reason,
                    "hook": hook})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
