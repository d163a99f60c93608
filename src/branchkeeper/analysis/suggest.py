"""What deletes a proven branch, read from its record's dispositions and, for a branch checked
out in a linked worktree, that worktree's record (issue 11, section 5: one verdict): a command
only where every step of it succeeds, never one that would refuse; otherwise the refusal from
the record and what lifts it.

Computed here, below the guards and the renderers, so that the sweep's report (text and the
``cleanup`` field of ``sweep --json``), the last-sweep file and the creation denials that read
it print the same text. Every command is shell-quoted (DESIGN.md, guarantee 5).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, NamedTuple, Protocol

from branchkeeper.analysis.reap_gates import covered
from branchkeeper.model.records import BranchAction, BranchRecord, RefusalKind

if TYPE_CHECKING:
    from branchkeeper.analysis.worktree_model import WorktreeVerdict
    from branchkeeper.analysis.worktree_status import IgnoredVerdict
    from branchkeeper.git.repo import Worktree


class RetireView(Protocol):
    """What :func:`cleanup_suggestion` reads of a worktree's record
    (``analysis.worktree_record.WorktreeRecord``, which the inventory must not import)."""

    @property
    def worktree(self) -> Worktree: ...

    @property
    def retire(self) -> WorktreeVerdict: ...

    @property
    def ignored(self) -> IgnoredVerdict | None: ...

    @property
    def gone(self) -> bool: ...

    @property
    def keeps(self) -> str: ...


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


#: What deletes a branch whose worktree entry is gone and holds nothing: its ``git worktree
#: prune`` step drops the entry (pinning first any detached HEAD no ref holds, which a bare
#: ``git worktree prune`` would lose), then the proven branch is deleted.
PRUNE_COMMAND = "branchkeeper prune"


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


def _retire_first(r: BranchRecord) -> bool:
    """True when only its linked worktree keeps ``r`` from ``delete``, and ``sweep --clean``
    would remove that worktree first."""
    acts = r.actions
    return r.local_tip is not None and acts is not None and bool(r.worktree) \
        and acts.delete.action is not BranchAction.DELETE \
        and acts.sweep_clean.action is BranchAction.DELETE \
        and acts.delete.refusal is not None \
        and acts.delete.refusal.kind is RefusalKind.CHECKED_OUT


def cleanup_suggestion(r: BranchRecord, worktree: RetireView | None = None) -> Suggestion:
    """What deletes the proven branch ``r``, from ``r.actions``: ``delete NAME`` when the
    record says ``delete`` deletes it; ``delete --remote`` for a branch that exists only on the
    remote; for a branch only its linked worktree keeps (``sweep --clean`` removes it first),
    the retire of that worktree then ``delete``, from ``worktree`` (its record): ``worktree
    retire W`` when its retire gates pass, ``worktree retire --archive-ignored W`` when only
    ignored files an archive holds stand in the way, :data:`PRUNE_COMMAND` when its directory
    is gone and its entry holds nothing, and no command when what it holds is for the user to
    decide (uncommitted work, a hold, a lock, a nested checkout), or when the worktree was not
    read (``worktree`` None). Else no command and the refusal in ``why``."""
    if not _retire_first(r):
        return delete_suggestion(r)
    assert r.worktree is not None  # _retire_first checked it
    wt = shlex.quote(r.worktree)
    then = delete_command(r.name)
    if worktree is not None:
        ignored = worktree.ignored
        if covered(worktree.retire, ignored, archive_ignored=False):
            return Suggestion(f"branchkeeper worktree retire {wt} && {then}", "")
        if covered(worktree.retire, ignored, archive_ignored=True):
            return Suggestion(f"branchkeeper worktree retire --archive-ignored {wt} && {then}", "")
        if worktree.gone:  # `git worktree prune` drops the entry; prune pins what it must
            return Suggestion(PRUNE_COMMAND, "")
        if worktree.keeps != "holds work":  # a lock alone keeps it
            unlock = shlex.join(["git", "worktree", "unlock", r.worktree])
            return Suggestion("", f"not deleted: checked out in worktree {r.worktree}, which "
                                  f"{worktree.keeps}: that is yours to decide ({unlock} lifts "
                                  "it); once the worktree is retired, delete the branch")
        held = "; ".join(g.detail for g in worktree.retire.blockers)
        return Suggestion("", f"not deleted: checked out in worktree {r.worktree}, which retire "
                              f"keeps ({held}): that is yours to decide (LOST WORK RISK lists "
                              "what it holds); once the worktree is retired, delete the branch")
    return delete_suggestion(r)


def needs_worktree_record(r: BranchRecord) -> bool:
    """True when what deletes ``r`` depends on the record of the linked worktree it is checked
    out in (``sweep --clean`` removes that worktree first): a pass that read no worktrees
    cannot say it (:func:`unread_worktree_text`)."""
    return _retire_first(r)


def unread_worktree_text(r: BranchRecord) -> str:
    """What a pass that read no worktrees knows of a branch :func:`needs_worktree_record`
    says depends on its worktree: that it is checked out there, and where to read the rest."""
    return (f"not deleted: checked out in worktree {r.worktree}; whether retiring that worktree "
            "loses anything is not known yet (branchkeeper sweep says, and what deletes the "
            "branch)")
