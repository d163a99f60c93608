"""Lossless cleanup plans: what ``delete``, ``sweep --clean`` and ``prune`` would do, and why
(issue 3, sections 2-5; first document, section 7; second document, "Session-start prune").

A plan is computed from one inventory: each branch record already says what each command does
with it, refusals included (``BranchRecord.actions``, issue 11 section 5: one verdict, never
re-derived here). Two facts only the command has are applied on top, with the same rules: the
names ``delete`` was given (deleting a stack's base with its top lifts the stack refusal) and
whether a worktree ``sweep --clean`` would remove holds work. The plan decides per branch (and
per remote branch for ``delete --remote``) one :class:`Action` with a one-line reason and,
where one holds, the proof.
:mod:`branchkeeper.actions.cleanup_exec` carries a plan out (bundle, journal, compare-and-swap)
and :mod:`branchkeeper.render.cleanup` prints it. Planning runs git only through the inventory,
the refusal facts and the worktree checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from branchkeeper.actions.worktree_removal import kept_ignored
from branchkeeper.analysis.dispositions import describe
from branchkeeper.analysis.ignored import Polarity
from branchkeeper.analysis.inventory import Inventory
from branchkeeper.analysis.reap_gates import covered
from branchkeeper.analysis.refusals import refuse_batch, stack_keeper
from branchkeeper.analysis.suggest import PRUNE_COMMAND
from branchkeeper.analysis.worktree_record import (
    WorktreeRecord,
    WorktreeSettings,
    classify_worktrees,
    worktree_context,
)
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.model.records import (
    BranchAction,
    BranchRecord,
    CommandVerdict,
    Proof,
    Refusal,
    RefusalKind,
)


class Action(StrEnum):
    """One branch's disposition in a plan, then its outcome after execution."""

    DELETE = "delete"  # planned: will be deleted
    REFUSED = "refused"  # a refusal no proof overrides, or (delete) the batch was refused
    SKIP_UNPROVEN = "SKIP_UNPROVEN"  # no proof holds, or the ladder could not decide
    KEPT = "kept"  # not a cleanup candidate (work, parked, unstarted)
    BLOCKED = "blocked"  # its worktree cannot be removed without loss (sweep --clean)
    DELETED = "deleted"
    RACED = "raced"  # the tip moved after the proof: kept
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class BranchItem:
    """One branch of a plan (or, after execution, its outcome).

    ``name`` is the branch name (full data: may start with ``-``); ``tip`` the local tip judged;
    ``worktree`` a linked worktree to remove first (sweep --clean); ``blocking`` the paths that
    block that removal; ``restore`` the shell-quoted command that restores a deleted branch.
    ``remote`` is set for a remote branch item (``delete --remote``).
    """

    name: str
    tip: Oid | None
    action: Action
    reason: str
    proof: Proof | None = None
    worktree: str | None = None
    blocking: tuple[str, ...] = ()
    restore: str = ""
    remote: str | None = None
    #: ignored files of ``worktree`` to archive before it is removed (``--archive-ignored``)
    archive: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """``refs/heads/<name>`` (on the remote, for a remote item)."""
        return f"refs/heads/{self.name}"


