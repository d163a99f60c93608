"""Gather the reaper's facts (read-only): the inventory, each worktree's contents and activity,
the containment of detached HEADs, and PR evidence where it decides (issue 4, section 3).

Git processes: one ``worktree list``, one inventory (batched, see
:mod:`branchkeeper.analysis.inventory`), one ``log --no-walk`` for every HEAD's commit time, then
per linked worktree one ``status`` (plus one ``for-each-ref --contains`` for a detached HEAD),
run on a small thread pool. PR evidence is asked only for a pushed, unproven branch whose other
gates all pass, so a degraded provider is probed at most once and only when it matters.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from branchkeeper import clock
from branchkeeper.analysis.inventory import Inventory, build_inventory
from branchkeeper.analysis.pr_evidence import GhProvider, NoProvider, PrAnswer, PrEvidence
from branchkeeper.analysis.reap_gates import ReapInputs, evaluate_reap, needs_pr
from branchkeeper.analysis.worktree_model import RetireInputs, WorktreeVerdict
from branchkeeper.analysis.worktree_status import (
    IgnoredRules,
    classify_worktree_ignored,
    commit_times,
    worktree_git_dir,
    worktree_status,
)
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.state import holds as hold_store

#: Threads that run per-worktree ``git status`` at once.
WORKERS = 4


@dataclass(frozen=True, slots=True)
class ReapSettings:
    """The options that change a verdict: ``strict_ignored``, ``min_age_hours`` (``None``: off),
    ``now`` (unix seconds; ``None``: the clock)."""

    strict_ignored: bool = False
    min_age_hours: float | None = None
    now: float | None = None


@dataclass
class ReapPlan:
    """Every worktree's inputs and verdict, in ``worktree list`` order, plus what the run knows
    about the repository: the inventory (``None`` when there is no linked worktree), the PR
    evidence note (``pr_note``; ``degraded`` is True when PR evidence is unavailable), notes."""

    facts: RepoFacts
    config: Config
    entries: list[tuple[ReapInputs, WorktreeVerdict]]
    inventory: Inventory | None
    rules: IgnoredRules
    pr_note: str
    degraded: bool
    notes: list[str] = field(default_factory=list)


def reap_rules(config: Config, *, strict: bool) -> IgnoredRules:
    """The ignored-content rules of the reaper: the configured rules, with the salvage list
    counted disposable (it is copied into the main worktree before any removal)."""
    rules = IgnoredRules.from_config(config, strict=strict)
    salvage = tuple(config.worktrees.salvage)
    return replace(rules, agent_state_disposable=rules.agent_state_disposable + salvage)


def _reflog_times(git_dir: Path | None) -> tuple[float | None, float | None]:
    """(first, last) entry times of ``<git_dir>/logs/HEAD`` (unix seconds), ``None`` if absent."""
    if git_dir is None:
        return None, None
    try:
        data = (git_dir / "logs" / "HEAD").read_bytes()
    except OSError:
        return None, None
    stamps: list[float] = []
    lines = [ln for ln in data.split(b"\n") if ln]
    for line in (lines[:1] + lines[-1:]) if lines else []:
        head = line.split(b"\t", 1)[0].split()
        try:
            stamps.append(float(head[-2]))
        except (IndexError, ValueError):
            stamps.append(float("nan"))
    if not stamps:
        return None, None
    first, last = stamps[0], stamps[-1]
    return (None if first != first else first), (None if last != last else last)


def _created(git_dir: Path | None, first_reflog: float | None) -> float | None:
    if first_reflog is not None:
        return first_reflog
    if git_dir is None:
        return None
    try:
        return (git_dir / "commondir").stat().st_mtime
    except OSError:
        return None


def containing_refs(root: Path, oid: Oid) -> tuple[str | None, str | None]:
    """(a remote-tracking ref containing ``oid``, else a local ref containing it) in one
    ``for-each-ref --contains``. Raises :class:`GitError` when git fails."""
    out = run_git(["for-each-ref", "--contains", str(oid), "--format=%(refname)",
                   "refs/remotes", "refs/heads", "refs/tags", "refs/branchkeeper"],
                  cwd=root).text.split("\n")
    refs = [r for r in out if r]
    remote = next((r for r in refs if r.startswith("refs/remotes/")
                   and not r.endswith("/HEAD")), None)
    local = None if remote is not None else next(iter(refs), None)
    return remote, local


def gather_one(facts: RepoFacts, wt: Worktree, *, worktrees: Sequence[Worktree],
               rules: IgnoredRules, inventory: Inventory | None, held_by: str | None,
               settings: ReapSettings, window_hours: float,
               head_time: float | None) -> ReapInputs:
    """The reap facts of one worktree (one ``status``; one ``for-each-ref`` when detached).

    Raises :class:`GitError` when ``git status`` fails on a present directory.
    """
    now = clock.now() if settings.now is None else settings.now
    self_path = facts.toplevel.resolve() if facts.toplevel is not None else None
    status = ignored = None
    activity = created = None
    capped = False
    status_error = None
    if not wt.prunable and wt.path.is_dir() and not wt.bare:
        try:
            status = worktree_status(wt.path, worktrees=worktrees, head_time=head_time)
        except GitError as exc:  # fail this worktree's gates closed, keep reaping the others
            status_error = f"could not read its status: {str(exc).splitlines()[0]}"
    if status is not None:
        ignored = classify_worktree_ignored(status, rules)
        git_dir = worktree_git_dir(wt.path)
        first, last = _reflog_times(git_dir)
        known = [t for t in (status.activity.files, last, status.activity.commit)
                 if t is not None]
        activity = max(known) if known else None
        capped = status.activity.files_capped
        created = _created(git_dir, first)
    remote_ref = local_ref = error = None
    if wt.branch is None and wt.head is not None and not wt.bare and status is not None:
        try:
            remote_ref, local_ref = containing_refs(facts.root, wt.head)
        except GitError as exc:
            error = str(exc).splitlines()[0]
    record = None
    if inventory is not None and wt.branch is not None:
        record = inventory.by_name().get(wt.branch.removeprefix("refs/heads/"))
    base = RetireInputs(wt, self_path, status, ignored, held_by, remote_ref or local_ref, error,
                        status_error)
    return ReapInputs(base=base, now=now, activity=activity, activity_capped=capped,
                      created=created, window_hours=window_hours,
                      min_age_hours=settings.min_age_hours, record=record,
                      remote_ref=remote_ref, local_ref=local_ref, ref_error=error)


def _held_by(hold: hold_store.Hold | None) -> str | None:
    if hold is None or hold.auto:
        return None
    return f"held by {hold.owner}: {hold.reason} (revisit: {hold.revisit})"


class PrAsker:
    """Asks ``provider`` lazily: the first question probes availability once; afterwards
    :attr:`note` says whether the run had PR evidence (``degraded``)."""

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


def plan_reap(facts: RepoFacts, config: Config, *, settings: ReapSettings,
              asker: PrAsker) -> ReapPlan:
    """Evaluate every worktree of the repository against the reap gates (read-only).

    Raises :class:`GitError` when listing worktrees or a worktree's ``status`` fails.
    """
    if isinstance(asker.provider, NoProvider):
        asker.available()  # free: degraded mode is known, and is said, up front
    worktrees = list_worktrees(facts)
    rules = reap_rules(config, strict=settings.strict_ignored)
    linked = [w for w in worktrees if not w.is_main and not w.bare]
    inventory = None
    notes: list[str] = []
    if linked:
        inventory = build_inventory(facts, config, budget_ms=config.branches.sweep.budget_ms)
        notes.extend(inventory.notes)
    holds = {h.path: h for h in hold_store.list_holds(facts.common_dir)}
    notes.extend(hold_store.take_notes())
    try:
        times = commit_times(facts.root, [w.head for w in worktrees if w.head is not None])
    except GitError:
        times = {}
    window = config.worktrees.activity_window_hours

    def one(wt: Worktree) -> ReapInputs:
        return gather_one(facts, wt, worktrees=worktrees, rules=rules, inventory=inventory,
                          held_by=_held_by(holds.get(str(wt.path))), settings=settings,
                          window_hours=window,
                          head_time=times.get(wt.head) if wt.head is not None else None)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        gathered = list(pool.map(one, worktrees))
    entries: list[tuple[ReapInputs, WorktreeVerdict]] = []
    for inputs in gathered:
        verdict = evaluate_reap(inputs)
        if needs_pr(inputs.record) and [g.name for g in verdict.blockers] == ["preserved"]:
            assert inputs.record is not None
            answer, degraded = asker.ask(inputs.record.name, inputs.record.local_tip)
            inputs = replace(inputs, pr=answer, pr_degraded=degraded)
            verdict = evaluate_reap(inputs)
        entries.append((inputs, verdict))
    if asker.probed is None:
        pr_note, degraded_run = "PR evidence: not needed", False
    else:
        ok, why = asker.probed
        pr_note = f"PR evidence: {why}" if ok else f"degraded mode: {why}"
        degraded_run = not ok
    return ReapPlan(facts, config, entries, inventory, rules, pr_note, degraded_run, notes)
