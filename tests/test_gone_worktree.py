"""A merged branch whose linked worktree's directory was deleted by hand (a prunable entry that
holds nothing), or whose clean worktree is only locked: sweep, sweep --clean, worktree retire
and prune read the one worktree record and agree on what keeps the branch and what deletes it
(issue 11, section 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cleanuputil import cli, cli_json, norm, short
from tests.gitrepo import GitRepo

MERGED = "merged into origin/main: every commit is on it"
PRUNABLE = "prunable: gitdir file points to non-existent location"


def _merged_in_worktree(w: GitRepo, wt: Path) -> None:
    w.switch("feat", create=True, start="main")
    w.commit("feat work", files={"feat.txt": "feat\n"}, days_ago=3)
    w.switch("main")
    w.merge("feat", days_ago=2)
    w.git("push", "-q", "origin", "main")
    w.git("worktree", "add", "-q", str(wt), "feat")


def _merged_section(out: str) -> str:
    return out.split("Merged, not deleted", 1)[1].split("\n\n", 1)[0]


def test_gone_worktree_sweep_suggests_prune_which_deletes_it(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    wt = tmp_path / "wt-feat"
    _merged_in_worktree(w, wt)
    shutil.rmtree(wt)
    code, out, _ = cli(capsys, w, "sweep")
    assert code == 0
    assert _merged_section(out) == (
        f" (1): cleanup candidates\n  feat  {MERGED}, 3d old\n    branchkeeper prune")
    assert "LOST WORK RISK: 0" in out
    feat = next(b for b in cli_json(capsys, w, "sweep")[1]["branches"] if b["name"] == "feat")
    assert feat["cleanup"] == {"command": "branchkeeper prune", "why": None}

    why = (f"{MERGED}; kept: its worktree {wt} is gone ({PRUNABLE}) and holds nothing: "
           "branchkeeper prune drops the entry and deletes the branch")
    tip, main = short(w, "feat"), short(w, "main")
    code, out, _ = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert code == 0
    assert out == (
        "dry run: sweep-clean: 2 branches (default branch main)\n"
        f"  blocked        feat  {tip}  {why}\n"
        f"      blocks removal: SKIP_PRUNABLE: {PRUNABLE}\n"
        f"  kept           main  {main}  default\n")
    code, doc = cli_json(capsys, w, "sweep", "--clean")
    assert {b["name"]: (b["action"], b["reason"]) for b in doc["branches"]} == {
        "feat": ("blocked", why), "main": ("kept", "default")}
    assert w.has_ref("refs/heads/feat")

    code, out, _ = cli(capsys, w, "worktree", "retire", str(wt))
    assert code == 5
    assert out == (
        f"kept worktree {wt}: SKIP_PRUNABLE\n"
        f"  blocker: SKIP_PRUNABLE: {PRUNABLE}\n"
        "nothing to retire: its directory is gone and the entry holds nothing; branchkeeper "
        "prune drops the entry (git worktree prune) and deletes its branch when proven\n")
    code, doc = cli_json(capsys, w, "worktree", "retire", str(wt))
    assert code == 5
    assert (doc["refused"], doc["gone"], doc["hint"], doc["held"], doc["blockers"]) == (
        True, True, "branchkeeper prune", None, [f"SKIP_PRUNABLE: {PRUNABLE}"])

    code, out, _ = cli(capsys, w, "worktree", "retire", "--dry-run", str(wt))
    assert code == 5
    assert out == (
        "dry run: nothing is changed\n"
        f"would keep worktree {wt}: SKIP_PRUNABLE\n"
        f"  blocker: SKIP_PRUNABLE: {PRUNABLE}\n"
        "nothing to retire: its directory is gone and the entry holds nothing; branchkeeper "
        "prune drops the entry (git worktree prune) and deletes its branch when proven\n")

    refused = (f"refused: checked out in worktree {wt}, whose directory is gone: "
               "`branchkeeper prune` drops the entry (git worktree prune, unless it holds work) "
               "and then deletes the branch")
    code, out, _ = cli(capsys, w, "delete", "--", "feat")
    assert code == 5
    assert out == ("delete: 1 branch (default branch main)\n"
                   f"  refused        feat  {tip}  {refused}\n"
                   "refused: 1 of 1 name cannot be deleted; nothing was deleted\n")
    code, doc = cli_json(capsys, w, "prune", "--no-fetch", "--no-reap", "--dry-run")
    assert code == 0  # a dry run prunes no entry: it says what the prune does
    assert [(b["name"], b["action"], b["reason"]) for b in doc["branches"]] == [
        ("feat", "refused", refused), ("main", "refused", "refused: the default branch")]
    code, out, _ = cli(capsys, w, "prune", "--no-fetch", "--no-reap")
    assert code == 0
    assert f"  deleted        feat  {tip}  {MERGED}\n" in norm(out)
    assert not w.has_ref("refs/heads/feat")


def test_gone_worktree_holding_a_detached_commit_is_not_gone(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A prunable entry whose detached HEAD no ref holds keeps the retire refusal's wording:
    it holds work (the sweep lists it under LOST WORK RISK)."""
    _, w = remote_and_clone
    wt = tmp_path / "wt-det"
    w.git("worktree", "add", "-q", "--detach", str(wt))
    GitRepo(wt).commit("only here", files={"x.txt": "x\n"})
    shutil.rmtree(wt)
    code, out, _ = cli(capsys, w, "worktree", "retire", str(wt))
    assert code == 5
    assert out.splitlines()[-1] == "never retired; no hold recorded"
    code, doc = cli_json(capsys, w, "worktree", "retire", str(wt))
    assert (doc["gone"], doc["hint"]) == (False, None)


def test_locked_clean_worktree_is_said_locked_not_holding_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    wt = tmp_path / "wt-feat"
    _merged_in_worktree(w, wt)
    w.git("worktree", "lock", "--reason", "agent busy", str(wt))
    why = (f"not deleted: checked out in worktree {wt}, which is locked (agent busy): that is "
           f"yours to decide (git worktree unlock {wt} lifts it); once the worktree is "
           "retired, delete the branch")
    code, out, _ = cli(capsys, w, "sweep")
    assert code == 0
    assert _merged_section(out) == f" (1): cleanup candidates\n  feat  {MERGED}, 3d old\n    {why}"
    feat = next(b for b in cli_json(capsys, w, "sweep")[1]["branches"] if b["name"] == "feat")
    assert feat["cleanup"] == {"command": None, "why": why}
    reason = f"{MERGED}; kept: its worktree {wt} is locked (agent busy)"
    tip, main = short(w, "feat"), short(w, "main")
    code, out, _ = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert out == (
        "dry run: sweep-clean: 2 branches (default branch main)\n"
        f"  blocked        feat  {tip}  {reason}\n"
        "      blocks removal: SKIP_LOCKED: locked: agent busy\n"
        f"  kept           main  {main}  default\n")
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert {b["name"]: (b["action"], b["reason"]) for b in doc["branches"]} == {
        "feat": ("blocked", reason), "main": ("kept", "default")}
    (wt / "scratch.txt").write_text("mine\n")  # now it holds work too
    code, out, _ = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert f"kept: its worktree {wt} holds work\n" in out
