"""`git bisect reset` and `git bisect start` delete the worktree's refs/bisect/* (trial finding
F11): while a bisect ref is the only hold on a commit (the sweep's LOST WORK RISK), the guard
denies them with the command the sweep prints, and allows them once that ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


def _bisect_left_alone(w: GitRepo, branch: str | None) -> str:
    """A commit, a bisect that marks it bad, then the branch (or HEAD) moved back: only
    refs/bisect/bad holds the commit."""
    head = w.commit("only in the bisect", files={"b.txt": "b\n"})
    w.git("bisect", "start")
    w.git("bisect", "bad")
    w.git("checkout", "-q", *([branch] if branch else ["--detach"]))
    w.git("reset", "-q", "--hard", "HEAD~1")
    return head


def _text(command: str, head: str, label: str) -> str:
    return (
        f"[R-GIT-BRANCH-FORCE-DELETE] `{command}` would lose work: it deletes the bisect refs "
        "of this worktree, the only refs holding:\n"
        "  - refs/bisect/bad holds 1 commit(s) no branch, tag or remote holds\n\n"
        f"Keep each first (git push origin {head}:refs/heads/rescue/{label}-bad-{head[:10]}), "
        "then run it; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_f11_bisect_reset_and_start_are_denied_in_a_linked_worktree_whose_bisect_ref_holds_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    repo.git("branch", "feat")
    repo.git("push", "-q", "origin", "feat")
    wt = tmp_path / "wt-bis"
    repo.git("worktree", "add", "-q", str(wt), "feat")
    w = GitRepo(wt)
    head = _bisect_left_alone(w, "feat")
    for command in ("git bisect reset", "git bisect reset HEAD", "git bisect start"):
        checked = check_and_hook_alike(command, wt, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == (
            "deny", _text(command, head, "wt-bis")), command
    # contrast: the main worktree has no bisect refs of its own
    assert check_and_hook_alike("git bisect reset", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"
    # the way out: the printed push holds the commit, then the reset is allowed
    repo.git("push", "-q", "origin", f"{head}:refs/heads/rescue/wt-bis-bad-{head[:10]}")
    repo.git("fetch", "-q", "origin")
    assert check_and_hook_alike("git bisect reset", wt, monkeypatch, capsys)["verdict"] == \
        "allow"


def test_f11_bisect_start_is_denied_in_the_main_worktree_whose_bisect_ref_holds_work(
        remote_and_clone: tuple[GitRepo, GitRepo],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    repo.git("checkout", "-q", "--detach")
    head = _bisect_left_alone(repo, None)
    checked = check_and_hook_alike("git bisect start", repo.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == (
        "deny", _text("git bisect start", head, repo.path.name))
    repo.git("branch", "kept", head)  # a branch holds it: nothing is lost
    assert check_and_hook_alike("git bisect start", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"
