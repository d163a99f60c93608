"""Crash at every step (issue 7, section 1): every destructive operation is killed with SIGKILL at
each fault point on its path (``BRANCHKEEPER_FAULT``), then: no commit lost (reachable, or
restorable from a bundle the journal lists), no uncommitted or untracked file lost, the journal
tells the truth, rerunning the command finishes the job (or says precisely why not), and undo of
everything restores every branch.

And interrupted at every step (issue 12, section 3): SIGINT and SIGTERM to the process group at
each point, as a terminal's Ctrl-C or a stop sends them. The operation stops at a safe point and
exits 130, leaves no lock file and no open journal operation, a plain ``git branch -d`` works, and
the rerun and the undo behave as after a crash. A SIGINT that arrives while ``update-ref --stdin``
holds its locks lets the transaction finish."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from branchkeeper.state.faults import FAULT_POINTS
from branchkeeper.state.journal import ItemOutcome
from tests.reliability_util import (
    World,
    bk,
    build_world,
    fake_gh_bin,
    git,
    hook,
    journal_ops,
    lock_files,
    lost_commits,
    lost_files,
    record,
    refs,
    snapshot,
    worktree_paths,
)

KILLED = -signal.SIGKILL
TORN = ("journal.torn_begin", "journal.torn_item", "journal.torn_end")


@dataclass(frozen=True)
class Case:
    """One destructive operation: the command (argv after ``-C repo``, or a hook), the branches
    it is meant to delete, and the points on its path."""

    argv: Callable[[World], list[str]]
    points: tuple[str, ...]
    targets: tuple[str, ...] = ()
    env: Callable[[World], dict[str, str]] = lambda w: {}


def _cleanup(op: str, *extra: str) -> tuple[str, ...]:
    return (*(f"{op}.{s}" for s in ("before_bundle", "after_bundle", "after_begin", "after_cas",
                                    "after_records")), *extra, *TORN)


def _gh(w: World) -> dict[str, str]:
    import os

    return {"PATH": f"{fake_gh_bin(w.tmp)}{os.pathsep}{os.environ['PATH']}"}


CASES: dict[str, Case] = {
    "delete": Case(lambda w: ["delete", "--json", "merged-a", "squashy"], _cleanup("delete"),
                   ("merged-a", "squashy")),
    "delete-remote": Case(lambda w: ["delete", "--json", "--remote", "merged-a"],
                          ("delete.before_remote", "delete.after_remote"), ("merged-a",)),
    "sweep-clean": Case(lambda w: ["sweep", "--clean", "--json"],
                        _cleanup("sweep-clean", "sweep-clean.before_worktree_remove",
                                 "sweep-clean.after_worktree_remove"),
                        ("done", "merged-a", "squashy")),
    "prune": Case(lambda w: ["prune", "--no-fetch", "--json"], _cleanup("prune"),
                  ("merged-a", "squashy")),
    "park": Case(lambda w: ["park", "live", "--reason", "waiting on review"],
                 tuple(f"park.{s}" for s in ("after_commit_tree", "after_begin",
                                             "after_update_ref", "before_push")) + TORN),
    "unpark": Case(lambda w: ["park", "--clear", "live"],
                   tuple(f"unpark.{s}" for s in ("after_commit_tree", "after_begin",
                                                 "after_update_ref", "before_push"))),
    "retire": Case(lambda w: ["worktree", "retire", str(w.wt_done)],
                   ("retire.before_remove", "retire.after_remove")),
    "reap": Case(lambda w: ["worktree", "reap", "--no-gh"],
                 ("reap.after_begin", "reap.after_remove", "journal.torn_begin",
                  "journal.torn_end")),
    "archive": Case(lambda w: ["worktree", "reap", "--archive-unproven"],
                    ("archive.after_bundle", "archive.after_begin", "archive.after_remove"),
                    env=_gh),
    "undo": Case(lambda w: ["undo"], ("undo.after_fetch", "undo.after_create",
                                      "journal.torn_undo")),
    "hook": Case(lambda w: [], ("hook-worktree-remove.before_remove",
                                "hook-worktree-remove.after_remove", "delete.after_begin",
                                "delete.after_cas", "journal.torn_item"),
                 ("worktree-feat",)),
}

PAIRS = [(op, point) for op, case in CASES.items() for point in case.points]


def test_every_fault_point_is_exercised() -> None:
    assert sorted({p for _, p in PAIRS}) == sorted(FAULT_POINTS)


def _hook_payload(w: World) -> dict[str, str]:
    return {"session_id": "s1", "cwd": str(w.repo.path),
            "worktree_path": str(w.repo.path / ".claude" / "worktrees" / "feat")}


def _prepare(op: str, w: World) -> None:
    if op == "undo":
        assert bk(w.repo.path, "delete", "merged-a", "squashy").returncode == 0
        git(w.repo.path, "reflog", "expire", "--expire=now", "--all")
        git(w.repo.path, "gc", "-q", "--prune=now")
    elif op == "hook":
        made = hook("WorktreeCreate", {"session_id": "s1", "cwd": str(w.repo.path),
                                       "name": "feat"})
        assert made.returncode == 0, made.stderr
    elif op == "unpark":
        assert bk(w.repo.path, "park", "live", "--reason", "r").returncode == 0


def _run(op: str, w: World, *, fault: str | None,
         signal: str | None = None) -> subprocess.CompletedProcess[bytes]:
    if op == "hook":
        return hook("WorktreeRemove", _hook_payload(w), fault=fault, signal=signal)
    case = CASES[op]
    return bk(w.repo.path, *case.argv(w), fault=fault, env=case.env(w), signal=signal)


def _check_journal(w: World, op: str, point: str, before_heads: dict[str, str]) -> None:
    log = bk(w.repo.path, "log", "--json")
    assert log.returncode == 0 and b"Traceback" not in log.stderr
    rows = json.loads(log.stdout)
    listed = [o for o in rows if o["id"] is not None]
    orphans = [o for o in rows if o["id"] is None]
    if point.startswith("journal.torn_"):
        assert b"skipped: unreadable line" in log.stderr, log.stderr
    ops = journal_ops(w.repo.path)
    assert [o["id"] for o in listed] == [o.id for o in reversed(ops)]
    # a bundle written before its journal entry is an orphan: verified, listed, kept
    bundle_first = point.endswith(".after_bundle") or (
        point == "journal.torn_begin" and op in ("delete", "sweep-clean", "prune"))
    assert [(o["op"], o["status"]) for o in orphans] == (
        [("orphan bundle", "verified")] if bundle_first else [])
    now = refs(w.repo.path)
    claimed: set[str] = set()
    for operation in ops:
        for item in operation.items:
            if item.remote is not None:
                continue
            claimed.add(item.ref)
            result = operation.results.get(item.ref)
            if result is not None and result.outcome is ItemOutcome.DELETED:
                # killed undo: refs recreated at their recorded tips, undo record not yet written
                restored = point.startswith(("undo.", "journal.torn_undo")) and (
                    now.get(item.ref) == item.old)
                assert item.ref not in now or restored, f"{item.ref} claimed deleted but present"
            elif result is not None and operation.op not in ("park", "unpark"):
                assert now.get(item.ref) == item.old, f"{item.ref} claimed kept but moved"
    for ref, oid in before_heads.items():
        if ref not in claimed and ref.startswith("refs/heads/") and not (
                ref == "refs/heads/worktree-feat" and point.startswith("delete.")):
            assert now.get(ref) == oid, f"{ref} changed without a journal entry"
    mid = point.split(".")[1] in ("after_begin", "after_cas", "after_records", "before_remote",
                                  "after_remote", "before_worktree_remove",
                                  "after_worktree_remove", "after_update_ref", "after_remove",
                                  "torn_item", "torn_end")
    if mid and point not in ("retire.after_remove", "hook-worktree-remove.after_remove"):
        assert ops and ops[-1].status.value == "interrupted", point


def _check_rerun(op: str, w: World, point: str, after_kill: dict[str, str],
                 rerun: subprocess.CompletedProcess[bytes]) -> None:
    """The rerun finished the job, or said precisely why not."""
    case = CASES[op]
    assert b"Traceback" not in rerun.stderr
    err = rerun.stderr.decode()
    heads = refs(w.repo.path)
    left = [t for t in case.targets if f"refs/heads/{t}" in after_kill]
    if op == "delete-remote" and "refs/remotes/origin/merged-a" in after_kill:
        data = json.loads(rerun.stdout)
        assert rerun.returncode == 0, err  # the local branch is gone: only the remote goes
        assert [(b["name"], b["action"]) for b in data["remote"]] == [("merged-a", "deleted")]
    if op == "delete" or (op == "delete-remote"
                          and "refs/remotes/origin/merged-a" not in after_kill):
        data = json.loads(rerun.stdout)
        if len(left) == len(case.targets):
            assert rerun.returncode == 0, err
            assert sorted(b["name"] for b in data["branches"] if b["action"] == "deleted") \
                == sorted(case.targets)
        else:
            assert rerun.returncode == 5
            assert [(b["name"], b["action"], b["reason"]) for b in data["branches"]] == [
                (t, "refused", "no such local branch") for t in case.targets]
        if op == "delete-remote":
            assert "refs/remotes/origin/merged-a" not in heads
            assert git(w.origin.path, "for-each-ref", "refs/heads/merged-a") == ""
    elif op in ("sweep-clean", "prune"):
        data = json.loads(rerun.stdout)
        assert rerun.returncode == 0, err
        assert sorted(b["name"] for b in data["branches"] if b["action"] == "deleted") \
            == sorted(left)
    elif op in ("park", "unpark"):
        assert rerun.returncode == 0, err
        body = git(w.repo.path, "log", "-1", "--format=%B", "refs/heads/live")
        assert ("Parked-Reason: waiting on review" if op == "park" else "Unparked: ") in body
        assert heads["refs/remotes/origin/live"] == heads["refs/heads/live"]  # pushed
    elif op == "retire":
        if point == "retire.after_remove":
            assert rerun.returncode == 4
            assert err == (f"branchkeeper: error: {w.wt_done} is not a worktree of this "
                           "repository (see: branchkeeper worktree list)\n")
        else:
            assert rerun.returncode == 0, err
    elif op in ("reap", "archive"):
        assert rerun.returncode == 0, err
        gone = [w.wt_done] + ([w.wt_unpushed] if op == "archive" else [])
        assert not set(gone) & set(worktree_paths(w.repo.path))
        assert "refs/heads/done" in heads and "refs/heads/unpushed" in heads
    elif op == "undo":
        # a signal after the last restore lets the undo finish its operation: nothing is left
        # to undo then, which exits 4 as an empty journal does
        assert rerun.returncode == 0 or (rerun.returncode == 4 and rerun.stdout.startswith(
            b"nothing to undo: every operation in the journal is undone already")), err
        assert {"refs/heads/merged-a", "refs/heads/squashy"} <= set(heads)
    elif op == "hook":
        assert (rerun.returncode, rerun.stdout) == (0, b"")
        if "refs/heads/worktree-feat" in after_kill and point.startswith("hook-worktree-remove."):
            if point.endswith("before_remove"):
                assert err.startswith("branchkeeper: deleted branch worktree-feat")
            else:  # the checkout is gone: the hook cannot map the path to a branch any more
                assert err == "" and "refs/heads/worktree-feat" in heads
        else:
            assert err == ""
    for t in case.targets if op not in ("hook",) else ():
        assert f"refs/heads/{t}" not in heads, t


def _undo_everything(w: World) -> None:
    for operation in reversed(journal_ops(w.repo.path)):
        if operation.undone is None:
            res = bk(w.repo.path, "undo", operation.id, "--json")
            assert res.returncode in (0, 5), res.stderr
            assert b"Traceback" not in res.stderr


@pytest.mark.parametrize(("op", "point"), PAIRS)
def test_kill_at_every_step(op: str, point: str, tmp_path: Path) -> None:
    w = build_world(tmp_path)
    before = snapshot(w.repo.path)
    _prepare(op, w)
    after_prep = refs(w.repo.path)
    killed = _run(op, w, fault=point)
    assert killed.returncode == KILLED, (
        f"{point} is not on the path of {op}: exit {killed.returncode}\n"
        f"{killed.stderr.decode()}")
    lost = lost_commits(w.repo.path, before, tmp_path / "mirror")
    files = lost_files(before)
    record("crash", op=op, point=point, commits_lost=len(lost), files_lost=len(files))
    assert not lost and not files
    after_kill = refs(w.repo.path)
    _check_journal(w, op, point, after_prep)
    rerun = _run(op, w, fault=None)
    _check_rerun(op, w, point, after_kill, rerun)
    _undo_everything(w)
    final = refs(w.repo.path)
    for ref, oid in before.refs.items():
        if ref.startswith("refs/heads/") and ref != "refs/heads/worktree-feat":
            assert final.get(ref) == oid, f"{ref}: {final.get(ref)} != {oid} after undo"
    assert not lost_commits(w.repo.path, before, tmp_path / "mirror2")
    assert not lost_files(before)


SIGNALS = ("INT", "TERM")
#: Every point with both signals; a torn journal line needs a crash mid-write (a deferred
#: signal never tears a write). The default run takes one signal per point, alternating; the
#: other is a ``slow`` case (``-m slow`` runs them all).
SIGNAL_PAIRS = [
    pytest.param(op, point, sig, marks=[pytest.mark.slow] if (n + k) % 2 else [])
    for n, (op, point) in enumerate(p for p in PAIRS if not p[1].startswith("journal.torn_"))
    for k, sig in enumerate(SIGNALS)]


@pytest.mark.parametrize(("op", "point", "sig"), SIGNAL_PAIRS)
def test_signal_at_every_step(op: str, point: str, sig: str, tmp_path: Path) -> None:
    w = build_world(tmp_path)
    before = snapshot(w.repo.path)
    _prepare(op, w)
    hit = _run(op, w, fault=point, signal=sig)
    err = hit.stderr.decode()
    assert hit.returncode == 130, f"{op} {point} SIG{sig}: exit {hit.returncode}\n{err}"
    assert "Traceback" not in err and "interrupted" in err, err
    record("signal", op=op, point=point, signal=sig)
    assert lock_files(w.repo.path) == []
    assert not lost_commits(w.repo.path, before, tmp_path / "mirror")
    assert not lost_files(before)
    # a deferred signal never leaves an operation open: each one ended and said how
    assert [o.id for o in journal_ops(w.repo.path) if o.status.value == "interrupted"] == []
    # git itself is not stuck on a lock: a plain branch delete works
    git(w.repo.path, "branch", "probe", "main")
    git(w.repo.path, "branch", "-d", "probe")
    after = refs(w.repo.path)
    rerun = _run(op, w, fault=None)
    _check_rerun(op, w, point, after, rerun)
    _undo_everything(w)
    final = refs(w.repo.path)
    for ref, oid in before.refs.items():
        if ref.startswith("refs/heads/") and ref != "refs/heads/worktree-feat":
            assert final.get(ref) == oid, f"{ref}: {final.get(ref)} != {oid} after undo"
    assert not lost_commits(w.repo.path, before, tmp_path / "mirror2")


_HOOK = """#!/bin/sh
# The reference-transaction hook runs while git holds the lock of every ref in the
# transaction ("prepared"): deliver a SIGINT to branchkeeper right then, once: to its process
# group as a terminal's Ctrl-C does (BK_TARGET="-"), or to its process alone (BK_TARGET="").
if [ "$1" = prepared ] && [ ! -e "$BK_FIRED" ]; then
  : > "$BK_FIRED"
  kill -INT "$BK_TARGET$(cat "$BK_PGID")"
  sleep 0.5
