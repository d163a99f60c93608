"""One :class:`~branchkeeper.model.records.BranchRecord` per branch name, from what an inventory
pass learned (first document, sections 2, 4, 5): its state, proof, containment, dormancy
stage and counts.

:func:`build_records` is the inventory's last step. It reads the :class:`Evidence` gathered
before it and starts a git process only for the default branch or an integration line whose
local copy differs from the remote one (one ``rev-list --count``, to name commits no remote
holds). Park markers are bookkeeping, not work: where a branch's work lives is judged under
them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from branchkeeper.analysis.dispositions import command_verdicts, describe, superseded_reason
from branchkeeper.analysis.proofrun import TipVerdict
from branchkeeper.analysis.reflog_dates import had_work
from branchkeeper.git.repo import branch_worktrees
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.model.records import (
    BranchRecord,
    BranchState,
    Containment,
    Park,
    Proof,
    Stage,
    Supersession,
    branch_age,
    stager,
)

if TYPE_CHECKING:
    from branchkeeper.analysis.graph import Subgraph
    from branchkeeper.analysis.refs import DefaultBranch, RefInfo, RefTable
    from branchkeeper.git.repo import RepoFacts, Worktree
    from branchkeeper.model.config import Config


_NUMBER = re.compile(r"(?:^|[^0-9a-z])(?:(?:issue|gh)[-_]?)?(\d{2,5})(?=$|[^0-9])", re.I)
_SUBJECT_NUMBER = re.compile(r"(?:#|\bPlan\s+)(\d{1,6})\b")

#: A record with every field but the verdict's already filled in.
Make = Callable[..., BranchRecord]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one inventory pass learned, read by :func:`build_records`.

    ``names``: every branch name, sorted; ``roles``: name -> the state of a name that is not
    work (exempt, default, integration line) or None; ``remote_configured``: whether the
    configured remote exists (else nothing is called LOST WORK RISK); ``subgraph``: the
    unmerged history walked for the proofs (None when it could not be walked);
    ``verdicts``: the proof ladder's answer per tip; ``default_tips``: the default branch's
    tips; ``held_by``: commit -> the remote-tracking branches that reach it; ``created``: name
    -> creation time (unix s) from the reflog; ``lines``: lines changed per unmerged tip;
    ``behind_of``: commits behind the default branch per tip.
    """

    facts: RepoFacts
    config: Config
    now: float
    table: RefTable
    names: list[str]
    default: DefaultBranch
    roles: dict[str, BranchState | None]
    worktrees: list[Worktree]
    remote_configured: bool
    subgraph: Subgraph | None
    verdicts: dict[Oid, TipVerdict]
    default_tips: set[Oid]
    held_by: dict[Oid, list[str]]
    created: dict[str, int]
    lines: dict[Oid, int]
    behind_of: dict[Oid, int]


def number_token(name: str, subject: str) -> str | None:
    """The linked issue or plan number: a 2-5 digit token of the name, else ``#N`` in the subject."""
    m = _NUMBER.search(name)
    if m:
        return m.group(1)
    m = _SUBJECT_NUMBER.search(subject)
    return m.group(1) if m else None


def _stage(age: float, config: Config) -> Stage | None:
    return stager(config)(age)


def build_records(ev: Evidence) -> list[BranchRecord]:
    """Every branch name's record, in name order: the fields every record has (tips, upstream,
    worktree, age, park marker, same-tip group), then a role's record or a work branch's, then
    what each cleanup command does with it (:func:`.dispositions.command_verdicts`)."""
    worktree_of = branch_worktrees(ev.worktrees)
    tip_groups: dict[Oid, list[str]] = {}
    names_at: dict[Oid, list[str]] = {}
    for n in ev.names:
        info = ev.table.local.get(n) or ev.table.remote.get(n)
        if info is not None and info.oid is not None and ev.roles[n] is not BranchState.EXEMPT:
            tip_groups.setdefault(info.oid, []).append(n)
        for ref in (ev.table.local.get(n), ev.table.remote.get(n)):
            if ref is not None and ref.oid is not None:
                names_at.setdefault(ref.oid, []).append(n)
    stage_of = stager(ev.config)
    records: list[BranchRecord] = []
    meter = progress.current()
    for n in ev.names:
        local = ev.table.local.get(n)
        rem = ev.table.remote.get(n)
        info = local or rem
        assert info is not None
        tip = info.oid
        created_at = ev.created.get(n)
        age = branch_age(info.date, created_at, ev.now)
        parked = _park(info, ev.subgraph)
        # One construction per record (frozen dataclasses are slow to copy, 5,000 of them).
        make = partial(
            BranchRecord, name=n, local_tip=local.oid if local else None,
            remote_tip=rem.oid if rem else None,
            upstream=(local.upstream or None) if local else None,
            upstream_gone=bool(local and local.upstream_gone), worktree=worktree_of.get(n),
            age_days=None if age is None else round(age, 2), tip_date=info.date,
            created=created_at, parked=parked, number_token=number_token(n, info.subject),
            same_tip_as=tuple(x for x in tip_groups.get(tip, []) if x != n) if tip else ())
        fixed = ev.roles[n]
        if fixed is not None:
            rec = _role_record(ev, fixed, local, rem, make)
        else:
            rec = _work_record(ev, n, info, local is not None, rem, age, parked, make,
                               stage_of, names_at)
        tip_verdict = ev.verdicts.get(tip) if tip is not None else None
        remote_verdict = ev.verdicts.get(rem.oid) if rem is not None and rem.oid else None
        # The dispositions read the finished record; it is set in place before the record is
        # shared (a copy through dataclasses.replace costs a second construction, 5,000 times).
        object.__setattr__(rec, "actions", command_verdicts(
            rec, verdict=tip_verdict, remote_verdict=remote_verdict,
            remote=ev.config.branches.remote, default_name=ev.default.name))
        records.append(rec)
        meter.advance()
    return records


