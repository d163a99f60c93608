"""``worktree reap``: remove the worktrees every reap gate passes, and (opt-in) archive the
unproven ones first (issue 4, section 3; second document, "the automatic reaper" and "The
unproven class: archive, don't accumulate"; DESIGN.md guarantees 1-5).

For each candidate, under the mutation lock: re-gather and re-evaluate every gate (the HEAD and
the branch tip must not have moved), salvage the configured agent-state files into the main
worktree (a failed salvage blocks the removal), for an archive write and verify a bundle of every
commit unique to the branch, journal the step, then ``git worktree remove`` WITHOUT ``--force``
(git itself refuses a tree that became dirty). The branch is never deleted; the directory is
never deleted by hand.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from branchkeeper.actions.bundle import BundleError, create_bundle
from branchkeeper.actions.refupdate import RefOutcome, create_refs
from branchkeeper.analysis.reap_facts import ReapPlan, ReapSettings, gather_one
from branchkeeper.analysis.reap_gates import ReapInputs, archivable, evaluate_reap
from branchkeeper.analysis.worktree_model import Disposition, WorktreeVerdict
from branchkeeper.git.repo import Worktree, list_worktrees
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.bundles import BundleInfo
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import Journal, JournalItem, OpStatus
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock


class Outcome(StrEnum):
    """What the reaper did with one worktree."""

    REMOVED = "removed"
    ARCHIVED = "archived"
    WOULD_REMOVE = "would_remove"
    WOULD_ARCHIVE = "would_archive"
    KEPT = "kept"
    RACED = "raced"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ReapResult:
    """One worktree's result: its verdict (the disposition that decided), the outcome, a
    one-line ``detail``, the shell-quoted commands that restore it (``restore``), the bundle of
    an archive, the journal operation id, and the salvaged files (main-worktree paths)."""

    verdict: WorktreeVerdict
    outcome: Outcome
    detail: str
    restore: tuple[str, ...] = ()
    bundle: BundleInfo | None = None
    op_id: str | None = None
    salvaged: tuple[str, ...] = field(default=())


@dataclass
class ReapHooks:
    """Test seams: ``after_check`` runs after the plan's evaluation and before the re-check;
    ``before_remove`` runs after the re-check, right before ``git worktree remove``."""

    after_check: Callable[[Worktree], None] | None = None
    before_remove: Callable[[Worktree], None] | None = None


#: The hooks :func:`execute_reap` uses when none are passed (tests replace it).
DEFAULT_HOOKS = ReapHooks()


class SalvageError(Exception):
    """A salvage copy failed; the removal is blocked."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def _salvage_file(src: Path, dst: Path, tag: str) -> Path | None:
    if dst.is_file() and dst.read_bytes() == src.read_bytes():
        return None
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists():
        shutil.copy2(src, dst)
        return dst
    if dst.suffix == ".jsonl" and dst.is_file():
        data, have = src.read_bytes(), dst.read_bytes()
        if data in have:
            return None  # salvaged by an earlier run
        with dst.open("ab") as fh:
            fh.write((b"" if not have or have.endswith(b"\n") else b"\n") + data)
        return dst
    other = dst.with_name(f"{dst.name}.{tag}-{_digest(src)}")
    if other.exists():
        return None
    shutil.copy2(src, other)
    return other


