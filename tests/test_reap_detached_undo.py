"""Reaping a detached worktree pins its HEAD under refs/branchkeeper, never journals a
remote-tracking ref, and its undo leaves the remote-tracking refs alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.state.journal import Journal
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo
from tests.reaputil import add_worktree, age_files


def test_reap_detached_pins_head_and_undo_touches_no_remote_ref(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.switch("feat", create=True)
    head = w.commit("f", files={"f.txt": "f\n"}, days_ago=3)
    w.git("push", "-q", "origin", "feat")
    w.switch("main")
    wt = tmp_path / "detached-wt"
    add_worktree(w, wt, "--detach", start="origin/feat", hours=10)
    age_files(wt, 10)
    capsys.readouterr()
    assert main(["-C", str(w.path), "worktree", "reap", "--no-gh"]) == 0
    assert not wt.exists()
    pin = f"refs/branchkeeper/reaped/detached-wt-{head[:10]}"
    assert w.rev(pin) == head
    operation = Journal(common_dir_of(w.path)).operations()[-1]
    assert (operation.op, [i.ref for i in operation.items]) == ("worktree-reap", [pin])
    # the remote branch goes away; undo must not invent a remote-tracking ref
    w.git("push", "-q", "origin", "--delete", "feat")
    w.git("fetch", "-q", "--prune", "origin")
    assert main(["-C", str(w.path), "undo"]) == 0
    assert not w.has_ref("refs/remotes/origin/feat")
    assert w.rev(pin) == head
