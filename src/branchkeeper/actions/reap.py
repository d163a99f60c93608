"""``worktree reap``: remove the worktrees every reap gate passes, and (opt-in) archive the
unproven ones first (issue 4, section 3; second document, "the automatic reaper" and "The
unproven class: archive, don't accumulate"; DESIGN.md guarantees 1-5).

For each candidate, under the mutation lock: re-gather and re-evaluate every gate (the HEAD and
the branch tip must not have moved), salvage the configured agent-state files into the main
worktree (a failed salvage blocks the removal), for ``--archive-unproven`` write and verify a
bundle of every commit unique to the branch, for ``--archive-ignored`` write and verify an
archive of the ignored files the ignored-content rule keeps (issue 12, section 1), journal the
step, then ``git worktree remove`` WITHOUT ``--force`` (git itself refuses a tree that became
dirty). The branch is never deleted; the directory is never deleted by hand. One reap is one
journal operation (``worktree-reap``): begun before the first removal, one step per further
worktree, so one ``undo`` brings back every worktree it removed (issue 11).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from branchkeeper.actions.archive import ArchiveError
from branchkeeper.actions.bundle import BundleError, create_bundle
from branchkeeper.actions.interrupt import Signals, deferred_signals
from branchkeeper.actions.refupdate import RefOutcome, create_refs
from branchkeeper.actions.worktree_removal import (
    SalvageError,
    archive_kept_ignored,
    git_worktree_remove,
    salvage,
)
from branchkeeper.analysis.reap_gates import ReapInputs, covered, evaluate_reap
from branchkeeper.analysis.worktree_model import WorktreeVerdict
from branchkeeper.analysis.worktree_record import WorktreeRecord, WorktreeSurvey, gather
from branchkeeper.git.repo import Worktree, list_worktrees
from branchkeeper.git.types import Oid
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.bundles import BundleInfo
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock


class Outcome(StrEnum):
    """What the reaper did with one worktree."""

    REMOVED = "removed"
    ARCHIVED = "archived"
    WOULD_REMOVE = "would_remove"
    WOULD_ARCHIVE = "would_archive"
    KEPT = "kept"
    RACED = "raced"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ReapResult:
    """One worktree's result: its verdict (the disposition that decided), the outcome, a
    one-line ``detail``, the shell-quoted commands that restore it (``restore``), the bundle of
    an archive, the journal operation id, the salvaged files (main-worktree paths) and the
    archive of its kept ignored files (``--archive-ignored``)."""

    verdict: WorktreeVerdict
    outcome: Outcome
    detail: str
    restore: tuple[str, ...] = ()
    bundle: BundleInfo | None = None
    op_id: str | None = None
    salvaged: tuple[str, ...] = field(default=())
    archive: ArchiveInfo | None = None


@dataclass
class ReapHooks:
    """Test seams: ``after_check`` runs after the plan's evaluation and before the re-check;
    ``before_remove`` runs after the re-check, right before ``git worktree remove``."""

    after_check: Callable[[Worktree], None] | None = None
    before_remove: Callable[[Worktree], None] | None = None


#: The hooks :func:`execute_reap` uses when none are passed (tests replace it).
DEFAULT_HOOKS = ReapHooks()


def _restore_add(wt: Worktree) -> str:
    if wt.branch is not None:
        return shlex.join(["git", "worktree", "add", str(wt.path),
                           wt.branch.removeprefix("refs/heads/")])
    return shlex.join(["git", "worktree", "add", "--detach", str(wt.path), str(wt.head)])


def _fresh(plan: WorktreeSurvey, record: WorktreeRecord) -> tuple[ReapInputs | None, str]:
    """Re-gather one worktree; (None, why) when its HEAD or branch tip moved."""
    inputs = record.inputs
    wt = inputs.base.worktree
    worktrees = list_worktrees(plan.facts)
    cur = next((w for w in worktrees if w.path == wt.path), None)
    if cur is None:
        return None, "the worktree is gone from git worktree list"
    if cur.head != wt.head or cur.branch != wt.branch:
        return None, f"HEAD moved from {wt.head.short if wt.head else '-'} since the check"
    rec = inputs.record
    if rec is not None and rec.local_tip is not None and rec.local_tip != cur.head:
        return None, "the branch tip differs from the proven tip"
    ctx = plan.ctx.with_worktrees(worktrees)
    again = gather(ctx, cur)
    return replace(again, pr=inputs.pr, pr_degraded=inputs.pr_degraded), ""


def _default_base(plan: WorktreeSurvey) -> Oid | None:
    if plan.inventory is None:
        return None
    bases = [b for b in plan.inventory.bases if b.kind == "default"]
    return bases[0].oid if bases else None


def _pin_detached(plan: WorktreeSurvey, wt: Worktree) -> tuple[str | None, str]:
    """A detached HEAD is pinned under our own namespace before its checkout goes: the journal
    then names a ref of ours (never someone's remote-tracking ref), and the commit stays
    reachable even if the remote branch that held it is deleted later. (ref, why not)."""
    assert wt.head is not None
    ref = f"refs/branchkeeper/reaped/{wt.path.name}-{wt.head[:10]}"
    pinned = create_refs(plan.facts.root, {ref: wt.head}, must_not_exist=False)[ref]
    if pinned.outcome not in (RefOutcome.CREATED, RefOutcome.PRESENT):
        return None, pinned.reason
    return ref, ""


#: The journal operation of one reap.
OP_NAME = "worktree-reap"


class ReapJournal:
    """The one journal operation of a reap: begun at its first removal, a ``step`` for each
    further one, per-item results for the worktrees that stayed, one ``end``."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.op_id: str | None = None
        self.removed = 0
        self.stayed = 0

    def step(self, item: JournalItem, *, bundle: BundleInfo | None,
             archive: ArchiveInfo | None) -> str:
        """Journal one worktree about to be removed (before anything of it is touched)."""
        archives = [archive] if archive is not None else []
        if self.op_id is None:
            self.op_id = self.journal.begin(OP_NAME, [item], bundle=bundle, archives=archives,
                                            note="worktrees removed by reap; branches kept")
        else:
            self.journal.step(self.op_id, [item], bundle=bundle, archives=archives)
        return self.op_id

    def stayed_as(self, ref: str, reason: str) -> None:
        """The journaled worktree of ``ref`` was not removed after all."""
        assert self.op_id is not None
        self.journal.record(self.op_id, ItemResult(ref, ItemOutcome.KEPT, reason))
        self.stayed += 1

    def end(self) -> None:
        """``done`` when every journaled worktree went, ``partial`` or ``failed`` otherwise."""
        if self.op_id is None:
            return
        status = (OpStatus.DONE if not self.stayed else
                  OpStatus.PARTIAL if self.removed else OpStatus.FAILED)
        self.journal.end(self.op_id, status)


def _one(plan: WorktreeSurvey, record: WorktreeRecord, *, saves: Saves, hooks: ReapHooks,
         journal: ReapJournal, signals: Signals) -> ReapResult:
    assert record.reap is not None
    verdict = record.reap
    wt = verdict.worktree
    if hooks.after_check is not None:
        hooks.after_check(wt)
    fresh, why = _fresh(plan, record)
    if fresh is None:
        return ReapResult(verdict, Outcome.RACED, why)
    again = evaluate_reap(fresh)
    if not saves.cover(again, fresh) or again.disposition is not verdict.disposition:
        return ReapResult(again, Outcome.RACED, f"re-check: {again.disposition.value}: "
                          f"{again.reason}")
    cfg = plan.config.worktrees
    try:
        salvaged = salvage(wt.path, plan.facts.main_root, agent_dir=cfg.agent_state_dir,
                           paths=list(cfg.salvage))
    except SalvageError as exc:
        return ReapResult(again, Outcome.FAILED, f"salvage failed, kept: {exc}")
    shown = tuple(str(p) for p in salvaged)
    restore = [_restore_add(wt)]
    bundle = None
    unproven = any(g.name == "preserved" for g in again.blockers)
    if not unproven:
        ref: str | None = wt.branch
        if ref is None:
            ref, why = _pin_detached(plan, wt)
            if ref is None:
                return ReapResult(again, Outcome.FAILED,
                                  f"could not pin the detached HEAD, kept: {why}")
    else:
        assert wt.branch is not None and wt.head is not None
        ref = wt.branch
        try:
            bundle = create_bundle(plan.facts.root, plan.facts.common_dir, {ref: wt.head},
                                   base=_default_base(plan), label=f"archive-{wt.path.name}")
        except BundleError as exc:
            return ReapResult(again, Outcome.FAILED, f"bundle failed, kept: {exc}",
                              salvaged=shown)
        restore.insert(0, bundle.restore_command(ref))
        fault("archive.after_bundle")
    try:
        archive = archive_kept_ignored(plan.facts.common_dir, wt, fresh.base.ignored) \
            if saves.ignored else None
    except ArchiveError as exc:
        return ReapResult(again, Outcome.FAILED, f"archive failed, kept: {exc}", bundle=bundle,
                          salvaged=shown)
    if archive is not None:
        restore.append(archive.restore_command())
    assert wt.head is not None
    op_id = journal.step(JournalItem(ref, wt.head, None, " && ".join(restore)),
                         bundle=bundle, archive=archive)
    step = "reap" if bundle is None else "archive"
    fault(f"{step}.after_begin")
    if signals.stop:  # SIGINT/SIGTERM came: start no removal
        journal.stayed_as(ref, "interrupted before its removal; kept")
        return ReapResult(again, Outcome.KEPT, "interrupted before its removal; kept",
                          bundle=bundle, op_id=op_id, salvaged=shown, archive=archive)
    if hooks.before_remove is not None:
        hooks.before_remove(wt)
    # Never --force: git refuses a tree that became dirty after the re-check (guarantee 4).
    refused = git_worktree_remove(plan.facts.root, wt.path)
    fault(f"{step}.after_remove")
    if refused:
        journal.stayed_as(ref, "git refused, kept: " + refused)
        return ReapResult(again, Outcome.FAILED, "git refused, kept: " + refused,
                          bundle=bundle, op_id=op_id, salvaged=shown, archive=archive)
    journal.removed += 1
    outcome = Outcome.REMOVED if bundle is None else Outcome.ARCHIVED
    detail = "removed; branch kept" if bundle is None else "archived and removed; branch kept"
    if archive is not None:
        detail += f"; {len(archive.members)} ignored file(s) archived"
    return ReapResult(again, outcome, detail, tuple(restore), bundle, op_id, shown, archive)


@dataclass(frozen=True, slots=True)
class Saves:
    """What the run saves before removing, so a worktree that holds it may still go:
    ``unproven`` (``--archive-unproven``: a bundle of the branch) and ``ignored``
    (``--archive-ignored``: an archive of the kept ignored files)."""

    unproven: bool = False
    ignored: bool = False

    def cover(self, verdict: WorktreeVerdict, inputs: ReapInputs) -> bool:
        """True when ``verdict`` lets the worktree go once these saves are made."""
        return covered(verdict, inputs.base.ignored, archive_ignored=self.ignored,
                       archive_unproven=self.unproven)


def execute_reap(plan: WorktreeSurvey, *, dry_run: bool, saves: Saves = Saves(),
                 hooks: ReapHooks | None = None, lock_wait_s: float = 10.0) -> list[ReapResult]:
    """Act on ``plan``: remove every REMOVABLE worktree and every worktree ``saves`` cover
    (archiving the branch and/or the kept ignored files first). With ``dry_run`` nothing
    changes and candidates are reported as ``would_remove``/``would_archive``. Returns one
    :class:`ReapResult` per worktree, in plan order. Raises ``LockBusyError`` when another
    mutating command holds the lock past ``lock_wait_s`` seconds.
    """
    hooks = hooks or DEFAULT_HOOKS
    results: list[ReapResult] = []

    def candidate(r: WorktreeRecord) -> Outcome | None:
        v = r.reap
        assert v is not None
        if not saves.cover(v, r.inputs):
            return None
        # "archive" is the branch's bundle (--archive-unproven); archived ignored files ride
        # along with a plain removal
        if any(g.name == "preserved" for g in v.blockers):
            return Outcome.WOULD_ARCHIVE
        return Outcome.WOULD_REMOVE

    def kept(r: WorktreeRecord) -> ReapResult:
        assert r.reap is not None
        return ReapResult(r.reap, Outcome.KEPT, r.reap.reason)

    if dry_run or not any(candidate(r) for r in plan.records):
        for r in plan.records:
            which = candidate(r)
            results.append(kept(r) if which is None else replace(kept(r), outcome=which))
        return results
    journal = ReapJournal(Journal(plan.facts.common_dir))
    with repo_lock(plan.facts.common_dir, MUTATION_LOCK, wait_s=lock_wait_s), \
            deferred_signals("the reap") as signals:
        try:
            _each(plan, saves, hooks, journal, signals, candidate, kept, results)
        finally:
            journal.end()
    return results


def _each(plan: WorktreeSurvey, saves: Saves, hooks: ReapHooks, journal: ReapJournal,
          signals: Signals, candidate: Callable[[WorktreeRecord], Outcome | None],
          kept: Callable[[WorktreeRecord], ReapResult], results: list[ReapResult]) -> None:
    """Reap each candidate of ``plan`` in order, appending to ``results``."""
    for r in plan.records:
        if candidate(r) is None:
            results.append(kept(r))
        elif signals.stop:  # no new removal once SIGINT or SIGTERM came
            assert r.reap is not None
            results.append(ReapResult(r.reap, Outcome.KEPT, "interrupted before its removal; "
                                      "kept"))
        else:
            results.append(_one(plan, r, saves=saves, hooks=hooks, journal=journal,
                                signals=signals))
