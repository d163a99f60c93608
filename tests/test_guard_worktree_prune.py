"""`git worktree prune` and `git worktree remove` of a worktree whose directory is gone (trial
finding F5): the entry is the only hold on its detached HEAD, its own refs and its submodule
stores, so the guard denies the command while it holds any, and allows it when nothing is at
risk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


def _gone_detached(repo: GitRepo, tmp_path: Path, name: str = "wt-det") -> tuple[Path, str]:
    """A detached worktree with a commit of its own whose directory is deleted by hand."""
    wt = tmp_path / name
    repo.git("worktree", "add", "-q", "--detach", str(wt))
    w = GitRepo(wt)
    head = w.commit("detached work", files={"d.txt": "d\n"})
    shutil.rmtree(wt)
    return wt, head


def _prune_text(command: str, repo: GitRepo, wt: Path, head: str) -> str:
    admin = repo.path / ".git" / "worktrees" / wt.name
    return (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `{command}` would lose work: it deletes the entry of "
        "each worktree below, the only thing holding what is listed:\n"
        f"worktree {wt} (directory gone, entry {admin}):\n"
        f"    - detached HEAD {head[:10]} is held by no branch, tag or remote-tracking ref\n\n"
        "Run `branchkeeper prune` instead: it pins each detached HEAD as "
        "refs/branchkeeper/pinned/<dir>-<sha> and locks an entry whose refs or submodule "
        "stores hold work before it prunes. Or secure each first (git branch "
        f"rescue/{wt.name}-{head[:10]} {head}), push it, then prune; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_f5_worktree_prune_is_denied_while_a_gone_entry_holds_a_detached_commit(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    wt, head = _gone_detached(repo, tmp_path)
    for command in ("git worktree prune", "git worktree prune --expire=now",
                    "git worktree prune -v --expire now"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == (
            "deny", _prune_text(command, repo, wt, head)), command
    assert check_and_hook_alike("git worktree prune --dry-run", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"
    # the way out: the printed branch holds the commit, then prune is allowed
    repo.git("branch", f"rescue/wt-det-{head[:10]}", head)
    assert check_and_hook_alike("git worktree prune", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def test_f5_worktree_prune_with_nothing_at_risk_is_allowed(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "on-branch"))
    shutil.rmtree(tmp_path / "on-branch")  # its branch keeps its commit
    wt, _ = _gone_detached(repo, tmp_path, "locked")
    repo.git("worktree", "lock", str(wt))  # git worktree prune spares a locked entry
    assert check_and_hook_alike("git worktree prune", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def test_f5_worktree_prune_is_denied_for_a_gone_entry_whose_own_ref_holds_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    wt = tmp_path / "wt-ref"
    repo.git("worktree", "add", "-q", "--detach", str(wt))
    w = GitRepo(wt)
    head = w.commit("only the ref", files={"r.txt": "r\n"})
    w.git("update-ref", "refs/worktree/keep", head)
    w.git("checkout", "-q", "--detach", "main")
    shutil.rmtree(wt)
    admin = repo.path / ".git" / "worktrees" / "wt-ref"
    checked = check_and_hook_alike("git worktree prune", repo.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("deny", (
        "[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree prune` would lose work: it deletes the "
        "entry of each worktree below, the only thing holding what is listed:\n"
        f"worktree {wt} (directory gone, entry {admin}):\n"
        "    - its own ref refs/worktree/keep holds 1 commit(s) no branch, tag or remote holds"
        "\n\nRun `branchkeeper prune` instead: it pins each detached HEAD as "
        "refs/branchkeeper/pinned/<dir>-<sha> and locks an entry whose refs or submodule "
        "stores hold work before it prunes. Or secure each first (git branch "
        f"rescue/wt-ref-keep-{head[:10]} {head}), push it, then prune; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE))


def test_f5_worktree_remove_of_a_gone_entry_holding_a_detached_commit_is_denied(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    wt, head = _gone_detached(repo, tmp_path)
    for command in (f"git worktree remove {wt}", f"git worktree remove --force {wt}"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("deny", (
            f"[R-GIT-WORKTREE-REMOVE-FORCE] `{command}` would lose work:\n"
            f"HEAD {head[:10]} is contained in no branch, tag or remote-tracking ref (a "
            "detached HEAD, or its branch is deleted too)\n\n"
            f"First keep HEAD on a branch and push it (git branch rescue/wt-det-{head[:10]} "
            f"{head}); then remove the worktree without --force (git worktree remove {wt}), or "
            f"let `branchkeeper worktree retire {wt}` check it for you.\n\n"
            + BRANCH_LIMIT_PRINCIPLE)), command
    repo.git("branch", "kept", head)
    assert check_and_hook_alike(f"git worktree remove {wt}", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def _gc_text(command: str, repo: GitRepo, wt: Path, head: str) -> str:
    admin = repo.path / ".git" / "worktrees" / wt.name
    return (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `{command}` would lose work: it deletes the entry of "
        "each worktree below, the only thing holding what is listed (`git gc` runs `git "
        "worktree prune --expire <gc.worktreePruneExpire>`, 3 months by default; the guard does "
        "not judge the entries' ages against that expiry, so it denies while such an entry "
        "exists):\n"
        f"worktree {wt} (directory gone, entry {admin}):\n"
        "    - its own ref refs/worktree/x holds 1 commit(s) no branch, tag or remote holds\n\n"
        "Run `branchkeeper prune` instead: it pins each detached HEAD as "
        "refs/branchkeeper/pinned/<dir>-<sha> and locks an entry whose refs or submodule "
        "stores hold work before it prunes. Or secure each first (git branch "
        f"rescue/{wt.name}-x-{head[:10]} {head}), push it, then run gc; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_f10_git_gc_is_judged_as_the_worktree_prune_it_runs(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    repo.git("branch", "feat")
    wt = tmp_path / "wt-gc"
    repo.git("worktree", "add", "-q", str(wt), "feat")
    w = GitRepo(wt)
    head = w.commit("only in refs/worktree/x", files={"x.txt": "x\n"})
    w.git("update-ref", "refs/worktree/x", head)
    w.git("reset", "-q", "--hard", "HEAD~1")
    shutil.rmtree(wt)
    for command in ("git -c gc.worktreePruneExpire=now gc", "git gc", "git gc --auto -q"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == (
            "deny", _gc_text(command, repo, wt, head)), command
    # --prune=now is also a tamper ask; the deny is the answer
    checked = check_and_hook_alike("git gc --prune=now", repo.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"].splitlines()[0]) == (
        "deny", _gc_text("git gc --prune=now", repo, wt, head).splitlines()[0])
    # contrasts: a gc told never to prune worktrees, and a locked entry (git spares it)
    assert check_and_hook_alike("git -c gc.worktreePruneExpire=never gc", repo.path,
                                monkeypatch, capsys)["verdict"] == "allow"
    repo.git("worktree", "lock", str(wt))
    assert check_and_hook_alike("git gc", repo.path, monkeypatch, capsys)["verdict"] == "allow"
