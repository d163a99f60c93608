"""Lossless cleanup plans: what ``delete``, ``sweep --clean`` and ``prune`` would do, and why
(issue 3, sections 2-5; first document, section 7; second document, "Session-start prune").

A plan is computed from one inventory, the proof ladder and the refusal rules; it decides per
branch (and per remote branch for ``delete --remote``) one :class:`Action` with a one-line reason
and, where one holds, the proof. :mod:`branchkeeper.actions.cleanup_exec` carries a plan out
(bundle, journal, compare-and-swap) and :mod:`branchkeeper.render.cleanup` prints it. Planning
runs git only through the inventory, the refusal facts, tier 5 and the worktree checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from branchkeeper.analysis.inventory import Inventory
from branchkeeper.analysis.ladder import TipProof, describe, prove_tip
from branchkeeper.analysis.proofs import Deadline
from branchkeeper.analysis.refusal_facts import RefusalContext
from branchkeeper.analysis.worktree_status import (
    IgnoredRules,
    classify_worktree_ignored,
    worktree_status,
)
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.model.records import BranchState, Proof
from branchkeeper.policy.refusals import RefusalKind, refuse_batch, static_refusal


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


def _item(name: str, tip: Oid | None, verdict: TipProof) -> BranchItem:
    if verdict.proof is not None:
        return BranchItem(name, tip, Action.DELETE, verdict.reason, verdict.proof)
    return BranchItem(name, tip, Action.SKIP_UNPROVEN, verdict.reason)


def _apply_refusals(items: list[BranchItem], ctx: RefusalContext, *,
                    removable: frozenset[str] = frozenset()) -> list[BranchItem]:
    candidates = [i.name for i in items if i.action is Action.DELETE]
    refused = refuse_batch(candidates, ctx, ignore_checked_out=removable)
    return [replace(i, action=Action.REFUSED, reason=f"refused: {refused[i.name].reason}")
            if i.name in refused else i for i in items]


def plan_delete(inv: Inventory, ctx: RefusalContext, names: Sequence[str], *, remote: bool,
                allow_unproven: bool, deadline: Deadline) -> Plan:
    """Classify every name for ``branchkeeper delete`` (issue 3, section 3).

    Each name is refused (section 2), proven (tiers 1-5), unproven or unknown. Any refusal, any
    unknown, or any unproven name without ``allow_unproven`` refuses the whole batch
    (``plan.refused`` says why; every item then keeps its own reason). With ``remote``, each
    name's ``refs/remotes/<remote>/<name>`` tip must be proven against a ref of that remote.
    """
    records = inv.by_name()
    items: list[BranchItem] = []
    remote_items: list[BranchItem] = []
    for name in dict.fromkeys(names):
        rec = records.get(name)
        local_tip = rec.local_tip if rec is not None else None
        if local_tip is None:
            if not (remote and rec is not None and rec.remote_tip is not None):
                items.append(BranchItem(name, None, Action.REFUSED, "no such local branch"))
        else:
            refusal = static_refusal(name, ctx)
            if refusal is not None:
                items.append(BranchItem(name, local_tip, Action.REFUSED,
                                        f"refused: {refusal.reason}"))
            else:
                verdict = prove_tip(inv, local_tip, content_tier=True, deadline=deadline)
                item = _item(name, local_tip, verdict)
                if (item.action is Action.SKIP_UNPROVEN and allow_unproven
                        and verdict.unknown is None):
                    item = replace(item, action=Action.DELETE,
                                   reason=f"UNPROVEN, deleted on request: {verdict.reason}")
                items.append(item)
        if remote and rec is not None and rec.remote_tip is not None:
            remote_items.append(_remote_item(inv, ctx, name, rec.remote_tip, deadline))
        elif remote:
            remote_items.append(BranchItem(name, None, Action.KEPT,
                                           f"no remote-tracking branch {inv.remote}/{name}",
                                           remote=inv.remote))
    items = _apply_refusals(items, ctx)
    plan = Plan("delete", inv, items, remote_items)
    bad = [i for i in [*items, *remote_items]
           if i.action not in (Action.DELETE, Action.KEPT)]
    if bad:
        plan.refused = (f"{len(bad)} of {len(items) + len(remote_items)} name"
                        f"{'s' if len(items) + len(remote_items) != 1 else ''} cannot be deleted; "
                        "nothing was deleted")
    return plan


def _remote_item(inv: Inventory, ctx: RefusalContext, name: str, tip: Oid,
                 deadline: Deadline) -> BranchItem:
    refusal = static_refusal(name, ctx)
    if refusal is not None and refusal.kind not in (RefusalKind.CURRENT, RefusalKind.CHECKED_OUT):
        return BranchItem(name, tip, Action.REFUSED, f"refused: {refusal.reason}",
                          remote=inv.remote)
    verdict = prove_tip(inv, tip, content_tier=True, deadline=deadline,
                        require_remote_base=inv.remote)
    return replace(_item(name, tip, verdict), remote=inv.remote)


def _worktree_check(inv: Inventory, config: Config, path: str) -> tuple[str, ...]:
    """Why the linked worktree at ``path`` cannot be removed without loss (empty: it can).

    Clean (no tracked change, no untracked file), unlocked, no nested checkout, and every
    ignored path matches ``branches.cleanup_after_merge.regenerable`` (strict polarity: a path
    that matches none blocks, and is named).
    """
    wt = next((w for w in inv.worktrees if str(w.path) == path), None)
    if wt is None or not Path(path).is_dir():
        return ("SKIP_UNPROVEN: worktree directory missing (run: git worktree prune)",)
    if wt.locked:
        return (f"SKIP_LOCKED: locked{': ' + wt.lock_reason if wt.lock_reason else ''}",)
    try:
        status = worktree_status(Path(path), worktrees=inv.worktrees)
    except (GitError, ValueError) as exc:
        return (f"SKIP_UNPROVEN: status failed: {str(exc).splitlines()[0]}",)
    blocks: list[str] = []
    if status.dirty:
        blocks += [f"SKIP_DIRTY: {p}" for p in (*status.tracked, *status.untracked)]
    blocks += [f"SKIP_PROTECTED_IGNORED: nested checkout {n.path}" for n in status.nested]
    wcfg = config.worktrees
    rules = IgnoredRules(protected=tuple(wcfg.protected_ignored),
                         regenerable=tuple(config.branches.cleanup_after_merge.regenerable),
                         disposable=(), strict=True, agent_state_dir=wcfg.agent_state_dir,
                         agent_state_disposable=())
    verdict = classify_worktree_ignored(status, rules)
    blocks += [f"SKIP_PROTECTED_IGNORED: {b.path} ({b.reason})" for b in verdict.blocking]
    return tuple(blocks)


def plan_sweep_clean(inv: Inventory, ctx: RefusalContext, config: Config, *,
                     current_worktree: Path | None) -> Plan:
    """Plan ``sweep --clean`` (issue 3, section 4): every local branch in ``merged``,
    ``merged_into_line`` or ``patch_equivalent`` minus refusals; a proven branch checked out in
    a linked worktree (not the main one, not the one the command runs in) goes with its worktree
    only when :func:`_worktree_check` finds nothing to lose, else it is ``BLOCKED`` and named
    with the blocking paths. Every other branch is listed ``KEPT`` with its state and reason.
    """
    items: list[BranchItem] = []
    blocked: dict[str, tuple[str, ...]] = {}
    removable: set[str] = set()
    here = current_worktree.resolve() if current_worktree is not None else None
    for rec in inv.records:
        if rec.local_tip is None:
            continue
        if not rec.state.preserved or rec.proof is None or rec.local_tip != rec.tip:
            items.append(BranchItem(rec.name, rec.local_tip, Action.KEPT,
                                    f"{rec.state.value}: {rec.reason}".rstrip(": ")))
            continue
        items.append(BranchItem(rec.name, rec.local_tip, Action.DELETE, describe(rec.proof),
                                rec.proof))
        where = ctx.checked_out.get(rec.name)
        if where is None or where.is_main or (here is not None
                                              and Path(where.path).resolve() == here):
            continue
        if static_refusal(rec.name, replace(ctx, checked_out={})) is not None:
            continue
        reasons = _worktree_check(inv, config, where.path)
        if reasons:
            blocked[rec.name] = reasons
        else:
            removable.add(rec.name)
    items = _apply_refusals(items, ctx, removable=frozenset(removable))
    out: list[BranchItem] = []
    for item in items:
        where = ctx.checked_out.get(item.name)
        if item.name in blocked and item.action is Action.REFUSED and where is not None:
            item = replace(item, action=Action.BLOCKED, worktree=where.path,
                           blocking=blocked[item.name],
                           reason=f"{item.proof and describe(item.proof)}; kept: its worktree "
                                  f"{where.path} holds work")
        elif item.name in removable and item.action is Action.DELETE and where is not None:
            item = replace(item, worktree=where.path)
        out.append(item)
    return Plan("sweep-clean", inv, out)


def plan_prune(inv: Inventory, ctx: RefusalContext, *, deadline: Deadline) -> Plan:
    """Plan ``prune`` (issue 3, section 5; second document, "Session-start prune"): every local
    branch not refused, proven by tiers 1-5, is deleted; no proof is ``SKIP_UNPROVEN`` with its
    reason; parked and unstarted branches are kept. An unresolved default branch deletes nothing
    and says so."""
    items: list[BranchItem] = []
    if not inv.default.resolved:
        for rec in inv.records:
            if rec.local_tip is not None:
                items.append(BranchItem(rec.name, rec.local_tip, Action.SKIP_UNPROVEN,
                                        "default branch unresolved"))
        return Plan("prune", inv, items,
                    notes=[f"default branch unresolved ({inv.default.reason}); nothing deleted"])
    for rec in inv.records:
        tip = rec.local_tip
        if tip is None:
            continue
        refusal = static_refusal(rec.name, ctx)
        if refusal is not None:
            items.append(BranchItem(rec.name, tip, Action.REFUSED, f"refused: {refusal.reason}"))
        elif rec.parked is not None and rec.state is BranchState.PARKED:
            items.append(BranchItem(rec.name, tip, Action.KEPT, f"parked: {rec.parked.reason}"))
        elif rec.state.preserved and rec.proof is not None and tip == rec.tip:
            items.append(BranchItem(rec.name, tip, Action.DELETE, describe(rec.proof), rec.proof))
        elif rec.reason.startswith("unstarted"):
            items.append(BranchItem(rec.name, tip, Action.KEPT, rec.reason))
        else:
            items.append(_item(rec.name, tip,
                               prove_tip(inv, tip, content_tier=True, deadline=deadline)))
    return Plan("prune", inv, _apply_refusals(items, ctx))
