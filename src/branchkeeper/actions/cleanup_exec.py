"""Carry out a cleanup plan losslessly (DESIGN.md guarantees 2-4; issue 3, sections 3-6).

Order, for every command: ONE verified recovery bundle of every ref about to go (compact when the
default branch's tip is trusted), ONE journal ``begin`` listing each ref, its old tip and its
restore command (with the ``git worktree add`` of a worktree removed first), the worktree
removals (each archived first with ``--archive-ignored``, the archive journaled as a step before
that removal; ``git worktree remove`` without ``--force``), ONE
compare-and-swap ``update-ref --stdin`` transaction, then the remote deletes (one ``ls-remote``,
one leased ``push``), the per-ref results and the journal ``end``. A failed bundle write or verify
aborts before anything is touched; a ref whose bundle would need an object the repository
lacks is kept (``failed``, naming the object) and the others go (issue 11, section 4). The caller
holds the mutation lock.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from branchkeeper.actions.archive import ArchiveError, archive_files
from branchkeeper.actions.bundle import BundleMissingError, BundleRaceError, create_bundle
from branchkeeper.actions.cleanup import Action, BranchItem, Plan
from branchkeeper.actions.interrupt import Signals
from branchkeeper.actions.refupdate import RefOutcome, check_ref_locks, delete_refs_cas
from branchkeeper.actions.remote_delete import live_tips, push_delete, push_restore_command
from branchkeeper.actions.worktree_removal import SalvageError, git_worktree_remove, salvage
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.bundles import BundleInfo
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

#: Test seam: called after the bundle and journal ``begin``, right before the CAS transaction
#: (a commit landing here must make the delete report ``raced``).
before_delete_hook: Callable[[Plan], None] | None = None

_OUTCOME = {RefOutcome.DELETED: Action.DELETED, RefOutcome.RACED: Action.RACED}


@dataclass
class Outcome:
    """What an executed (or dry-run) plan did: final ``items`` and ``remote_items`` (actions
    ``DELETED``, ``RACED``, ``FAILED``, or their planned action when nothing was attempted),
    the ``bundle`` and journal ``op_id`` (``None`` when nothing was written), ``notes``."""

    plan: Plan
    items: list[BranchItem]
    remote_items: list[BranchItem]
    dry_run: bool
    bundle: BundleInfo | None = None
    op_id: str | None = None
    notes: list[str] = field(default_factory=list)
    #: branch -> the archive of its worktree's kept ignored files (``--archive-ignored``)
    archives: dict[str, ArchiveInfo] = field(default_factory=dict)
    #: set when SIGINT or SIGTERM stopped the cleanup at a safe point: the message to print
    interrupted: str = ""

    @property
    def all_done(self) -> bool:
        """True when nothing was refused, raced or failed (blocked worktrees and skips aside)."""
        if self.plan.refused:
            return False
        bad = (Action.RACED, Action.FAILED)
        return not any(i.action in bad for i in [*self.items, *self.remote_items])


def _restore(ref_restore: str, item: BranchItem) -> str:
    """The journaled restore of a deleted branch: the bundle fetch, then, when its worktree
    was removed first, the ``git worktree add`` that re-creates the checkout (undo restores
    the branch, then runs this step: :mod:`branchkeeper.actions.undo_checkouts`)."""
    if not item.worktree:
        return ref_restore
    return f"{ref_restore} && {shlex.join(['git', 'worktree', 'add', item.worktree, item.name])}"


def compact_base(plan: Plan) -> Oid | None:
    """The default branch's tip when it can be trusted as a bundle base, else ``None``."""
    inv = plan.inventory
    if not inv.default.resolved or inv.facts.shallow:
        return None
    return next((b.oid for b in inv.bases if b.kind == "default"), None)


def dry_run(plan: Plan) -> Outcome:
    """The outcome of a plan that is only shown (nothing written)."""
    return Outcome(plan, list(plan.items), list(plan.remote_items), True, notes=list(plan.notes))


