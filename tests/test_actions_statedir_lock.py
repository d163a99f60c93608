"""statedir and lock: the common dir from any worktree, and a lock two processes contend for."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from branchkeeper.errors import NotARepositoryError
from branchkeeper.state.lock import LockBusyError, repo_lock
from branchkeeper.state.statedir import bundles_dir, common_dir_of, find_common_dir, journal_path, state_dir
from tests.gitrepo import GitRepo


def test_common_dir_is_shared_by_worktrees(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a": "1\n"})
    wt = repo.worktree_add(tmp_path / "wt", "-b", "side")
    (repo.path / "sub").mkdir()
    expected = (repo.path / ".git").resolve()
    assert common_dir_of(repo.path) == expected
    assert common_dir_of(repo.path / "sub") == expected
    assert common_dir_of(wt.path) == expected


def test_find_common_dir_agrees_with_git(tmp_path: Path) -> None:
    """The hook path's filesystem lookup gives git's answer: main and linked worktrees, a
    subdirectory, a bare repository, a symlinked path; outside a repository it raises as git
    does."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a": "1\n"})
    wt = repo.worktree_add(tmp_path / "wt", "-b", "side")
    (wt.path / "deep" / "er").mkdir(parents=True)
    bare = GitRepo.init_bare(tmp_path / "bare.git")
    (tmp_path / "link").symlink_to(wt.path)
    for where in (repo.path, wt.path, wt.path / "deep" / "er", bare.path, tmp_path / "link"):
        assert find_common_dir(where) == common_dir_of(where), where
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepositoryError):
        find_common_dir(plain)
    with pytest.raises(NotARepositoryError):
        find_common_dir(tmp_path / "missing")


def test_state_dir_layout_and_mode(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    common = common_dir_of(repo.path)
    sd = state_dir(common)
    assert sd == common / "branchkeeper"
    assert stat.S_IMODE(sd.stat().st_mode) == 0o700
    assert journal_path(common) == sd / "journal.jsonl"
    assert bundles_dir(common) == sd / "bundles"
    assert (sd / "bundles").is_dir()


def test_outside_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepositoryError) as info:
        common_dir_of(plain)
    assert str(info.value) == (  # the words repo_facts uses for the same directory
        f"{plain}: not inside a git repository (fatal: not a git repository (or any of the "
        "parent directories): .git)")


_HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from branchkeeper.state.lock import repo_lock
    with repo_lock(Path(sys.argv[1]), "prune", wait_s=0):
        print("held", flush=True)
        sys.stdin.read()
    """
)


def test_lock_contention_between_processes(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    common = common_dir_of(repo.path)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(common)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockBusyError) as info, repo_lock(common, "prune", wait_s=0.2):
            pass
        assert str(info.value) == (
            f"another branchkeeper prune is running in this repository (pid {holder.pid}); "
            "try again when it finishes"
        )
        # Another name is independent.
        with repo_lock(common, "undo", wait_s=0):
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    # Released when the holder exits: now it is ours at once.
    with repo_lock(common, "prune", wait_s=0) as path:
        assert path == common / "branchkeeper" / "locks" / "prune.lock"
