"""The reaper's gates: which linked worktrees ``worktree reap`` may remove (issue 4, section 3).

Second document, "Ad-hoc cleanup obligation + the automatic reaper": removable only when
unlocked, not the worktree the command runs in, idle past the activity window, clean, free of
protected ignored content, AND the branch is proven preserved (the inventory's proof ladder:
``merged``, ``merged_into_line``, ``patch_equivalent``) or unpushed with zero unique commits. A
closed-unmerged PR or an unpushed branch with unique commits is reported, never removed. A
detached HEAD is removable only when a remote-tracking ref contains it ("SKIP_UNREFERENCED_COMMIT").

The gates are pure functions of :class:`ReapInputs`; :mod:`branchkeeper.analysis.worktree_record`
gathers the facts (once per worktree, for every command). The first failing gate gives the
disposition (:class:`Disposition`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.analysis.ignored import IgnoredVerdict
from branchkeeper.analysis.pr_evidence import PrAnswer, PrState
from branchkeeper.analysis.worktree_model import (
    RETIRE_GATES,
    Disposition,
    Gate,
    RetireInputs,
    WorktreeVerdict,
    triage_for,
)
from branchkeeper.model.records import BranchAction, BranchRecord, BranchState, Containment

_HOUR = 3600.0

#: ``--min-age-hours`` applied when ``--archive-unproven`` is given without one (hours).
ARCHIVE_DEFAULT_MIN_AGE_HOURS = 24.0


@dataclass(frozen=True, slots=True)
class ReapInputs:
    """Everything the reap gates read, gathered beforehand.

    ``base``: the retire facts (status, ignored verdict, hold, self path). ``now``: unix seconds.
    ``activity``: newest change (unix seconds) to the worktree's files, its HEAD reflog and HEAD
    commit, ``None`` when unknown; ``activity_capped``: the file walk stopped at its cap.
    ``created``: when the worktree was added (unix seconds, ``None``: unknown). ``window_hours``:
    the activity window; ``min_age_hours``: the explicit minimum age (``None``: off).
    ``record``: the inventory record of the worktree's branch (``None``: detached or missing).
    ``pr``: the PR evidence for a pushed, unproven branch (``None``: not asked);
    ``pr_degraded``: why no PR evidence exists (degraded mode), or ``None``.
    ``remote_ref``: for a detached HEAD, a remote-tracking ref containing it; ``local_ref``: a
    local ref containing it when no remote-tracking ref does; ``ref_error``: why that check failed.
    """

    base: RetireInputs
    now: float
    activity: float | None
    activity_capped: bool
    created: float | None
    window_hours: float
    min_age_hours: float | None
    record: BranchRecord | None
    pr: PrAnswer | None = None
    pr_degraded: str | None = None
    remote_ref: str | None = None
    local_ref: str | None = None
    ref_error: str | None = None


ReapGateFn = Callable[[ReapInputs], Gate | None]


def _lift(fn: Callable[[RetireInputs], Gate | None]) -> ReapGateFn:
    def gate(i: ReapInputs) -> Gate | None:
        return fn(i.base)
    gate.__name__ = fn.__name__
    return gate


_RETIRE = {fn.__name__: _lift(fn) for fn in RETIRE_GATES}


def _hours(seconds: float) -> str:
    return f"{seconds / _HOUR:.1f} h"


def _clean_removes(i: ReapInputs) -> str:
    """Where ``sweep --clean`` removes this worktree with its proven branch now (it does not
    wait for the activity window), the note that says so; else empty (issue 11, section 5:
    where two commands differ, the one that does less says why)."""
    rec = i.record
    if rec is None or rec.actions is None:
        return ""
    clean = rec.actions.sweep_clean
    if clean.action is not BranchAction.DELETE or clean.worktree is None or \
            Path(clean.worktree) != Path(i.base.worktree.path):
        return ""
    return ("; `branchkeeper sweep --clean` removes it now with its proven branch unless it "
            "holds work (it does not wait for the window)")


def _idle(i: ReapInputs) -> Gate | None:
    if i.base.status is None:
        return None
    fails = Disposition.SKIP_ACTIVE
    if i.activity_capped:
        return Gate("idle", False, "too many files to prove it idle (activity walk capped)", fails)
    if i.activity is None:
        return Gate("idle", False, "last activity unknown", fails)
    idle = i.now - i.activity
    if idle < i.window_hours * _HOUR:
        return Gate("idle", False, f"last activity {_hours(max(idle, 0.0))} ago, within the "
                    f"{i.window_hours:g} h activity window{_clean_removes(i)}", fails)
    return Gate("idle", True, f"idle for {_hours(idle)} (window {i.window_hours:g} h)", fails)


def _min_age(i: ReapInputs) -> Gate | None:
    if i.min_age_hours is None or i.base.status is None:
        return None
    fails = Disposition.SKIP_ACTIVE
    if i.created is None:
        return Gate("min_age", False, "worktree age unknown", fails)
    age = i.now - i.created
    if age < i.min_age_hours * _HOUR:
        return Gate("min_age", False, f"added {_hours(max(age, 0.0))} ago, younger than "
                    f"--min-age-hours {i.min_age_hours:g}", fails)
    return Gate("min_age", True, f"added {_hours(age)} ago (minimum {i.min_age_hours:g} h)", fails)


def _detached(i: ReapInputs) -> Gate | None:
    wt = i.base.worktree
    head = wt.head
    if head is None:
        return Gate("preserved", False, "no HEAD commit", Disposition.SKIP_UNPROVEN)
    fails = Disposition.SKIP_UNREFERENCED_COMMIT
    if i.ref_error is not None:
        return Gate("preserved", False, f"could not check containment ({i.ref_error})", fails)
    if i.remote_ref is not None:
        return Gate("preserved", True, f"detached HEAD {head.short} is in {i.remote_ref}", fails)
    if i.local_ref is not None:
        return Gate("preserved", False, f"detached HEAD {head.short} is held only by the local "
                    f"ref {i.local_ref}, in no remote-tracking ref", Disposition.SKIP_UNPROVEN)
    return Gate("preserved", False, f"detached HEAD {head.short} is in no ref", fails)


def pushed(record: BranchRecord) -> bool:
    """True when the branch's tip reached a remote-tracking ref (its own or another)."""
    return record.remote_tip is not None or record.containment in (
        Containment.IN_REMOTE_REF, Containment.OWN_REMOTE_ONLY)


