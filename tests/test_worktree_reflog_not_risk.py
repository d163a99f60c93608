"""A commit that only a linked worktree's HEAD reflog holds is not work at risk: amending or
rebasing a branch there leaves its old commits in that reflog, and counting them would keep
nearly every worktree an agent rebased (the guard denies moving a detached HEAD away from
commits no ref holds, the one way such a reflog comes to hold the only copy of new work)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo


def test_an_amended_commit_in_a_linked_worktree_is_no_lost_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    wt = w.worktree_add(tmp_path / "wt", "-b", "feat")
    wt.commit("first", files={"x.txt": "x\n"}, days_ago=2)
    wt.git("commit", "-q", "--amend", "-m", "first, amended")
    wt.git("push", "-q", "-u", "origin", "feat")
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    assert (doc["lost_work"], doc["summary"]["lost_work_risk"]) == ([], 0)
    code, out, err = cli(capsys, w, "worktree", "retire", str(tmp_path / "wt"))
    assert (code, err) == (0, "")
    assert out.startswith(f"removed worktree {tmp_path / 'wt'}\n")
