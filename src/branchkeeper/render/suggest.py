"""The cleanup command the sweep suggests for a proven branch, read from its record's
dispositions (issue 11, section 5: one verdict): a command is suggested only when the record
says it deletes the branch, never one that would refuse; otherwise the line says why nothing
deletes it now, and what would. ``delete`` alone is :func:`~branchkeeper.analysis.suggest.
delete_suggestion` (also what the creation denials print); the sweep adds the worktree a
checked-out branch must leave first.

Every command is shell-quoted (DESIGN.md, guarantee 5).
"""

from __future__ import annotations

import shlex

from branchkeeper.analysis.suggest import Suggestion, delete_command, delete_suggestion
from branchkeeper.model.records import BranchAction, BranchRecord, RefusalKind

__all__ = ["Suggestion", "cleanup_suggestion"]


def cleanup_suggestion(r: BranchRecord) -> Suggestion:
    """What deletes the proven branch ``r``, from ``r.actions``: ``delete NAME`` when the
    record says ``delete`` deletes it; the worktree retire then ``delete`` when only
    ``sweep --clean`` does (its worktree is removed first); ``delete --remote`` for a branch
    that exists only on the remote; else no command and the refusal in ``why``. A record
    without dispositions gets the plain ``delete`` (the command judges again and says why
    if it refuses)."""
    acts = r.actions
    if r.local_tip is not None and acts is not None and acts.delete.action is not \
            BranchAction.DELETE and acts.sweep_clean.action is BranchAction.DELETE and \
            r.worktree and acts.delete.refusal is not None and \
            acts.delete.refusal.kind is RefusalKind.CHECKED_OUT:
        wt = shlex.quote(r.worktree)
        return Suggestion(f"branchkeeper worktree retire {wt} && {delete_command(r.name)}", "")
    return delete_suggestion(r)
