"""The sweep suggests only cleanups its records' dispositions say work (issue 11, section 5):
never `delete` of a protected name or of the current branch, never a retire of the main
worktree; where no command deletes a proven branch, the line says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cleanuputil import cli
from tests.gitrepo import GitRepo


def _merged(w: GitRepo, name: str, days_ago: float) -> None:
    w.switch(name, create=True, start="main")
    w.commit(f"{name} work", files={f"{name}.txt": f"{name}\n"}, days_ago=days_ago + 1)
    w.switch("main")
    w.merge(name, days_ago=days_ago)


def _merged_section(out: str) -> str:
    return out.split("Merged, not deleted", 1)[1].split("\n\n", 1)[0]


def test_suggestions_come_from_the_dispositions(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    for n, name in enumerate(("develop", "here", "feat", "done")):
        _merged(w, name, 10 - n)
    w.git("push", "-q", "origin", "main")
    wt = tmp_path / "wt-feat"
    w.git("worktree", "add", "-q", str(wt), "feat")
    w.switch("here")  # the main worktree is on a merged branch
    code, out, _ = cli(capsys, w, "sweep")
    assert code == 0
    merged = "tip is an ancestor of refs/remotes/origin/main"
    assert _merged_section(out) == (
        " (4): cleanup candidates\n"
        f"  develop  {merged}, 11d old\n"
        "    not deleted: a protected name (branches.protected_names): kept whatever its proof "
        "(a person may list it in branches.exempt, so it no longer counts as open work)\n"
        f"  done  {merged}, 8d old\n"
        "    branchkeeper delete -- done\n"
        f"  feat  {merged}, 9d old\n"
        f"    branchkeeper worktree retire {wt} && branchkeeper delete -- feat\n"
        f"  here  {merged}, 10d old\n"
        "    not deleted: the current branch (switch to another branch first, then delete "
        "it)")
    # Run from the linked worktree: the main worktree's branch is one no command removes
    # there, and the branch checked out here is the current one.
    code, out, _ = cli(capsys, GitRepo(wt), "sweep")
    assert code == 0
    assert _merged_section(out) == (
        " (4): cleanup candidates\n"
        f"  develop  {merged}, 11d old\n"
        "    not deleted: a protected name (branches.protected_names): kept whatever its proof "
        "(a person may list it in branches.exempt, so it no longer counts as open work)\n"
        f"  done  {merged}, 8d old\n"
        "    branchkeeper delete -- done\n"
        f"  feat  {merged}, 9d old\n"
        "    not deleted: the current branch (switch to another branch first, then delete "
        "it)\n"
        f"  here  {merged}, 10d old\n"
        f"    not deleted: checked out in the main worktree {w.path} (no command removes that "
        "checkout: switch it to another branch first, then delete it)")
