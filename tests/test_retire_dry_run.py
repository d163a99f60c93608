"""``worktree retire --dry-run``: says what retire would do and changes nothing (issue 11)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo


def bk(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def snapshot(root: Path) -> dict[str, str]:
    """Every file and symbolic link under ``root`` (repository, git dir, worktrees) with a
    digest of its content: a dry run must leave this identical."""
    seen: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            seen[str(path)] = "link:" + str(path.readlink())
        elif path.is_file():
            seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            seen[str(path)] = "dir"
    return seen


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    clone.commit("ignore", files={".gitignore": "scratch/\n.agentic/\n"}, days_ago=5)
    clone.git("push", "-q", "origin", "main")
    return clone


def test_dry_run_of_a_removable_worktree(repo: GitRepo, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w a"
    w = repo.worktree_add(wt, "-b", "feat/a")
    tip = w.commit("work", files={"a.txt": "a\n"})
    (wt / ".agentic").mkdir()
    (wt / ".agentic" / "events.jsonl").write_text("{}\n")
    (wt / "scratch").mkdir()
    (wt / "scratch" / "notes.md").write_text("n\n")
    repo.git("status", "--porcelain", cwd=wt)  # settle the index before the snapshot
    before = snapshot(tmp_path)
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run",
                      "--archive-ignored", str(wt))
    assert (rc, err) == (0, "")
    assert out == ("dry run: nothing is changed\n"
                   f"would remove worktree {wt}\n"
                   f"branch feat/a kept at {tip}\n"
                   "would salvage: .agentic/events.jsonl\n"
                   "would archive 1 ignored file(s): scratch/notes.md\n"
                   f"restore: git worktree add '{wt}' feat/a\n")
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run",
                      "--archive-ignored", "--json", str(wt))
    assert (rc, err) == (0, "")
    assert json.loads(out) == {
        "dry_run": True, "removed": str(wt), "branch": "feat/a", "head": tip,
        "kept": "branch feat/a keeps it", "pinned": None, "salvaged": [], "operation": None,
        "archive": None, "restore": [f"git worktree add '{wt}' feat/a"],
        "would_salvage": [".agentic/events.jsonl"], "would_archive": ["scratch/notes.md"]}
    assert snapshot(tmp_path) == before


def test_dry_run_of_a_worktree_that_would_be_held(repo: GitRepo, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w"
    repo.worktree_add(wt, "-b", "w")
    (wt / "new.txt").write_text("n\n")
    repo.git("status", "--porcelain", cwd=wt)
    before = snapshot(tmp_path)
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run", str(wt))
    assert (rc, err) == (3, "")
    assert out == ("dry run: nothing is changed\n"
                   f"would keep worktree {wt}: SKIP_DIRTY\n"
                   "  blocker: SKIP_DIRTY: 1 untracked file(s): new.txt\n"
                   "would record an automatic hold: it says why the worktree stays and ends "
                   "when a later retire removes it\n")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run", "--json",
                    str(wt))
    data = json.loads(out)
    blockers = ["SKIP_DIRTY: 1 untracked file(s): new.txt"]
    assert (rc, data) == (3, {
        "dry_run": True,
        "held": {"path": str(wt), "owner": data["held"]["owner"],
                 "reason": "retire blocked: SKIP_DIRTY", "revisit": "the blockers are resolved",
                 "since": data["held"]["since"], "auto": True, "blockers": blockers},
        "refused": False, "gone": False, "disposition": "SKIP_DIRTY", "blockers": blockers, "triage": None,
        "pinned": None, "hint": None, "retire": data["retire"]})
    assert snapshot(tmp_path) == before
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--list-holds")
    assert (rc, out) == (0, "no open holds\n")


def test_dry_run_of_the_main_worktree_and_a_pin(repo: GitRepo, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    det = tmp_path / "det"
    w = repo.worktree_add(det, "--detach")
    sha = w.commit("unpushed", files={"u.txt": "u\n"})
    before = snapshot(tmp_path)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run",
                    str(repo.path))
    assert (rc, out) == (5, "dry run: nothing is changed\n"
                            f"would keep worktree {repo.path}: SKIP_SELF\n"
                            "  blocker: SKIP_SELF: the main worktree is never removed\n"
                            "  blocker: SKIP_SELF: this command runs inside it\n"
                            "  blocker: SKIP_PROTECTED_BRANCH: main is the default branch: its "
                            "checkout is never removed\n"
                            "never retired; no hold recorded\n")
    ref = f"refs/branchkeeper/pinned/det-{sha[:10]}"
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run", "--pin",
                    str(det))
    assert (rc, out) == (0, "dry run: nothing is changed\n"
                            f"would remove worktree {det}\n"
                            f"kept: detached HEAD {sha[:10]} is in {ref}\n"
                            f"would pin as {ref}\n"
                            f"restore: git worktree add --detach {det} {sha}\n")
    assert snapshot(tmp_path) == before
    assert not repo.has_ref(ref)


def test_dry_run_refuses_hold_verbs(repo: GitRepo, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    wt = tmp_path / "w"
    repo.worktree_add(wt, "-b", "w")
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "retire", "--dry-run",
                      "--release", str(wt))
    assert (rc, out) == (2, "")
    assert err.endswith("--dry-run applies to a retire, not to --hold or --release\n")
