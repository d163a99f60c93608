"""What the SessionStart hook reports: the inventory inside its budget, with the last sweep
standing in where the budget ran out (first document, sections 2 and 4; issue 6, section 1;
issue 16, "SessionStart at 5,000 branches <= 0.5 s warm").

:func:`session_summary` first asks whether the last sweep (``last-sweep.json``) still describes
the repository whole: taken of these very refs (its ``refs`` key equals the key of one lean
``for-each-ref`` now), with this configuration (``config`` key), and ``complete`` (the budget
left no branch unknown). Then its rows are the summary, with no inventory: ages are brought
forward to now, and the states and stages that ages decide (live or dormant; a dormant or
superseded branch's stage) are decided again with the classifier's own stage function
(``model.records.stager``); the worktree of each branch is read again (one ``worktree
list``). Otherwise it builds one
inventory with ``branches.sweep.budget_ms``; a branch that budget did not reach (state
``unknown``, reason budget) takes its state from the previous sweep's row when its tip has not
moved since, else stays unknown and is only counted. Holds and the branches abandoned at stop
are read here too (the latter are taken: reported once), and, on either path, the local-only
work that is not a branch (one worktree record per worktree, inside what is left of the
budget; the stashes; our refs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from branchkeeper import clock
from branchkeeper.analysis.lost_work import LostKind, LostWork
from branchkeeper.model.records import BranchState, stager
from branchkeeper.state.abandoned import Abandoned, take_abandoned
from branchkeeper.state.holds import Hold, list_holds
from branchkeeper.state.last_sweep import MAX_AGE_DAYS, read_last_sweep

if TYPE_CHECKING:
    from branchkeeper.analysis.guard_facts import LeanRefs
    from branchkeeper.analysis.refs import DefaultBranch
    from branchkeeper.analysis.worktree_record import WorktreeRecord
    from branchkeeper.git.repo import RepoFacts, Worktree
    from branchkeeper.model.config import Config
    from branchkeeper.model.records import Stage


class SummaryRow(NamedTuple):  # thousands per SessionStart: a tuple is cheap to build
    """One branch as SessionStart sees it. ``state``, ``stage`` and ``containment`` are the
    enum values as text (``stage``/``containment`` may be None); ``cached`` is True when they
    come from the last sweep (the whole summary, or a branch this inventory's budget did not
    reach)."""

    name: str
    state: str
    stage: str | None
    containment: str | None
    age_days: float | None
    worktree: str | None
    cached: bool = False


class SessionSummary(NamedTuple):
    """Rows sorted by name, the remote, counts of ``unknown`` rows left after the cache, the
    open holds, the branches abandoned at stop since the last SessionStart, the elapsed wall
    time of the inventory (or of reading the current sweep) in milliseconds, and the other
    kinds of LOST WORK RISK."""

    rows: tuple[SummaryRow, ...]
    remote: str
    unknown: int
    holds: tuple[Hold, ...]
    abandoned: tuple[Abandoned, ...]
    elapsed_ms: int
    #: local-only work that is not a branch (detached commits, dirty worktrees, stashes, our
    #: refs, kept ignored files): the branches come from ``rows``
    lost: tuple[LostWork, ...] = ()
    #: branches with no row: the budget did not reach them and no sweep before knew them at
    #: their tip ("not yet classified")
    unclassified: int = 0
    #: the background pass (``"running"``, ``"failed: ..."``; ``""``: none, or it finished)
    passing: str = ""
    #: the default branch as resolved from the refs read, and the ``<remote>/HEAD`` target
    #: they were read with (``""``: none); None when no refs were read
    default: DefaultBranch | None = None
    remote_head: str = ""
    #: every worktree, main first, as read for the rows (empty when none was read)
    worktrees: tuple[Worktree, ...] = ()


def _budget_unknown(state: BranchState, reason: str) -> bool:
    return state is BranchState.UNKNOWN and "budget" in reason


def _cached_row(name: str, tip: str | None, entry: list[object] | None) -> SummaryRow | None:
    if entry is None or tip is None or entry[0] != tip or not isinstance(entry[1], str):
        return None
    stage, containment, age, worktree = entry[2], entry[3], entry[4], entry[5]
    return SummaryRow(name, entry[1], stage if isinstance(stage, str) else None,
                      containment if isinstance(containment, str) else None,
                      float(age) if isinstance(age, int | float) else None,
                      worktree if isinstance(worktree, str) else None, cached=True)


def session_summary(facts: RepoFacts, config: Config, *, budget_ms: int,
                    take_abandoned_entries: bool = True,
                    full_config: Callable[[], Config] | None = None,
                    background: Callable[[float], str] | None = None) -> SessionSummary:
    """The current last sweep's rows, or an inventory within ``budget_ms`` milliseconds (see
    the module docstring); plus holds and abandoned-at-stop entries. ``config`` may be the
    cached view of the configuration; ``full_config`` (when given) loads the validated model
    the inventory is then built with. One ``worktree list`` serves the rows and the survey of
    local-only work (the summary carries it, with the default branch it resolved).

    ``background`` (seconds to wait -> how it went: ``"finished"``, ``"running"``, ``"failed:
    ..."``) continues the pass in another process: given, a repository of more than
    ``branches.sweep.session_inline_max`` branches whose last sweep is not current never runs
    the inventory here. It waits at most three quarters of the budget; then, unless the pass
    finished, the rows are what the last sweep knows of the branches still at its tips and
    the rest are counted in ``unclassified`` (first document, section 2).

    Raises :class:`~branchkeeper.git.run.GitError` when the ref listing fails.
    """
    started = time.monotonic()
    common: Path = facts.common_dir
    deadline = started + budget_ms / 1000.0
    unclassified, passing = 0, ""
    if background is None:
        current = current_sweep_rows(facts, config)
    else:
        from branchkeeper.analysis.guard_facts import lean_refs_at

        lean = lean_refs_at(facts.root, config.branches.remote)
        current = current_sweep_rows(facts, config, lean=lean)
        if current is None and len(lean.local.keys() | lean.remote.keys()) \
                > config.branches.sweep.session_inline_max:
            passing = background(max(0.0, started + 0.75 * budget_ms / 1000.0
                                     - time.monotonic()))
            current = current_sweep_rows(facts, config, lean=lean)
            if current is None:
                from branchkeeper.analysis.refs import resolve_default_branch
                from branchkeeper.git.repo import list_worktrees

                known, unclassified = known_rows(facts, config, lean)
                current = CurrentSweep(known, bool(lean.remote),
                                       resolve_default_branch(config.branches.default, lean),
                                       lean.remote_head, list_worktrees(facts))
            else:
                passing = ""
    if current is not None:
        rows, default, remote_head = current.rows, current.default, current.remote_head
        wts = current.worktrees
        lost = _lost_work(facts, config, deadline, current.remote_branches,
                          worktrees=current.worktrees, default=default)
    else:
        model = full_config() if full_config is not None else config
        rows, lost, unclassified, default, remote_head, wts = _inventory_rows(
            facts, model, budget_ms, started)
    unknown = sum(1 for r in rows if r.state == _UNKNOWN)
    holds = tuple(list_holds(common))
    abandoned = tuple(take_abandoned(common)) if take_abandoned_entries else ()
    return SessionSummary(tuple(rows), config.branches.remote, unknown, holds, abandoned,
                          int((time.monotonic() - started) * 1000),
                          tuple(i for i in lost if i.kind is not LostKind.UNPUSHED_BRANCH),
                          unclassified, passing, default, remote_head, tuple(wts))


_UNKNOWN = BranchState.UNKNOWN.value
_STATES = frozenset(s.value for s in BranchState)
#: The states an age decides (with no stage a work branch is live, with one dormant), and
#: the states whose records carry a stage (section 4, "Stages").
_AGED = frozenset({BranchState.LIVE.value, BranchState.DORMANT.value})
_STAGED = frozenset({BranchState.DORMANT.value, BranchState.SUPERSEDED.value})
_DAY = 86400.0


def _inventory_rows(facts: RepoFacts, config: Config, budget_ms: int, started: float
                    ) -> tuple[list[SummaryRow], list[LostWork], int, DefaultBranch, str,
                               list[Worktree]]:
    from branchkeeper.analysis.inventory import build_inventory, record_sweep
    from branchkeeper.analysis.lost_work import survey_local_work, worktree_risks

    last = read_last_sweep(facts.common_dir)  # read BEFORE the new inventory overwrites it
    inv = build_inventory(facts, config, budget_ms=budget_ms, record=False, reuse=True)
    # the worktrees inside what is left of the budget (at least a quarter of it); the
    # last-sweep file is written once they are read, with what they hold
    deadline = max(started + budget_ms / 1000.0, time.monotonic() + budget_ms / 4000.0)
    worktrees: list[WorktreeRecord] = []
    risks = None
    try:
        work = survey_local_work(inv, deadline=deadline)
        worktrees, risks = work.worktrees, worktree_risks(work.lost)
    finally:
        record_sweep(inv, worktrees, risks)
    lost = work.lost
    rows: list[SummaryRow] = []
    unclassified = 0
    for r in inv.records:
        row: SummaryRow | None = None
        if _budget_unknown(r.state, r.reason):
            row = _cached_row(r.name, r.tip, last.get(r.name))
            if row is None or row.state == _UNKNOWN:
                unclassified += 1
                continue
        if row is None:
            row = SummaryRow(r.name, r.state.value, r.stage.value if r.stage else None,
                             r.containment.value if r.containment else None, r.age_days,
                             r.worktree)
        rows.append(row)
    return rows, lost, unclassified, inv.default, inv.remote_head, inv.worktrees


def _lost_work(facts: RepoFacts, config: Config, deadline: float, remote_branches: bool, *,
               worktrees: list[Worktree], default: DefaultBranch) -> list[LostWork]:
    """The local-only work that is not a branch, without an inventory (the worktree records
    need none for it): the worktrees (``worktrees``, already listed; ``default``: the default
    branch already resolved) inside ``deadline`` (at least a quarter of the budget from now),
    the stashes, our refs. The remote counts as configured as the inventory counts it: it has
    a URL, or (``remote_branches``) branches under it."""
    from branchkeeper.analysis.lost_work import read_lost_work
    from branchkeeper.analysis.worktree_record import WorktreeSettings, survey_worktrees
    from branchkeeper.git.repo import read_remote_config

    budget_s = config.branches.sweep.budget_ms / 1000.0
    survey = survey_worktrees(facts, config, settings=WorktreeSettings(walk_all=False),
                              asker=None, with_inventory=False,
                              deadline=max(deadline, time.monotonic() + budget_s / 4),
                              worktrees=worktrees, default=default)
    remote = config.branches.remote
    configured = remote_branches or read_remote_config(facts.root, remote).configured
    return read_lost_work(facts.root, [], survey.records, remote=remote if configured else None,
                          now=clock.now())


class CurrentSweep(NamedTuple):
    """The rows of a current last sweep (sorted by name, brought to now), whether the
    configured remote has branches, the default branch resolved from the same refs and the
    ``<remote>/HEAD`` target (``""``: none) they were read with (one ``for-each-ref``)."""

    rows: list[SummaryRow]
    remote_branches: bool
    default: DefaultBranch
    remote_head: str
    #: the ``worktree list`` the rows' worktree column was read from
    worktrees: list[Worktree]


def current_sweep_rows(facts: RepoFacts, config: Config, *, lean: LeanRefs | None = None,
                       worktrees: list[Worktree] | None = None) -> CurrentSweep | None:
    """The last sweep's rows, sorted by name and brought to now, when that sweep still
    describes the repository whole (same refs, same configuration, complete; see the module
    docstring); None when it does not, or when any row is malformed. Two git processes (one
    lean ``for-each-ref`` unless ``lean`` is the listing already read, one ``worktree
    list`` unless ``worktrees`` is), no inventory.

    Raises :class:`~branchkeeper.git.run.GitError` when the refs cannot be listed.
    """
    from branchkeeper.analysis.guard_facts import lean_refs_at
    from branchkeeper.analysis.refs import resolve_default_branch
    from branchkeeper.git.repo import branch_worktrees, list_worktrees
    from branchkeeper.state.config_cache import config_key
    from branchkeeper.state.last_sweep import read_sweep_file, refs_key

    data = read_sweep_file(facts.common_dir)
    if data is None or data.get("complete") is not True \
            or data.get("config") != config_key(config):
        return None
    if lean is None:
        lean = lean_refs_at(facts.root, config.branches.remote)
    written = data.get("time")
    if data.get("refs") != refs_key(lean.remote_head, lean.local, lean.remote) \
            or type(written) is not int:
        return None
    elapsed = max(0.0, (clock.now() - written) / _DAY)
    wts = list_worktrees(facts) if worktrees is None else worktrees
    worktree_of = branch_worktrees(wts)
    stage_of = stager(config)
    rows: list[SummaryRow] = []
    table = data["branches"]
    assert isinstance(table, dict)  # read_sweep_file checked it
    for name in sorted(table):
        row = _brought_forward(name, table[name], elapsed, stage_of, worktree_of.get(name))
        if row is None:
            return None
        rows.append(row)
    return CurrentSweep(rows, bool(lean.remote),
                        resolve_default_branch(config.branches.default, lean), lean.remote_head,
                        wts)


def _brought_forward(name: str, entry: object, elapsed: float,
                     stage_of: Callable[[float], Stage | None], worktree: str | None
                     ) -> SummaryRow | None:
    """One row of a current sweep at now (None when malformed)."""
    if type(entry) is not list or len(entry) != 6:
        return None
    _, state, stage, containment, age, _ = entry
    if type(state) is not str or state not in _STATES:
        return None
    if age is not None and not (type(age) in (int, float) and 0 <= age < MAX_AGE_DAYS):
        return None
    days = None if age is None else age + elapsed
    if days is not None and state in _STAGED | _AGED:
        now_stage = stage_of(days)
        stage = now_stage.value if now_stage is not None else None
        if state in _AGED:
            state = BranchState.DORMANT.value if stage is not None else BranchState.LIVE.value
        if state not in _STAGED:
            stage = None
    return SummaryRow(name, state, stage if type(stage) is str else None,
                      containment if type(containment) is str else None, days, worktree,
                      cached=True)


def known_rows(facts: RepoFacts, config: Config, lean: LeanRefs
               ) -> tuple[list[SummaryRow], int]:
    """What the last sweep knows, without an inventory (the pass goes on elsewhere): the row
    of each branch still at the tip it recorded (ages brought to now), sorted by name, and the
    number of branches with none ("not yet classified": new, moved, or a row the last sweep
    left ``unknown`` while the pass was incomplete). No git process."""
    from branchkeeper.state.last_sweep import read_sweep_file

    data = read_sweep_file(facts.common_dir) or {}
    table = data.get("branches")
    written = data.get("time")
    elapsed = max(0.0, (clock.now() - written) / _DAY) if type(written) is int else 0.0
    complete = data.get("complete") is True
    stage_of = stager(config)
    tips = {**lean.remote, **lean.local}
    rows: list[SummaryRow] = []
    missing = 0
    for name in sorted(tips):
        entry = table.get(name) if isinstance(table, dict) else None
        row = None
        if type(entry) is list and len(entry) == 6 and entry[0] == tips[name]:
            row = _brought_forward(name, entry, elapsed, stage_of, _text(entry[5]))
        if row is None or (row.state == _UNKNOWN and not complete):
            missing += 1
            continue
        rows.append(row)
    return rows, missing


def _text(value: object) -> str | None:
    return value if type(value) is str else None
