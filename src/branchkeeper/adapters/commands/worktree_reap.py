"""``branchkeeper worktree reap`` (issue 4, section 3): the command-line face of
:mod:`branchkeeper.actions.reap`.

Exit codes: 0 the run completed (whatever was removed or kept; kept worktrees are reported);
4 an error (not a repository, git failed, lock busy); 5 ``--archive-unproven`` refused because
there is no PR evidence (``--no-gh``, gh not installed or not logged in).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from branchkeeper.actions.reap import Outcome, ReapResult, Saves, execute_reap
from branchkeeper.adapters.commands.argtypes import non_negative_float
from branchkeeper.adapters.commands.worktree_shared import show
from branchkeeper.adapters.common import add_ignored_options
from branchkeeper.analysis.pr_evidence import GhProvider, NoProvider, PrEvidence
from branchkeeper.analysis.reap_gates import ARCHIVE_DEFAULT_MIN_AGE_HOURS
from branchkeeper.analysis.worktree_model import Disposition
from branchkeeper.analysis.worktree_record import (
    PrAsker,
    WorktreeSettings,
    WorktreeSurvey,
    survey_worktrees,
)
from branchkeeper.errors import ExitCode, RefusedError
from branchkeeper.git.repo import repo_facts, worktree_counts
from branchkeeper.model.config_file import load_config

#: How long a reap waits for another cleanup to finish, in seconds.
REAP_LOCK_WAIT_S = 10.0


def register_reap(sub: Any) -> None:
    """Add ``worktree reap`` to the ``worktree`` subparsers."""
    p = sub.add_parser(
        "reap", help="remove every worktree the reap gates prove safe to remove",
        description="Remove linked worktrees that are unlocked, not this one, not the checkout "
                    "of the default branch or a line, idle past the activity window, clean, "
                    "holding no ignored file that is not regenerable, and whose branch is "
                    "proven preserved (or unpushed with no unique commits). Never forces, never "
                    "deletes a branch. Exit 0 done, 4 error, 5 refused.")
    p.add_argument("--dry-run", action="store_true", help="compute and report; remove nothing")
    p.add_argument("--explain", action="store_true",
                   help="with --dry-run: every gate's result per worktree")
    p.add_argument("--count-only", action="store_true",
                   help="one git worktree list: counts only (no network, no evaluation)")
    p.add_argument("--min-age-hours", type=non_negative_float, default=None, metavar="N",
                   help="also require the worktree to be at least N hours old (off unless given)")
    add_ignored_options(p)
    p.add_argument("--archive-unproven", action="store_true",
                   help="bundle and remove SKIP_NOT_PUSHED / SKIP_AMBIGUOUS_NO_PR worktrees "
                        f"(needs gh; implies --min-age-hours {ARCHIVE_DEFAULT_MIN_AGE_HOURS:g})")
    p.add_argument("--no-gh", action="store_true", help="do not ask gh (degraded mode)")
    p.add_argument("--lock-wait", type=float, default=REAP_LOCK_WAIT_S, metavar="SECONDS",
                   help="wait this long for another cleanup to finish (default "
                        f"{REAP_LOCK_WAIT_S:g}; prune's background reap waits for the prune)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_reap)


def _where(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "directory", None) or os.getcwd())


def _show(text: object) -> str:
    return show(str(text))


def count_only(where: Path) -> dict[str, int]:
    """Counts from ONE ``git worktree list`` (:func:`branchkeeper.git.repo.worktree_counts`)."""
    return worktree_counts(where)


def _provider(args: argparse.Namespace, root: Path) -> PrEvidence:
    if args.no_gh:
        return NoProvider("--no-gh: PR evidence disabled")
    return GhProvider(root)


def run_reap(args: argparse.Namespace) -> int:
    """``worktree reap``: see the module docstring for exit codes."""
    where = _where(args)
    if args.count_only:
        counts = count_only(where)
        if args.json:
            print(json.dumps({"counts": counts}, indent=2))
        else:
            print(f"worktrees: {counts['total']} total, {counts['linked']} linked, "
                  f"{counts['locked']} locked, {counts['prunable']} prunable")
        return int(ExitCode.OK)
    facts = repo_facts(where)
    config = load_config(facts.main_root).config
    provider = _provider(args, facts.root)
    min_age = args.min_age_hours
    if args.archive_unproven:
        ok, why = provider.available()
        if not ok:
            raise RefusedError(f"--archive-unproven needs PR evidence and there is none ({why}); "
                               "without it an unproven branch cannot be told from one behind an "
                               "open PR. Nothing was archived or removed.")
        if min_age is None:
            min_age = ARCHIVE_DEFAULT_MIN_AGE_HOURS
    plan = survey_worktrees(facts, config, settings=WorktreeSettings(
        polarity=args.ignored, min_age_hours=min_age), asker=PrAsker(provider))
    results = execute_reap(plan, dry_run=args.dry_run, saves=Saves(
        unproven=args.archive_unproven, ignored=args.archive_ignored), lock_wait_s=args.lock_wait)
    if args.json:
        json.dump(reap_json(plan, results, dry_run=args.dry_run), sys.stdout, indent=2,
                  ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_reap(plan, results, dry_run=args.dry_run,
                                     explain=args.explain and args.dry_run))
    return int(ExitCode.OK)


def _result_json(r: ReapResult) -> dict[str, Any]:
    v = r.verdict
    wt = v.worktree
    return {
        "path": str(wt.path),
        "branch": wt.branch.removeprefix("refs/heads/") if wt.branch else None,
        "head": str(wt.head) if wt.head else None,
        "disposition": v.disposition.value, "reason": v.reason, "outcome": r.outcome.value,
        "detail": r.detail, "triage": v.triage, "restore": list(r.restore),
        "bundle": r.bundle.to_json() if r.bundle else None, "operation": r.op_id,
        "salvaged": list(r.salvaged),
        "archive": r.archive.to_json() if r.archive else None,
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in v.gates],
    }


def _tally(results: list[ReapResult]) -> dict[str, int]:
    counts = {o.value: 0 for o in Outcome}
    for r in results:
        counts[r.outcome.value] += 1
    return counts


def reap_json(plan: WorktreeSurvey, results: list[ReapResult], *, dry_run: bool) -> dict[str, Any]:
    """The JSON document ``worktree reap --json`` prints."""
    return {"dry_run": dry_run, "pr_evidence": plan.pr_note, "degraded": plan.degraded,
            "notes": plan.notes, "worktrees": [_result_json(r) for r in results],
            "counts": _tally(results)}


_WORD = {Outcome.REMOVED: "removed", Outcome.ARCHIVED: "archived",
         Outcome.WOULD_REMOVE: "would remove", Outcome.WOULD_ARCHIVE: "would archive",
         Outcome.KEPT: "kept", Outcome.RACED: "kept (raced)", Outcome.FAILED: "kept (failed)"}


def _covered(r: ReapResult) -> str:
    """`` (saved first: --archive-ignored)`` when a worktree goes only because the run saves
    what its gates keep; empty otherwise."""
    going = r.outcome in (Outcome.REMOVED, Outcome.ARCHIVED, Outcome.WOULD_REMOVE,
                          Outcome.WOULD_ARCHIVE)
    if not going or r.verdict.disposition is Disposition.REMOVABLE:
        return ""
    flags = {"ignored_disposable": "--archive-ignored", "preserved": "--archive-unproven"}
    used = [flags[g.name] for g in r.verdict.blockers if g.name in flags]
    return f" (saved first: {', '.join(used)})" if used else ""


def render_reap(plan: WorktreeSurvey, results: list[ReapResult], *, dry_run: bool,
                explain: bool) -> str:
    """The text report: the PR-evidence line, one block per worktree, then the totals."""
    lines = [plan.pr_note]
    lines += [f"note: {_show(n)}" for n in plan.notes]
    if dry_run:
        lines.append("dry run: nothing is removed")
    for r in results:
        v = r.verdict
        wt = v.worktree
        if wt.is_main and not explain:
            continue
        name = (wt.branch.removeprefix("refs/heads/") if wt.branch
                else f"detached {wt.head.short}" if wt.head else "bare")
        lines.append(f"{_WORD[r.outcome]}: {_show(wt.path)} ({_show(name)})")
        lines.append(f"  {v.disposition.value}: {_show(v.reason)}{_covered(r)}")
        if r.outcome is Outcome.KEPT and [g.name for g in v.blockers] == ["ignored_disposable"]:
            lines.append("  to keep those files and remove it: branchkeeper worktree reap "
                         "--archive-ignored")
        if r.outcome in (Outcome.RACED, Outcome.FAILED):
            lines.append(f"  {_show(r.detail)}")
        if v.triage:
            lines.append(f"  triage: {v.triage}")
        for path in r.salvaged:
            lines.append(f"  salvaged: {_show(path)}")
        if r.archive is not None:
            lines.append(f"  archived {len(r.archive.members)} ignored file(s): "
                         f"{_show(r.archive.path)}")
        if r.bundle is not None:
            lines.append(f"  bundle: {_show(r.bundle.path)} ({r.bundle.note})")
            for pre in r.bundle.prerequisites:
                lines.append(f"  prerequisite: {pre} must be present to restore")
        for cmd in r.restore:
            lines.append(f"  restore: {cmd}")
        if explain:
            for g in v.gates:
                lines.append(f"    {'pass' if g.passed else 'FAIL'} {g.name}: {_show(g.detail)}")
    # The main worktree is never removed, and listed only with --explain: the totals count
    # exactly what is listed.
    t = _tally([r for r in results if explain or not r.verdict.worktree.is_main])
    if dry_run:
        lines.append(f"would remove {t['would_remove']}, would archive {t['would_archive']}, "
                     f"keep {t['kept']}")
    else:
        kept = t["kept"] + t["raced"] + t["failed"]
        lines.append(f"removed {t['removed']}, archived {t['archived']}, kept {kept}")
    return "\n".join(lines) + "\n"
