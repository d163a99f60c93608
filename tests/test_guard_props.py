"""Property tests of the guard (issue 5 section 5): quoting round trips, never raising, never
denying a command without a git or rm invocation."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.policy.command import decide_command
from branchkeeper.policy.decision import Decision
from branchkeeper.shell.parse import git_invocations, parse_command
from branchkeeper.shell.quoting import shell_quote

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1, max_size=40)
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@given(name=TEXT, path=TEXT)
@SETTINGS
def test_names_and_paths_round_trip(name: str, path: str) -> None:
    cmd = f"git worktree add -b {shell_quote(name)} {shell_quote(path)}"
    gits = git_invocations(parse_command(cmd, cwd="/repo"))
    assert len(gits) == 1
    assert (gits[0].subcommand, *gits[0].args) == ("worktree", "add", "-b", name, path)


@given(text=st.text(max_size=200))
@SETTINGS
def test_decide_never_raises(tmp_path: Path, text: str) -> None:
    d = decide_command(text, cwd=str(tmp_path))
    assert isinstance(d, Decision)


WORDS = st.sampled_from(["ls", "echo", "grep", "cat", "printf", "make", "python", "-D", "--force",
                         "branch", "push", "--delete", "x", "'git branch -D x'", "|", "&&", ";",
                         "$(echo hi)", "$X", "<<EOF\ngit push --mirror\nEOF\n", "worktree"])


@given(words=st.lists(WORDS, min_size=1, max_size=12))
@SETTINGS
def test_never_denies_without_git_or_rm(tmp_path: Path, words: list[str]) -> None:
    text = " ".join(words)
    parsed = parse_command(text, cwd=str(tmp_path))
    if any(inv.name in ("git", "rm") for inv in parsed.invocations) or parsed.unparsed:
        return
    assert decide_command(text, cwd=str(tmp_path)).verdict.value == "allow"