def _bundle(plan: Plan, refs: dict[str, Oid], op: str, missing: dict[str, str]
            ) -> tuple[BundleInfo | None, dict[str, Oid]]:
    """Write the bundle; refs that moved meanwhile are dropped (returned as raced), refs whose
    bundle needs an object the repository lacks are dropped into ``missing`` (ref -> object id:
    they are kept, the others still go). None when no ref is left to bundle."""
    facts = plan.inventory.facts
    moved: dict[str, Oid] = {}
    for _attempt in range(3):
        try:
            return create_bundle(facts.root, facts.common_dir, refs, base=compact_base(plan),
                                 label=op), moved
        except BundleMissingError as exc:
            for ref, oid in exc.missing.items():
                refs.pop(ref, None)
                missing[ref] = oid
            if not refs:
                return None, moved
        except BundleRaceError as exc:
            for ref in exc.moved:
                moved[ref] = refs.pop(ref)
            if not refs:
                raise
    raise BundleRaceError({r: (o, None) for r, o in moved.items()})


def missing_reason(oid: str) -> str:
    """Why a proven branch stays when its recovery bundle cannot be written."""
    return (f"not deleted: its recovery bundle needs object {oid}, which this repository lacks "
            "(a partial clone, or a damaged object store); nothing is deleted without its "
            "bundle")


_STOPPED = "interrupted before it was deleted; kept"


