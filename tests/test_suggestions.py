"""The sweep suggests only cleanups its records' dispositions say work (issue 11, section 5):
never `delete` of a protected name or of the current branch, never a retire of the main
worktree; where no command deletes a proven branch, the line says why."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.cleanuputil import cli, cli_json
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
    merged = "merged into origin/main: every commit is on it"
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


def _stack(w: GitRepo, names: tuple[str, ...]) -> None:
    """Each branch of ``names`` built on the one before (its upstream), the top merged."""
    start = "main"
    for days, name in enumerate(names):
        w.switch(name, create=True, start=start)
        w.commit(f"{name} work", files={f"{name}.txt": f"{name}\n"}, days_ago=20 - days)
        if start != "main":
            w.git("config", f"branch.{name}.remote", ".")
            w.git("config", f"branch.{name}.merge", f"refs/heads/{start}")
        start = name
    w.switch("main")
    w.merge(names[-1], days_ago=10)
    w.git("push", "-q", "origin", "main")


def test_a_stack_refusal_names_the_worktree_that_keeps_it(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """base <- mid <- top, all merged; top's worktree holds an untracked file. `sweep --clean`
    keeps top (blocked) and so refuses mid and base by the stack rule: each refusal names the
    real blocker, top's worktree and what it holds, in the text and in --json."""
    _, w = remote_and_clone
    _stack(w, ("base", "mid", "top"))
    wt = tmp_path / "wt-top"
    w.git("worktree", "add", "-q", str(wt), "top")
    (wt / "scratch.txt").write_text("mine\n")
    held = (f"refused: the worktree {wt} of branch top, stacked on it, holds work (SKIP_DIRTY: "
            "scratch.txt); so it stays the upstream of surviving branch ")
    code, out, _ = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert code == 0
    tips = {n: w.rev(n)[:10] for n in ("base", "mid", "top", "main")}
    assert out == (
        "dry run: sweep-clean: 4 branches (default branch main)\n"
        f"  refused        base  {tips['base']}  {held}mid (a stack)\n"
        f"  refused        mid  {tips['mid']}  {held}top (a stack)\n"
        f"  blocked        top  {tips['top']}  merged into origin/main: every commit is on it; "
        f"kept: its worktree {wt} holds work\n"
        "      blocks removal: SKIP_DIRTY: scratch.txt\n"
        f"  kept           main  {tips['main']}  default\n")
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert code == 0
    assert {b["name"]: (b["action"], b["reason"]) for b in doc["branches"]} == {
        "base": ("refused", f"{held}mid (a stack)"),
        "mid": ("refused", f"{held}top (a stack)"),
        "top": ("blocked", f"merged into origin/main: every commit is on it; kept: its "
                           f"worktree {wt} holds work"),
        "main": ("kept", "default")}


def test_a_worktree_holding_work_gets_only_what_succeeds(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A merged branch checked out in a linked worktree: with an untracked file there, no
    command (committing or discarding it is the user's call); with only an ignored file no
    glob calls regenerable, the retire that archives it, which is then run and succeeds; the
    JSON ``cleanup`` says the same."""
    _, w = remote_and_clone
    _merged(w, "feat", 5)
    w.git("push", "-q", "origin", "main")
    wt = tmp_path / "wt-feat"
    w.git("worktree", "add", "-q", str(wt), "feat")
    (w.path / ".git" / "info").mkdir(exist_ok=True)
    (w.path / ".git" / "info" / "exclude").write_text("*.keep\n")
    (wt / "scratch.txt").write_text("mine\n")
    (wt / "notes.keep").write_text("mine too\n")
    merged = "merged into origin/main: every commit is on it"
    why = (f"not deleted: checked out in worktree {wt}, which retire keeps (1 untracked "
           "file(s): scratch.txt; ignored files it would lose: notes.keep (not regenerable: no "
           "branches.cleanup_after_merge.regenerable glob matches)): that is yours to decide "
           "(LOST WORK RISK lists what it holds); once the worktree is retired, delete the "
           "branch")
    code, out, _ = cli(capsys, w, "sweep")
    assert code == 0
    assert _merged_section(out) == (
        f" (1): cleanup candidates\n  feat  {merged}, 6d old\n    {why}")
    feat = next(b for b in cli_json(capsys, w, "sweep")[1]["branches"] if b["name"] == "feat")
    assert feat["cleanup"] == {"command": None, "why": why}
    (wt / "scratch.txt").unlink()
    command = (f"branchkeeper worktree retire --archive-ignored {wt} && "
               "branchkeeper delete -- feat")
    code, out, _ = cli(capsys, w, "sweep")
    assert _merged_section(out) == (
        f" (1): cleanup candidates\n  feat  {merged}, 6d old\n    {command}")
    feat = next(b for b in cli_json(capsys, w, "sweep")[1]["branches"] if b["name"] == "feat")
    assert feat["cleanup"] == {"command": command, "why": None}
    for part in command.split(" && "):
        assert cli(capsys, w, *shlex.split(part)[1:])[0] == 0, part
    assert not wt.exists() and not w.has_ref("refs/heads/feat")
