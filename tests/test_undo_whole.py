"""Undo is one thing for every operation (issue 11): a reap of N worktrees is one journal
operation of N steps, one ``undo`` brings every worktree back, older journals (one operation per
removal) still read and undo, and a bare ``undo`` takes the newest operation not undone yet."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from branchkeeper.git.types import Oid
from branchkeeper.state.journal import Journal, JournalItem, OpStatus, Step
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo
from tests.reaputil import add_worktree, age_files, bk, commit_in, fake_gh


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    return clone


def _clean(repo: GitRepo, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    add_worktree(repo, path, "-b", name, start="main", hours=10)
    age_files(path)
    return path


def test_reap_of_two_worktrees_is_one_operation_and_one_undo(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _clean(repo, tmp_path, "wa"), _clean(repo, tmp_path, "wb")
    tip = repo.rev("main")
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--json")
    assert (rc, err) == (0, "")
    ops = Journal(common_dir_of(repo.path)).operations()
    (op,) = ops
    assert [r["operation"] for r in json.loads(out)["worktrees"] if r["outcome"] == "removed"] \
        == [op.id, op.id]
    add_a = shlex.join(["git", "worktree", "add", str(a), "wa"])
    add_b = shlex.join(["git", "worktree", "add", str(b), "wb"])
    assert (op.op, op.status, op.steps) == ("worktree-reap", OpStatus.DONE, (
        Step((JournalItem("refs/heads/wa", Oid.parse(tip), None, add_a),)),
        Step((JournalItem("refs/heads/wb", Oid.parse(tip), None, add_b),))))
    rc, out, _ = bk(capsys, "-C", str(repo.path), "log")
    assert out.splitlines()[1:] == [f"{op.id}  {op.time}  worktree-reap  done    2      -"]
    rc, out, err = bk(capsys, "-C", str(repo.path), "undo")
    assert (rc, err) == (0, "")
    assert out == (f"undo {op.id} (worktree-reap, 2 refs)\n"
                   f"  present       refs/heads/wa at {tip[:10]}\n"
                   f"  present       refs/heads/wb at {tip[:10]}\n"
                   f"  added back    worktree {a} (wa)\n"
                   f"  added back    worktree {b} (wb)\n")
    for path, branch in ((a, "wa"), (b, "wb")):
        assert repo.git("-C", str(path), "symbolic-ref", "--short", "HEAD") == branch
    rc, out, err = bk(capsys, "-C", str(repo.path), "undo")
    undone = Journal(common_dir_of(repo.path)).operations()[0].undone
    assert undone is not None
    assert (rc, out, err) == (4, "nothing to undo: every operation in the journal is undone "
                                 f"already (the newest, {op.id} (worktree-reap), at "
                                 f"{undone.time}); see: branchkeeper log\n", "")


def test_reap_that_keeps_one_worktree_after_journaling_it(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """git refuses one removal (the tree became dirty after the check): the operation is
    partial, that item's result says kept, and its undo leaves that worktree alone."""
    from branchkeeper.actions import reap

    a, b = _clean(repo, tmp_path, "wa"), _clean(repo, tmp_path, "wb")

    def dirty(wt: object) -> None:
        (b / "late.txt").write_text("late\n")

    hooks = reap.ReapHooks(before_remove=lambda wt: dirty(wt) if wt.path == b else None)
    previous = reap.DEFAULT_HOOKS
    reap.DEFAULT_HOOKS = hooks
    try:
        rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--json")
    finally:
        reap.DEFAULT_HOOKS = previous
    assert rc == 0
    assert [(r["path"], r["outcome"]) for r in json.loads(out)["worktrees"]][1:] == [
        (str(a), "removed"), (str(b), "failed")]
    (op,) = Journal(common_dir_of(repo.path)).operations()
    assert (op.status, {k: r.outcome.value for k, r in op.results.items()}) == (
        OpStatus.PARTIAL, {"refs/heads/wb": "kept"})
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--json")
    data = json.loads(out)
    assert (rc, [(i["ref"], i["outcome"], i["reason"]) for i in data["items"]]) == (0, [
        ("refs/heads/wa", "present", ""), ("refs/heads/wb", "skipped", "was kept")])
    assert data["worktrees"] == [
        {"path": str(a), "branch": "wa", "commit": None, "outcome": "restored",
         "reason": "added back", "command": ""},
        {"path": str(b), "branch": "wb", "commit": None, "outcome": "present",
         "reason": "it is there already", "command": ""}]
    assert (b / "late.txt").read_text() == "late\n"


