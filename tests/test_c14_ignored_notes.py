"""Field case C14 (issue 12, section 1): a squash-merged, pushed, remote-deleted branch whose
worktree holds ``notes/result.txt``, ignored through ``.git/info/exclude``. No removal path
(``worktree retire``, ``worktree reap``, ``sweep --clean``, the WorktreeRemove hook, the guard's
suggestions) deletes the file unless it is archived first, and ``undo`` puts it back."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from branchkeeper.state.journal import Journal
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook
from tests.reaputil import add_worktree, age_files, commit_in

NOTE = "the result nobody committed\n"
KEPT = ("SKIP_PROTECTED_IGNORED: notes/result.txt (not regenerable: no "
        "branches.cleanup_after_merge.regenerable glob matches)")


@dataclass
class C14:
    repo: GitRepo
    wt: Path

    @property
    def note(self) -> Path:
        return self.wt / "notes" / "result.txt"


@pytest.fixture
def c14(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> C14:
    origin, repo = remote_and_clone
    wt = tmp_path / "wt-feat"
    w = add_worktree(repo, wt, "-b", "feat", start="main", hours=48)
    commit_in(w, "feat one", {"f.txt": "1\n"}, hours=48)
    commit_in(w, "feat two", {"f.txt": "2\n"}, hours=48)
    w.git("push", "-q", "-u", "origin", "feat")
    repo.squash_merge("feat", days_ago=1)
    repo.git("push", "-q", "origin", "main")
    repo.git("push", "-q", "origin", "--delete", "feat")
    repo.git("fetch", "-q", "--prune", "origin")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    with (repo.path / ".git" / "info" / "exclude").open("a") as fh:
        fh.write("notes/\n")
    (wt / "notes").mkdir()
    (wt / "notes" / "result.txt").write_text(NOTE)
    os.chmod(wt / "notes" / "result.txt", 0o640)
    age_files(wt, 48)
    assert origin.git("for-each-ref", "refs/heads/feat") == ""
    return C14(repo, wt)


def bk(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def bk_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    rc, out, err = bk(capsys, *args, "--json")
    assert "Traceback" not in err
    return rc, json.loads(out)


def _intact(c: C14) -> None:
    assert c.note.read_text() == NOTE
    assert c.note.stat().st_mode & 0o777 == 0o640


def _undo_restores(c: C14, capsys: pytest.CaptureFixture[str], op_id: str) -> None:
    assert not c.wt.exists()
    rc, doc = bk_json(capsys, "-C", str(c.repo.path), "undo", op_id)
    assert rc == 0, doc
    # the worktree goes back first (on its branch), then the archived files into it
    assert doc["worktrees"] == [{"path": str(c.wt), "branch": "feat", "commit": None,
                                 "outcome": "restored", "reason": "added back", "command": ""}]
    (restored,) = doc["archives"]
    assert (restored["outcome"], restored["restored"], restored["kept"], restored["recreated"]) \
        == ("restored", ["notes/result.txt"], [], False)
    _intact(c)
    assert c.repo.git("-C", str(c.wt), "symbolic-ref", "HEAD") == "refs/heads/feat"


def test_c14_sweep_classifies_the_branch_squash_merged(c14: C14,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "sweep")
    rec = next(b for b in doc["branches"] if b["name"] == "feat")
    assert (rc, rec["state"], rec["proof"]["kind"], rec["upstream_gone"]) == (
        0, "patch_equivalent", "squash_merged", True)


def test_c14_list_shows_both_dispositions(c14: C14, capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "worktree", "list")
    row = next(w for w in doc["worktrees"] if w["path"] == str(c14.wt))
    reason = ("ignored files it would lose: notes/result.txt (not regenerable: no "
              "branches.cleanup_after_merge.regenerable glob matches)")
    assert (rc, row["ignored"], row["retire"]["disposition"], row["retire"]["reason"],
            row["reap"]["disposition"], row["reap"]["reason"], row["idle_hours"]) == (
        0, {"count": 1, "kept": ["notes/result.txt"]}, "SKIP_PROTECTED_IGNORED", reason,
        "SKIP_PROTECTED_IGNORED", reason, 48.0)


def test_c14_retire_keeps_then_archives_and_undo_restores(
        c14: C14, capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "worktree", "retire", str(c14.wt))
    hint = f"branchkeeper worktree retire --archive-ignored {c14.wt}"
    assert (rc, doc["disposition"], doc["hint"], doc["held"]["auto"]) == (
        3, "SKIP_PROTECTED_IGNORED", hint, True)
    assert doc["blockers"] == ["SKIP_PROTECTED_IGNORED: ignored files it would lose: "
                               "notes/result.txt (not regenerable: no "
                               "branches.cleanup_after_merge.regenerable glob matches)"]
    _intact(c14)
    rc, out, err = bk(capsys, "-C", str(c14.repo.path), "worktree", "retire", "--archive-ignored",
                      str(c14.wt))
    (op,) = Journal(common_dir_of(c14.repo.path)).operations()
    (archive,) = op.archives
    add = shlex.join(["git", "worktree", "add", str(c14.wt), "feat"])
    untar = shlex.join(["tar", "-x", "--keep-old-files", "-f", str(archive.path), "-C",
                        str(c14.wt)])
    assert (rc, err) == (0, "")
    assert out == (f"removed worktree {c14.wt}\n"
                   f"branch feat kept at {c14.repo.rev('feat')}\n"
                   f"archived 1 ignored file(s): {archive.path}\n"
                   f"restore: {add}\nrestore: {untar}\n"
                   f"undo: branchkeeper undo {op.id}\n")
    assert (op.op, archive.members, archive.branch) == (
        "worktree-retire", ("notes/result.txt",), "refs/heads/feat")
    _undo_restores(c14, capsys, op.id)


def test_c14_undo_never_overwrites_an_existing_file(c14: C14,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert bk(capsys, "-C", str(c14.repo.path), "worktree", "retire", "--archive-ignored",
              str(c14.wt))[0] == 0
    c14.repo.git("worktree", "add", "-q", str(c14.wt), "feat")
    (c14.wt / "notes").mkdir()
    c14.note.write_text("written since\n")
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "undo")
    (restored,) = doc["archives"]
    assert (rc, restored["outcome"], restored["kept"], restored["recreated"]) == (
        5, "conflict", ["notes/result.txt"], False)
    assert c14.note.read_text() == "written since\n"
    # the archived copy stays where the printed command reads it
    assert restored["reason"] == ("1 path(s) already taken, left alone: notes/result.txt; the "
                                  "archived copies stay in the archive (print one to compare)")
    command = shlex.split(restored["command"])
    assert command[:4] == ["tar", "-x", "-O", "-f"] and command[5:] == ["--", "notes/result.txt"]
    assert command[4] == restored["archive"]
    shown = subprocess.run(command, capture_output=True, check=True).stdout
    assert shown == NOTE.encode()


def test_c14_reap_keeps_then_archives(c14: C14, capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "worktree", "reap", "--no-gh")
    entry = next(w for w in doc["worktrees"] if w["path"] == str(c14.wt))
    assert (rc, entry["disposition"], entry["outcome"]) == (0, "SKIP_PROTECTED_IGNORED", "kept")
    _intact(c14)
    why = ("SKIP_PROTECTED_IGNORED: ignored files it would lose: notes/result.txt (not "
           "regenerable: no branches.cleanup_after_merge.regenerable glob matches)")
    rc, out, _ = bk(capsys, "-C", str(c14.repo.path), "worktree", "reap", "--no-gh", "--dry-run")
    assert (rc, out) == (0, (
        "degraded mode: --no-gh: PR evidence disabled\ndry run: nothing is removed\n"
        f"kept: {c14.wt} (feat)\n  {why}\n"
        "  to keep those files and remove it: branchkeeper worktree reap --archive-ignored\n"
        "would remove 0, would archive 0, keep 1\n"))
    rc, out, _ = bk(capsys, "-C", str(c14.repo.path), "worktree", "reap", "--no-gh", "--dry-run",
                    "--archive-ignored")
    assert f"would remove: {c14.wt} (feat)\n  {why} (saved first: --archive-ignored)\n" in out
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "worktree", "reap", "--no-gh",
                      "--archive-ignored", "--dry-run")
    entry = next(w for w in doc["worktrees"] if w["path"] == str(c14.wt))
    assert (entry["outcome"], entry["archive"]) == ("would_remove", None)
    _intact(c14)
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "worktree", "reap", "--no-gh",
                      "--archive-ignored")
    entry = next(w for w in doc["worktrees"] if w["path"] == str(c14.wt))
    assert (rc, entry["outcome"], entry["archive"]["members"]) == (
        0, "removed", ["notes/result.txt"])
    assert entry["detail"] == "removed; branch kept; 1 ignored file(s) archived"
    _undo_restores(c14, capsys, entry["operation"])


def test_c14_sweep_clean_blocks_then_archives(c14: C14,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "sweep", "--clean")
    item = next(b for b in doc["branches"] if b["name"] == "feat")
    assert (rc, item["action"], item["worktree"], item["blocking"]) == (
        0, "blocked", str(c14.wt), [KEPT])
    _intact(c14)
    assert c14.repo.has_ref("refs/heads/feat")
    rc, out, _ = bk(capsys, "-C", str(c14.repo.path), "sweep", "--clean")
    assert "      to keep those files and remove it: branchkeeper sweep --clean " \
           "--archive-ignored\n" in out
    rc, doc = bk_json(capsys, "-C", str(c14.repo.path), "sweep", "--clean", "--archive-ignored")
    item = next(b for b in doc["branches"] if b["name"] == "feat")
    assert (rc, item["action"], item["archive_ignored"]) == (0, "deleted", ["notes/result.txt"])
    assert doc["archives"]["feat"]["members"] == ["notes/result.txt"]
    assert not c14.repo.has_ref("refs/heads/feat")
    _undo_restores(c14, capsys, doc["operation"])


def test_c14_worktree_remove_hook_keeps_it(c14: C14) -> None:
    payload = {"session_id": "s1", "cwd": str(c14.repo.path), "worktree_path": str(c14.wt)}
    result = run_hook("WorktreeRemove", payload)
    command = f"branchkeeper worktree retire --archive-ignored {c14.wt}"
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.decode() == (
        f"branchkeeper: kept worktree {c14.wt}: SKIP_PROTECTED_IGNORED: ignored files it would "
        "lose: notes/result.txt (not regenerable: no branches.cleanup_after_merge.regenerable "
        f"glob matches); to keep those files and remove it: {command}\n")
    _intact(c14)


def test_c14_guard_denies_and_suggests_the_archive(c14: C14,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = bk(capsys, "check", "--cwd", str(c14.repo.path), "--",
                    f"git worktree remove {c14.wt}")
    assert rc == 2
    assert out == (
        "deny: R-GIT-WORKTREE-REMOVE-FORCE\n"
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree remove {c14.wt}` would lose work:\n"
        "ignored files the ignored-content rule keeps (not regenerable; git worktree remove "
        "deletes them, --force or not):\n"
        "  - notes/result.txt (not regenerable: no branches.cleanup_after_merge.regenerable "
        "glob matches)\n\n"
        "First consume each listed ignored path, move it to a tracked home, or delete it "
        f"deliberately; then remove the worktree without --force (git worktree remove {c14.wt}),"
        f" or let `branchkeeper worktree retire {c14.wt}` check it for you. To keep the listed "
        "files and remove the worktree in one step: `branchkeeper worktree retire "
        f"--archive-ignored {c14.wt}` archives them first (branchkeeper undo puts them back)."
        f"\n\n{BRANCH_LIMIT_PRINCIPLE}\n")
    _intact(c14)
