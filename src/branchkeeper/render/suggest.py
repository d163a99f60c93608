"""The cleanup command the sweep suggests for a proven branch, read from its record's
dispositions and, for a branch checked out in a linked worktree, that worktree's record (issue
11, section 5: one verdict): a command is suggested only where every step of it succeeds,
never one that would refuse; otherwise the line says why nothing deletes it now, and what
would. ``delete`` alone is :func:`~branchkeeper.analysis.suggest.delete_suggestion` (also what
the creation denials print); the sweep adds the worktree a checked-out branch must leave first.

Every command is shell-quoted (DESIGN.md, guarantee 5).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from branchkeeper.analysis.reap_gates import covered
from branchkeeper.analysis.suggest import Suggestion, delete_command, delete_suggestion
from branchkeeper.model.records import BranchAction, BranchRecord, RefusalKind

if TYPE_CHECKING:
    from branchkeeper.analysis.worktree_record import WorktreeRecord

__all__ = ["Suggestion", "cleanup_suggestion"]


def _retire_first(r: BranchRecord) -> bool:
    """True when only its linked worktree keeps ``r`` from ``delete``, and ``sweep --clean``
    would remove that worktree first."""
    acts = r.actions
    return r.local_tip is not None and acts is not None and bool(r.worktree) \
        and acts.delete.action is not BranchAction.DELETE \
        and acts.sweep_clean.action is BranchAction.DELETE \
        and acts.delete.refusal is not None \
        and acts.delete.refusal.kind is RefusalKind.CHECKED_OUT


def cleanup_suggestion(r: BranchRecord, worktree: WorktreeRecord | None = None) -> Suggestion:
    """What deletes the proven branch ``r``, from ``r.actions``: ``delete NAME`` when the
    record says ``delete`` deletes it; ``delete --remote`` for a branch that exists only on the
    remote; for a branch only its linked worktree keeps (``sweep --clean`` removes it first),
    the retire of that worktree then ``delete``, from ``worktree`` (its record): ``worktree
    retire W`` when its retire gates pass, ``worktree retire --archive-ignored W`` when only
    ignored files an archive holds stand in the way, and no command when what it holds is for
    the user to decide (uncommitted work, a hold, a lock, a nested checkout), or when the
    worktree was not read (``worktree`` None). Else no command and the refusal in ``why``."""
    if not _retire_first(r):
        return delete_suggestion(r)
    assert r.worktree is not None  # _retire_first checked it
    wt = shlex.quote(r.worktree)
    then = delete_command(r.name)
    if worktree is not None:
        ignored = worktree.inputs.base.ignored
        if covered(worktree.retire, ignored, archive_ignored=False):
            return Suggestion(f"branchkeeper worktree retire {wt} && {then}", "")
        if covered(worktree.retire, ignored, archive_ignored=True):
            return Suggestion(f"branchkeeper worktree retire --archive-ignored {wt} && {then}", "")
        held = "; ".join(g.detail for g in worktree.retire.blockers)
        return Suggestion("", f"not deleted: checked out in worktree {r.worktree}, which retire "
                              f"keeps ({held}): that is yours to decide (LOST WORK RISK lists "
                              "what it holds); once the worktree is retired, delete the branch")
    return delete_suggestion(r)