fi
cat >/dev/null
exit 0
"""


@pytest.mark.parametrize("target", ["-", ""], ids=["process-group", "process"])
def test_sigint_during_the_ref_transaction_lets_it_finish(tmp_path: Path, target: str) -> None:
    # Before the fix, SIGINT to the process alone made Python SIGKILL the running update-ref:
    # every lock of the transaction stayed behind and no later delete could lock those refs.
    import os
    import sys

    w = build_world(tmp_path)
    for i in range(40):
        git(w.repo.path, "branch", f"done-{i:02d}", "merged-a")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(_HOOK)
    (hooks / "reference-transaction").chmod(0o755)
    git(w.repo.path, "config", "core.hooksPath", str(hooks))
    env = {**os.environ, "BK_PGID": str(tmp_path / "pgid"), "BK_FIRED": str(tmp_path / "fired"),
           "BK_TARGET": target}
    env.pop("BRANCHKEEPER_FAULT", None)
    proc = subprocess.Popen([sys.executable, "-m", "branchkeeper", "-C", str(w.repo.path),
                             "sweep", "--clean", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    (tmp_path / "pgid").write_text(str(proc.pid))
    out, errb = proc.communicate(timeout=120)
    err = errb.decode()
    assert (tmp_path / "fired").exists(), err
    assert proc.returncode == 130, err
    assert err.startswith("branchkeeper: interrupted by SIGINT (Ctrl-C): the cleanup stopped at "
                          "a safe point"), err
    assert lock_files(w.repo.path) == []
    heads = refs(w.repo.path)
    # the transaction that was running finished: every proven branch is gone, none half-way
    assert not [r for r in heads if r.startswith("refs/heads/done-")]
    (op,) = journal_ops(w.repo.path)
    assert op.status.value == "done"
    git(w.repo.path, "config", "--unset", "core.hooksPath")
    git(w.repo.path, "branch", "probe", "main")
    git(w.repo.path, "branch", "-d", "probe")
    assert json.loads(out)["operation"] == op.id
