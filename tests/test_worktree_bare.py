"""The bare-repository layout, and a worktree whose status cannot be read (fails closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo


def _list(capsys: pytest.CaptureFixture[str], where: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    assert main(["-C", str(where), "worktree", "list", "--json"]) == 0
    return {w["path"]: w for w in json.loads(capsys.readouterr().out)["worktrees"]}


def test_bare_repository_with_linked_worktrees(remote_and_clone: tuple[GitRepo, GitRepo],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    bare, _ = remote_and_clone
    wt = bare.path.parent / "feature wt"
    bare.git("worktree", "add", "-q", "-b", "feature", str(wt), "main")
    rows = _list(capsys, bare.path)
    assert (rows[str(bare.path)]["retire"]["disposition"],
            rows[str(bare.path)]["retire"]["reason"]) == (
        "SKIP_SELF", "the bare repository itself is never removed")
    assert rows[str(wt)]["branch"] == "feature"
    capsys.readouterr()
    assert main(["-C", str(bare.path), "sweep", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["lost_work_risk"] == 0  # a server has no remote to judge against


def test_unreadable_worktree_is_never_removable(remote_and_clone: tuple[GitRepo, GitRepo],
                                                tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    wt = tmp_path / "broken"
    w.git("worktree", "add", "-q", "-b", "broken", str(wt), "main")
    (wt / "notes.txt").write_text("uncommitted\n")
    (wt / ".git").write_text("gitdir: /nonexistent/place\n")  # status now fails there
    row = _list(capsys, w.path)[str(wt)]
    for command in ("retire", "reap"):
        assert row[command]["disposition"] == "SKIP_DIRTY"
        assert row[command]["reason"].startswith("could not read its status: ")
    capsys.readouterr()
    assert main(["-C", str(w.path), "worktree", "retire", str(wt)]) == 3
    assert (wt / "notes.txt").read_text() == "uncommitted\n"