def execute(plan: Plan, *, op: str, fetch_timeout_s: float,
            signals: Signals | None = None) -> Outcome:
    """Delete what ``plan`` marks ``DELETE``, losslessly; return the :class:`Outcome`.

    ``signals``: once SIGINT or SIGTERM arrived (:mod:`branchkeeper.actions.interrupt`), no new
    step starts (no further worktree removal, no ref transaction, no remote delete); what was
    left is journaled as kept and the operation ends. Raises
    :class:`~branchkeeper.actions.bundle.BundleError` when the bundle cannot be written or
    verified (nothing was deleted), :class:`GitError` when git cannot list refs,
    :class:`~branchkeeper.actions.refupdate.RefLockError` when a lock file sits under a ref
    it would delete (nothing was written).
    """

    def stopping() -> bool:
        return signals is not None and signals.stop

    facts = plan.inventory.facts
    remote = plan.inventory.remote
    outcome = Outcome(plan, list(plan.items), list(plan.remote_items), False,
                      notes=list(plan.notes))
    if plan.refused:
        return outcome
    local = {i.name: i for i in plan.deletions}
    remote_go = {i.name: i for i in plan.remote_deletions}
    refs: dict[str, Oid] = {}
    for i in local.values():
        assert i.tip is not None
        refs[i.ref] = i.tip
    for i in remote_go.values():
        assert i.tip is not None
        refs[f"refs/remotes/{remote}/{i.name}"] = i.tip
    if not refs:
        return outcome
    check_ref_locks(facts.root, refs)  # a stale lock refuses before anything is written
    fault(f"{op}.before_bundle")
    if stopping():
        outcome.notes.append("interrupted before anything was written")
        return outcome
    missing: dict[str, str] = {}
    bundle, moved = _bundle(plan, refs, op, missing)
    fault(f"{op}.after_bundle")
    _keep_missing(outcome, local, remote_go, missing, remote)
    if bundle is None:
        return outcome
    outcome.bundle = bundle
    raced_local = {r[len("refs/heads/"):] for r in moved if r.startswith("refs/heads/")}
    raced_remote = {r.rpartition(f"refs/remotes/{remote}/")[2] for r in moved
                    if r.startswith("refs/remotes/")}
    items = [JournalItem(i.ref, i.tip, None, _restore(bundle.restore_command(i.ref), i))  # type: ignore[arg-type]
             for n, i in local.items() if n not in raced_local]
    items += [JournalItem(i.ref, i.tip, remote,  # type: ignore[arg-type]
                          push_restore_command(remote, n, i.tip))  # type: ignore[arg-type]
              for n, i in remote_go.items() if n not in raced_remote]
    journal = Journal(facts.common_dir)
    worktrees = sorted({i.worktree for i in local.values() if i.worktree})
    note = "; ".join([*plan.notes, *([f"worktrees removed first: {', '.join(worktrees)}"]
                                      if worktrees else [])])
    results: dict[str, BranchItem] = {}
    for n in raced_local:
        results[n] = replace(local[n], action=Action.RACED, reason="moved while the bundle was "
                             "written; kept")
    op_id = journal.begin(op, items, bundle=bundle, note=note)
    fault(f"{op}.after_begin")
    outcome.op_id = op_id
    expected: dict[str, Oid] = {}
    removed: set[str] = set()
    for n, i in local.items():
        if n in results:
            continue
        if stopping():
            results[n] = replace(i, action=Action.KEPT, reason=_STOPPED)
            journal.record(op_id, ItemResult(i.ref, ItemOutcome.KEPT, _STOPPED))
            continue
        if i.worktree:
            error = _archive_then_remove(plan, i, journal, op_id, outcome.archives, op=op)
            if error:
                results[n] = replace(i, action=Action.FAILED,
                                     reason=f"worktree not removed, branch kept: {error}")
                journal.record(op_id, ItemResult(i.ref, ItemOutcome.KEPT, results[n].reason))
                continue
            removed.add(n)
        assert i.tip is not None
        expected[i.ref] = i.tip
    if before_delete_hook is not None:
        before_delete_hook(plan)
    if stopping():
        for ref in expected:
            n = ref[len("refs/heads/"):]
            why = _stopped_after_removal(local[n]) if n in removed else _STOPPED
            results[n] = replace(local[n], action=Action.KEPT, reason=why)
            journal.record(op_id, ItemResult(ref, ItemOutcome.KEPT, why))
        expected = {}
    cas = delete_refs_cas(facts.root, expected, own_op=op_id) if expected else {}
    fault(f"{op}.after_cas")
    for ref, res in cas.items():
        n = ref[len("refs/heads/"):]
        action = _OUTCOME.get(res.outcome, Action.FAILED)
        reason = res.reason if action is not Action.DELETED else local[n].reason
        results[n] = replace(local[n], action=action, reason=reason,
                             restore=bundle.restore_command(ref) if action is Action.DELETED
                             else "")
    journal.record(op_id, *(ItemResult(ref, ItemOutcome(res.outcome.value)
                                       if res.outcome.value in ("deleted", "raced")
                                       else ItemOutcome.FAILED, res.reason)
                            for ref, res in cas.items()))
    # A local branch that raced means someone works on it: its remote branch is left alone too.
    held = {n for n, i in results.items() if i.action is not Action.DELETED}
    if remote_go:
        fault(f"{op}.before_remote")
    if stopping():
        remote_results = {n: replace(i, action=Action.KEPT, reason=_STOPPED)
                          for n, i in remote_go.items()}
    else:
        remote_results = _delete_remote(plan, remote_go, raced_remote | held, fetch_timeout_s)
    if remote_go:
        fault(f"{op}.after_remote")
    # Remote results carry the remote's name, so they never shadow the local ones.
    journal.record(op_id, *(ItemResult(i.ref, ItemOutcome.DELETED if i.action is Action.DELETED
                                       else ItemOutcome.KEPT if i.action is Action.RACED
                                       else ItemOutcome.FAILED, i.reason, remote)
                            for i in remote_results.values()))
    outcome.items = [results.get(i.name, i) if i.action is Action.DELETE else i
                     for i in outcome.items]
    outcome.remote_items = [remote_results.get(i.name, i) if i.action is Action.DELETE else i
                            for i in outcome.remote_items]
    everything = [*results.values(), *remote_results.values()]
    done = sum(i.action is Action.DELETED for i in everything)
    status = (OpStatus.DONE if done == len(everything) else
              OpStatus.PARTIAL if done else OpStatus.FAILED)
    fault(f"{op}.after_records")
    journal.end(op_id, status)
    return outcome


def _keep_missing(outcome: Outcome, local: dict[str, BranchItem],
                  remote_go: dict[str, BranchItem], missing: dict[str, str],
                  remote: str) -> None:
    """Take the refs whose bundle needs a missing object out of ``local`` and ``remote_go``
    and mark them failed in ``outcome`` with :func:`missing_reason`."""
    kept: dict[tuple[bool, str], str] = {}
    for ref, oid in missing.items():
        if ref.startswith("refs/heads/"):
            kept[(False, ref[len("refs/heads/"):])] = oid
            local.pop(ref[len("refs/heads/"):], None)
        else:
            name = ref[len(f"refs/remotes/{remote}/"):]
            kept[(True, name)] = oid
            remote_go.pop(name, None)

    def mark(items: list[BranchItem], *, is_remote: bool) -> list[BranchItem]:
        return [replace(i, action=Action.FAILED, reason=missing_reason(kept[(is_remote, i.name)]))
                if i.action is Action.DELETE and (is_remote, i.name) in kept else i
                for i in items]

    outcome.items = mark(outcome.items, is_remote=False)
    outcome.remote_items = mark(outcome.remote_items, is_remote=True)