@dataclass
class Plan:
    """A cleanup plan: ``command`` (delete, sweep-clean, prune), the ``inventory`` it rests on,
    local ``items``, ``remote_items``, ``notes`` for the report, and ``refused`` set when the
    whole batch is refused (``delete``: nothing may be deleted)."""

    command: str
    inventory: Inventory
    items: list[BranchItem]
    remote_items: list[BranchItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: str = ""

    @property
    def deletions(self) -> list[BranchItem]:
        return [i for i in self.items if i.action is Action.DELETE]

    @property
    def remote_deletions(self) -> list[BranchItem]:
        return [i for i in self.remote_items if i.action is Action.DELETE]


_ACTION = {BranchAction.DELETE: Action.DELETE, BranchAction.KEEP: Action.KEPT,
           BranchAction.SKIP_UNPROVEN: Action.SKIP_UNPROVEN, BranchAction.REFUSED: Action.REFUSED}


def _item(rec: BranchRecord, tip: Oid | None, cv: CommandVerdict, proof: Proof | None
          ) -> BranchItem:
    """A plan item from one command's disposition of a record."""
    action = _ACTION[cv.action]
    reason = f"refused: {cv.reason}" if action is Action.REFUSED else cv.reason
    return BranchItem(rec.name, tip, action, reason,
                      proof if action is Action.DELETE else None)


def plan_delete(inv: Inventory, names: Sequence[str], *, remote: bool,
                allow_unproven: bool) -> Plan:
    """Classify every name for ``branchkeeper delete`` (issue 3, section 3) from its record's
    ``delete`` disposition, which carries the refusals of ``delete NAME`` alone.

    Names deleted together may lift a stack refusal (the base of a stack goes with its top):
    the stack rule runs again over the named batch (:func:`.refusals.refuse_batch`), as it
    does over one name for the record. Any refusal, any unknown, or any unproven name without
    ``allow_unproven`` refuses the whole batch (``plan.refused`` says why; every item then
    keeps its own reason). With ``remote``, each name's ``refs/remotes/<remote>/<name>`` tip
    must be proven against a ref of that remote (the record's ``delete_remote``).
    """
    records = inv.by_name()
    items: list[BranchItem] = []
    remote_items: list[BranchItem] = []
    for name in dict.fromkeys(names):
        rec = records.get(name)
        local_tip = rec.local_tip if rec is not None else None
        if rec is None or local_tip is None or rec.actions is None:
            if not (remote and rec is not None and rec.remote_tip is not None):
                items.append(BranchItem(name, None, Action.REFUSED, "no such local branch"))
        else:
            cv = rec.actions.delete
            proof = rec.proof or _ancestry(inv, local_tip)
            if cv.refusal is not None and cv.refusal.kind is RefusalKind.STACK:
                cv = CommandVerdict(BranchAction.DELETE, cv.otherwise)
            item = _item(rec, local_tip, cv, proof)
            if item.action is Action.SKIP_UNPROVEN and allow_unproven and not cv.unknown:
                item = replace(item, action=Action.DELETE,
                               reason=f"UNPROVEN, deleted on request: {cv.reason}")
            items.append(item)
        if remote and rec is not None and rec.remote_tip is not None:
            remote_items.append(_remote_item(inv, rec))
        elif remote:
            remote_items.append(BranchItem(name, None, Action.KEPT,
                                           f"no remote-tracking branch {inv.remote}/{name}",
                                           remote=inv.remote))
    refused = refuse_batch([i.name for i in items if i.action is Action.DELETE], inv.refusals)
    items = [replace(i, action=Action.REFUSED, proof=None,
                     reason=f"refused: {_stack_reason(records, i.name, refused[i.name])}")
             if i.name in refused else i for i in items]
    plan = Plan("delete", inv, items, remote_items)
    bad = [i for i in [*items, *remote_items]
           if i.action not in (Action.DELETE, Action.KEPT)]
    if bad:
        plan.refused = (f"{len(bad)} of {len(items) + len(remote_items)} name"
                        f"{'s' if len(items) + len(remote_items) != 1 else ''} cannot be deleted; "
                        "nothing was deleted")
    return plan


def _stack_reason(records: dict[str, BranchRecord], name: str, refusal: Refusal) -> str:
    """The reason a batch refuses ``name``: its record's own where the record already refuses
    it for the same rule (that text names the branches to delete with it)."""
    rec = records.get(name)
    cv = rec.actions.delete if rec is not None and rec.actions is not None else None
    if cv is not None and cv.refusal is not None and cv.refusal.kind is refusal.kind:
        return cv.reason
    return refusal.reason


def _ancestry(inv: Inventory, tip: Oid) -> Proof | None:
    """The ladder's proof for a tip whose record carries none (an unstarted branch: its
    ancestry proof is why ``delete`` may remove it)."""
    verdict = inv.verdicts.get(tip)
    return verdict.proof if verdict is not None else None


def _remote_item(inv: Inventory, rec: BranchRecord) -> BranchItem:
    tip = rec.remote_tip
    assert rec.actions is not None and rec.actions.delete_remote is not None
    verdict = inv.verdicts.get(tip) if tip is not None else None
    proof = verdict.proof if verdict is not None else None
    return replace(_item(rec, tip, rec.actions.delete_remote, proof), remote=inv.remote)


def _worktree_records(inv: Inventory, config: Config, paths: Sequence[str], *,
                      polarity: Polarity | None) -> dict[str, WorktreeRecord]:
    """The one worktree record of each linked worktree at ``paths`` (one ``status`` each)."""
    if not paths:
        return {}
    ctx = worktree_context(inv.facts, config, inventory=inv, worktrees=list(inv.worktrees),
                           settings=WorktreeSettings(polarity=polarity))
    wanted = [w for w in inv.worktrees if str(w.path) in set(paths)]
    return {str(r.worktree.path): r for r in classify_worktrees(ctx, only=wanted)}


def plan_sweep_clean(inv: Inventory, config: Config, *, polarity: Polarity | None = None,
                     archive_ignored: bool = False) -> Plan:
    """Plan ``sweep --clean`` (issue 3, section 4) from each local branch's ``sweep_clean``
    disposition (proven branches minus the refusals, computed over the whole batch). A
    deletion that names a linked worktree goes with it only when that worktree's record lets
    ``retire`` remove it (clean, unlocked, no hold, no nested checkout, no ignored file the
    ignored-content rule keeps; with ``archive_ignored`` such files are archived first), else
    it is ``BLOCKED`` and named with the blocking paths, and the branches it stacks on are
    refused (the stack rule over the batch without it). Every other branch is listed ``KEPT``
    with its state and reason.
    """
    items: list[BranchItem] = []
    candidates: dict[str, str] = {}
    for rec in inv.records:
        if rec.local_tip is None or rec.actions is None:
            continue
        cv = rec.actions.sweep_clean
        if cv.action is BranchAction.REFUSED or cv.action is BranchAction.DELETE:
            items.append(_item(rec, rec.local_tip, cv, rec.proof))
            if cv.action is BranchAction.DELETE and cv.worktree is not None:
                candidates[rec.name] = cv.worktree
        else:
            items.append(BranchItem(rec.name, rec.local_tip, Action.KEPT, cv.reason))
    records = _worktree_records(inv, config, list(candidates.values()), polarity=polarity)
    blocked: dict[str, tuple[str, ...]] = {}
    removable: dict[str, tuple[str, ...]] = {}
    keeps: dict[str, str] = {}
    for name, path in candidates.items():
        record = records.get(path)
        if record is None:
            blocked[name] = ("SKIP_PRUNABLE: worktree directory missing (run: git worktree "
                             "prune)",)
            continue
        keeps[name] = record.keeps + (f": {PRUNE_COMMAND} drops the entry and deletes the "
                                      "branch" if record.gone else "")
        if covered(record.retire, record.inputs.base.ignored, archive_ignored=archive_ignored):
            removable[name] = tuple(kept_ignored(record.inputs.base.ignored)) \
                if archive_ignored else ()
        else:
            blocked[name] = tuple(record.blocking_lines())
    refused = refuse_batch([i.name for i in items if i.action is Action.DELETE
                            and i.name not in blocked], inv.refusals,
                           ignore_checked_out=frozenset(removable)) if blocked else {}
    out: list[BranchItem] = []
    for item in items:
        where = candidates.get(item.name)
        if item.name in blocked and where is not None:
            item = replace(item, action=Action.BLOCKED, worktree=where,
                           blocking=blocked[item.name],
                           reason=f"{item.proof and describe(item.proof)}; kept: its worktree "
                                  f"{where} {keeps.get(item.name, 'holds work')}")
        elif item.name in refused and item.action is Action.DELETE:
            item = replace(item, action=Action.REFUSED, proof=None,
                           reason=_refused_reason(item.name, refused[item.name], inv,
                                                  blocked, candidates))
        elif item.name in removable and where is not None:
            item = replace(item, worktree=where, archive=removable[item.name],
                           reason=item.reason.split("; its worktree ")[0])
        out.append(item)
    return Plan("sweep-clean", inv, out)


def _refused_reason(name: str, refusal: Refusal, inv: Inventory,
                    blocked: dict[str, tuple[str, ...]], where: dict[str, str]) -> str:
    """``refused: <reason>``; for the stack rule, led by what really keeps the stack: the
    worktree of a branch stacked on ``name`` that holds work (with its first blocking path)."""
    keeper = stack_keeper(name, inv.refusals, {b: where[b] for b in blocked if b in where}) \
        if refusal.kind is RefusalKind.STACK else None
    if keeper is None:
        return f"refused: {refusal.reason}"
    branch, path = keeper
    lines = blocked[branch]
    held = lines[0] + (f" and {len(lines) - 1} more" if len(lines) > 1 else "") if lines else ""
    return (f"refused: the worktree {path} of branch {branch}, stacked on it, holds work"
            + (f" ({held})" if held else "") + f"; so it stays {refusal.reason}")


def plan_prune(inv: Inventory) -> Plan:
    """Plan ``prune`` (issue 3, section 5; second document, "Session-start prune") from each
    local branch's ``prune`` disposition, refusals included: proven branches are deleted,
    unproven ones are ``SKIP_UNPROVEN`` with their reason, parked and unstarted branches are
    kept, refused ones say why. An unresolved default branch deletes nothing and says so."""
    items: list[BranchItem] = []
    if not inv.default.resolved:
        for rec in inv.records:
            if rec.local_tip is not None:
                items.append(BranchItem(rec.name, rec.local_tip, Action.SKIP_UNPROVEN,
                                        "default branch unresolved"))
        return Plan("prune", inv, items,
                    notes=[f"default branch unresolved ({inv.default.reason}); nothing deleted"])
    for rec in inv.records:
        if rec.local_tip is not None and rec.actions is not None:
            items.append(_item(rec, rec.local_tip, rec.actions.prune, rec.proof))
    return Plan("prune", inv, items)