def _park(info: RefInfo, subgraph: Subgraph | None) -> Park | None:
    """The park marker at the branch's tip, if its tip is one (a parked branch committed to
    again is no longer parked)."""
    tip = info.oid
    if info.parked_reason and tip is not None and (
        subgraph is None or subgraph.is_park_commit(tip) or tip not in subgraph.commits
    ):
        return Park(info.parked_reason, info.parked_by, info.date or 0)
    return None


def _role_record(ev: Evidence, fixed: BranchState, local: RefInfo | None, rem: RefInfo | None,
                 make: Make) -> BranchRecord:
    """The default branch, an integration line or an exempt name: not work, but commits on the
    local copy of a default or line that no remote holds are still lost with this clone (one
    ``rev-list --count``): say so."""
    unpushed_line = None
    if fixed is not BranchState.EXEMPT and local is not None and local.oid is not None \
            and ev.remote_configured and (rem is None or rem.oid != local.oid):
        res = run_git(["rev-list", "--count", local.oid, "--not",
                       f"--remotes={ev.config.branches.remote}"], cwd=ev.facts.root, check=False)
        if res.returncode == 0 and res.text.strip().isdigit():
            unpushed_line = int(res.text.strip())
    if unpushed_line:
        return make(state=fixed, containment=Containment.NOWHERE, unpushed=unpushed_line,
                    reason=f"{unpushed_line} commit(s) on the local copy that no remote holds")
    return make(state=fixed)


def _work_record(ev: Evidence, n: str, info: RefInfo, has_local: bool, rem: RefInfo | None,
                 age: float | None, parked: Park | None, make: Make,
                 stage_of: Callable[[float], Stage | None], names_at: dict[Oid, list[str]]
                 ) -> BranchRecord:
    """A branch that is work: its state from the proof verdict, where its commits live, its
    dormancy stage and counts."""
    tip = info.oid
    if tip is not None and info.objecttype == "missing":
        return make(state=BranchState.UNKNOWN, reason=f"object missing ({tip})")
    if tip is None or info.objecttype != "commit":
        return make(state=BranchState.UNKNOWN,
                    reason=f"tip is a {info.objecttype or 'missing'} object, not a commit")
    subgraph = ev.subgraph
    verdict = ev.verdicts.get(tip, TipVerdict(unknown="not reached"))
    walk = subgraph.walk(tip) if subgraph is not None and tip in subgraph.commits else None
    ahead = None
    if walk is not None and subgraph is not None:
        ahead = subgraph.own_count(walk)
    elif verdict.proof is not None and verdict.proof.kind.value == "ancestor":
        ahead = 0
    # At the default branch's tip: unstarted (C07) unless its reflog shows work on it (a
    # fast-forward merge leaves the same tip behind).
    unstarted = tip in ev.default_tips and not had_work(ev.facts, n if has_local else None)
    superseded = None
    if verdict.superseded is not None and not unstarted:
        sup = verdict.superseded
        superseded = Supersession(sup.holder, sup.base, sup.landed_as, sup.changes,
                                  sup.conflicted,
                                  tuple(dict.fromkeys(names_at.get(sup.holder, ()))))
    state, reason, proof = _state(ev, verdict, unstarted=unstarted, parked=parked, age=age,
                                  stage_of=stage_of)
    if superseded is not None and state in (BranchState.DORMANT, BranchState.LIVE):
        state = BranchState.SUPERSEDED
    containment = None
    containing = None
    unpushed = None
    if walk is not None and subgraph is not None and ev.remote_configured:
        unpushed = subgraph.own_count(walk, outside=ev.held_by)
    if not state.preserved and not unstarted and ev.remote_configured:
        containment, containing = _containment(ev, n, tip, rem)
    stage = age_verdict(state, age, stage_of)[1]
    rec = make(
        state=state, reason=reason, proof=proof, containment=containment,
        containing_ref=containing, stage=stage, ahead=ahead, behind=ev.behind_of.get(tip),
        unpushed=unpushed, lines=ev.lines.get(tip) if proof is None else None,
        superseded=superseded if state is BranchState.SUPERSEDED else None)
    if state is BranchState.SUPERSEDED:
        rec = replace(rec, reason=superseded_reason(rec))
    return rec


