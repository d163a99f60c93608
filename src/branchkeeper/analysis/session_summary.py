"""What the SessionStart hook reports: the inventory inside its budget, with the last sweep
standing in where the budget ran out (first document, sections 2 and 4; issue 6, section 1).

:func:`session_summary` builds one inventory with ``branches.sweep.budget_ms``. A branch the
budget did not reach (state ``unknown``, reason budget) takes its state from the previous
sweep's summary (``last-sweep.json``) when its tip has not moved since; otherwise it stays
unknown and is only counted. Holds and the branches abandoned at stop are read here too (the
latter are taken: reported once), and the local-only work that is not a branch (one worktree
record per worktree, inside what is left of the budget; the stashes; our refs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.analysis.lost_work import LostKind, LostWork, inventory_lost_work
from branchkeeper.git.repo import RepoFacts
from branchkeeper.model.config import Config
from branchkeeper.model.records import BranchState
from branchkeeper.state.abandoned import Abandoned, take_abandoned
from branchkeeper.state.holds import Hold, list_holds
from branchkeeper.state.last_sweep import read_last_sweep


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One branch as SessionStart sees it. ``state``, ``stage`` and ``containment`` are the
    enum values as text (``stage``/``containment`` may be None); ``cached`` is True when they
    come from the last sweep because this one's budget ran out."""

    name: str
    state: str
    stage: str | None
    containment: str | None
    age_days: float | None
    worktree: str | None
    cached: bool = False


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """Rows sorted by name, the remote, counts of ``unknown`` rows left after the cache, the
    open holds, the branches abandoned at stop since the last SessionStart, the elapsed wall
    time of the inventory in milliseconds, and the other kinds of LOST WORK RISK."""

    rows: tuple[SummaryRow, ...]
    remote: str
    unknown: int
    holds: tuple[Hold, ...]
    abandoned: tuple[Abandoned, ...]
    elapsed_ms: int
    #: local-only work that is not a branch (detached commits, dirty worktrees, stashes, our
    #: refs, kept ignored files): the branches come from ``rows``
    lost: tuple[LostWork, ...] = ()


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
                    take_abandoned_entries: bool = True) -> SessionSummary:
    """Inventory within ``budget_ms`` milliseconds plus holds and abandoned-at-stop entries.

    Raises :class:`~branchkeeper.git.run.GitError` when the ref listing fails.
    """
    common: Path = facts.common_dir
    started = time.monotonic()
    last = read_last_sweep(common)  # read BEFORE the new inventory overwrites it
    inv = build_inventory(facts, config, budget_ms=budget_ms)
    # the worktrees inside what is left of the budget (at least a quarter of it)
    deadline = max(started + budget_ms / 1000.0, time.monotonic() + budget_ms / 4000.0)
    lost, _notes = inventory_lost_work(inv, deadline=deadline)
    rows: list[SummaryRow] = []
    unknown = 0
    for r in inv.records:
        row: SummaryRow | None = None
        if _budget_unknown(r.state, r.reason):
            row = _cached_row(r.name, r.tip, last.get(r.name))
        if row is None:
            row = SummaryRow(r.name, r.state.value, r.stage.value if r.stage else None,
                             r.containment.value if r.containment else None, r.age_days,
                             r.worktree)
        if row.state == BranchState.UNKNOWN.value:
            unknown += 1
        rows.append(row)
    holds = tuple(list_holds(common))
    abandoned = tuple(take_abandoned(common)) if take_abandoned_entries else ()
    return SessionSummary(tuple(rows), inv.remote, unknown, holds, abandoned,
                          int(inv.elapsed_s * 1000),
                          tuple(i for i in lost if i.kind is not LostKind.UNPUSHED_BRANCH))