def salvage(wt_path: Path, main_root: Path, *, agent_dir: str, paths: list[str]) -> list[Path]:
    """Copy each of ``paths`` (relative to ``agent_dir``) from the worktree at ``wt_path`` into
    ``main_root/agent_dir``: a new file is copied, a ``.jsonl`` file is appended to, any other
    file that differs is copied beside it with a suffix; different content is never overwritten.
    Returns the main-worktree paths written. Raises :class:`SalvageError` on any failure."""
    written: list[Path] = []
    tag = "".join(c if c.isalnum() or c in "-_" else "-" for c in wt_path.name)[:40]
    for rel in paths:
        src = wt_path / agent_dir / rel
        dst = main_root / agent_dir / rel
        try:
            if src.is_symlink() or not src.exists():
                continue
            if src.is_dir():
                target = dst if not dst.exists() else dst.with_name(f"{dst.name}.{tag}")
                if target.exists():
                    raise SalvageError(f"{target} already exists")
                shutil.copytree(src, target, symlinks=True)
                written.append(target)
                continue
            out = _salvage_file(src, dst, tag)
            if out is not None:
                written.append(out)
        except OSError as exc:
            raise SalvageError(f"could not salvage {agent_dir}/{rel}: {exc}") from None
    return written


def _restore_add(wt: Worktree) -> str:
    if wt.branch is not None:
        return shlex.join(["git", "worktree", "add", str(wt.path),
                           wt.branch.removeprefix("refs/heads/")])
    return shlex.join(["git", "worktree", "add", "--detach", str(wt.path), str(wt.head)])


def _fresh(plan: ReapPlan, inputs: ReapInputs) -> tuple[ReapInputs | None, str]:
    """Re-gather one worktree; (None, why) when its HEAD or branch tip moved."""
    wt = inputs.base.worktree
    now_list = {w.path: w for w in list_worktrees(plan.facts)}
    cur = now_list.get(wt.path)
    if cur is None:
        return None, "the worktree is gone from git worktree list"
    if cur.head != wt.head or cur.branch != wt.branch:
        return None, f"HEAD moved from {wt.head.short if wt.head else '-'} since the check"
    rec = inputs.record
    if rec is not None and rec.local_tip is not None and rec.local_tip != cur.head:
        return None, "the branch tip differs from the proven tip"
    again = gather_one(plan.facts, cur, worktrees=list(now_list.values()), rules=plan.rules,
                       inventory=plan.inventory, held_by=inputs.base.held_by,
                       settings=ReapSettings(min_age_hours=inputs.min_age_hours),
                       window_hours=inputs.window_hours, head_time=None)
    return replace(again, pr=inputs.pr, pr_degraded=inputs.pr_degraded), ""


def _default_base(plan: ReapPlan) -> Oid | None:
    if plan.inventory is None:
        return None
    bases = [b for b in plan.inventory.bases if b.kind == "default"]
    return bases[0].oid if bases else None