def _state(ev: Evidence, verdict: TipVerdict, *, unstarted: bool, parked: Park | None,
           age: float | None, stage_of: Callable[[float], Stage | None]
           ) -> tuple[BranchState, str, Proof | None]:
    """(state, reason, proof) of a work branch: merged or patch-equivalent by its proof,
    unknown by the verdict's reason, else parked, dormant or live. An unstarted branch (at
    the default branch's tip, nothing done on it) is never merged: it is ``unstarted``, which
    has no dormancy stage (case C07)."""
    reason = verdict.note
    proof = verdict.proof
    if proof is not None and not unstarted:
        reason = describe(proof)  # the words every command prints for this proof
        if proof.kind.value == "ancestor":
            line = proof.base not in ev.default.refs
            state = BranchState.MERGED_INTO_LINE if line else BranchState.MERGED
        else:
            state = BranchState.PATCH_EQUIVALENT
            if verdict.note:
                reason += f" ({verdict.note})"
        return state, reason, proof
    if verdict.unknown is not None and not unstarted:
        return BranchState.UNKNOWN, verdict.unknown, None
    if unstarted and parked is None:
        return (BranchState.UNSTARTED, f"unstarted: at the same tip as {ev.default.name}",
                None)
    if parked is not None:
        return BranchState.PARKED, f"parked: {parked.reason}", None
    return age_verdict(BranchState.LIVE, age, stage_of)[0], reason, None


def age_verdict(state: BranchState, age: float | None,
                stage_of: Callable[[float], Stage | None]) -> tuple[BranchState, Stage | None]:
    """The part of a work branch's verdict its age decides (first document, section 4,
    "Stages"): a live or dormant branch is dormant at the stage of its ``age`` (days, not
    rounded) and live below the first one; a superseded branch keeps its state and gets the
    stage; any other state is returned as it is, with no stage. ``age`` None: no stage.
    The classifier and the stored sweep result (:mod:`.sweep_reuse`) both decide it here."""
    if state not in (BranchState.LIVE, BranchState.DORMANT, BranchState.SUPERSEDED):
        return state, None
    stage = stage_of(age) if age is not None else None
    if state is BranchState.SUPERSEDED:
        return state, stage
    return (BranchState.DORMANT if stage is not None else BranchState.LIVE), stage


def _containment(ev: Evidence, n: str, tip: Oid, rem: RefInfo | None
                 ) -> tuple[Containment | None, str | None]:
    """Where the work of a branch that is not preserved lives, and the remote ref holding it
    (an integration line first): in the default branch (under park markers), in another
    remote-tracking branch, on its own remote copy only, or nowhere (LOST WORK RISK)."""
    subgraph = ev.subgraph
    work_tip = tip
    while subgraph is not None and subgraph.is_park_commit(work_tip):
        work_tip = subgraph.commits[work_tip].parents[0]
    in_base = subgraph is not None and (
        work_tip not in subgraph.commits or subgraph.commits[work_tip].boundary)
    holders = ev.held_by.get(work_tip, [])
    others = [h for h in holders if h != n]
    if work_tip != tip and in_base:
        return Containment.IN_DEFAULT, None
    if others:
        lines_first = sorted(others, key=lambda h: (ev.roles.get(h) is not
                                                    BranchState.INTEGRATION_LINE, h))
        return Containment.IN_REMOTE_REF, f"{ev.config.branches.remote}/{lines_first[0]}"
    if n in holders or (rem is not None and rem.oid in (tip, work_tip)):
        return Containment.OWN_REMOTE_ONLY, None
    if subgraph is not None:
        return Containment.NOWHERE, None
    return None, None
