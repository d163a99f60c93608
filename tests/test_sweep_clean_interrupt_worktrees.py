"""An interrupted ``sweep --clean --archive-ignored`` that had removed worktrees (issue 11):
each removal is journaled before it happens with its archive, the kept branch says its worktree
went, ``undo`` adds every removed worktree back on its branch (still there) with its ignored
files, and no archive is written for a worktree the stop left in place. Interrupted at a fault
point (``sweep-clean.after_worktree_remove``), never by timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.state.journal import Journal, OpStatus
from tests.gitrepo import GitRepo
from tests.reliability_util import bk, worktree_paths

POINT = "sweep-clean.after_worktree_remove"


@pytest.fixture
def world(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> tuple[GitRepo, list[Path]]:
    """Three merged, pushed branches, each checked out in a clean worktree holding an ignored
    ``x.log`` (kept by the strict rule: ``--archive-ignored`` archives it)."""
    _, repo = remote_and_clone
    repo.commit("ignore logs", files={".gitignore": "*.log\n"}, days_ago=9)
    paths = []
    for n in ("b1", "b2", "b3"):
        repo.switch(n, create=True, start="main")
        repo.commit(n, files={f"{n}.txt": f"{n}\n"}, days_ago=8)
        repo.switch("main")
        repo.merge(n, days_ago=7)
    repo.git("push", "-q", "origin", "main")
    for n in ("b1", "b2", "b3"):
        path = tmp_path / f"wt-{n}"
        repo.git("worktree", "add", "-q", str(path), n)
        (path / "x.log").write_text(f"log of {n}\n")
        paths.append(path)
    return repo, paths


def _archives(repo: GitRepo) -> list[str]:
    where = repo.path / ".git" / "branchkeeper" / "archives"
    return sorted(p.name.split("-", 2)[2] for p in where.glob("*.tar")) if where.is_dir() \
        else []


@pytest.mark.parametrize("signal", ["TERM", None])
def test_undo_adds_back_every_worktree_an_interrupted_clean_removed(
        world: tuple[GitRepo, list[Path]], signal: str | None) -> None:
    repo, (wt1, wt2, wt3) = world
    tips = {n: repo.rev(n) for n in ("b1", "b2", "b3")}
    res = bk(repo.path, "sweep", "--clean", "--archive-ignored", "--json", fault=POINT,
             signal=signal)
    assert res.returncode == (130 if signal else -9), res.stderr
    assert not wt1.exists() and wt2.is_dir() and wt3.is_dir()
    assert {n: repo.rev(n) for n in tips} == tips  # every branch is still there
    assert _archives(repo) == ["wt-b1.tar"]  # none for the worktrees left in place
    (op,) = Journal(repo.path / ".git").operations()
    assert [a.worktree for a in op.archives] == [str(wt1)]
    if signal:
        doc = json.loads(res.stdout)
        assert [(b["name"], b["action"], b["reason"]) for b in doc["branches"]] == [
            ("b1", "kept", f"interrupted after its worktree {wt1} was removed, before the "
                           "branch was deleted; branch kept (branchkeeper undo adds the "
                           "worktree back)"),
            ("b2", "kept", "interrupted before it was deleted; kept"),
            ("b3", "kept", "interrupted before it was deleted; kept"),
            ("main", "kept", "default")]
        assert (op.status, {k: (r.outcome.value, r.reason) for k, r in op.results.items()}) == (
            OpStatus.FAILED, {f"refs/heads/{b['name']}": ("kept", b["reason"])
                              for b in doc["branches"] if b["name"] != "main"})
    else:
        assert (op.status, op.results) == (OpStatus.INTERRUPTED, {})
    res = bk(repo.path, "undo", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert [(w["path"], w["outcome"]) for w in doc["worktrees"]] == [
        (str(wt1), "restored"), (str(wt2), "present"), (str(wt3), "present")]
    assert [(a["worktree"], a["outcome"]) for a in doc["archives"]] == [(str(wt1), "restored")]
    assert worktree_paths(repo.path)[1:] == [wt1, wt2, wt3]
    assert repo.git("-C", str(wt1), "symbolic-ref", "HEAD") == "refs/heads/b1"
    assert [(p / "x.log").read_text() for p in (wt1, wt2, wt3)] == [
        "log of b1\n", "log of b2\n", "log of b3\n"]
    assert {n: repo.rev(n) for n in tips} == tips


def test_an_uninterrupted_clean_still_removes_and_undo_restores(
        world: tuple[GitRepo, list[Path]]) -> None:
    repo, paths = world
    res = bk(repo.path, "sweep", "--clean", "--archive-ignored")
    assert res.returncode == 0, res.stderr
    assert not any(p.exists() for p in paths)
    assert _archives(repo) == ["wt-b1.tar", "wt-b2.tar", "wt-b3.tar"]
    res = bk(repo.path, "undo", "--json")
    assert res.returncode == 0, res.stdout
    assert [(p / "x.log").read_text() for p in paths] == [
        "log of b1\n", "log of b2\n", "log of b3\n"]


def test_undo_of_a_clean_stopped_early_groups_the_refs_it_skipped(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    """Seven merged branches, the first in a linked worktree; the clean is stopped after that
    worktree's removal, so undo adds it back and skips the seven refs: one line for them."""
    _, repo = remote_and_clone
    names = [f"b{i}" for i in range(1, 8)]
    for n in names:
        repo.switch(n, create=True, start="main")
        repo.commit(n, files={f"{n}.txt": f"{n}\n"}, days_ago=8)
        repo.switch("main")
        repo.merge(n, days_ago=7)
    repo.git("push", "-q", "origin", "main")
    wt1 = tmp_path / "wt-b1"
    repo.git("worktree", "add", "-q", str(wt1), "b1")
    res = bk(repo.path, "sweep", "--clean", fault=POINT, signal="TERM")
    assert res.returncode == 130, res.stderr
    assert not wt1.exists()
    (op,) = Journal(repo.path / ".git").operations()
    doc = json.loads(bk(repo.path, "undo", "--dry-run", "--json").stdout)
    assert [(i["ref"], i["outcome"], i["reason"]) for i in doc["items"]] == [
        (f"refs/heads/{n}", "skipped", "was kept") for n in names]
    res = bk(repo.path, "undo")
    assert (res.returncode, res.stdout.decode()) == (0, (
        f"undo {op.id} (sweep-clean, 7 refs)\n"
        "  skipped       7 refs the operation did not delete (7 were kept); --json lists each\n"
        f"  added back    worktree {wt1} (b1)\n")), res.stderr
