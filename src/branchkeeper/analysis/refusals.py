"""Refusals that no proof overrides, applied once to every branch record (issue 3, section 2;
issue 11, section 5; first document, section 7; field case C05).

:func:`static_refusal` and :func:`refuse_batch` are the rules, pure functions over a
:class:`~branchkeeper.analysis.refusal_facts.RefusalContext`. :func:`with_refusals` applies them
to the inventory's records, so each record carries its refusal and each of its dispositions
says ``refused: <reason>`` exactly where the command refuses: ``prune`` and ``sweep --clean``
over the batch they would delete (every branch whose disposition is ``delete``), ``delete
NAME`` over that one name. A refused branch is never deleted by ``delete``, ``sweep --clean`` or
``prune``, whatever its proof; ``--allow-unproven`` does not override a refusal either.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from branchkeeper.analysis.refusal_facts import RefusalContext
from branchkeeper.model.records import (
    BranchAction,
    BranchRecord,
    CommandVerdict,
    Refusal,
    RefusalKind,
)


def _matches(name: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def static_refusal(name: str, ctx: RefusalContext) -> Refusal | None:
    """The first rule that refuses ``name`` regardless of the rest of the batch, or ``None``.

    Order: default branch, another remote's default (C05), integration line, exempt, protected
    name, current branch, checked out in a worktree. The stack rule depends on the batch: see
    :func:`refuse_batch`.
    """
    if ctx.default_name is not None and name == ctx.default_name:
        return Refusal(RefusalKind.DEFAULT, "the default branch")
    if name in ctx.remote_defaults:
        return Refusal(RefusalKind.REMOTE_DEFAULT, "the default branch of a remote")
    if _matches(name, ctx.integration_lines):
        return Refusal(RefusalKind.INTEGRATION_LINE, "an integration line")
    if _matches(name, ctx.exempt):
        return Refusal(RefusalKind.EXEMPT, "exempt (branches.exempt)")
    if name in ctx.protected_names:
        return Refusal(RefusalKind.PROTECTED, "a protected name (branches.protected_names)")
    if ctx.current is not None and name == ctx.current:
        return Refusal(RefusalKind.CURRENT, "the current branch")
    where = ctx.checked_out.get(name)
    if where is not None:
        which = "the main worktree" if where.is_main else "worktree"
        return Refusal(RefusalKind.CHECKED_OUT, f"checked out in {which} {where.path}")
    return None


def refuse_batch(candidates: Iterable[str], ctx: RefusalContext, *,
                 ignore_checked_out: frozenset[str] = frozenset()) -> dict[str, Refusal]:
    """Refusals for a batch of branches about to be deleted: name -> :class:`Refusal`.

    A candidate refused by :func:`static_refusal` survives; so does one that a surviving local
    branch uses as its upstream (the stack rule, applied until nothing changes, so deleting a
    whole stack at once is allowed but never its base alone). ``ignore_checked_out`` names
    branches whose worktree the caller is about to remove (``sweep --clean``); their
    ``CHECKED_OUT`` refusal is skipped. Names not in ``candidates`` are treated as surviving.
    """
    refused: dict[str, Refusal] = {}
    going: set[str] = set()
    for name in dict.fromkeys(candidates):
        why = static_refusal(name, ctx)
        if why is not None and not (why.kind is RefusalKind.CHECKED_OUT
                                    and name in ignore_checked_out):
            refused[name] = why
        else:
            going.add(name)
    changed = True
    while changed:
        changed = False
        for name in sorted(going):
            kept = [d for d in ctx.dependents.get(name, ()) if d not in going]
            if kept:
                refused[name] = Refusal(RefusalKind.STACK,
                                        f"the upstream of surviving branch {kept[0]} (a stack)")
                going.discard(name)
                changed = True
    return refused


def removable_with_worktree(ctx: RefusalContext, here: Path | None) -> dict[str, str]:
    """Branch -> its linked worktree, for the branches ``sweep --clean`` may delete together
    with their worktree: checked out in a linked worktree that is not the one the command runs
    in (``here``, resolved), and refused by nothing but being checked out there."""
    out: dict[str, str] = {}
    for name, where in ctx.checked_out.items():
        if where.is_main or (here is not None and Path(where.path).resolve() == here):
            continue
        why = static_refusal(name, ctx)
        if why is not None and why.kind is RefusalKind.CHECKED_OUT:
            out[name] = where.path
    return out


def _refused(refusal: Refusal, otherwise: CommandVerdict) -> CommandVerdict:
    return CommandVerdict(BranchAction.REFUSED, refusal.reason, otherwise.unknown, refusal,
                          otherwise=otherwise.reason
                          if otherwise.action is BranchAction.DELETE else "")


def _with_worktree(refusal: Refusal, path: str, *, gone: bool = False) -> Refusal:
    """The refusal of ``prune``/``delete`` for a branch that ``sweep --clean`` deletes together
    with its linked worktree: it says which command does it, and why this one does not. When
    the worktree's directory is gone (``gone``: a prunable entry), neither retire nor ``sweep
    --clean`` removes it: ``prune`` drops the entry first, unless it holds work."""
    if gone:
        return Refusal(refusal.kind, f"{refusal.reason}, whose directory is gone: `branchkeeper "
                                     "prune` drops the entry (git worktree prune, unless it "
                                     "holds work) and then deletes the branch")
    wt = shlex.quote(path)
    return Refusal(refusal.kind, f"{refusal.reason}: `branchkeeper sweep --clean` removes the "
                                 "worktree (unless it holds work) and then the branch; or "
                                 f"`branchkeeper worktree retire {wt}` first, then delete it")


def _stacked_checkout(name: str, checked_out: Refusal, ctx: RefusalContext) -> Refusal:
    """``delete NAME`` of a branch checked out in a linked worktree that ``sweep --clean``
    removes first: retiring the worktree lifts the checkout, but not the stack rule when
    surviving branches are stacked on it, so then the refusal is the stack's, naming both."""
    stack = refuse_batch([name], ctx, ignore_checked_out=frozenset({name})).get(name)
    where = ctx.checked_out[name]
    if stack is None or stack.kind is not RefusalKind.STACK:
        return _with_worktree(checked_out, where.path, gone=where.prunable)
    return Refusal(RefusalKind.STACK, f"{checked_out.reason} and {stack.reason}: "
                                      "`branchkeeper sweep --clean` removes the worktree "
                                      "(unless it holds work) and deletes the stack with it "
                                      "when every branch of it is proven")


