"""What ``git symbolic-ref NAME REF`` writes (docs/guard.md; spec issue 5 section 2).

Setting a symbolic ref replaces what NAME held: ``refs/heads/X`` becomes an alias of REF, so
X's own commits fall out of every ref (an overwrite of X, ``gitargv.overwrites``), and
``HEAD`` pointed at ``refs/heads/NEW`` that does not exist is an unborn branch NEW, the
route of ``checkout --orphan NEW`` (``gitcreate.creations``). Reading (one operand) and
``--delete`` (git refuses it for a ref that is not symbolic) write no branch. Pure.
"""

from __future__ import annotations

from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.model import GitInvocation

_SYMREF = gitopts.spec("q|quiet d|delete |short |recurse m=")


class SymrefSet(NamedTuple):
    """``git symbolic-ref NAME TARGET`` as written; ``dynamic``: a word or option unknown."""

    name: str
    target: str
    dynamic: bool


def symref_set(g: GitInvocation) -> SymrefSet | None:
    """The symbolic ref ``g`` sets, or None (another subcommand, a read, a delete, or a word
    count git refuses)."""
    if g.subcommand != "symbolic-ref":
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _SYMREF)
    if p.has("delete") or len(p.operands) != 2:
        return None
    (name, name_dynamic), (target, target_dynamic) = p.operands
    return SymrefSet(name, target, g.dynamic or p.unknown or name_dynamic or target_dynamic)