def test_archived_worktrees_each_restore_from_their_own_bundle(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    tips = {}
    for name in ("ua", "ub"):
        w = add_worktree(repo, tmp_path / name, "-b", name, start="main", hours=48)
        tips[name] = commit_in(w, name, {f"{name}.txt": "1\n"}, hours=48)
        age_files(tmp_path / name, 48)
    fake_gh(tmp_path, monkeypatch)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--archive-unproven",
                    "--json")
    assert rc == 0
    (op,) = Journal(common_dir_of(repo.path)).operations()
    assert len(op.bundles) == 2 and op.bundles[0].path != op.bundles[1].path
    rc, out, _ = bk(capsys, "-C", str(repo.path), "log", "--json")
    assert json.loads(out)[0]["bundles"] == [str(b.path) for b in op.bundles]
    repo.git("branch", "-D", "ua", "ub")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert subprocess.run(["git", "cat-file", "-e", tips["ua"]], cwd=repo.path).returncode != 0
    rc, out, err = bk(capsys, "-C", str(repo.path), "undo")
    assert (rc, err) == (0, "")
    assert out == (f"undo {op.id} (worktree-reap, 2 refs)\n"
                   f"  restored      refs/heads/ua at {tips['ua'][:10]}\n"
                   f"  restored      refs/heads/ub at {tips['ub'][:10]}\n"
                   f"  added back    worktree {tmp_path / 'ua'} (ua)\n"
                   f"  added back    worktree {tmp_path / 'ub'} (ub)\n")
    assert repo.rev("refs/heads/ua") == tips["ua"] and repo.rev("refs/heads/ub") == tips["ub"]


def test_older_journal_one_operation_per_removal_and_bare_undo_order(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A journal written before steps existed (a reap of two as two ``worktree-remove``
    operations) still reads and undoes; each bare ``undo`` takes the newest operation not yet
    undone and says which newer ones it passed over."""
    journal = Journal(common_dir_of(repo.path))
    tip = Oid.parse(repo.rev("main"))
    ids = []
    for name in ("oa", "ob"):
        path = tmp_path / name
        repo.git("worktree", "add", "-q", str(path), "-b", name)
        add = shlex.join(["git", "worktree", "add", str(path), name])
        ids.append(journal.begin("worktree-remove", [JournalItem(f"refs/heads/{name}", tip, None,
                                                                 add)],
                                 bundle=None, note=f"worktree {path} removed; branch kept"))
        repo.git("worktree", "remove", str(path))
        journal.end(ids[-1], OpStatus.DONE)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo")
    assert (rc, out) == (0, f"undo {ids[1]} (worktree-remove, 1 ref)\n"
                            f"  present       refs/heads/ob at {tip.short}\n"
                            f"  added back    worktree {tmp_path / 'ob'} (ob)\n")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--dry-run")
    assert (rc, out) == (0, f"dry run: undo {ids[0]} (worktree-remove, 1 ref)\n"
                            f"  the newest operation not undone yet; undone already: {ids[1]} "
                            "(worktree-remove)\n"
                            f"  present       refs/heads/oa at {tip.short}\n"
                            f"  would add     worktree {tmp_path / 'oa'} (oa)\n")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--json")
    data = json.loads(out)
    assert (rc, data["id"], data["passed_undone"], data["none_left"], data["status"]) == (
        0, ids[0], [ids[1]], False, "done")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--json")
    data = json.loads(out)
    assert (rc, data["id"], data["passed_undone"], data["none_left"], data["status"],
            data["items"]) == (4, ids[1], [ids[1], ids[0]], True, None, [])
    assert (tmp_path / "oa").is_dir() and (tmp_path / "ob").is_dir()
