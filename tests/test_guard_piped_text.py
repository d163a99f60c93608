# ruff: noqa: F811, E501  (the `world` fixture is imported; case rows are long)
"""Issue 17: what a literal ``echo``/``printf`` writes down a pipe is read, so a shell, an
interpreter, ``xargs`` or ``parallel`` reading that pipe is judged by the commands it really
runs, on the two repositories of tests/guardworld.py (``kinds/``: work at risk in the main
worktree; ``kinds-clean/``: nothing at risk). Input the guard cannot know exactly (another
program upstream, an escape it does not read, quotes xargs interprets, more than one command
line) stays unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from branchkeeper.shell.parse import parse_command
from branchkeeper.shell.pipetext import input_lines, output_of, xargs_items
from tests.guardworld import assert_both_states, rel, world  # noqa: F401 (fixture)

A, D = ("allow", ""), "deny"
RMW, DISC, UNP = "R-RM-WORK-AT-RISK", "R-GIT-DISCARD-CHANGES", "R-GIT-UNPARSED-DESTRUCTIVE"

#: (command, decision in kinds/, decision in kinds-clean/)
CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    # a shell reading the pipe
    ("echo rm -rf src | sh", (D, RMW), A), ("echo 'rm -rf build' | bash", A, A),
    ("printf '%s\\n' 'git reset --hard' | bash", (D, DISC), A), ("printf 'git reset --hard\\n' | bash -s", (D, DISC), A),
    ("printf 'rm -rf %s\\n' src | /bin/sh", (D, RMW), A), ("echo -n 'rm notes.txt' | sh", (D, RMW), A),
    ("echo 'rm -rf src' | bash --norc -s", (D, RMW), A), ("echo 'git status' | sh", A, A),
    ("printf 'cd src\\nrm -f *\\n' | sh", (D, RMW), A),
    # an interpreter reading its code from the pipe
    ("echo 'import shutil; shutil.rmtree(\"src\")' | python3 -", (D, RMW), A),
    # xargs: the input words appended, or -I's string replaced by the one line
    ("echo src | xargs rm -rf", (D, RMW), A), ("echo build | xargs rm -rf", A, A),
    ("echo src notes.txt | xargs -r rm -rf", (D, RMW), A), ("echo src | xargs -I{} rm -rf {}", (D, RMW), A),
    ("echo src | xargs -I % bash -c 'rm -rf %'", (D, RMW), A), ("echo 'reset --hard' | xargs git", (D, DISC), A),
    ("echo ok | xargs python3 -c 'import os; os.system(\"git reset --hard\")'", (D, DISC), A),
    ("echo ok | xargs find . -name new.py -delete", (D, RMW), A),
    # parallel: each input line an argument, or a command line when it has no command
    ("echo src | parallel rm -rf", (D, RMW), A), ("printf 'rm -rf src\\n' | parallel", (D, RMW), A),
    ("echo 'rm -rf src' | parallel bash -c {}", (D, RMW), A), ("echo build | parallel rm -rf", A, A),
    # what stays unknown (xargs fed words it would read quotes in: the words are unknown;
    # the words of -n1 and -0 are judged as the literal words, which is stricter than xargs)
    ("cat cmds | sh", A, A), ("cat list | xargs rm -rf", (D, UNP), A),
    ("echo 'rm -rf src' | cat | sh", (D, UNP), (D, UNP)), ("echo -e 'rm -rf src' | sh", (D, RMW), A), ("echo -e 'rm -rf src\\c' | sh", (D, UNP), (D, UNP)),
    ("printf '%d rm -rf src' 1 | sh", (D, UNP), (D, UNP)), ("echo \"'src'\" | xargs rm -rf", (D, UNP), A),
    ("printf 'a\\nsrc\\n' | xargs -I{} rm -rf {}", (D, UNP), A), ("echo src build | xargs -n1 rm -rf", (D, RMW), A),
    ("echo src | xargs -0 rm -rf", (D, RMW), A), ("echo src | parallel -d , rm -rf", (D, UNP), A),
    ("echo 'rm -rf src' | { sh; }", (D, UNP), (D, UNP)), ("echo 'rm -rf src' | sh < cmds", (D, UNP), (D, UNP)),
    ("echo 'rm -rf src' > /dev/null | sh", (D, UNP), (D, UNP)),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))


@pytest.mark.parametrize(("command", "at_risk", "clean"), CASES, ids=[c[:60] for c, _, _ in CASES])
def test_piped_text(world: Path, command: str, at_risk: tuple[str, str], clean: tuple[str, str]) -> None:
    assert_both_states(world, command, at_risk, clean)


def test_text_of_a_piped_reset(world: Path) -> None:
    """The deny names the command the shell reads from the pipe, as the literal form would."""
    k = f"{world}/kinds"
    piped = decide_command("echo 'git reset --hard' | sh", cwd=k)
    direct = decide_command("git reset --hard", cwd=k)
    assert piped.text == direct.text
    assert piped.text.startswith(
        f"[R-GIT-DISCARD-CHANGES] `git reset --hard` would discard uncommitted work in {k} ")


def test_what_echo_printf_xargs_and_parallel_make() -> None:
    assert output_of(("echo", "-n", "a", "b")) == "a b"
    assert output_of(("echo", "-e", "a\\tb")) is None
    assert output_of(("printf", "%s %s\\n", "a", "b", "c")) == "a b\nc \n"
    assert output_of(("printf", "100%% %s\\t", "x")) == "100% x\t"
    assert output_of(("printf", "-v", "x", "y")) is None
    assert output_of(("printf", "%5s", "x")) is None
    assert output_of(("printf", "\\x41")) is None
    assert xargs_items(" a  b\n c\n", lines=False) == ["a", "b", "c"]
    assert xargs_items("  a b\n", lines=True) == ["a b"]
    assert xargs_items("a\n\nb\n", lines=True) is None
    assert xargs_items("'a'", lines=False) is None
    assert input_lines("a\n\nb\n") == ["a", "", "b"]
    argv = [inv.argv for inv in parse_command(
        "printf '%s\\n' 'rm -rf /x' | xargs sh -c 'sh -c \"$1\"' _", cwd="/r", env={}).invocations]
    assert argv == [("printf", "%s\\n", "rm -rf /x"), ("sh", "-c", 'sh -c "$1"', "_", "rm", "-rf", "/x"),
                    ("sh", "-c", "rm"), ("rm",)]
