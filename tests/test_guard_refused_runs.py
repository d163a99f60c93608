# ruff: noqa: F811  (the `world` fixture is imported)
"""Issue 17, harmless commands no longer denied: commands the shell, ``find`` or git refuse
before anything runs lose nothing; each beside the nearest form that does run, which is still
judged. On the ``kinds/`` (work at risk in the main worktree) and ``kinds-clean/`` worlds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guardworld import assert_both_states, world  # noqa: F401 (fixture)

A, D = ("allow", ""), "deny"
RMW, DISC = "R-RM-WORK-AT-RISK", "R-GIT-DISCARD-CHANGES"

#: (command, decision in kinds/, decision in kinds-clean/)
CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    # find refuses an -exec without its `;` (an unquoted `;` ends the shell command) or with
    # a `+` that does not follow `{}`
    ("find . -exec git reset --hard ;", A, A), ("find . -exec git reset --hard \\;", (D, DISC), A),
    ("find src -execdir rm -f app.py +", A, A), ("find src -exec rm -f {} +", (D, RMW), A),
    ("find src -exec rm -f + {} \\;", (D, RMW), A),
    # git restore refuses: neither --staged nor --worktree left, a --source that is an
    # option, an unknown conflict style
    ("git restore --no-staged file.txt", A, A), ("git restore -S --no-staged file.txt", A, A),
    ("git restore -W --no-worktree file.txt", A, A), ("git restore -s --staged file.txt", A, A),
    ("git restore --conflict --staged file.txt", A, A),
    ("git restore --no-staged --worktree file.txt", (D, DISC), A),
    ("git restore --no-worktree -W file.txt", (D, DISC), A),
    ("git restore --conflict=merge file.txt", (D, DISC), A), ("git restore -s HEAD file.txt", (D, DISC), A),
    # command -v/-V only prints; another option letter is refused
    ("command -pv -- git reset --hard", A, A), ("command -V git reset --hard", A, A),
    ("command -px git reset --hard", A, A), ("command -p git reset --hard", (D, DISC), A),
    ("command -p -- git reset --hard", (D, DISC), A),
    # a program-running wrapper cannot run a shell builtin
    ("printf '%s\\n' --hard | xargs eval git reset", A, A), ("sudo eval git reset --hard", A, A),
    ("find . -exec eval git reset --hard \\;", A, A),
    ("time eval git reset --hard", (D, DISC), A), ("command eval git reset --hard", (D, DISC), A),
    # git refuses a -c key without a section
    ("git -c foo=bar reset --hard", A, A), ("git -c foo.bar=1 reset --hard", (D, DISC), A),
    # a program run by a path where nothing is: bash runs nothing
    ("./git reset --hard", A, A), ("/nonexistent/bin/git reset --hard", A, A),
    ("sudo ./git reset --hard", A, A),
    ("cp /usr/bin/git ./git; ./git reset --hard", (D, DISC), A),  # made first: judged
]


@pytest.mark.parametrize(("command", "at_risk", "clean"), CASES, ids=[c[:60] for c, _, _ in CASES])
def test_refused_runs(world: Path, command: str, at_risk: tuple[str, str],
                      clean: tuple[str, str]) -> None:
    assert_both_states(world, command, at_risk, clean)
