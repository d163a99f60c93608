"""A submodule's uncommitted edit is work whatever ``.gitmodules`` says of it (an outside
trial, F13): ``submodule.<name>.ignore = all|dirty`` hid the edit from ``git status`` in the
superproject, so the sweep listed no risk, retire would remove the worktree and the guard
allowed ``rm -rf`` of it. Every status read passes ``--ignore-submodules=none``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike
from tests.reaputil import add_worktree, age_files

SUBMODULE = ("-c", "protocol.file.allow=always", "submodule")


@pytest.mark.parametrize("ignore", ["all", "dirty"])
def test_an_edit_in_an_ignored_submodule_is_uncommitted_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        ignore: str) -> None:
    _, repo = remote_and_clone
    sub = GitRepo.init(tmp_path / "sub")
    sub.commit("s1", files={"s.txt": "s\n"}, days_ago=50)
    repo.git(*SUBMODULE, "add", "-q", str(sub.path), "lib")
    repo.git("config", "-f", ".gitmodules", "submodule.lib.ignore", ignore)
    repo.git("add", ".gitmodules")
    repo.commit("add lib", days_ago=40)
    repo.git("push", "-q", "origin", "main")
    wt = tmp_path / "wt"
    w = add_worktree(repo, wt, "-b", "feat", start="main", hours=30)
    w.git(*SUBMODULE, "update", "--init", "-q")
    w.git("push", "-q", "-u", "origin", "feat")
    (wt / "lib" / "s.txt").write_text("precious uncommitted edit\n")
    age_files(wt, 30)
    assert w.git("status", "--porcelain") == ""  # what the setting hides
    code, doc = cli_json(capsys, repo, "sweep")
    assert code == 0
    assert [(i["kind"], i["subject"], i["detail"]) for i in doc["lost_work"]] == [
        ("dirty_worktree", str(wt), "1 uncommitted or untracked file(s): lib")]
    rc, out, _ = cli(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert rc == 3 and f"would keep worktree {wt}: SKIP_DIRTY\n" in out
    got = check_and_hook_alike(f"rm -rf {wt}", repo.path, monkeypatch, capsys)
    assert (got["verdict"], got["rule_id"]) == ("deny", "R-GIT-WORKTREE-REMOVE-FORCE")
