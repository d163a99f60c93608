"""``worktree retire``: remove one finished worktree's checkout, or keep it and say why (issue 4,
sections 1-2; issue 12, sections 1, 2 and 6; second document, "Cleanup: isolation worktrees").

Under the mutation lock: pin a detached HEAD first when asked (``--pin``: then a HEAD no ref
holds may go), classify the worktree
with the one worktree record (its ``retire`` disposition), re-check it immediately before the
removal, salvage the agent-state files, archive the ignored files the ignored-content rule keeps
when ``--archive-ignored`` asks for it, pin a detached HEAD under
``refs/branchkeeper/pinned/`` if it is not yet (the ref the journal names, on which ``undo``
checks the worktree out again), journal the step (op ``worktree-retire``), then
``git worktree remove`` without ``--force``. Never forces, unlocks, prunes, pushes or deletes a
branch.

A worktree that may not go either records an automatic hold (owner, reason, the blockers; it
ends by itself when a later retire succeeds) or, when nothing could ever change the answer (the
main worktree, the checkout of the default branch, an integration line, an exempt or protected
branch, a directory that is gone), is refused without a hold.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from branchkeeper import clock
from branchkeeper.actions.archive import ArchiveError
from branchkeeper.actions.interrupt import Signals, deferred_signals
from branchkeeper.actions.refupdate import RefOutcome, create_refs
from branchkeeper.actions.worktree_removal import (
    SalvageError,
    archive_kept_ignored,
    git_worktree_remove,
    kept_ignored,
    salvage,
)
from branchkeeper.analysis.ignored import Polarity
from branchkeeper.analysis.reap_gates import covered
from branchkeeper.analysis.worktree_model import (
    PERMANENT,
    RETIRE_GATES,
    WorktreeVerdict,
    evaluate,
)
from branchkeeper.analysis.worktree_record import (
    WorktreeRecord,
    WorktreeSettings,
    gather,
    judge,
    worktree_context,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.state import holds as hold_store
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import Journal, JournalItem, OpStatus
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class RetireResult:
    """What ``retire`` did with one worktree.

    ``verdict``: the retire disposition that decided; ``removed``: the checkout is gone;
    ``refused``: it is never retired (no hold recorded); ``hold``: the automatic hold recorded
    instead of a removal; ``blockers``: one line per reason it stayed; ``pinned``: the ref a
    detached HEAD was pinned as; ``archive``: the archive of its kept ignored files;
    ``salvaged``: main-worktree paths written by the salvage; ``op_id``: the journal operation;
    ``restore``: shell-quoted commands that bring it back; ``kept``: what keeps its commit.
    With ``dry_run`` nothing was written: ``removed`` means "would remove", ``hold`` is the
    hold that would be recorded (not stored), ``pinned`` the ref ``--pin`` would write,
    ``would_salvage`` the agent-state paths (relative to the worktree) that would be copied
    and ``would_archive`` the ignored files ``--archive-ignored`` would archive. ``gone``:
    refused because its directory is gone and the entry holds nothing
    (:attr:`~branchkeeper.analysis.worktree_record.WorktreeRecord.gone`): there is no checkout
    to remove, and ``git worktree prune`` drops the entry losing nothing.
    """

    verdict: WorktreeVerdict
    removed: bool = False
    refused: bool = False
    hold: hold_store.Hold | None = None
    blockers: tuple[str, ...] = ()
    pinned: str | None = None
    archive: ArchiveInfo | None = None
    salvaged: tuple[str, ...] = ()
    op_id: str | None = None
    restore: tuple[str, ...] = ()
    kept: str = ""
    dry_run: bool = False
    would_salvage: tuple[str, ...] = ()
    would_archive: tuple[str, ...] = ()
    gone: bool = False


def pin_ref_name(path: Path, head: Oid) -> str:
    """``refs/branchkeeper/pinned/<basename>-<short sha>`` with the basename made ref-safe."""
    base = _UNSAFE.sub("-", path.name).strip(".-").replace("..", ".") or "worktree"
    base = base.removesuffix(".lock")
    return f"refs/branchkeeper/pinned/{base}-{head.short}"


def _pin(facts: RepoFacts, wt: Worktree) -> str | None:
    if wt.head is None or wt.branch is not None:
        return None
    ref = pin_ref_name(wt.path, wt.head)
    result = create_refs(facts.root, {ref: wt.head}, must_not_exist=True)[ref]
    if result.outcome not in (RefOutcome.CREATED, RefOutcome.PRESENT):
        raise BranchkeeperError(f"could not pin {wt.head} as {ref}: {result.reason}")
    return ref


def _restore_add(wt: Worktree) -> str:
    if wt.branch is not None:
        return shlex.join(["git", "worktree", "add", str(wt.path),
                           wt.branch.removeprefix("refs/heads/")])
    return shlex.join(["git", "worktree", "add", "--detach", str(wt.path), str(wt.head)])


def _blocker_lines(verdict: WorktreeVerdict) -> list[str]:
    return [f"{g.fails_as.value}: {g.detail}" for g in verdict.blockers]


def _keep(facts: RepoFacts, wt: Worktree, verdict: WorktreeVerdict, blockers: list[str], *,
          owner: str, pinned: str | None, gone: bool = False) -> RetireResult:
    if verdict.disposition in PERMANENT:
        return RetireResult(verdict, refused=True, blockers=tuple(blockers), pinned=pinned,
                            gone=gone)
    hold = hold_store.record_hold(facts.common_dir, str(wt.path),
                                  reason=f"retire blocked: {verdict.disposition.value}",
                                  revisit="the blockers are resolved", owner=owner, auto=True,
                                  blockers=blockers)
    return RetireResult(verdict, hold=hold, blockers=tuple(blockers), pinned=pinned)


def _judge(facts: RepoFacts, config: Config, wt: Worktree,
           settings: WorktreeSettings) -> WorktreeRecord:
    ctx = worktree_context(facts, config, inventory=None, settings=settings)
    current = next((w for w in ctx.worktrees if w.path == wt.path), wt)
    return judge(ctx, gather(ctx, current))


def retire_worktree(facts: RepoFacts, config: Config, wt: Worktree, *, owner: str,
                    pin: bool = False, polarity: Polarity | None = None,
                    archive_ignored: bool = False, dry_run: bool = False,
                    lock_wait_s: float = 10.0) -> RetireResult:
    """Retire ``wt`` (see the module docstring). ``polarity``: of the ignored-content rule
    (``None``: ``worktrees.ignored``); ``archive_ignored``: archive the kept ignored files and
    remove; ``dry_run``: judge the same way and say what would be done, writing nothing (no
    lock, ref, hold, archive, journal or removal). Raises :class:`BranchkeeperError` when
    ``--pin`` cannot write its ref, ``LockBusyError`` when another mutating command holds the
    lock."""
    settings = WorktreeSettings(polarity=polarity)
    if dry_run:
        return _plan_retire(facts, config, wt, settings, owner=owner, pin=pin,
                            archive_ignored=archive_ignored)
    with repo_lock(facts.common_dir, MUTATION_LOCK, wait_s=lock_wait_s), \
            deferred_signals("the retire") as signals:
        pinned = _pin(facts, wt) if pin else None
        record = _judge(facts, config, wt, settings)
        verdict = record.retire

        def ok(r: WorktreeRecord) -> bool:
            return covered(r.retire, r.inputs.base.ignored, archive_ignored=archive_ignored)

        if not ok(record):
            return _keep(facts, wt, verdict, _blocker_lines(verdict), owner=owner,
                         pinned=pinned, gone=record.gone)
        # Re-check immediately before removing: the tree may have changed since.
        current = run_git(["rev-parse", "--verify", "-q", "HEAD"], cwd=wt.path,
                          check=False).text.strip()
        record = _judge(facts, config, wt, settings)
        verdict = record.retire
        if wt.head is not None and current != wt.head:
            return _keep(facts, wt, verdict, [f"HEAD moved from {wt.head.short} to "
                                              f"{current[:10]}"], owner=owner, pinned=pinned)
        if not ok(record):
            return _keep(facts, wt, verdict, _blocker_lines(verdict), owner=owner,
                         pinned=pinned)
        return _remove(facts, config, record, owner=owner, pinned=pinned,
                       archive_ignored=archive_ignored, signals=signals)


def _remove(facts: RepoFacts, config: Config, record: WorktreeRecord, *, owner: str,
            pinned: str | None, archive_ignored: bool, signals: Signals) -> RetireResult:
    wt = record.worktree
    verdict = record.retire
    cfg = config.worktrees
    try:
        salvaged = tuple(str(p) for p in salvage(
            wt.path, facts.main_root, agent_dir=cfg.agent_state_dir, paths=list(cfg.salvage)))
    except SalvageError as exc:
        return _keep(facts, wt, verdict, [f"salvage failed: {exc}"], owner=owner, pinned=pinned)
    try:
        archive = archive_kept_ignored(facts.common_dir, wt, record.inputs.base.ignored) \
            if archive_ignored else None
    except ArchiveError as exc:
        return _keep(facts, wt, verdict, [f"archive failed: {exc}"], owner=owner, pinned=pinned)
    restore = [_restore_add(wt)] + ([archive.restore_command()] if archive else [])
    if wt.branch is None and pinned is None:
        # A detached HEAD goes only under a ref of ours, as reap does: the journal then names a
        # ref undo checks the worktree out on again, and the commit stays reachable when the
        # ref that holds it now (a remote-tracking ref, another branch) moves on.
        try:
            pinned = _pin(facts, wt)
        except BranchkeeperError as exc:
            return _keep(facts, wt, verdict, [str(exc)], owner=owner, pinned=None)
    ref = wt.branch or pinned
    items = [JournalItem(ref, wt.head, None, " && ".join(restore))] \
        if ref is not None and wt.head is not None else []
    journal = Journal(facts.common_dir)
    op_id = journal.begin("worktree-retire", items, bundle=None,
                          note=f"worktree {wt.path} retired; branch kept",
                          archives=[archive] if archive is not None else [])
    fault("retire.before_remove")
    if signals.stop:  # SIGINT/SIGTERM came: start no removal
        journal.end(op_id, OpStatus.FAILED)
        return RetireResult(verdict, refused=True, blockers=("interrupted before the removal",),
                            pinned=pinned, archive=archive, salvaged=salvaged, op_id=op_id)
    refused = git_worktree_remove(facts.root, wt.path)
    fault("retire.after_remove")
    if refused:
        journal.end(op_id, OpStatus.FAILED)
        kept = _keep(facts, wt, verdict, [f"git refused: {refused}"], owner=owner,
                     pinned=pinned)
        return RetireResult(verdict, hold=kept.hold, blockers=kept.blockers, pinned=pinned,
                            archive=archive, salvaged=salvaged, op_id=op_id)
    journal.end(op_id, OpStatus.DONE)
    hold_store.release_hold(facts.common_dir, str(wt.path), auto_only=True)
    kept_by = next((g.detail for g in verdict.gates if g.name == "commit_kept"), "")
    return RetireResult(verdict, removed=True, pinned=pinned, archive=archive,
                        salvaged=salvaged, op_id=op_id, restore=tuple(restore), kept=kept_by)


def _plan_retire(facts: RepoFacts, config: Config, wt: Worktree, settings: WorktreeSettings,
                 *, owner: str, pin: bool, archive_ignored: bool) -> RetireResult:
    """What :func:`retire_worktree` would do with ``wt``, judged by the same record; nothing is
    written."""
    pinned = pin_ref_name(wt.path, wt.head) if pin and wt.head is not None and \
        wt.branch is None else None
    record = _judge(facts, config, wt, settings)
    verdict = record.retire
    if pinned is not None and record.inputs.base.contained_in is None:
        # The pin would make a ref keep the detached HEAD: judge as if it were written.
        verdict = evaluate(replace(record.inputs.base, contained_in=pinned,
                                   containment_error=None), RETIRE_GATES)
    if not covered(verdict, record.inputs.base.ignored, archive_ignored=archive_ignored):
        blockers = tuple(_blocker_lines(verdict))
        if verdict.disposition in PERMANENT:
            return RetireResult(verdict, refused=True, blockers=blockers, pinned=pinned,
                                dry_run=True, gone=record.gone)
        hold = hold_store.Hold(str(wt.path), owner, f"retire blocked: "
                               f"{verdict.disposition.value}", "the blockers are resolved",
                               clock.now(), auto=True, blockers=blockers)
        return RetireResult(verdict, hold=hold, blockers=blockers, pinned=pinned, dry_run=True)
    cfg = config.worktrees
    salvaged = tuple(f"{cfg.agent_state_dir}/{rel}" for rel in cfg.salvage
                     if (wt.path / cfg.agent_state_dir / rel).exists()
                     and not (wt.path / cfg.agent_state_dir / rel).is_symlink())
    archived = tuple(kept_ignored(record.inputs.base.ignored)) if archive_ignored else ()
    kept_by = next((g.detail for g in verdict.gates if g.name == "commit_kept"), "")
    if pinned is None and wt.branch is None and wt.head is not None:
        pinned = pin_ref_name(wt.path, wt.head)  # pinned at the removal (see _remove)
    return RetireResult(verdict, removed=True, pinned=pinned, restore=(_restore_add(wt),),
                        kept=kept_by, dry_run=True, would_salvage=salvaged,
                        would_archive=archived)


def find_worktree(facts: RepoFacts, arg: str, base: Path) -> tuple[Worktree, list[Worktree]]:
    """The worktree ``arg`` names (a path, relative to ``base``), and every worktree. Raises
    :class:`BranchkeeperError` when it is not a worktree of this repository."""
    import os

    worktrees = list_worktrees(facts)
    target = Path(os.path.realpath(base / arg))
    for wt in worktrees:
        if Path(os.path.realpath(wt.path)) == target:
            return wt, worktrees
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode()
                    for ch in arg)
    raise BranchkeeperError(f"{shown} is not a worktree of this repository "
                            "(see: branchkeeper worktree list)")