def needs_pr(record: BranchRecord | None) -> bool:
    """True when the branch gate would consult PR evidence: pushed and not proven preserved."""
    return (record is not None and record.state.is_work and pushed(record)
            and record.ahead is not None and record.ahead > 0)


def _branch(i: ReapInputs) -> Gate:
    rec = i.record
    name = (i.base.worktree.branch or "").removeprefix("refs/heads/")
    unproven = Disposition.SKIP_UNPROVEN
    if rec is None:
        return Gate("preserved", False, f"branch {name} is not in the inventory", unproven)
    if rec.state.preserved:
        return Gate("preserved", True, f"{rec.state.value}: {rec.reason}", unproven)
    if rec.state is BranchState.UNKNOWN:
        return Gate("preserved", False, f"unknown: {rec.reason}", unproven)
    if not rec.state.is_work:
        return Gate("preserved", False, f"branch {name} is {rec.state.value}: never judged "
                    "finished by the reaper", unproven)
    if rec.ahead is None:
        return Gate("preserved", False, "unique commit count unknown", unproven)
    if not pushed(rec):
        if rec.ahead == 0:
            return Gate("preserved", True, "unpushed with no unique commits", unproven)
        return Gate("preserved", False, f"{rec.ahead} unique commit(s), never pushed",
                    Disposition.SKIP_NOT_PUSHED)
    if rec.ahead == 0:
        return Gate("preserved", True, "no unique commits", unproven)
    return _pr_gate(i, rec)


