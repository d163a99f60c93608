"""``worktree retire`` and ``worktree list`` on real repositories with real worktrees."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.state.journal import Journal
from branchkeeper.state.statedir import common_dir_of
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
    (op,) = Journal(common_dir_of(repo.path)).operations()
    assert (op.op, [(i.ref, i.old) for i in op.items], op.status.value) == (
        "worktree-retire", [("refs/heads/feat/a", tip)], "done")
    assert (rc, out) == (0, f"removed worktree {shown}\n"
                            f"branch feat/a kept at {tip}\n"
                            f"restore: {shlex.join(['git', 'worktree', 'add', str(wt), 'feat/a'])}"
                            f"\nundo: branchkeeper undo {op.id}\n")
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
    assert data == {"dry_run": False, "held": {"path": str(wt), "owner": data["held"]["owner"],
                             "reason": "retire blocked: SKIP_DIRTY",
                             "revisit": "the blockers are resolved",
                             "since": data["held"]["since"], "auto": True, "blockers": blockers},
                    "refused": False, "gone": False, "disposition": "SKIP_DIRTY", "blockers": blockers,
                    "triage": None, "pinned": None, "hint": None, "retire": data["retire"]}
    assert data["retire"]["disposition"] == "SKIP_DIRTY"
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", str(wt))
    assert (rc, out) == (3, f"kept worktree {wt}: SKIP_DIRTY\n"
                            f"  blocker: {blockers[0]}\n"
                            f"recorded an automatic hold (owner {data['held']['owner']}): it says "
                            "why the worktree stays and ends when a later retire removes it; "
                            "see: branchkeeper worktree retire --list-holds\n")
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
        "SKIP_PROTECTED_IGNORED: ignored files it would lose: scratch/.env.local "
        "(matches protected glob '.env*')"]
    (wt / "scratch" / ".env.local").unlink()
    rc, data = retire_json(capsys, repo, wt)
    assert rc == 0 and not wt.exists()


def test_ignored_not_regenerable_blocks_unless_lenient(repo: GitRepo, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w"
    repo.worktree_add(wt, "-b", "w")
    (wt / "scratch").mkdir()
    (wt / "scratch" / "notes.md").write_text("n")
    for polarity in ((), ("--strict-ignored",), ("--ignored", "strict")):  # the default, spelled
        rc, data = retire_json(capsys, repo, wt, *polarity)
        assert rc == 3 and data["blockers"] == [
            "SKIP_PROTECTED_IGNORED: ignored files it would lose: scratch/notes.md "
            "(not regenerable: no branches.cleanup_after_merge.regenerable glob matches)"]
        assert data["hint"] == f"branchkeeper worktree retire --archive-ignored {wt}"
    rc, data = retire_json(capsys, repo, wt, "--ignored", "lenient")  # the second document's
    assert rc == 0 and not wt.exists()


def test_c03_detached_leftovers(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    w1p, w2p = tmp_path / "W1", tmp_path / "W 2"
    repo.worktree_add(w1p, "-b", "w1")
    (w1p / "README.md").write_text("modified\n")
    w2 = repo.worktree_add(w2p, "--detach")
    sha = w2.commit("lonely", files={"l.txt": "l\n"}, days_ago=30)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    rows = {r["path"]: r for r in json.loads(out)["worktrees"]}
    assert rows[str(w1p)]["retire"]["disposition"] == "SKIP_DIRTY"
    triage = shlex.join(["git", "-C", str(w2p), "branch", "-r", "--contains", sha])
    assert (rows[str(w2p)]["retire"]["disposition"], rows[str(w2p)]["retire"]["triage"]) == (
        "SKIP_UNREFERENCED_COMMIT", triage)
    assert triage == f"git -C '{w2p}' branch -r --contains {sha}"
    rc, data = retire_json(capsys, repo, w2p)
    assert rc == 3 and data["triage"] == triage
    assert data["blockers"] == [f"SKIP_UNREFERENCED_COMMIT: detached HEAD {sha[:10]} is in no ref"]
    # push the commit to a remote-tracking ref: now the reachability check passes
    repo.git("push", "-q", "origin", f"{sha}:refs/heads/rescued")
    repo.git("fetch", "-q", "origin")
    rc, data = retire_json(capsys, repo, w2p)
    op = Journal(common_dir_of(repo.path)).operations()[-1]
    pin = f"refs/branchkeeper/pinned/W-2-{sha[:10]}"
    restore = shlex.join(["git", "worktree", "add", "--detach", str(w2p), sha])
    assert rc == 0 and data == {"dry_run": False, "removed": str(w2p), "branch": None, "head": sha,
                                "kept": f"detached HEAD {sha[:10]} is in "
                                        "refs/remotes/origin/rescued", "pinned": pin,
                                "salvaged": [], "operation": op.id, "archive": None,
                                "restore": [restore]}
    # held by a ref that is not ours: pinned under ours, the ref the journal names
    assert (op.op, [(i.ref, i.old, i.restore) for i in op.items]) == (
        "worktree-retire", [(pin, sha, restore)])
    assert not w2p.exists() and w1p.exists() and repo.rev(pin) == sha
    # undo checks the detached worktree out again, even once the remote ref has gone
    repo.git("push", "-q", "origin", "--delete", "rescued")
    repo.git("fetch", "-q", "--prune", "origin")
    rc, out, err = bk(capsys, "-C", str(repo.path), "undo")
    assert (rc, err) == (0, "")
    assert out == (f"undo {op.id} (worktree-retire, 1 ref)\n"
                   f"  present       {pin} at {sha[:10]}\n"
                   f"  added back    worktree {w2p} (detached {sha[:10]})\n")
    assert GitRepo(w2p).rev("HEAD") == sha and (w2p / "l.txt").read_text() == "l\n"
    assert not repo.has_ref("refs/remotes/origin/rescued")


def test_pin_then_retire(repo: GitRepo, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "det"
    w = repo.worktree_add(wp, "--detach")
    sha = w.commit("unpushed", files={"u.txt": "u\n"})
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--pin", str(wp))
    ref = f"refs/branchkeeper/pinned/det-{sha[:10]}"
    op = Journal(common_dir_of(repo.path)).operations()[-1]
    assert (rc, out) == (0, f"removed worktree {wp}\nkept: detached HEAD {sha[:10]} is in {ref}\n"
                            f"pinned as {ref}\n"
                            f"restore: git worktree add --detach {wp} {sha}\n"
                            f"undo: branchkeeper undo {op.id}\n")
    assert [(i.ref, i.old) for i in op.items] == [(ref, sha)]
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
        "SKIP_PROTECTED_IGNORED: ignored files it would lose: scratch/ (ignored directory too "
        "large, unreadable or holding a checkout)"]
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
    # run from inside the worktree itself: SKIP_SELF, refused without a hold (nothing to revisit)
    rc, out, _ = bk(capsys, "-C", str(wp), "worktree", "retire", str(wp), "--json")
    data = json.loads(out)
    assert (rc, data["blockers"], data["held"], data["refused"]) == (
        5, ["SKIP_SELF: this command runs inside it"], None, True)


def test_main_worktree_and_not_a_worktree(repo: GitRepo, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = retire_json(capsys, repo, repo.path)
    assert rc == 5 and data["blockers"] == [
        "SKIP_SELF: the main worktree is never removed", "SKIP_SELF: this command runs inside it",
        "SKIP_PROTECTED_BRANCH: main is the default branch: its checkout is never removed"]
    assert data["held"] is None
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", str(tmp_path))
    assert (rc, out, err) == (4, "", f"branchkeeper: error: {tmp_path} is not a worktree of this "
                                     "repository (see: branchkeeper worktree list)\n")


def _gates(*rows: tuple[str, bool, str]) -> list[dict[str, object]]:
    return [{"name": n, "passed": p, "detail": d} for n, p, d in rows]


def test_list_json_whole_output(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    wp = tmp_path / "gone"
    w = repo.worktree_add(wp, "-b", "gone")
    head = w.rev("HEAD")
    shutil.rmtree(wp)
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert (doc["pr_evidence"], doc["notes"]) == ("PR evidence: not needed", [])
    rows = doc["worktrees"]
    main_row = rows[0]
    # the main worktree's files were written by this test: idle 0 h by the suite's clock
    assert (main_row.pop("idle_hours"), main_row.pop("added_hours")) == (0.0, 0.0)
    assert isinstance(main_row.pop("last_activity"), float)
    main_head = repo.rev("HEAD")
    never = "the main worktree is never removed"
    protected = "main is the default branch: its checkout is never removed"
    common = [("present", True, "directory present"), ("not_main", False, never),
              ("not_self", False, "this command runs inside it"),
              ("not_protected", False, protected), ("no_hold", True, "no explicit hold"),
              ("unlocked", True, "not locked")]
    contents = [("clean", True, "no tracked changes, no untracked files"),
                ("no_nested", True, "no nested checkout"),
                ("ignored_disposable", True, "no ignored files")]
    assert main_row == {
        "path": str(repo.path), "branch": "main", "head": main_head, "detached": False,
        "main": True, "bare": False, "locked": False, "lock_reason": None, "prunable": False,
        "prunable_reason": None, "dirty": {"tracked": 0, "untracked": 0},
        "ignored": {"count": 0, "kept": []}, "nested": [], "activity_capped": False,
        "hold": None,
        "retire": {"disposition": "SKIP_SELF", "reason": never, "triage": None,
                   "gates": _gates(*common, *contents,
                                   ("commit_kept", True, "branch main keeps it"))},
        "reap": {"disposition": "SKIP_SELF", "reason": never, "triage": None,
                 "gates": _gates(*common, ("idle", False, "last activity 0.0 h ago, within the "
                                                          "3 h activity window"),
                                 *contents, ("preserved", False, "branch main is default: "
                                             "never judged finished by the reaper"))},
        "branch_state": {"state": "default", "containment": None, "containing_ref": None,
                         "proof": None, "ahead": None, "reason": ""}}
    gone = "prunable: gitdir file points to non-existent location"
    linked = [("present", False, gone), ("not_main", True, "a linked worktree"),
              ("not_self", True, "the command runs elsewhere"),
              ("not_protected", True, "gone is a work branch"),
              ("no_hold", True, "no explicit hold"), ("unlocked", True, "not locked")]
    own_refs = ("refs_kept", True, "no ref of its own holds a commit only it has")
    assert rows[1] == {
        "path": str(wp), "branch": "gone", "head": head, "detached": False, "main": False,
        "bare": False, "locked": False, "lock_reason": None, "prunable": True,
        "prunable_reason": "gitdir file points to non-existent location", "dirty": None,
        "ignored": None, "nested": [], "last_activity": None, "idle_hours": None,
        "added_hours": None, "activity_capped": False, "hold": None,
        "retire": {"disposition": "SKIP_PRUNABLE", "reason": gone, "triage": None,
                   "gates": _gates(*linked, ("commit_kept", True, "branch gone keeps it"),
                                   own_refs)},
        "reap": {"disposition": "SKIP_PRUNABLE", "reason": gone, "triage": None,
                 "gates": _gates(*linked, own_refs)},
        "branch_state": {"state": "unstarted", "containment": None, "containing_ref": None,
                         "proof": None, "ahead": 0,
                         "reason": "unstarted: at the same tip as main"}}
    assert len(rows) == 2
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list")
    assert rc == 0 and "SKIP_PRUNABLE" in out
