# ruff: noqa: F811  (the `world` fixture is imported)
"""Issue 17: a truncation (``> f``, ``>| f``, ``: > f``, ``truncate -s0 f``, ``cp /dev/null f``,
the same through ``bash -c``, ``$(...)``, ``xargs`` and ``find -exec``) of a file whose content
exists nowhere else is denied (``R-FILE-TRUNCATE``); a clean tracked file, a staged one, a
regenerable ignored one, a file that is not there or lies outside every repository may be
emptied, and ``>>`` appends. On two real repositories: ``kinds/`` (uncommitted edits in
``file.txt`` and ``src/app.py``, untracked ``notes.txt`` and ``src/new.py``, an ignored
``.env`` the protected glob keeps, a regenerable ``build/out.o``, a staged ``docs/guide.md``)
and ``kinds-clean/`` (everything committed and pushed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.guardworld import assert_both_states, world  # noqa: F401 (fixture)
from tests.hookutil import check_and_hook_alike

A, D = ("allow", ""), "deny"
TR, UNP = "R-FILE-TRUNCATE", "R-GIT-UNPARSED-DESTRUCTIVE"

#: (command, decision in kinds/, decision in kinds-clean/)
CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    ("> file.txt", (D, TR), A), (">| notes.txt", (D, TR), A), (": > file.txt", (D, TR), A),
    ("true > src/app.py", (D, TR), A), ("2> notes.txt", (D, TR), A), ("true &> notes.txt", (D, TR), A),
    ("truncate -s0 file.txt", (D, TR), A), ("truncate -s 0 notes.txt", (D, TR), A),
    ("truncate --size=0 -- src/new.py", (D, TR), A), ("truncate -s 1 file.txt", (D, TR), A),
    ("cp /dev/null file.txt", (D, TR), A), ("cat /dev/null > notes.txt", (D, TR), A),
    ("echo -n > file.txt", (D, TR), A), ("dd if=/dev/null of=notes.txt", (D, TR), A),
    ("> .env", (D, TR), A), ("sudo truncate -s0 file.txt", (D, TR), A),
    # the same reader inside other commands
    ("bash -c ': > file.txt'", (D, TR), A), ('echo "$(: > notes.txt)"', (D, TR), A),
    ("echo file.txt | xargs truncate -s0", (D, TR), A),
    ("find . -name '*.txt' -exec truncate -s 0 {} +", (D, TR), A),
    ("f() { : > notes.txt; }; f", (D, TR), A), ("f() { : > notes.txt; }", A, A),
    ("truncate -s0 $NOT_SET_ANYWHERE", (D, UNP), A),
    # nothing is lost
    (": >> file.txt", A, A), (">> notes.txt", A, A), ("truncate -s +1K file.txt", A, A),
    ("truncate -s 0 README.md", A, A), ("> README.md", A, A), ("> build/out.o", A, A),
    ("> docs/guide.md", A, A), ("> brand-new.txt", A, A), (": > {W}/outside.txt", A, A),
    ("truncate -s0 src", A, A), ("dd if=/dev/null of=notes.txt conv=notrunc", A, A),
    # a command that writes content is a rewrite, which the guard does not judge
    ("echo hi > file.txt", A, A), ("cat > notes.txt <<'EOF'\nnew\nEOF", A, A),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)


@pytest.mark.parametrize(("command", "at_risk", "clean"), CASES, ids=[c[:60] for c, _, _ in CASES])
def test_truncation_both_states(world: Path, command: str, at_risk: tuple[str, str],
                                clean: tuple[str, str]) -> None:
    assert_both_states(world, command, at_risk, clean)


def test_text_truncation(world: Path) -> None:
    """The whole deny, with one ``git status`` for every file of the command."""
    k = f"{world}/kinds"
    before = processes_started()
    d = decide_command("truncate -s0 file.txt notes.txt README.md .env", cwd=k)
    assert processes_started() - before == 1
    assert d.text == (
        f"[R-FILE-TRUNCATE] `truncate -s0 file.txt notes.txt README.md .env` would empty files in "
        f"the worktree {k} whose content exists nowhere else (no commit holds it):\n"
        "  - file.txt (uncommitted changes)\n  - notes.txt (untracked)\n"
        "  - .env (ignored, matches protected glob '.env*')\n\n"
        f"Keep the content first: commit it (git -C {k} add -A && git -C {k} commit) or stash it "
        f"(git -C {k} stash push --include-untracked); then empty the file. Or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_no_git_for_a_file_outside_every_repository(world: Path) -> None:
    before = processes_started()
    assert decide_command(f": > {world}/outside.txt; > brand-new.txt",
                          cwd=f"{world}/kinds").verdict.value == "allow"
    assert processes_started() == before


def test_check_and_hook_answer_alike(world: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`branchkeeper check` and the PreToolUse hook give the same decision."""
    for command in ("> file.txt", "truncate -s0 notes.txt", ": >> file.txt", "> README.md"):
        for repo in ("kinds", "kinds-clean"):
            check_and_hook_alike(command, world / repo, monkeypatch, capsys)
