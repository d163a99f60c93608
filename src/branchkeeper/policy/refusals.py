"""Refusals that no proof overrides (issue 3, section 2; first document, section 7; field case C05).

Pure functions over a :class:`~branchkeeper.analysis.refusal_facts.RefusalContext` gathered
by :func:`branchkeeper.analysis.refusal_facts.read_refusal_context`. A refused branch is never
deleted by ``delete``, ``sweep --clean`` or ``prune``, whatever its proof, and
``--allow-unproven`` does not override a refusal either.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from branchkeeper.analysis.refusal_facts import RefusalContext


class RefusalKind(StrEnum):
    """Why a branch may not be deleted (each with a one-line reason on the :class:`Refusal`)."""

    DEFAULT = "default"
    REMOTE_DEFAULT = "remote_default"
    INTEGRATION_LINE = "integration_line"
    EXEMPT = "exempt"
    PROTECTED = "protected"
    CURRENT = "current"
    CHECKED_OUT = "checked_out"
    STACK = "stack"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refusal: ``kind`` and a one-line ``reason`` naming the rule."""

    kind: RefusalKind
    reason: str


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
