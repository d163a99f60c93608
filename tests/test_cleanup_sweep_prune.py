"""``sweep --clean`` and ``prune`` end to end: field case C02, worktree removal only when nothing
would be lost, one bundle and one journal operation, fetch failures, the lock, undo."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.state.lock import MUTATION_LOCK, repo_lock
from branchkeeper.state.statedir import common_dir_of
from tests.cleanuputil import all_reachable, branches, cli, cli_json, norm, short
from tests.gitrepo import GitRepo


def _c02(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> GitRepo:
    _bare, w = remote_and_clone
    w.switch("A", create=True)
    w.commit("a", files={"a.txt": "a\n"}, days_ago=5)
    w.git("push", "-q", "-u", "origin", "A")
    w.switch("main")
    w.merge("A", days_ago=4)
    w.git("push", "-q", "origin", "main")
    w.git("push", "-q", "origin", "--delete", "A")
    w.switch("B", create=True)
    w.commit("b", files={"b.txt": "b\n"}, days_ago=3)
    w.git("push", "-q", "-u", "origin", "B")
    w.switch("main")
    w.git("push", "-q", "origin", "--delete", "B")  # PR closed unmerged, branch deleted
    w.git("worktree", "add", "-q", str(tmp_path / "wt-b"), "B")
    (tmp_path / "wt-b" / "b.txt").write_text("uncommitted edit\n")
    w.git("fetch", "-q", "--prune")
    return w


def test_c02_gone_is_not_merged(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    w = _c02(remote_and_clone, tmp_path)
    a, b, main = short(w, "A"), short(w, "B"), short(w, "main")
    code, out, err = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert (code, err) == (0, "")
    assert out == (
        "dry run: sweep-clean: 3 branches (default branch main)\n"
        f"  would delete   A  {a}  merged into origin/main: every commit is on it\n"
        f"  kept           B  {b}  live\n"
        f"  kept           main  {main}  default\n"
    )
    code, out, err = cli(capsys, w, "sweep", "--clean")
    assert (code, err) == (0, "")
    assert norm(out) == (
        "sweep-clean: 3 branches (default branch main)\n"
        f"  deleted        A  {a}  merged into origin/main: every commit is on it\n"
        "      restore: git fetch BUNDLE refs/heads/A:refs/heads/A\n"
        f"  kept           B  {b}  live\n"
        f"  kept           main  {main}  default\n"
        "bundle: BUNDLE (compact, N bytes, verified)\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n"
    )
    assert (tmp_path / "wt-b" / "b.txt").read_text() == "uncommitted edit\n"
    assert branches(w) == ["B", "main"]
    # Even without its worktree, B is never proven: an upstream marked gone only nominates.
    w.git("-C", str(tmp_path / "wt-b"), "stash", "-q")
    w.git("worktree", "remove", str(tmp_path / "wt-b"))
    code, doc = cli_json(capsys, w, "prune", "--no-fetch")
    assert code == 0
    assert [(i["name"], i["action"], i["reason"]) for i in doc["branches"]] == [
        ("B", "SKIP_UNPROVEN", "no proof holds: the branch has commits that are not on the "
                               "base"),
        ("main", "refused", "refused: the default branch")]
    assert doc["notes"] == ["fetch skipped (--no-fetch)",
                            "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    code, _out, _ = cli(capsys, w, "undo")
    assert code == 0 and branches(w) == ["A", "B", "main"]


def test_worktrees_removed_only_when_regenerable(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={".gitignore": ".venv/\nscratch/\n", "r": "r\n"}, days_ago=9)
    for name in ("ok", "blocked", "dirty"):
        repo.switch(name, create=True)
        repo.commit(name, files={f"{name}.txt": name}, days_ago=8)
        repo.switch("main")
        repo.merge(name, days_ago=7)
        repo.git("worktree", "add", "-q", str(tmp_path / f"wt-{name}"), name)
        (tmp_path / f"wt-{name}" / ".venv" / "bin").mkdir(parents=True)
        (tmp_path / f"wt-{name}" / ".venv" / "bin" / "python").write_text("x")
    (tmp_path / "wt-blocked" / "scratch").mkdir()
    (tmp_path / "wt-blocked" / "scratch" / "notes.md").write_text("keep me")
    (tmp_path / "wt-dirty" / "new.txt").write_text("untracked")
    before = all_reachable(repo.path)
    code, doc = cli_json(capsys, repo, "sweep", "--clean")
    assert code == 0
    got = {i["name"]: (i["action"], i["worktree"], i["blocking"]) for i in doc["branches"]}
    assert got == {
        "ok": ("deleted", str(tmp_path / "wt-ok"), []),
        "blocked": ("blocked", str(tmp_path / "wt-blocked"), [
            "SKIP_PROTECTED_IGNORED: scratch/notes.md (not regenerable: no "
            "branches.cleanup_after_merge.regenerable glob matches)"]),
        "dirty": ("blocked", str(tmp_path / "wt-dirty"), ["SKIP_DIRTY: new.txt"]),
        "main": ("kept", None, []),
    }
    assert not (tmp_path / "wt-ok").exists()
    assert (tmp_path / "wt-blocked" / "scratch" / "notes.md").read_text() == "keep me"
    assert (tmp_path / "wt-dirty" / "new.txt").exists()
    assert branches(repo) == ["blocked", "dirty", "main"]
    assert all_reachable(repo.path) <= before
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and all_reachable(repo.path) == before


def test_prune_fetch_failure_content_tier_and_unresolved(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"f": "base\n"}, days_ago=9)
    repo.git("remote", "add", "origin", str(tmp_path / "missing.git"))
    repo.switch("content", create=True)
    repo.commit("c1", files={"f": "mid\n"}, days_ago=8)
    repo.commit("c2", files={"f": "final\n"}, days_ago=8)
    repo.switch("main")
    repo.commit("m1", files={"f": "other\n"}, days_ago=7)
    repo.commit("m2", files={"f": "final\n"}, days_ago=7)
    code, doc = cli_json(capsys, repo, "prune")
    assert code == 0
    assert doc["notes"][0].startswith("fetch from origin failed (exit 128: fatal: ")
    assert doc["notes"][0].endswith("; pruning on local data")
    assert [(i["name"], i["action"], i["reason"]) for i in doc["branches"]] == [
        ("content", "deleted", "every file it changed is identical on main"),
        ("main", "refused", "refused: the default branch")]
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  default: nosuch\n")
    code, out, _ = cli(capsys, repo, "prune", "--no-fetch")
    assert code == 5
    assert out.endswith("note: fetch skipped (--no-fetch)\nnote: worktree reap not started "
                        "(BRANCHKEEPER_REAP_DISABLE=1)\nnote: default branch unresolved "
                        "(branches.default names 'nosuch', which exists neither locally nor on "
                        "'origin'); nothing deleted\nnothing to delete\n")
    assert branches(repo) == ["content", "main"]


def test_prune_twice_at_once_waits_then_exits(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"f": "1\n"}, days_ago=2)
    repo.branch("old")
    repo.commit("two", files={"f": "2\n"}, days_ago=1)
    with repo_lock(common_dir_of(repo.path), MUTATION_LOCK, wait_s=0):
        code, out, err = cli(capsys, repo, "prune", "--no-fetch", "--lock-wait", "0.2")
    assert (code, out) == (4, "")
    assert err.startswith("branchkeeper: error: another branchkeeper mutate is running in this "
                          "repository (pid ")
    assert branches(repo) == ["main", "old"]
    code, out, _ = cli(capsys, repo, "prune", "--no-fetch")
    assert code == 0 and branches(repo) == ["main"]
