"""A prunable worktree (its directory moved or deleted) whose detached HEAD no ref holds: the
entry is the commit's only copy (issue 11). The sweep, SessionStart and the report list it as
LOST WORK RISK from the one worktree record, and ``prune`` pins it under
``refs/branchkeeper/pinned/`` before ``git worktree prune`` drops the entry; with nothing at
risk ``prune`` pins nothing and prunes as before."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook
from tests.reaputil import add_worktree, commit_in


def _moved(repo: GitRepo, tmp_path: Path, *, commit: bool) -> tuple[Path, str]:
    """A detached worktree at main (with one commit of its own when ``commit``), then moved
    away: (its registered path, its HEAD)."""
    wt = tmp_path / "wt"
    w = add_worktree(repo, wt, "--detach", start="main", hours=30)
    head = commit_in(w, "det", {"d.txt": "d\n"}, hours=30) if commit else w.rev("HEAD")
    wt.rename(tmp_path / "moved")
    return wt, head


def _item(wt: Path, head: str) -> dict[str, Any]:
    return {"kind": "detached_commit", "subject": str(wt),
            "detail": f"detached HEAD {head[:10]} of a worktree whose directory is gone "
                      "(prunable) is held by no ref: git worktree prune would lose it",
            "secure": shlex.join(["git", "push", "origin",
                                  f"{head}:refs/heads/rescue/wt-{head[:10]}"]),
            "count": None, "age_days": None, "worktree": str(wt)}


def _contains(repo: GitRepo, oid: str) -> list[str]:
    out = repo.git("for-each-ref", "--contains", oid, "--format=%(refname)")
    return [r for r in out.split("\n") if r]


def test_prunable_detached_head_is_lost_work_risk_everywhere(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _moved(repo, tmp_path, commit=True)
    code, doc = cli_json(capsys, repo, "sweep")
    assert code == 0
    assert doc["lost_work"] == [_item(wt, head)]
    assert doc["summary"]["lost_work_risk"] == 1
    assert cli(capsys, repo, "sweep", "--fail-on-risk")[0] == 1
    capsys.readouterr()
    assert main(["report", "--repo", str(repo.path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["repositories"]
    assert (row["lost_work"], row["lost_work_by_kind"]) == (1, {"detached_commit": 1})
    result = run_hook("SessionStart", {"session_id": "s1", "cwd": str(repo.path),
                                       "source": "resume"})
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    item = _item(wt, head)
    assert context.splitlines()[:2] == [
        "LOST WORK RISK: 1 piece(s) of work exist only in this clone; secure them:",
        f"  worktree {wt}: {item['detail']}; {item['secure']}"]


def test_prune_pins_a_prunable_detached_head_before_pruning(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _moved(repo, tmp_path, commit=True)
    ref = f"refs/branchkeeper/pinned/wt-{head[:10]}"
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch", "--dry-run")
    assert code == 0
    assert doc["notes"] == [
        "dry run: fetch, worktree prune and the background worktree reap not run",
        f"would pin detached HEAD {head[:10]} of prunable worktree {wt} as {ref}"]
    assert _contains(repo, head) == [] and str(wt) in repo.git("worktree", "list")
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch")
    assert code == 0
    assert doc["notes"] == [
        "fetch skipped (--no-fetch)",
        f"pinned detached HEAD {head[:10]} of prunable worktree {wt} as {ref}",
        "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    assert _contains(repo, head) == [ref]
    assert str(wt) not in repo.git("worktree", "list")
    # still listed as ours-only work until pushed: nothing vanished from view
    code, doc = cli_json(capsys, repo, "sweep")
    assert [(i["kind"], i["subject"]) for i in doc["lost_work"]] == [("kept_ref", ref)]


def test_prune_refuses_to_prune_when_the_pin_cannot_be_written(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _moved(repo, tmp_path, commit=True)
    ref = f"refs/branchkeeper/pinned/wt-{head[:10]}"
    other = repo.rev("main")
    repo.git("update-ref", ref, other)  # a ref of that name already holds another commit
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch")
    assert code == 0
    assert doc["notes"] == [
        "fetch skipped (--no-fetch)",
        f"git worktree prune not run: could not pin {head} as {ref} (exists at {other})",
        "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    assert str(wt) in repo.git("worktree", "list")  # the entry, the only copy, is kept


def test_prunable_head_a_ref_holds_is_not_at_risk_and_is_pruned(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _wt, head = _moved(repo, tmp_path, commit=False)
    branch_wt = tmp_path / "on-branch"
    b = add_worktree(repo, branch_wt, "-b", "topic", start="main", hours=30)
    b.git("push", "-q", "-u", "origin", "topic")
    branch_wt.rename(tmp_path / "on-branch-moved")
    code, doc = cli_json(capsys, repo, "sweep")
    assert code == 0 and doc["lost_work"] == []
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch")
    assert code == 0
    assert doc["notes"] == ["fetch skipped (--no-fetch)",
                            "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert not any(r.startswith("refs/branchkeeper/") for r in _contains(repo, head))
