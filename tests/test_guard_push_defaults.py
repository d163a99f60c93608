"""A plain forced push goes where git's own config sends it, including the command's own
``-c push.default=…`` and ``push.autoSetupRemote`` (issue 17, section 1: force pushes over
commits only the remote holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from tests.gitrepo import GitRepo

PUSHF = "R-GIT-PUSH-FORCE-OVERWRITE"


@pytest.fixture
def behind(tmp_path: Path) -> GitRepo:
    """Clone b has branch ``shared`` (no upstream) one commit behind origin's ``shared``, with a
    commit of its own: a forced push of it drops origin's "more"."""
    origin = GitRepo.init_bare(tmp_path / "o.git")
    a = GitRepo.clone(origin.path, tmp_path / "a")
    a.commit("initial", files={"f": "1\n"})
    a.git("push", "-q", "-u", "origin", "main")
    a.switch("shared", create=True)
    a.commit("t", files={"t": "t\n"})
    a.commit("more", files={"t": "t\nm\n"})
    a.git("push", "-q", "origin", "shared")
    b = GitRepo.clone(origin.path, tmp_path / "b")
    b.git("switch", "-q", "--no-track", "-c", "shared", "origin/shared~1")
    b.commit("mine", files={"x": "x\n"})
    return b


def _decide(repo: GitRepo, command: str) -> tuple[str, str]:
    d = decide_command(command, cwd=str(repo.path))
    return d.verdict.value, d.rule_id


def test_push_default_given_on_the_command_line(behind: GitRepo) -> None:
    assert _decide(behind, "git -c push.default=current push -f") == ("deny", PUSHF)
    assert _decide(behind, "git -c push.default=nothing push -f") == ("allow", "")


def test_push_auto_setup_remote(behind: GitRepo) -> None:
    # no upstream and push.default simple: git refuses the push itself
    assert _decide(behind, "git push -f") == ("allow", "")
    behind.git("config", "push.autoSetupRemote", "true")
    assert _decide(behind, "git push -f") == ("deny", PUSHF)
    assert _decide(behind, "git -c push.autoSetupRemote=false push -f") == ("allow", "")
