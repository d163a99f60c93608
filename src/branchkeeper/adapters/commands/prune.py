"""``branchkeeper prune``: the session-start prune (issue 3, section 5; second document,
"Session-start prune").

``git fetch --prune`` (bounded; ``--no-fetch`` skips it), ``git worktree prune``, ``worktree
reap`` started in the background (issue 18: ``--no-reap``, ``BRANCHKEEPER_REAP_DISABLE=1`` or
``worktrees.reap_from_prune: false`` turn it off), then every local branch proven preserved by
the inventory (the verdict sweep shows) is deleted behind one bundle and one journal operation;
absence of proof is ``SKIP_UNPROVEN`` with its reason. Each prune's time and branch are recorded
(the SessionStart due rule). Safe unattended and twice at once (the mutation lock). Exit 0
done, 5 default branch unresolved or a tip raced, 4 error.
"""

from __future__ import annotations

import argparse

from branchkeeper import clock
from branchkeeper.actions.cleanup_exec import Outcome
from branchkeeper.actions.cleanup_run import LOCK_WAIT_S, run_prune
from branchkeeper.actions.routine import record_prune, start_background_reap
from branchkeeper.adapters.commands.argtypes import non_negative_float
from branchkeeper.adapters.commands.delete import emit
from branchkeeper.adapters.common import add_stats_option, open_repository, watched
from branchkeeper.errors import ExitCode
from branchkeeper.git.repo import RepoFacts


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "prune", help="fetch, prune worktrees, delete every proven branch (session start)",
        description=(
            "git fetch --prune into refs/remotes/<remote>/ only, whatever the configured "
            "refspecs say (bounded by branches.sweep.fetch_timeout_s; a failure is "
            "reported and the prune continues on local data), git worktree prune (a "
            "detached HEAD of a prunable worktree that no ref holds is pinned under "
            "refs/branchkeeper/pinned/ first; when it cannot be, nothing is pruned), start "
            "worktree reap in the background (--min-age-hours from "
            "worktrees.reap_min_age_hours; it waits for this prune and appends to "
            "<common dir>/branchkeeper/worktree-reap.log), then delete "
            "every local branch whose work the proof ladder shows preserved (the verdict sweep "
            "shows). Unproven and superseded branches are skipped (SKIP_UNPROVEN) with their "
            "reason; parked and unstarted branches are kept; an unresolved default branch "
            "deletes nothing. Exit 0 done, 5 unresolved or raced, 4 error."),
    )
    p.add_argument("--no-fetch", action="store_true", help="do not fetch first")
    p.add_argument("--no-reap", action="store_true",
                   help="do not start the background worktree reap (also "
                        "BRANCHKEEPER_REAP_DISABLE=1, worktrees.reap_from_prune: false)")
    p.add_argument("--dry-run", action="store_true",
                   help="show what would go; change nothing, start nothing")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--lock-wait", type=non_negative_float, default=LOCK_WAIT_S, metavar="SECONDS",
                   help=f"wait this long for another cleanup to finish (default {LOCK_WAIT_S:g})")
    add_stats_option(p)
    p.set_defaults(func=run)


def exit_code(outcome: Outcome) -> int:
    """0 done; 5 when the default branch is unresolved or a delete raced or failed; 130 when a
    signal stopped it at a safe point."""
    if outcome.interrupted:
        return int(ExitCode.INTERRUPTED)
    if not outcome.plan.inventory.default.resolved or not outcome.all_done:
        return int(ExitCode.REFUSED)
    return int(ExitCode.OK)


def run(args: argparse.Namespace) -> int:
    facts, loaded = open_repository(args)
    config = loaded.config

    def reap() -> str:
        return start_background_reap(facts.root, facts.common_dir, config, no_reap=args.no_reap)

    with watched(args, as_json=args.json) as meter:
        outcome = run_prune(facts, config, fetch=not args.no_fetch, dry=args.dry_run,
                            lock_wait_s=args.lock_wait, start_reap=reap)
        meter.finish()
        return _finish(args, facts, outcome)


def _finish(args: argparse.Namespace, facts: RepoFacts, outcome: Outcome) -> int:
    """Record the prune (unless a dry run), print the outcome, return the exit code."""
    if not args.dry_run:
        here = facts.toplevel.resolve() if facts.toplevel else None
        branch = next((w.branch.removeprefix("refs/heads/") for w in outcome.plan.inventory.worktrees
                       if w.branch and here is not None and w.path.resolve() == here), None)
        record_prune(facts.common_dir, now=clock.now(), branch=branch,
                     worktree=str(here) if here else None)
    code = exit_code(outcome)
    emit(outcome, as_json=args.json, code=code)
    return code
