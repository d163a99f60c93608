"""Interrupted runs leave no debris, and a stale git lock is named, never deleted (issue 12,
section 3): a lock file under a ref a transaction would touch refuses the run with one line; a
bundle no journal lists is verified and listed by ``log`` as an orphan (kept); the scratch
directories and lock files of an interrupted bundle write are removed by the next run."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from tests.gitrepo import NOW
from tests.reliability_util import bk, build_world, journal_ops, lock_files, refs


def test_a_stale_ref_lock_refuses_with_the_command_that_clears_it(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    lock = w.repo.path / ".git" / "refs" / "heads" / "merged-a.lock"
    lock.write_text("")
    # the lock's age is judged by the product's clock, pinned by the suite: an hour before it
    stamp = NOW - 3600
    os.utime(lock, (stamp, stamp))
    before = refs(w.repo.path)
    res = bk(w.repo.path, "delete", "merged-a", "squashy")
    assert res.returncode == 4
    assert res.stderr.decode() == (
        "branchkeeper: error: 1 stale git lock file(s) under the refs this would change, left by "
        "a git that was killed (no git process is running here; the newest is 3600 s old): "
        f"{lock}; nothing was changed. Clear them with: {shlex.join(['rm', '-f', '--', str(lock)])}"
        "\n")
    assert refs(w.repo.path) == before and journal_ops(w.repo.path) == []
    assert not list((w.repo.path / ".git" / "branchkeeper" / "bundles").glob("*.bundle"))
    assert lock.exists()  # never deleted by branchkeeper
    lock.unlink()
    assert bk(w.repo.path, "delete", "merged-a", "squashy").returncode == 0


def test_a_fresh_ref_lock_is_another_git_at_work(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    packed = w.repo.path / ".git" / "packed-refs.lock"
    packed.write_text("")
    stamp = NOW - 2
    os.utime(packed, (stamp, stamp))
    res = bk(w.repo.path, "sweep", "--clean")
    assert res.returncode == 4
    assert res.stderr.decode() == (
        "branchkeeper: error: another git command is updating the refs this would change right "
        f"now (lock file(s) {packed}); nothing was changed; try again when it has finished. "
        f"If no git is running, a killed git left them: clear them with: rm -f -- {packed}\n")
    assert packed.exists()


def test_orphan_bundle_is_listed_and_debris_is_removed(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    killed = bk(w.repo.path, "delete", "merged-a", fault="delete.after_bundle")
    assert killed.returncode == -9
    bundles = w.repo.path / ".git" / "branchkeeper" / "bundles"
    (orphan,) = bundles.glob("*.bundle")
    (bundles / ".verify-leftover").mkdir()
    (bundles / ".verify-leftover" / "HEAD").write_text("x")
    (bundles / "20200101T000000Z-dead-delete.bundle.lock").write_text("half")
    log = bk(w.repo.path, "log")
    assert log.returncode == 0
    assert log.stdout.decode() == (
        "no operations recorded\n"
        f"orphan bundle  {orphan}  verified; no journal operation lists it; kept (restore from "
        "it with git fetch, or delete it by hand)\n")
    rows = json.loads(bk(w.repo.path, "log", "--json").stdout)
    assert rows == [{"id": None, "time": None, "op": "orphan bundle", "status": "verified",
                     "undone": None, "items": 0, "results": {}, "bundle": str(orphan),
                     "bundles": [str(orphan)], "steps": 0,
                     "archives": [], "note": "no journal operation lists it; kept", "argv": []}]
    assert bk(w.repo.path, "delete", "merged-a").returncode == 0
    assert orphan.exists()  # kept: never deleted silently
    assert not (bundles / ".verify-leftover").exists()
    assert not (bundles / "20200101T000000Z-dead-delete.bundle.lock").exists()
    assert lock_files(w.repo.path) == []