def _stopped_after_removal(item: BranchItem) -> str:
    """Why a branch whose worktree was removed is kept: the stop came before its delete."""
    return (f"interrupted after its worktree {item.worktree} was removed, before the branch was "
            "deleted; branch kept (branchkeeper undo adds the worktree back)")


def _archive_then_remove(plan: Plan, item: BranchItem, journal: Journal, op_id: str,
                         archives: dict[str, ArchiveInfo], *, op: str) -> str:
    """Remove ``item``'s worktree: its kept ignored files archived first (``--archive-ignored``;
    the archive journaled as a step of ``op_id`` before the removal, and added to
    ``archives``), so a stop before this worktree leaves no archive of it. The reason it
    stayed, or ``""``."""
    facts = plan.inventory.facts
    wt = next((w for w in plan.inventory.worktrees if str(w.path) == item.worktree), None)
    if item.archive and wt is not None:
        try:
            info = archive_files(facts.common_dir, wt.path, item.archive, branch=wt.branch,
                                 head=wt.head, label=wt.path.name)
        except ArchiveError as exc:
            return f"archive failed: {exc}"
        journal.step(op_id, [], archives=[info])
        archives[item.name] = info
    assert item.worktree is not None
    fault(f"{op}.before_worktree_remove")
    error = _remove_worktree(plan, item.worktree)
    fault(f"{op}.after_worktree_remove")
    return error


def _remove_worktree(plan: Plan, path: str) -> str:
    """Salvage the agent-state files, then ``git worktree remove <path>`` (never ``--force``);
    the reason it stayed, or ``""``."""
    facts = plan.inventory.facts
    cfg = plan.inventory.config.worktrees
    try:
        salvage(Path(path), facts.main_root, agent_dir=cfg.agent_state_dir,
                paths=list(cfg.salvage))
    except SalvageError as exc:
        return f"salvage failed: {exc}"
    return git_worktree_remove(facts.root, Path(path))


def _delete_remote(plan: Plan, go: dict[str, BranchItem], raced: set[str],
                   timeout: float) -> dict[str, BranchItem]:
    remote = plan.inventory.remote
    out: dict[str, BranchItem] = {n: replace(go[n], action=Action.RACED,
                                             reason="local branch or tracking ref moved; "
                                                    "remote branch left alone")
                                  for n in raced if n in go}
    todo = [n for n in go if n not in raced]
    if not todo:
        return out
    root = plan.inventory.facts.root
    try:
        live = live_tips(root, remote, todo, timeout=timeout)
    except GitError as exc:
        why = f"SKIP_LS_REMOTE_ERROR: {str(exc).splitlines()[0]}"
        return {**out, **{n: replace(go[n], action=Action.FAILED, reason=why) for n in todo}}
    expected: dict[str, Oid] = {}
    for n in todo:
        tip = go[n].tip
        assert tip is not None
        if live.get(n) == tip:
            expected[n] = tip
        elif live.get(n) is None:
            out[n] = replace(go[n], action=Action.RACED, reason="already gone on the server")
        else:
            out[n] = replace(go[n], action=Action.RACED, reason=f"moved on the server to "
                             f"{live[n]}; left alone")
    try:
        pushed = push_delete(root, remote, expected, timeout=timeout)
    except GitError as exc:
        why = f"push failed: {str(exc).splitlines()[0]}"
        pushed = {}
        for n in expected:
            out[n] = replace(go[n], action=Action.FAILED, reason=why)
    for n, res in pushed.items():
        tip = expected[n]
        if res.deleted:
            out[n] = replace(go[n], action=Action.DELETED,
                             restore=push_restore_command(remote, n, tip))
        else:
            out[n] = replace(go[n], action=Action.RACED, reason=f"left alone: {res.reason}")
    return out
