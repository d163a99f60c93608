"""Names git gives in bytes that are not UTF-8 (held as surrogate escapes): ``worktree retire``
records its hold and ``worktree list`` prints the real bytes, as the sweep does, under a strict
UTF-8 output encoding too; nothing crashes. Run as a process: the bytes on stdout are the
point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo

NAME = b"notes-\xff.txt"
LOSE = (b"ignored files it would lose: " + NAME + b" (not regenerable: no "
        b"branches.cleanup_after_merge.regenerable glob matches)")


def _bk(repo: GitRepo, *argv: str, strict: bool) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    if strict:  # a UTF-8 locale whose stdout refuses surrogates
        env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "branchkeeper", "-C", str(repo.path), *argv],
                          capture_output=True, env=env, check=False)


def _world(w: GitRepo, tmp_path: Path) -> Path:
    w.commit("ignore notes", files={".gitignore": "notes*\n"})
    w.git("push", "-q", "origin", "main")
    wt = tmp_path / "wt"
    w.git("worktree", "add", "-q", str(wt), "-b", "feat/a")
    (wt / os.fsdecode(NAME)).write_bytes(b"x")
    return wt


@pytest.mark.parametrize("strict", [False, True])
def test_retire_records_the_hold_of_a_non_utf8_ignored_name(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path, strict: bool) -> None:
    _, w = remote_and_clone
    wt = _world(w, tmp_path)
    res = _bk(w, "worktree", "retire", str(wt), strict=strict)
    assert (res.returncode, res.stderr) == (3, b"")
    lines = res.stdout.split(b"\n")
    assert lines[:3] == [
        f"kept worktree {wt}: SKIP_PROTECTED_IGNORED".encode(),
        b"  blocker: SKIP_PROTECTED_IGNORED: " + LOSE,
        f"  to keep those files and remove it: branchkeeper worktree retire "
        f"--archive-ignored {wt}".encode()]
    holds = _bk(w, "worktree", "retire", "--list-holds", "--json", strict=strict)
    assert holds.returncode == 0
    text = holds.stdout.decode("utf-8", "surrogateescape")
    assert [h["blockers"] for h in json.loads(text)["holds"]] == [
        ["SKIP_PROTECTED_IGNORED: " + LOSE.decode("utf-8", "surrogateescape")]]
    res = _bk(w, "worktree", "retire", "--json", str(wt), strict=strict)
    assert (res.returncode, res.stderr) == (3, b"")
    doc = json.loads(res.stdout.decode("utf-8", "surrogateescape"))
    assert doc["blockers"] == ["SKIP_PROTECTED_IGNORED: " + LOSE.decode("utf-8", "surrogateescape")]


def test_worktree_list_prints_the_name_as_the_sweep_does(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, w = remote_and_clone
    _world(w, tmp_path)
    sweep = _bk(w, "sweep", strict=True)
    assert sweep.returncode == 0, sweep.stderr
    assert b"1 ignored file(s) a removal would lose: " + NAME + b"\n" in sweep.stdout
    listed = _bk(w, "worktree", "list", strict=True)
    assert (listed.returncode, listed.stderr) == (0, b"")
    assert NAME in listed.stdout and b"\\udcff" not in listed.stdout


def test_a_repository_whose_path_is_not_utf8_works(tmp_path: Path) -> None:
    """sweep, worktree list, delete, log and undo in a repository under a directory whose name
    holds a byte that is not UTF-8: the path reaches git and the OS as its own bytes (it used
    to be decoded with replacement characters, and every command said git could not run)."""
    top = tmp_path / os.fsdecode(b"r-\xff")
    bare = GitRepo.init_bare(top / "origin.git")
    w = GitRepo.init(top / "work")
    w.commit("initial", files={"README.md": "hello\n"})
    w.git("remote", "add", "origin", str(bare.path))
    w.git("push", "-q", "-u", "origin", "main")
    w.switch("feat", create=True, start="main")
    w.commit("feat work", files={"feat.txt": "feat\n"})
    w.switch("main")
    w.merge("feat")
    w.git("push", "-q", "origin", "main")
    raw = os.fsencode(w.path)
    sweep = _bk(w, "sweep", strict=True)
    assert (sweep.returncode, sweep.stderr) == (0, b"")
    assert sweep.stdout.startswith(raw + b"  default: main  remote: origin")
    assert b"    branchkeeper delete -- feat\n" in sweep.stdout
    doc = json.loads(_bk(w, "sweep", "--json", strict=False).stdout.decode(
        "utf-8", "surrogateescape"))
    assert doc["repository"] == str(w.path)
    listed = _bk(w, "worktree", "list", strict=True)
    assert (listed.returncode, listed.stderr) == (0, b"")
    assert raw in listed.stdout
    deleted = _bk(w, "delete", "--", "feat", strict=True)
    assert (deleted.returncode, deleted.stderr) == (0, b""), deleted.stdout
    assert not w.has_ref("refs/heads/feat")
    log = _bk(w, "log", strict=True)
    lines = log.stdout.split(b"\n")
    assert (log.returncode, lines[0].split()) == (
        0, [b"ID", b"TIME", b"OP", b"STATUS", b"ITEMS", b"BUNDLE"])
    assert lines[1].split()[2:5] == [b"delete", b"done", b"1"]
    assert lines[1].split()[5].startswith(raw + b"/.git/branchkeeper/bundles/")
    undo = _bk(w, "undo", strict=True)
    assert (undo.returncode, undo.stderr) == (0, b"")
    assert w.has_ref("refs/heads/feat")
