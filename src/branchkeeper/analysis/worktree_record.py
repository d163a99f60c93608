"""One record per worktree: what it holds, how long it has been idle, and what each command would
do with it (issue 11, section 5; issue 12, sections 1 and 2; second document, "Cleanup" and "the
automatic reaper").

:func:`classify_worktrees` is THE classification of worktrees. ``worktree list``, ``retire``,
``reap``, ``sweep --clean``, the WorktreeRemove hook, the sweep's LOST WORK RISK and ``report``
read its :class:`WorktreeRecord` and never re-derive it. A record carries both dispositions:
``retire`` (the checkout may go when its branch keeps its commits) and ``reap`` (the branch's work
must also be proven preserved, or unpushed with nothing unique), and one activity figure (the
newest of the files' mtimes, the HEAD reflog's last entry and the HEAD commit date) that the
reaper's activity window and every displayed idle time read.

Git processes: one ``worktree list`` (unless given), one ``log --no-walk`` for the commit time
of every HEAD that is not a branch tip of the inventory (none when all are), one lean
``for-each-ref`` (names and tips) to resolve the default branch when no inventory is given, then
per linked worktree one ``status`` (plus one ``for-each-ref --contains`` for a detached HEAD,
one ``config --file .gitmodules`` where that file exists), on a small thread pool, and one
``rev-list`` for every linked worktree's own refs (:mod:`~branchkeeper.analysis.worktree_store`:
their admin directories are read from the filesystem). The inventory (for the reap
disposition) is the caller's, built once. PR evidence is asked only for a pushed, unproven
branch whose other reap gates all pass, so a degraded provider is probed at most once and only
when it matters.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper import clock
from branchkeeper.analysis.ignored import IgnoredRules, Polarity
from branchkeeper.analysis.pr_evidence import GhProvider, NoProvider, PrAnswer, PrEvidence
from branchkeeper.analysis.reap_gates import ReapInputs, evaluate_reap, needs_pr
from branchkeeper.analysis.refs import DefaultBranch, protected_role, resolve_default_branch
from branchkeeper.analysis.worktree_model import (
    RETIRE_GATES,
    RetireInputs,
    WorktreeVerdict,
    containing_refs,
    evaluate,
    keeps_text,
    nested_lines,
)
from branchkeeper.analysis.worktree_status import (
    IgnoredVerdict,
    WorktreeStatus,
    classify_worktree_ignored,
    commit_times,
    with_files,
    worktree_status,
)
from branchkeeper.analysis.worktree_store import (
    WorktreeStore,
    initialised_submodules,
    read_stores,
)
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.model.records import BranchRecord
from branchkeeper.state import holds as hold_store

if TYPE_CHECKING:
    from branchkeeper.analysis.inventory import Inventory
    from branchkeeper.model.config import Config

#: Threads that run per-worktree ``git status`` at once.
WORKERS = 4


@dataclass(frozen=True, slots=True)
class WorktreeSettings:
    """The options that change a verdict: ``polarity`` of the ignored-content rule (``None``:
    ``worktrees.ignored``), ``min_age_hours`` (``None``: off), ``now`` (unix seconds;
    ``None``: :func:`branchkeeper.clock.now`). ``walk_all``: False for a survey that only lists
    local-only work (sweep, SessionStart): a worktree's files are walked for its last activity
    only when it holds such work (the only idle figure that list shows); the others' last
    activity is unknown, so their reap gate fails closed."""

    polarity: Polarity | None = None
    min_age_hours: float | None = None
    now: float | None = None
    walk_all: bool = True


class PrAsker:
    """Asks ``provider`` lazily: the first question probes availability once; afterwards
    :attr:`probed` says whether the run had PR evidence."""

    def __init__(self, provider: PrEvidence) -> None:
        self.provider = provider
        self.probed: tuple[bool, str] | None = None

    def available(self) -> tuple[bool, str]:
        if self.probed is None:
            self.probed = self.provider.available()
        return self.probed

    def ask(self, branch: str, head: Oid | None) -> tuple[PrAnswer | None, str | None]:
        """(answer, None) or (None, degraded-mode reason)."""
        ok, why = self.available()
        if not ok:
            return None, why
        if isinstance(self.provider, GhProvider):
            return self.provider.answer(branch, head), None
        state = self.provider.state(branch, head)
        return PrAnswer(state, detail=f"PR state {state.value}"), None

    @property
    def note(self) -> tuple[str, bool]:
        """(the first line a report prints about PR evidence, degraded?)."""
        if self.probed is None:
            return "PR evidence: not needed", False
        ok, why = self.probed
        return (f"PR evidence: {why}", False) if ok else (f"degraded mode: {why}", True)


@dataclass(frozen=True, slots=True)
class WorktreeRecord:
    """One worktree, classified.

    ``inputs``: every fact the gates read (status, ignored verdict, hold, activity, the branch's
    inventory record); ``retire`` and ``reap``: the two dispositions, each with every gate's
    result (``reap`` is ``None`` when the caller built no inventory); ``hold``: the recorded
    hold, explicit or automatic.
    """

    inputs: ReapInputs
    retire: WorktreeVerdict
    reap: WorktreeVerdict | None
    hold: hold_store.Hold | None

    @property
    def worktree(self) -> Worktree:
        return self.inputs.base.worktree

    @property
    def status(self) -> WorktreeStatus | None:
        return self.inputs.base.status

    @property
    def ignored(self) -> IgnoredVerdict | None:
        """The verdict on its ignored files (``None``: not read)."""
        return self.inputs.base.ignored

    @property
    def branch(self) -> str | None:
        """The short name of the checked-out branch (``None``: detached or bare)."""
        branch = self.worktree.branch
        return branch.removeprefix("refs/heads/") if branch is not None else None

    @property
    def branch_record(self) -> BranchRecord | None:
        return self.inputs.record

    @property
    def unreferenced_head(self) -> Oid | None:
        """The detached HEAD when no ref holds it (its only copy: the worktree's entry), else
        ``None`` (a branch, a ref that contains it, or containment not known)."""
        wt, i = self.worktree, self.inputs
        if wt.bare or wt.branch is not None or wt.head is None or i.ref_error is not None:
            return None
        if wt.prunable or self.status is not None:
            return wt.head if i.remote_ref is None and i.local_ref is None else None
        return None

    @property
    def admin_loss(self) -> str | None:
        """What deleting the worktree's admin directory (``git worktree prune``, a removal)
        would lose, as one line: its own refs holding commits nothing else holds, its
        submodule stores (non-empty ``modules/``), or why its refs could not be judged;
        ``None`` when nothing."""
        st = self.inputs.base.store
        if st is None:
            return None
        parts = [f"its own ref {h.ref} holds {h.count} commit(s) no branch, tag or remote holds"
                 for h in st.held]
        if st.modules:
            parts.append(f"submodule store(s) {', '.join(st.modules)} in {st.admin / 'modules'}")
        if st.error is not None:
            parts.append(f"its own refs could not be checked: {st.error}")
        return "; ".join(parts) or None

    @property
    def gone(self) -> bool:
        """True for an entry whose directory is gone (prunable) that holds nothing: no
        detached HEAD that no ref holds (or whose refs could not be checked), nothing in its
        admin directory (:attr:`admin_loss`). ``git worktree prune`` loses nothing with it."""
        wt = self.worktree
        return wt.prunable and not wt.bare and self.inputs.ref_error is None \
            and self.unreferenced_head is None and self.admin_loss is None

    @property
    def keeps(self) -> str:
        """Why retire keeps it, for "its worktree <path> ..." (:func:`keeps_text`)."""
        return keeps_text(self.retire, gone=self.gone)

    @property
    def idle_hours(self) -> float | None:
        """Hours since the last activity (the figure the reaper's window reads), or ``None``."""
        if self.inputs.activity is None:
            return None
        return max(self.inputs.now - self.inputs.activity, 0.0) / 3600.0

    def blocking_lines(self, verdict: WorktreeVerdict | None = None) -> list[str]:
        """One line per reason ``verdict`` (default: the retire one) keeps the worktree, naming
        each path that would be lost: ``SKIP_DIRTY: <path>``, ``SKIP_PROTECTED_IGNORED: <path>
        (<why>)``, ``SKIP_NESTED: <checkout>``, else ``<disposition>: <detail>``."""
        v = verdict or self.retire
        st, ig = self.status, self.inputs.base.ignored
        lines: list[str] = []
        for gate in v.blockers:
            if gate.name == "clean" and st is not None and st.dirty:
                lines += [f"SKIP_DIRTY: {p}" for p in (*st.tracked, *st.untracked)]
            elif gate.name == "no_nested" and st is not None:
                lines += [f"SKIP_NESTED: {n}" for n in nested_lines(self.inputs.base)]
            elif gate.name == "ignored_disposable" and ig is not None:
                # a checkout inside an ignored directory is already a SKIP_NESTED line
                said = {*ig.nested, *ig.unscanned}
                lines += [f"SKIP_PROTECTED_IGNORED: {b.path} ({b.reason})" for b in ig.blocking
                          if b.path not in said]
            else:
                lines.append(f"{gate.fails_as.value}: {gate.detail}")
        return lines

    @property
    def added_hours(self) -> float | None:
        """Hours since the worktree was added, or ``None`` when unknown."""
        if self.inputs.created is None:
            return None
        return max(self.inputs.now - self.inputs.created, 0.0) / 3600.0


@dataclass
class WorktreeContext:
    """What every worktree's facts share, gathered once per run: the repository, its worktrees
    (``worktree list`` order), the ignored-content rules, the inventory (or ``None``), the
    default branch's name, the holds by path, the HEAD commit times, the clock, the
    directory the command runs in, whether the reap disposition is judged, and what each
    linked worktree's admin directory holds (by path)."""

    facts: RepoFacts
    config: Config
    worktrees: list[Worktree]
    rules: IgnoredRules
    inventory: Inventory | None
    default_name: str | None
    holds: dict[str, hold_store.Hold]
    head_times: dict[Oid, float]
    settings: WorktreeSettings
    now: float
    self_path: Path | None
    #: whether the reap disposition is judged (an inventory was built, or none was needed)
    judge_reap: bool = False
    stores: dict[str, WorktreeStore] = field(default_factory=dict)

    def with_worktrees(self, worktrees: list[Worktree]) -> WorktreeContext:
        """The same context over a fresh ``worktree list`` (for a re-check before removal),
        the admin directories read again."""
        return replace(self, worktrees=worktrees, stores=read_stores(
            self.facts.root, self.facts.common_dir, worktrees))


def held_by(hold: hold_store.Hold | None) -> str | None:
    """The explicit-hold line a gate prints, or ``None`` (no hold, or an automatic one: an
    automatic hold records why an earlier retire failed and never stops a later one)."""
    if hold is None or hold.auto:
        return None
    return f"held by {hold.owner}: {hold.reason} (revisit: {hold.revisit})"


def worktree_context(facts: RepoFacts, config: Config, *, inventory: Inventory | None,
                     settings: WorktreeSettings = WorktreeSettings(),
                     worktrees: list[Worktree] | None = None,
                     judge_reap: bool | None = None,
                     default: DefaultBranch | None = None) -> WorktreeContext:
    """Gather the repository-wide facts (see the module docstring for the git processes).
    ``judge_reap`` defaults to "an inventory was given"; ``default``: the default branch
    when the caller already resolved it (the refs are then not listed again).

    Raises :class:`GitError` when listing worktrees or refs fails.
    """
    wts = list_worktrees(facts) if worktrees is None else worktrees
    b = config.branches
    if inventory is not None:
        default_name = inventory.default.name
    elif default is not None:
        default_name = default.name
    else:
        # names and the remote HEAD are all it reads: the lean listing (no commit opened)
        from branchkeeper.analysis.guard_facts import lean_refs_at

        default_name = resolve_default_branch(b.default, lean_refs_at(facts.root, b.remote)).name
    holds = {h.path: h for h in hold_store.list_holds(facts.common_dir)}
    times = _head_times(facts, wts, inventory)
    now = clock.now() if settings.now is None else settings.now
    self_path = facts.toplevel.resolve() if facts.toplevel is not None else None
    stores = read_stores(facts.root, facts.common_dir, wts)
    return WorktreeContext(facts, config, wts, IgnoredRules.from_config(
        config, polarity=settings.polarity), inventory, default_name, holds, times, settings,
        now, self_path, inventory is not None if judge_reap is None else judge_reap, stores)


def _head_times(facts: RepoFacts, worktrees: list[Worktree], inventory: Inventory | None
                ) -> dict[Oid, float]:
    """The committer date (unix s) of each worktree's ``HEAD``: a branch tip's from the
    inventory's record (read with the refs), the others in one ``git log --no-walk`` (none
    when every head is a tip); a head git cannot read has none."""
    heads = {w.head for w in worktrees if w.head is not None}
    times: dict[Oid, float] = {}
    if inventory is not None and heads:
        for r in inventory.records:
            if r.tip in heads and r.tip_date is not None:
                times[r.tip] = float(r.tip_date)
    with contextlib.suppress(GitError):
        times.update(commit_times(facts.root, [h for h in heads if h not in times]))
    return times


#: Why a worktree the budget did not reach has no status (its gates fail closed).
NOT_INSPECTED = "not inspected: the run's time budget was spent"
#: The survey's note when the deadline left worktrees unread (their work is not ruled out).
UNINSPECTED_NOTE = "worktree(s) not inspected within the time budget"


def gather(ctx: WorktreeContext, wt: Worktree, *, head_time: float | None = None,
           inspect: bool = True) -> ReapInputs:
    """Every fact the gates of both dispositions read for ``wt``: one ``git status`` (a
    present linked worktree), one ``for-each-ref --contains`` (a detached HEAD). A failing
    ``status`` fails this worktree's gates closed; it never stops the others'. Without
    ``inspect`` (a spent budget) no git runs and the gates fail closed with
    :data:`NOT_INSPECTED`."""
    status = ignored = None
    status_error = None
    store = ctx.stores.get(str(wt.path))
    submodules: tuple[str, ...] = ()
    if not inspect and not wt.prunable and not wt.bare and wt.path.is_dir():
        status_error = NOT_INSPECTED
    elif not wt.prunable and not wt.bare and wt.path.is_dir():
        try:
            status = worktree_status(wt.path, worktrees=ctx.worktrees, head_time=head_time,
                                     walk=ctx.settings.walk_all)
            ignored = classify_worktree_ignored(status, ctx.rules)
            if status.tracked or status.untracked or (ignored is not None and ignored.kept) \
                    or wt.branch is None:  # local-only work, or may be: its idle is shown
                status = with_files(status)
            if not wt.is_main:  # never removed: its submodules are not asked about
                submodules = initialised_submodules(wt.path, store)
        except (GitError, ValueError) as exc:
            status_error = f"could not read its status: {str(exc).splitlines()[0]}"
    remote_ref = local_ref = error = None
    # a prunable entry is read too: `git worktree prune` drops its HEAD with the entry
    if wt.branch is None and wt.head is not None and not wt.bare \
            and (status is not None or wt.prunable):
        try:
            remote_ref, local_ref = containing_refs(ctx.facts.root, wt.head)
        except GitError as exc:
            error = str(exc).splitlines()[0]
    name = wt.branch.removeprefix("refs/heads/") if wt.branch is not None else None
    record = ctx.inventory.by_name().get(name) if ctx.inventory is not None and name else None
    protected = protected_role(name, ctx.config.branches, ctx.default_name) if name else None
    base = RetireInputs(wt, ctx.self_path, status, ignored, held_by(ctx.holds.get(str(wt.path))),
                        remote_ref or local_ref, error, status_error, protected, store,
                        submodules)
    activity = status.activity if status is not None else None
    return ReapInputs(
        base=base, now=ctx.now, activity=activity.latest if activity and activity.walked else None,
        activity_capped=activity.files_capped if activity else False,
        created=activity.created if activity else None,
        window_hours=ctx.config.worktrees.activity_window_hours,
        min_age_hours=ctx.settings.min_age_hours, record=record, remote_ref=remote_ref,
        local_ref=local_ref, ref_error=error)


def judge(ctx: WorktreeContext, inputs: ReapInputs, *,
          asker: PrAsker | None = None) -> WorktreeRecord:
    """Both dispositions of one worktree from its ``inputs``. With an inventory, ``asker`` (if
    given) is asked for PR evidence when only the branch gate stands between the worktree and
    removal and the branch is pushed and unproven."""
    retire = evaluate(inputs.base, RETIRE_GATES)
    reap = None
    if ctx.judge_reap:
        reap = evaluate_reap(inputs)
        if asker is not None and needs_pr(inputs.record) \
                and [g.name for g in reap.blockers] == ["preserved"]:
            assert inputs.record is not None
            answer, degraded = asker.ask(inputs.record.name, inputs.record.local_tip)
            inputs = replace(inputs, pr=answer, pr_degraded=degraded)
            reap = evaluate_reap(inputs)
    hold = ctx.holds.get(str(inputs.base.worktree.path))
    return WorktreeRecord(inputs, retire, reap, hold)


def classify_worktrees(ctx: WorktreeContext, *, asker: PrAsker | None = None,
                       only: Sequence[Worktree] | None = None,
                       deadline: float | None = None) -> list[WorktreeRecord]:
    """The record of every worktree of ``ctx`` (or of ``only``), in ``worktree list`` order.

    ``deadline``: a ``time.monotonic()`` value past which no further worktree is inspected (its
    record says :data:`NOT_INSPECTED`). A degraded PR provider is said up front (free). Never
    raises for one worktree's failure (its gates fail closed).
    """
    if asker is not None and isinstance(asker.provider, NoProvider):
        asker.available()
    chosen = ctx.worktrees if only is None else list(only)
    meter = progress.current()  # captured: the reads run in worker threads

    def one(wt: Worktree) -> ReapInputs:
        inspect = deadline is None or time.monotonic() < deadline
        inputs = gather(ctx, wt, head_time=ctx.head_times.get(wt.head) if wt.head else None,
                        inspect=inspect)
        meter.advance()  # one more worktree read
        return inputs

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        gathered = list(pool.map(one, chosen))
    return [judge(ctx, inputs, asker=asker) for inputs in gathered]


@dataclass
class WorktreeSurvey:
    """Every worktree of a repository classified, plus what the run knows about it: the context
    (the inventory is ``None`` when there is no linked worktree, or none was asked for), the PR
    evidence line (``pr_note``; ``degraded`` is True when PR evidence was unavailable) and
    notes (the inventory's, unreadable holds)."""

    ctx: WorktreeContext
    records: list[WorktreeRecord]
    pr_note: str
    degraded: bool
    notes: list[str]

    @property
    def facts(self) -> RepoFacts:
        return self.ctx.facts

    @property
    def config(self) -> Config:
        return self.ctx.config

    @property
    def inventory(self) -> Inventory | None:
        return self.ctx.inventory


def survey_worktrees(facts: RepoFacts, config: Config, *, settings: WorktreeSettings,
                     asker: PrAsker | None, inventory: Inventory | None = None,
                     with_inventory: bool = True,
                     deadline: float | None = None,
                     worktrees: list[Worktree] | None = None,
                     default: DefaultBranch | None = None) -> WorktreeSurvey:
    """Classify every worktree (read-only). The inventory (bounded by
    ``branches.sweep.budget_ms``) is built here when ``with_inventory`` and none is given, and
    only when a linked worktree exists. ``deadline`` as for :func:`classify_worktrees` (the
    records it did not reach are counted in a note). ``worktrees`` and ``default``: the
    caller's own ``worktree list`` and resolved default branch, when it has them (each saves a
    git process). Raises :class:`GitError` when listing worktrees fails.
    """
    if asker is not None and isinstance(asker.provider, NoProvider):
        asker.available()  # free: degraded mode is known, and is said, up front
    worktrees = list_worktrees(facts) if worktrees is None else worktrees
    notes: list[str] = []
    if inventory is None and with_inventory and any(not w.is_main and not w.bare
                                                    for w in worktrees):
        from branchkeeper.analysis.inventory import build_inventory  # only when needed

        inventory = build_inventory(facts, config, budget_ms=config.branches.sweep.budget_ms)
        notes.extend(inventory.notes)  # an inventory given in is the caller's to report
    ctx = worktree_context(facts, config, inventory=inventory, settings=settings,
                           worktrees=worktrees, judge_reap=with_inventory or inventory is not None,
                           default=default)
    notes.extend(hold_store.take_notes())
    records = classify_worktrees(ctx, asker=asker, deadline=deadline)
    skipped = sum(1 for r in records if r.inputs.base.status_error == NOT_INSPECTED)
    if skipped:
        notes.append(f"{skipped} {UNINSPECTED_NOTE}")
    pr_note, degraded = asker.note if asker is not None else ("PR evidence: not asked", False)
    return WorktreeSurvey(ctx, records, pr_note, degraded, notes)


def prunable_at_risk(facts: RepoFacts, config: Config) -> list[WorktreeRecord]:
    """The records of the prunable worktrees (directory gone) ``git worktree prune`` would lose
    work with: a detached HEAD no ref holds (:attr:`WorktreeRecord.unreferenced_head`), or an
    admin directory holding what nothing else does (:attr:`WorktreeRecord.admin_loss`). One
    ``worktree list``; when a prunable entry exists, the context's reads and one
    ``for-each-ref --contains`` per detached one. Raises :class:`GitError` when listing
    worktrees or refs fails."""
    wts = list_worktrees(facts)
    prunable = [w for w in wts if w.prunable and not w.bare]
    if not prunable:
        return []
    ctx = worktree_context(facts, config, inventory=None, worktrees=wts, judge_reap=False)
    return [r for r in classify_worktrees(ctx, only=prunable)
            if r.unreferenced_head is not None or r.admin_loss is not None]
