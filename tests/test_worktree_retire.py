"""``worktree retire`` and ``worktree list`` on real repositories with real worktrees."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo


def bk(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    clone.commit("ignore", files={".gitignore": ".env*\n__pycache__/\nscratch/\n"}, days_ago=5)
    clone.git("push", "-q", "origin", "main")
    return clone


def retire_json(capsys: pytest.CaptureFixture[str], repo: GitRepo, path: Path,
                *extra: str) -> tuple[int, dict[str, Any]]:
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", str(path), "--json",
                      *extra)
    assert err == ""
    return rc, json.loads(out)


def test_clean_branch_worktree_is_removed_branch_kept(repo: GitRepo, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "wt ü\nnew line"
    w = repo.worktree_add(wt, "-b", "feat/a")
    tip = w.commit("work", files={"a.txt": "a\n"})
    (wt / "__pycache__").mkdir()
    (wt / "__pycache__" / "m.pyc").write_text("x")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", str(wt))
    shown = str(wt).replace("\n", "\\n")
    assert (rc, out) == (0, f"removed worktree {shown}\n"
                            f"branch feat/a kept at {tip}\n")
    assert not wt.exists()
    assert repo.rev("refs/heads/feat/a") == tip


def test_dirty_worktree_is_held(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w1"
    repo.worktree_add(wt, "-b", "w1")
    (wt / "README.md").write_text("changed\n")
    (wt / "new.txt").write_text("n\n")
    rc, data = retire_json(capsys, repo, wt)
    assert rc == 3
    blockers = ["SKIP_DIRTY: 1 tracked change(s): README.md; 1 untracked file(s): new.txt"]
    assert data == {"held": {"path": str(wt), "owner": data["held"]["owner"],
                             "reason": "retire blocked: SKIP_DIRTY",
                             "revisit": "the blockers are resolved",
                             "since": data["held"]["since"], "auto": True, "blockers": blockers},
                    "disposition": "SKIP_DIRTY", "blockers": blockers, "triage": None,
                    "pinned": None}
    assert wt.exists()
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--list-holds", "--json")
    assert [h["path"] for h in json.loads(out)["holds"]] == [str(wt)]
    # once clean, retire succeeds and drops the automatic hold
    repo.git("-C", str(wt), "checkout", "--", "README.md")
    (wt / "new.txt").unlink()
    rc, data = retire_json(capsys, repo, wt)
    assert rc == 0 and data["removed"] == str(wt)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--list-holds", "--json")
    assert json.loads(out) == {"holds": []}


def test_protected_ignored_blocks_pycache_does_not(repo: GitRepo, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w"
    repo.worktree_add(wt, "-b", "w")
    (wt / "__pycache__").mkdir()
    (wt / "__pycache__" / "x.pyc").write_text("x")
    (wt / "scratch").mkdir()
    (wt / "scratch" / ".env.local").write_text("SECRET=1\n")
    rc, data = retire_json(capsys, repo, wt)
    assert rc == 3 and data["blockers"] == [
        "SKIP_PROTECTED_IGNORED: protected ignored: scratch/.env.local "
        "(matches protected glob '.env*')"]
    (wt / "scratch" / ".env.local").unlink()
    rc, data = retire_json(capsys, repo, wt)
    assert rc == 0 and not wt.exists()


def test_strict_ignored_blocks_unlisted(repo: GitRepo, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w"
    repo.worktree_add(wt, "-b", "w")
    (wt / "scratch").mkdir()
    (wt / "scratch" / "notes.md").write_text("n")
    rc, data = retire_json(capsys, repo, wt, "--strict-ignored")
    assert rc == 3 and data["blockers"] == [
        "SKIP_PROTECTED_IGNORED: protected ignored: scratch/notes.md "
        "(not listed disposable (--strict-ignored))"]


def test_c03_detached_leftovers(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    w1p, w2p = tmp_path / "W1", tmp_path / "W 2"
    repo.worktree_add(w1p, "-b", "w1")
    (w1p / "README.md").write_text("modified\n")
    w2 = repo.worktree_add(w2p, "--detach")
    sha = w2.commit("lonely", files={"l.txt": "l\n"}, days_ago=30)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    rows = {r["path"]: r for r in json.loads(out)["worktrees"]}
    assert rows[str(w1p)]["disposition"] == "SKIP_DIRTY"
    triage = shlex.join(["git", "-C", str(w2p), "branch", "-r", "--contains", sha])
    assert (rows[str(w2p)]["disposition"], rows[str(w2p)]["triage"]) == (
        "SKIP_UNREFERENCED_COMMIT", triage)
    assert triage == f"git -C '{w2p}' branch -r --contains {sha}"
    rc, data = retire_json(capsys, repo, w2p)
    assert rc == 3 and data["triage"] == triage
    assert data["blockers"] == [f"SKIP_UNREFERENCED_COMMIT: detached HEAD {sha[:10]} is in no ref"]
    # push the commit to a remote-tracking ref: now the reachability check passes
    repo.git("push", "-q", "origin", f"{sha}:refs/heads/rescued")
    repo.git("fetch", "-q", "origin")
    rc, data = retire_json(capsys, repo, w2p)
    assert rc == 0 and data == {"removed": str(w2p), "branch": None, "head": sha,
                                "kept": f"detached HEAD {sha[:10]} is in "
                                        "refs/remotes/origin/rescued", "pinned": None}
    assert not w2p.exists() and w1p.exists()


def test_pin_then_retire(repo: GitRepo, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "det"
    w = repo.worktree_add(wp, "--detach")
    sha = w.commit("unpushed", files={"u.txt": "u\n"})
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--pin", str(wp))
    ref = f"refs/branchkeeper/pinned/det-{sha[:10]}"
    assert (rc, out) == (0, f"removed worktree {wp}\nkept: detached HEAD {sha[:10]} is in {ref}\n"
                            f"pinned as {ref}\n")
    assert repo.rev(ref) == sha


def test_nested_worktree_blocks(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    outer = tmp_path / "outer"
    repo.worktree_add(outer, "-b", "outer")
    inner = outer / "scratch" / "inner"
    repo.worktree_add(inner, "-b", "inner")
    rc, data = retire_json(capsys, repo, outer)
    assert rc == 3 and data["blockers"] == [
        f"SKIP_NESTED: nested: worktree {inner}",
        "SKIP_PROTECTED_IGNORED: protected ignored: scratch/ (ignored directory too large, "
        "unreadable or holding a checkout)"]
    assert outer.exists() and inner.exists()


def test_locked_worktree_blocks(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "locked"
    repo.worktree_add(wp, "-b", "l")
    repo.git("worktree", "lock", "--reason", "agent running", str(wp))
    rc, data = retire_json(capsys, repo, wp)
    assert rc == 3 and data["blockers"] == ["SKIP_LOCKED: locked: agent running"]
    assert "locked" in repo.git("worktree", "list", "--porcelain")


def test_explicit_hold_release_and_self(repo: GitRepo, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "h"
    repo.worktree_add(wp, "-b", "h")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--hold", str(wp),
                    "--reason", "live server", "--revisit", "after deploy", "--owner", "ana")
    assert (rc, out) == (0, f"hold recorded on {wp}: live server (revisit: after deploy, "
                            "owner ana)\n")
    rc, data = retire_json(capsys, repo, wp)
    assert rc == 3 and data["blockers"] == [
        "HELD: held by ana: live server (revisit: after deploy)"]
    assert data["held"]["auto"] is False
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--release", str(wp))
    assert (rc, out) == (0, f"hold released on {wp}\n")
    # run from inside the worktree itself: SKIP_SELF
    rc, out, _ = bk(capsys, "-C", str(wp), "worktree", "retire", str(wp), "--json")
    assert rc == 3 and json.loads(out)["blockers"] == ["SKIP_SELF: this command runs inside it"]


def test_main_worktree_and_not_a_worktree(repo: GitRepo, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = retire_json(capsys, repo, repo.path)
    assert rc == 3 and data["blockers"][0] == "SKIP_SELF: the main worktree is never removed"
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", str(tmp_path))
    assert (rc, out, err) == (4, "", f"branchkeeper: error: {tmp_path} is not a worktree of this "
                                     "repository (see: branchkeeper worktree list)\n")


def test_list_json_whole_output(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "gone"
    w = repo.worktree_add(wp, "-b", "gone")
    head = w.rev("HEAD")
    shutil.rmtree(wp)
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    assert (rc, err) == (0, "")
    rows = json.loads(out)["worktrees"]
    for r in rows:  # times depend on the clock
        assert r.pop("last_activity") is None or r["age_hours"] is not None
        r.pop("age_hours")
    main_head = repo.rev("HEAD")
    assert rows == [
        {"path": str(repo.path), "branch": "main", "head": main_head, "detached": False,
         "main": True, "bare": False, "locked": False, "lock_reason": None, "prunable": False,
         "prunable_reason": None, "dirty": {"tracked": 0, "untracked": 0},
         "ignored": {"count": 0, "protected": []}, "nested": [], "activity_capped": False,
         "hold": None, "disposition": "SKIP_SELF", "reason": "the main worktree is never removed",
         "triage": None,
         "branch_state": {"state": "default", "containment": None, "containing_ref": None,
                          "proof": None, "ahead": None, "reason": ""},
         "gates": [
             {"name": "present", "passed": True, "detail": "directory present"},
             {"name": "not_main", "passed": False, "detail": "the main worktree is never removed"},
             {"name": "not_self", "passed": False, "detail": "this command runs inside it"},
             {"name": "no_hold", "passed": True, "detail": "no explicit hold"},
             {"name": "unlocked", "passed": True, "detail": "not locked"},
             {"name": "clean", "passed": True, "detail": "no tracked changes, no untracked files"},
             {"name": "no_nested", "passed": True, "detail": "no nested checkout"},
             {"name": "ignored_disposable", "passed": True, "detail": "no ignored files"},
             {"name": "commit_kept", "passed": True, "detail": "branch main keeps it"}]},
        {"path": str(wp), "branch": "gone", "head": head, "detached": False, "main": False,
         "bare": False, "locked": False, "lock_reason": None, "prunable": True,
         "prunable_reason": "gitdir file points to non-existent location", "dirty": None,
         "ignored": None, "nested": [], "activity_capped": False, "hold": None,
         "disposition": "SKIP_PRUNABLE",
         "reason": "prunable: gitdir file points to non-existent location",
         "triage": None,
         "branch_state": {"state": "live", "containment": None, "containing_ref": None,
                          "proof": None, "ahead": 0, "reason": "unstarted: at the same tip as "
                                                               "main"},
         "gates": [
             {"name": "present", "passed": False,
              "detail": "prunable: gitdir file points to non-existent location"},
             {"name": "not_main", "passed": True, "detail": "a linked worktree"},
             {"name": "not_self", "passed": True, "detail": "the command runs elsewhere"},
             {"name": "no_hold", "passed": True, "detail": "no explicit hold"},
             {"name": "unlocked", "passed": True, "detail": "not locked"},
             {"name": "commit_kept", "passed": True, "detail": "branch gone keeps it"}]},
    ]
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list")
    assert rc == 0 and "SKIP_PRUNABLE" in out
