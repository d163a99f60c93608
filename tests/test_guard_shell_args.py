# ruff: noqa: F811, E501  (the `world` fixture is imported; case rows are long)
"""Issue 17: commands whose destructive words arrive as a shell's positional parameters
(``bash -c '...' NAME ARGS``, a function called with arguments) or as a variable's value split
into words (``W='rm -rf x'; $W``) are read as the commands they run and judged like their
literal form, on the two repositories of tests/guardworld.py (``kinds/``: work at risk in the
main worktree; ``kinds-clean/``: nothing at risk). What cannot be known (``IFS`` changed, a
variable a new shell does not inherit, zsh, which does not split, xargs appending its input)
stays unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from branchkeeper.shell.parse import parse_command
from tests.guardworld import assert_both_states, rel, world  # noqa: F401 (fixture)

A, D = ("allow", ""), "deny"
RMW, DISC, UNP = "R-RM-WORK-AT-RISK", "R-GIT-DISCARD-CHANGES", "R-GIT-UNPARSED-DESTRUCTIVE"

#: (command, decision in kinds/, decision in kinds-clean/)
CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    # bash -c SCRIPT NAME ARGS: $1..., "$@", $*, $# read from ARGS
    ("bash -c 'rm -rf \"$1\"' _ src", (D, RMW), A), ("bash -c 'rm -rf \"$@\"' _ src notes.txt", (D, RMW), A),
    ("sh -c 'rm -rf $*' sh src", (D, RMW), A), ("bash -c '\"$@\"' _ rm -rf src", (D, RMW), A),
    ("bash -c 'command \"$1\" \"$2\" \"$3\"' _ rm -rf src", (D, RMW), A),
    ("bash -c 'exec \"$1\" \"$2\" \"$3\"' _ rm -rf src", (D, RMW), A),
    ("bash -c 'git reset \"$1\"' _ --hard", (D, DISC), A), ("bash -c '$1' _ 'git reset --hard'", (D, DISC), A),
    ("bash -lc -- '$1' _ 'git reset --hard'", (D, DISC), A), ("bash -c '${1}' _ 'rm -rf src'", (D, RMW), A),
    ("bash -c 'rm -rf \"$2\"' _ src build", A, A), ("bash -c 'rm -rf \"$1\"' _ build", A, A),
    ("bash -c 'test $# -gt 1 && rm -rf \"$0\"' src", (D, RMW), A),
    ("find . -maxdepth 0 -exec bash -c 'rm -rf \"$@\"' _ src \\;", (D, RMW), A),
    ("bash -s src <<'EOF'\nrm -rf \"$1\"\nEOF", (D, RMW), A),
    # a variable's known value split into words, also as the command name
    ("W='rm -rf src'; $W", (D, RMW), A), ("W='rm -rf src'; env $W", (D, RMW), A),
    ("W='reset --hard'; git $W", (D, DISC), A), ("W='rm -rf build'; $W", A, A),
    ("E=''; $E rm -rf src", (D, RMW), A),
    # env -S splits its string into words, options and assignments included (GNU env)
    ("env -S 'rm -rf src'", (D, RMW), A), ("env -S 'rm' -rf src", (D, RMW), A),
    ("env -S 'git -C .' reset --hard", (D, DISC), A), ("env -S 'FOO=bar rm' -rf build", A, A),
    ("env --split-string='-i rm -rf src'", (D, RMW), A), ("env -S 'rm -rf \"src\"'", (D, UNP), (D, UNP)),
    ("env FOO=1 git commit -S -m x", A, A),
    # a shell function's positional parameters are its call's words
    ("f() { rm -rf \"$1\"; }; f src", (D, RMW), A), ("f() { rm -rf \"$1\"; }; f build", A, A),
    ("f() { git reset \"$@\"; }; f --hard", (D, DISC), A), ("f() { rm -rf \"$1\"; }; f build; f src", (D, RMW), A),
    # what stays unknown: IFS changed, a variable a new shell does not inherit, zsh (no
    # splitting), arguments xargs appends, a glob in the value
    ("bash -c 'IFS=,; $*' _ 'rm,-rf,src'", (D, UNP), (D, UNP)), ("X=src; bash -c 'rm -rf $X'", (D, UNP), A),
    ("export X=src; bash -c 'rm -rf $X'", (D, RMW), A), ("zsh -c 'rm -rf $1' _ 'src notes.txt'", (D, UNP), A),
    ("echo src | xargs bash -c 'rm -rf \"$@\"' _", (D, RMW), A), ("cat list | xargs bash -c 'rm -rf \"$@\"' _", (D, UNP), A), ("W='rm -rf s*'; $W", (D, UNP), (D, UNP)),
    # the commands of a `bash -c` script read the pipe the shell reads
    ("echo 'rm -rf src' | bash -c 'sh'", (D, UNP), (D, UNP)),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("X", raising=False)
    monkeypatch.delenv("W", raising=False)


@pytest.mark.parametrize(("command", "at_risk", "clean"), CASES, ids=[c[:60] for c, _, _ in CASES])
def test_positional_and_split_words(world: Path, command: str, at_risk: tuple[str, str],
                                    clean: tuple[str, str]) -> None:
    assert_both_states(world, command, at_risk, clean)


def test_text_of_a_positional_rm(world: Path) -> None:
    """The deny names the command the shell runs, as the agent wrote it."""
    k = f"{world}/kinds"
    d = decide_command("bash -c 'rm -rf \"$1\"' _ notes.txt", cwd=k)
    assert d.text == (
        f"[R-RM-WORK-AT-RISK] `rm -rf \"$1\"` would delete work in the worktree {k} "
        "that exists nowhere else (no commit holds it):\n"
        "  - notes.txt (untracked)\n\n"
        f"Keep the work first: commit it (git -C {k} add -A && git -C {k} commit) or stash it (git -C {k} "
        "stash push --include-untracked); move an ignored file you need somewhere it is kept. Then "
        "delete what is left, naming it exactly; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_words_as_bash_makes_them() -> None:
    """The argv read for each form, whole."""
    def argv(text: str) -> list[tuple[str, ...]]:
        return [inv.argv for inv in parse_command(text, cwd="/r", env={}).invocations]

    assert argv("bash -c 'rm -rf \"$@\" $# $0' me 'a b' c") == [
        ("bash", "-c", 'rm -rf "$@" $# $0', "me", "a b", "c"), ("rm", "-rf", "a b", "c", "2", "me")]
    assert argv("sh -c 'rm $1 $*' _ 'a  b' c") == [
        ("sh", "-c", "rm $1 $*", "_", "a  b", "c"), ("rm", "a", "b", "a", "b", "c")]
    assert argv("f() { echo \"$1\" $2; }; f 'x y' '' z") == [("f", "x y", "", "z"), ("echo", "x y")]
    assert argv("bash -c 'echo \"$3\"' _ a") == [("bash", "-c", 'echo "$3"', "_", "a"), ("echo", "")]
    assert argv("env -S 'FOO=bar git -C /x' reset --hard") == [("git", "-C", "/x", "reset", "--hard")]
