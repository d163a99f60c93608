"""What deletes a proven branch, read from its record's ``delete`` disposition (issue 11,
section 5: one verdict): a command only where ``delete`` would delete the branch, otherwise the
refusal from the record and what lifts it.

Computed here, below the guards and the renderers, so that the sweep's report, the last-sweep
file and the creation denials that read it print the same text. Every command is shell-quoted
(DESIGN.md, guarantee 5).
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

    @property
    def text(self) -> str:
        """The command, or else the refusal: one line."""
        return self.command or self.why


def delete_command(name: str) -> str:
    """The branchkeeper command that deletes a branch behind its proof and a bundle."""
    return f"branchkeeper delete -- {shlex.quote(name)}"


def remote_delete_command(name: str) -> str:
    """The branchkeeper command that deletes a proven branch's remote copy."""
    return f"branchkeeper delete --remote -- {shlex.quote(name)}"


def delete_suggestion(r: BranchRecord) -> Suggestion:
    """What ``delete`` does with the proven branch ``r``, from ``r.actions``: ``delete NAME``
    when the record says it deletes it, ``delete --remote NAME`` for a branch that exists only
    on the remote and whose remote copy is proven; else no command and the refusal (with what
    lifts it) in ``why``. A record without dispositions gets the plain command (the command
    judges again and says why if it refuses)."""
    acts = r.actions
    if r.local_tip is None:
        cv = acts.delete_remote if acts is not None else None
        if cv is None or cv.action is BranchAction.DELETE:
            return Suggestion(remote_delete_command(r.name), "")
        return Suggestion("", refusal_text(r, cv.reason))
    if acts is None or acts.delete.action is BranchAction.DELETE:
        return Suggestion(delete_command(r.name), "")
    return Suggestion("", refusal_text(r, acts.delete.reason))


def refusal_text(r: BranchRecord, reason: str) -> str:
    """``not deleted: <reason>``, with what lifts it where the reason does not say: a current
    branch is switched away from; a protected name stays (a person may exempt it from the
    count); a branch checked out where no command removes the checkout
    (the main worktree, or the worktree the sweep ran in) is switched there first. A branch
    that ``sweep --clean`` deletes together with its linked worktree already says so."""
    kind = r.refusal.kind if r.refusal is not None else None
    with_worktree = r.actions is not None and r.actions.sweep_clean.worktree is not None
    if kind is RefusalKind.CURRENT:
        return f"not deleted: {reason} (switch to another branch first, then delete it)"
    if kind is RefusalKind.PROTECTED:
        return (f"not deleted: {reason}: kept whatever its proof (a person may list it in "
                "branches.exempt, so it no longer counts as open work)")
    if kind is RefusalKind.CHECKED_OUT and not with_worktree:
        return (f"not deleted: {reason} (no command removes that checkout: switch it to "
                "another branch first, then delete it)")
    return f"not deleted: {reason}"
