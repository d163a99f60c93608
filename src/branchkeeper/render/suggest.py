"""The cleanup command the sweep suggests for a proven branch, read from its record's
dispositions (issue 11, section 5: one verdict): a command is suggested only when the record
says it deletes the branch, never one that would refuse; otherwise the line says why nothing
deletes it now, and what would.

Every command is shell-quoted (DESIGN.md, guarantee 5).
"""

from __future__ import annotations

import shlex
from typing import NamedTuple

from branchkeeper.model.records import BranchAction, BranchRecord, RefusalKind


class Suggestion(NamedTuple):
    """``command``: the one command that deletes the branch as things stand (empty when none
    does); ``why``: when none does, the refusal from the record and what lifts it, else
    empty."""

    command: str
    why: str


def delete_command(name: str) -> str:
    """The branchkeeper command that deletes a branch behind its proof and a bundle."""
    return f"branchkeeper delete -- {shlex.quote(name)}"


def remote_delete_command(name: str) -> str:
    """The branchkeeper command that deletes a proven branch's remote copy."""
    return f"branchkeeper delete --remote -- {shlex.quote(name)}"


def cleanup_suggestion(r: BranchRecord) -> Suggestion:
    """What deletes the proven branch ``r``, from ``r.actions``: ``delete NAME`` when the
    record says ``delete`` deletes it; the worktree retire then ``delete`` when only
    ``sweep --clean`` does (its worktree is removed first); ``delete --remote`` for a branch
    that exists only on the remote; else no command and the refusal in ``why``. A record
    without dispositions gets the plain ``delete`` (the command judges again and says why
    if it refuses)."""
    acts = r.actions
    if r.local_tip is None:
        cv = acts.delete_remote if acts is not None else None
        if cv is None or cv.action is BranchAction.DELETE:
            return Suggestion(remote_delete_command(r.name), "")
        return Suggestion("", _why(r, cv.reason))
    if acts is None or acts.delete.action is BranchAction.DELETE:
        return Suggestion(delete_command(r.name), "")
    if acts.sweep_clean.action is BranchAction.DELETE and r.worktree and \
            acts.delete.refusal is not None and acts.delete.refusal.kind is RefusalKind.CHECKED_OUT:
        wt = shlex.quote(r.worktree)
        return Suggestion(f"branchkeeper worktree retire {wt} && {delete_command(r.name)}", "")
    return Suggestion("", _why(r, acts.delete.reason))


def _why(r: BranchRecord, reason: str) -> str:
    """The refusal, with what lifts it where something can."""
    kind = r.refusal.kind if r.refusal is not None else None
    if kind is RefusalKind.CURRENT:
        return f"not deleted: {reason} (switch to another branch first, then delete it)"
    if kind is RefusalKind.CHECKED_OUT:
        return (f"not deleted: {reason} (no command removes that checkout: switch it to "
                "another branch first, then delete it)")
    return f"not deleted: {reason}"
