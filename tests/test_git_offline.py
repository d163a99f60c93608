"""Every git call but the network subcommands runs offline: in a partial clone a missing object
is an error, never a lazy fetch from the promisor remote (issue 11, section 4). Also the
version override the fallback tests use, and the remote/partial-clone facts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from branchkeeper.git import repo as gitrepo
from branchkeeper.git.repo import RemoteConfig, git_version, read_remote_config
from branchkeeper.git.run import GitError, run_git, subcommand
from tests.gitrepo import GitRepo


def partial_clone(tmp_path: Path) -> tuple[GitRepo, str]:
    """A ``clone --filter=blob:none`` of a local bare repository that allows filters, and the
    id of a blob the clone does not have (on a branch never checked out)."""
    bare = GitRepo.init_bare(tmp_path / "src.git")
    bare.git("config", "uploadpack.allowFilter", "true")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("c1", files={"a.txt": "one\n"}, days_ago=5)
    seed.switch("feat", create=True)
    seed.commit("feat", files={"b.txt": "feature\n"}, days_ago=4)
    seed.git("push", "-q", str(bare.path), "main", "feat")
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-local",
                    f"file://{bare.path}", str(tmp_path / "clone")], check=True)
    clone = GitRepo(tmp_path / "clone")
    return clone, seed.rev("feat:b.txt")


def _present(repo: GitRepo, oid: str) -> bool:
    out = subprocess.run(["git", "rev-list", "--objects", "--missing=print", "--all"],
                         cwd=repo.path, capture_output=True, text=True, check=True).stdout
    return f"?{oid}" not in out.split()


def test_partial_clone_object_is_never_fetched(tmp_path: Path) -> None:
    clone, blob = partial_clone(tmp_path)
    assert not _present(clone, blob)
    # the test HOME allows the file protocol (protocol.file.allow=always): overridden anyway
    with pytest.raises(GitError) as caught:
        run_git(["cat-file", "-p", blob], cwd=clone.path)
    assert f"could not fetch {blob} from promisor remote" in caught.value.stderr.decode()
    with pytest.raises(GitError):
        run_git(["diff-tree", "-p", "origin/main", "origin/feat"], cwd=clone.path)
    assert not _present(clone, blob)
    assert run_git(["fetch", "-q", "origin"], cwd=clone.path).returncode == 0  # on purpose
    assert read_remote_config(clone.path, "origin") == RemoteConfig(True, ("origin",))


def test_remote_config(tmp_path: Path, remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, clone = remote_and_clone
    assert read_remote_config(clone.path, "origin") == RemoteConfig(True, ())
    assert read_remote_config(clone.path, "upstream") == RemoteConfig(False, ())
    lone = GitRepo.init(tmp_path / "lone")
    assert read_remote_config(lone.path, "origin") == RemoteConfig(False, ())
    lone.git("config", "extensions.partialClone", "weird.name")
    lone.git("remote", "add", "weird.name", "file:///nowhere")
    assert read_remote_config(lone.path, "weird.name") == RemoteConfig(True, ("weird.name",))


def test_subcommand_skips_global_options() -> None:
    assert subcommand(["-c", "a=b", "-C", "dir", "fetch", "origin"]) == "fetch"
    assert subcommand(["--no-pager", "merge-tree", "--stdin"]) == "merge-tree"
    assert subcommand(["-c", "x=y"]) == ""


def test_assumed_older_git_version(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = git_version()
    try:
        monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, "2.38.1")
        git_version.cache_clear()
        old = git_version()
        assert (old.tuple, old.has_merge_tree_write_tree, old.has_merge_tree_stdin) == (
            (2, 38, 1), True, False)
        assert old.text == f"git version 2.38.1 (assumed; installed: {installed.text})"
        monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, "99.0.0")
        git_version.cache_clear()
        assert git_version() == installed
    finally:
        monkeypatch.delenv(gitrepo.ASSUME_VERSION_ENV)
        git_version.cache_clear()