def _stack_from(name: str, ctx: RefusalContext) -> list[str]:
    """``name`` and every local branch stacked on it (upstream after upstream), in the order
    met."""
    group = [name]
    for branch in group:
        group.extend(d for d in ctx.dependents.get(branch, ()) if d not in group)
    return group


def stack_keeper(name: str, ctx: RefusalContext, blocked: Mapping[str, str]
                 ) -> tuple[str, str] | None:
    """What really keeps ``name`` when the stack rule refuses it in a ``sweep --clean``
    whose branches in ``blocked`` (branch -> its linked worktree) stay because their worktree
    holds work: the first such branch stacked on ``name``, directly or through other stacked
    branches, with its worktree; None when no blocked branch is in its stack."""
    for branch in _stack_from(name, ctx)[1:]:
        if branch in blocked:
            return branch, blocked[branch]
    return None


def _alone(name: str, ctx: RefusalContext, proven: frozenset[str]) -> Refusal | None:
    """``delete NAME`` of one name: the stack rule over that name alone, with the way out.
    ``proven``: the branches whose ``delete`` has a proof. The way out names ``delete`` of the
    whole stack only when that command would delete it (every branch proven, none refused);
    otherwise it names the branch of the stack that keeps it."""
    stack = refuse_batch([name], ctx).get(name)
    if stack is None:
        return None
    group = _stack_from(name, ctx)
    batch = refuse_batch(group, ctx)
    keeps = next(((n, batch[n].reason) for n in group[1:] if n in batch and
                  batch[n].kind is not RefusalKind.STACK), None) \
        or next(((n, "has no proof") for n in group[1:] if n not in proven), None)
    if keeps is None:
        together = " ".join(shlex.quote(n) for n in group)
        return Refusal(RefusalKind.STACK, f"{stack.reason}; deleting them together is allowed: "
                                          f"branchkeeper delete -- {together}")
    return Refusal(RefusalKind.STACK, f"{stack.reason}; the stack cannot be deleted together: "
                                      f"{keeps[0]} {keeps[1]}")


def with_refusals(records: list[BranchRecord], ctx: RefusalContext, *, here: Path | None
                  ) -> list[BranchRecord]:
    """``records`` with their refusal and their dispositions refused where the commands refuse
    (see the module docstring). ``here``: the worktree the command runs in (resolved), whose
    branch ``sweep --clean`` never removes with its worktree. A ``sweep --clean`` deletion of a
    branch checked out in another linked worktree names that worktree: the command removes it
    first when nothing in it would be lost, else the branch is blocked."""
    linked = removable_with_worktree(ctx, here)
    go = BranchAction.DELETE
    local = [r for r in records if r.local_tip is not None and r.actions is not None]
    proven = frozenset(r.name for r in local if r.actions and r.actions.delete.action is go)
    prune_refused = refuse_batch([r.name for r in local if r.actions and
                                  r.actions.prune.action is go], ctx)
    clean_refused = refuse_batch([r.name for r in local if r.actions and
                                  r.actions.sweep_clean.action is go], ctx,
                                 ignore_checked_out=frozenset(linked))
    out: list[BranchRecord] = []
    for r in records:
        acts = r.actions
        if acts is None:
            out.append(r)
            continue
        static = static_refusal(r.name, ctx)
        remote = acts.delete_remote
        if remote is not None and static is not None and static.kind not in (
                RefusalKind.CURRENT, RefusalKind.CHECKED_OUT):
            remote = _refused(static, remote)
        if r.local_tip is None:
            out.append(r if remote is acts.delete_remote else
                       replace(r, actions=replace(acts, delete_remote=remote)))
            continue
        clean, prune, delete = acts.sweep_clean, acts.prune, acts.delete
        if clean.action is go and r.name in clean_refused:
            clean = _refused(clean_refused[r.name], clean)
        elif clean.action is go and r.name in linked:
            clean = replace(clean, reason=f"{clean.reason}; its worktree {linked[r.name]} is "
                                          "removed first unless it holds work",
                            worktree=linked[r.name])
        if static is not None:
            why = _with_worktree(static, linked[r.name], gone=ctx.checked_out[r.name].prunable) \
                if clean.action is go and r.name in linked else static
            prune, delete = _refused(why, prune), _refused(
                _stacked_checkout(r.name, static, ctx) if why is not static else why, delete)
        else:
            if prune.action is go and r.name in prune_refused:
                prune = _refused(prune_refused[r.name], prune)
            alone = _alone(r.name, ctx, proven) if delete.action is go else None
            if alone is not None:
                delete = _refused(alone, delete)
        if static is r.refusal and clean is acts.sweep_clean and prune is acts.prune \
                and delete is acts.delete and remote is acts.delete_remote:
            out.append(r)  # nothing refused: most records (two dataclass copies spared each)
            continue
        out.append(replace(r, refusal=static, actions=replace(
            acts, sweep_clean=clean, prune=prune, delete=delete, delete_remote=remote)))
    return out
