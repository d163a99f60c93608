"""Moving a detached HEAD away from commits no ref holds (trial finding F7): checkout, switch
and reset --hard|--keep|--merge leave them to the worktree's HEAD reflog alone, which
`git worktree remove` deletes. The guard denies the move, like a force delete of that tip,
and allows it when a ref holds the commit or the target contains it."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


def _detached(repo: GitRepo, tmp_path: Path) -> tuple[GitRepo, str]:
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "--detach", str(wt))
    w = GitRepo(wt)
    return w, w.commit("detached work", files={"d.txt": "d\n"})


def _text(command: str, top: Path, head: str) -> str:
    name = f"rescue/{top.name}-{head[:10]}"
    return (
        f"[R-GIT-DETACHED-HEAD-MOVE] `{command}` would lose work: HEAD is detached at "
        f"{head[:10]} in {top} and no branch, tag or remote-tracking ref holds it; moving HEAD "
        "away leaves its 1 commit held only by that worktree's HEAD reflog, which `git "
        "worktree remove` deletes.\n\n"
        f"Keep the work first: git -C {top} branch {name} HEAD, then push it (git -C {top} push "
        f"-u origin {name}); then the move is allowed. Or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_f7_moving_a_detached_head_away_from_its_own_commit_is_denied(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    w, head = _detached(repo, tmp_path)
    main = repo.rev("main")
    for command in ("git checkout --detach main", "git switch --detach main",
                    f"git checkout {main}", "git checkout main", "git switch main",
                    "git checkout -", "git reset --hard main", "git reset --keep main",
                    "git reset --merge HEAD~1", "git switch --orphan fresh",
                    "git checkout -b other main"):
        checked = check_and_hook_alike(command, w.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == (
            "deny", _text(command, w.path, head)), command
    # from the main worktree, naming the linked one
    command = f"git -C {w.path} checkout --detach main"
    checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("deny", _text(command, w.path, head))
    assert w.rev("HEAD") == head


def test_f7_a_detached_head_a_ref_holds_or_a_target_containing_it_moves_freely(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    w, head = _detached(repo, tmp_path)
    for command in ("git checkout d.txt", "git checkout -- d.txt", "git checkout main -- d.txt",
                    "git reset --hard no-such-commit", "git reset --soft main",
                    "git switch -c keep", "git checkout --detach", "git checkout HEAD"):
        assert check_and_hook_alike(command, w.path, monkeypatch, capsys)["verdict"] \
            == "allow", command
    w.git("branch", "held", head)  # a branch holds the commit: nothing is lost
    for command in ("git checkout --detach main", "git switch main", "git reset --hard main"):
        assert check_and_hook_alike(command, w.path, monkeypatch, capsys)["verdict"] \
            == "allow", command
    w.git("branch", "-D", "held")
    w.git("checkout", "-q", "--detach", "main")  # at a commit the default branch holds
    assert check_and_hook_alike(f"git checkout {head}", w.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def test_f7_a_descendant_of_the_detached_head_keeps_it(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    w, head = _detached(repo, tmp_path)
    later = w.commit("more", files={"e.txt": "e\n"})
    w.git("checkout", "-q", "--detach", head)  # `later` hangs on the reflog only
    assert check_and_hook_alike(f"git checkout {later}", w.path, monkeypatch,
                                capsys)["verdict"] == "allow"  # it contains `head`
    assert check_and_hook_alike("git checkout --detach main", w.path, monkeypatch,
                                capsys)["verdict"] == "deny"