def _pr_gate(i: ReapInputs, rec: BranchRecord) -> Gate:
    unproven = Disposition.SKIP_UNPROVEN
    pr = i.pr
    if pr is None:
        why = i.pr_degraded or "no PR evidence"
        return Gate("preserved", False, f"pushed, unproven; {why}", unproven)
    if pr.state is PrState.OPEN:
        return Gate("preserved", False, pr.detail or "a PR is open", Disposition.SKIP_PR_OPEN)
    if pr.state is PrState.ERROR:
        return Gate("preserved", False, f"PR evidence failed: {pr.detail}",
                    Disposition.SKIP_LS_REMOTE_ERROR)
    if pr.state is PrState.NONE:
        return Gate("preserved", False, f"pushed, {rec.ahead} unique commit(s) unproven, no PR",
                    Disposition.SKIP_AMBIGUOUS_NO_PR)
    if pr.state is PrState.CLOSED:
        return Gate("preserved", False, f"{pr.detail}, unmerged: reported, never removed",
                    unproven)
    return Gate("preserved", False, f"{pr.detail}, but the tip is not proven on the base (a "
                "merged PR alone is never proof)", unproven)


def _preserved(i: ReapInputs) -> Gate | None:
    wt = i.base.worktree
    if wt.bare or i.base.status is None:
        return None
    return _detached(i) if wt.branch is None else _branch(i)


#: The reap gates, in the order a disposition is chosen (first failing gate wins).
REAP_GATES: tuple[ReapGateFn, ...] = (
    _RETIRE["_present"], _RETIRE["_not_main"], _RETIRE["_not_self"], _RETIRE["_not_protected"],
    _RETIRE["_no_hold"], _RETIRE["_unlocked"], _idle, _min_age, _RETIRE["_clean"],
    _RETIRE["_no_nested"], _RETIRE["_ignored_ok"], _preserved, _RETIRE["_refs_kept"],
    _RETIRE["_no_submodule"],
)

#: The dispositions ``--archive-unproven`` may archive (second document: an explicit whitelist).
ARCHIVABLE = frozenset({Disposition.SKIP_NOT_PUSHED, Disposition.SKIP_AMBIGUOUS_NO_PR})


def evaluate_reap(inputs: ReapInputs,
                  gates: Sequence[ReapGateFn] = REAP_GATES) -> WorktreeVerdict:
    """Run the reap ``gates`` over ``inputs``; the first failing gate gives the disposition.

    Every gate is evaluated (for ``--explain``); a gate returning ``None`` does not apply.
    A ``SKIP_UNREFERENCED_COMMIT`` (second document) or ``SKIP_SUBMODULE`` verdict carries the
    triage command (:func:`~branchkeeper.analysis.worktree_model.triage_for`).
    """
    results = tuple(g for g in (fn(inputs) for fn in gates) if g is not None)
    failed = [g for g in results if not g.passed]
    disposition = failed[0].fails_as if failed else Disposition.REMOVABLE
    reason = failed[0].detail if failed else disposition.reason
    wt = inputs.base.worktree
    return WorktreeVerdict(wt, disposition, reason, results, triage_for(disposition, wt))


def archivable(verdict: WorktreeVerdict) -> bool:
    """True when ``verdict`` may be archived: its disposition is whitelisted and the ONLY failing
    gate is the branch gate (every other gate passed)."""
    if verdict.disposition not in ARCHIVABLE:
        return False
    return [g.name for g in verdict.blockers] == ["preserved"]


def covered(verdict: WorktreeVerdict, ignored: IgnoredVerdict | None, *, archive_ignored: bool,
            archive_unproven: bool = False) -> bool:
    """True when the worktree may go once its work is saved: every failing gate is one a save
    covers. ``--archive-ignored`` covers ``ignored_disposable`` when every kept ignored path is
    a file an archive can hold; ``--archive-unproven`` covers ``preserved`` for the whitelisted
    dispositions (:data:`ARCHIVABLE`). A verdict with no failing gate is covered."""
    for gate in verdict.blockers:
        if gate.name == "ignored_disposable" and archive_ignored and ignored is not None \
                and ignored.archivable:
            continue
        if gate.name == "preserved" and archive_unproven and gate.fails_as in ARCHIVABLE:
            continue
        return False
    return True