def _one(plan: ReapPlan, inputs: ReapInputs, verdict: WorktreeVerdict, *, archive: bool,
         hooks: ReapHooks, journal: Journal) -> ReapResult:
    wt = verdict.worktree
    if hooks.after_check is not None:
        hooks.after_check(wt)
    fresh, why = _fresh(plan, inputs)
    if fresh is None:
        return ReapResult(verdict, Outcome.RACED, why)
    again = evaluate_reap(fresh)
    ok = again.disposition is Disposition.REMOVABLE or (archive and archivable(again))
    if not ok or again.disposition is not verdict.disposition:
        return ReapResult(again, Outcome.RACED, f"re-check: {again.disposition.value}: "
                          f"{again.reason}")
    cfg = plan.config.worktrees
    try:
        salvaged = salvage(wt.path, plan.facts.main_root, agent_dir=cfg.agent_state_dir,
                           paths=list(cfg.salvage))
    except SalvageError as exc:
        return ReapResult(again, Outcome.FAILED, f"salvage failed, kept: {exc}")
    shown = tuple(str(p) for p in salvaged)
    restore = [_restore_add(wt)]
    bundle = None
    if again.disposition is Disposition.REMOVABLE:
        op = "worktree-remove"
        if wt.branch is not None:
            ref = wt.branch
        else:
            # A detached HEAD is pinned under our own namespace before its checkout goes: the
            # journal then names a ref of ours (never someone's remote-tracking ref), and the
            # commit stays reachable even if the remote branch that held it is deleted later.
            assert wt.head is not None
            ref = f"refs/branchkeeper/reaped/{wt.path.name}-{wt.head[:10]}"
            pinned = create_refs(plan.facts.root, {ref: wt.head}, must_not_exist=False)[ref]
            if pinned.outcome not in (RefOutcome.CREATED, RefOutcome.PRESENT):
                return ReapResult(again, Outcome.FAILED,
                                  f"could not pin the detached HEAD, kept: {pinned.reason}")
    else:
        assert wt.branch is not None and wt.head is not None
        ref, op = wt.branch, "archive"
        try:
            bundle = create_bundle(plan.facts.root, plan.facts.common_dir, {ref: wt.head},
                                   base=_default_base(plan), label=f"archive-{wt.path.name}")
        except BundleError as exc:
            return ReapResult(again, Outcome.FAILED, f"bundle failed, kept: {exc}",
                              salvaged=shown)
        restore.insert(0, bundle.restore_command(ref))
        fault("archive.after_bundle")
    assert wt.head is not None
    op_id = journal.begin(op, [JournalItem(ref, wt.head, None, " && ".join(restore))],
                          bundle=bundle, note=f"worktree {wt.path} removed; branch kept")
    step = "reap" if bundle is None else "archive"
    fault(f"{step}.after_begin")
    if hooks.before_remove is not None:
        hooks.before_remove(wt)
    # Never --force: git refuses a tree that became dirty after the re-check (guarantee 4).
    removed = run_git(["worktree", "remove", str(wt.path)], cwd=plan.facts.root, check=False)
    fault(f"{step}.after_remove")
    if removed.returncode != 0:
        journal.end(op_id, OpStatus.FAILED)
        msg = removed.stderr.decode("utf-8", "replace").strip().splitlines()
        return ReapResult(again, Outcome.FAILED, "git refused, kept: "
                          + (msg[-1] if msg else f"exit {removed.returncode}"),
                          bundle=bundle, op_id=op_id, salvaged=shown)
    journal.end(op_id, OpStatus.DONE)
    outcome = Outcome.REMOVED if bundle is None else Outcome.ARCHIVED
    detail = "removed; branch kept" if bundle is None else "archived and removed; branch kept"
    return ReapResult(again, outcome, detail, tuple(restore), bundle, op_id, shown)


def execute_reap(plan: ReapPlan, *, dry_run: bool, archive: bool,
                 hooks: ReapHooks | None = None, lock_wait_s: float = 10.0) -> list[ReapResult]:
    """Act on ``plan``: remove every REMOVABLE worktree and, with ``archive``, archive then remove
    every archivable one (:func:`branchkeeper.analysis.reap_gates.archivable`). With ``dry_run``
    nothing changes and candidates are reported as ``would_remove``/``would_archive``. Returns
    one :class:`ReapResult` per worktree, in plan order. Raises ``LockBusyError`` when another
    mutating command holds the lock past ``lock_wait_s`` seconds.
    """
    hooks = hooks or DEFAULT_HOOKS
    results: list[ReapResult] = []

    def candidate(v: WorktreeVerdict) -> Outcome | None:
        if v.disposition is Disposition.REMOVABLE:
            return Outcome.WOULD_REMOVE
        if archive and archivable(v):
            return Outcome.WOULD_ARCHIVE
        return None

    if dry_run or not any(candidate(v) for _, v in plan.entries):
        for _, v in plan.entries:
            which = candidate(v)
            results.append(ReapResult(v, which or Outcome.KEPT, v.reason))
        return results
    journal = Journal(plan.facts.common_dir)
    with repo_lock(plan.facts.common_dir, MUTATION_LOCK, wait_s=lock_wait_s):
        for inputs, v in plan.entries:
            if candidate(v) is None:
                results.append(ReapResult(v, Outcome.KEPT, v.reason))
            else:
                results.append(_one(plan, inputs, v, archive=archive, hooks=hooks,
                                    journal=journal))
    return results
