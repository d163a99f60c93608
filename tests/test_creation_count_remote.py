"""With ``branches.wip.count_remote: false`` only local branches count, so a local copy of a
branch that exists only on the remote is a new counted branch (an outside trial, F09): at the
cap it is denied like any other creation. Where remote branches count, the remote branch was
already counted and its local copy adds nothing."""

from __future__ import annotations

import pytest

from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


@pytest.mark.parametrize(("count_remote", "verdict"), [("false", "deny"), ("true", "allow")])
def test_a_local_copy_of_a_remote_only_branch_at_the_cap(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], count_remote: str, verdict: str) -> None:
    _, w = remote_and_clone
    (w.path / ".branchkeeper.yaml").write_text(
        f"branches:\n  wip:\n    cap: 2\n    count_remote: {count_remote}\n")
    w.git("add", ".branchkeeper.yaml")
    w.commit("config", days_ago=5)
    w.git("push", "-q", "origin", "main")
    for name in ("open1", "open2"):
        w.switch(name, create=True, start="main")
        w.commit(name, files={f"{name}.txt": "w\n"}, days_ago=2)
        w.git("push", "-q", "-u", "origin", name)
        w.switch("main")
    w.switch("r2", create=True, start="main")
    w.commit("r2", files={"r2.txt": "r\n"}, days_ago=2)
    w.git("push", "-q", "-u", "origin", "r2")
    w.switch("main")
    w.git("branch", "-q", "-D", "r2")
    if count_remote == "true":  # r2 counts already: the cap is 3 then, and reached
        (w.path / ".branchkeeper.yaml").write_text(
            "branches:\n  wip:\n    cap: 3\n    count_remote: true\n")
    for command in ("git branch r2 origin/r2", "git worktree add ../r2"):
        got = check_and_hook_alike(command, w.path, monkeypatch, capsys)
        assert (got["verdict"], got["rule_id"]) == (
            verdict, "R-BRANCH-WIP-CAP" if verdict == "deny" else ""), command
    assert check_and_hook_alike("git switch -c brand-new", w.path, monkeypatch,
                                capsys)["verdict"] == "deny"
