"""The pass SessionStart never waits for (issue 20; first document, section 2: "Branches not
reached inside the budget are reported as 'not yet classified' rather than guessed, and the
next pass continues from the cache").

In a repository larger than ``branches.sweep.session_inline_max`` branches whose last sweep is
not current, SessionStart calls :func:`continue_in_background`: it starts ``branchkeeper sweep
--finish-pass`` detached (unless one is running already: the ``sweep-pass`` lock) and waits for
it at most the time it is given. The child (:func:`finish_pass`) runs the inventory in rounds:
:data:`ROUND_MS` milliseconds of budget, then twice the last round's (the work each round
repeats, reading refs and walks, stays a bounded share of the whole). Each round saves the
caches (verdicts per tip, facts per commit) and ``last-sweep.json``, so a pass that is stopped
(a signal, a reboot) loses at most one round and the next one continues from what was saved.
It ends when no branch is left ``unknown`` for the budget, or after :data:`STALLED_ROUNDS`
rounds in a row that classified no branch. It only reads and classifies: nothing is deleted,
and a deletion never reads its verdicts from here (``sweep --clean``, ``prune`` and
``delete`` run their own, unbounded pass).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.actions.background import spawn_detached
from branchkeeper.state.lock import LockBusyError, repo_lock

if TYPE_CHECKING:
    from branchkeeper.git.repo import RepoFacts
    from branchkeeper.model.config import Config

#: The lock one background pass holds for its whole run.
PASS_LOCK = "sweep-pass"
#: Its log under the state directory (each round's line).
PASS_LOG = "sweep-pass.log"
#: The first round's budget, milliseconds (each next round doubles it).
ROUND_MS = 30_000
#: Rounds in a row that classify no branch before a pass gives up (a round can be spent on
#: per-commit facts of the base only, which the next round reads from the cache).
STALLED_ROUNDS = 3
#: The arguments of the child.
PASS_ARGS = ["sweep", "--finish-pass"]


def pass_running(common_dir: Path) -> bool:
    """A background pass holds the ``sweep-pass`` lock now."""
    try:
        with repo_lock(common_dir, PASS_LOCK, wait_s=0):
            return False
    except LockBusyError:
        return True


def continue_in_background(root: Path, common_dir: Path, *, wait_s: float) -> str:
    """Make sure a background pass runs, and wait for it at most ``wait_s`` seconds. Returns
    ``"finished"`` (it ended inside the wait), ``"running"`` (it goes on after this process),
    or ``"failed: <why>"`` (it could not be started). Never raises."""
    started = time.monotonic()
    try:
        if pass_running(common_dir):
            try:
                with repo_lock(common_dir, PASS_LOCK, wait_s=max(wait_s, 0.0)):
                    return "finished"
            except LockBusyError:
                return "running"
        child = spawn_detached(root, common_dir, PASS_ARGS, log=PASS_LOG)
    except OSError as exc:  # no state directory (read-only, not a directory), no fork
        where = f": {exc.filename}" if exc.filename else ""
        return f"failed: {exc.strerror or exc}{where}"
    try:
        child.wait(timeout=max(0.0, wait_s - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        return "running"
    return "finished"


def finish_pass(facts: RepoFacts, config: Config, *, round_ms: int = ROUND_MS,
                round_checks: int | None = None, say: Callable[[str], None] = print) -> int:
    """Run the inventory in rounds, the first of ``round_ms`` and each next twice the last,
    until every branch is classified (see the module docstring), holding the ``sweep-pass``
    lock; ``say`` gets one line per round. ``round_checks``: rounds of that many units of work
    instead of milliseconds (the inventory's ``budget_checks``: the same rounds on every run,
    doubling likewise). Returns
    the number of rounds run (0: another pass holds the lock). Raises
    :class:`~branchkeeper.git.run.GitError` when the refs cannot be listed."""
    from branchkeeper.analysis.inventory import build_inventory

    try:
        with repo_lock(facts.common_dir, PASS_LOCK, wait_s=0):
            rounds, left, stalled = 0, None, 0
            while True:
                started = time.monotonic()
                grow = 2 ** min(rounds, 16)  # each round twice the last: bounded overhead
                inv = build_inventory(
                    facts, config,
                    budget_checks=None if round_checks is None else round_checks * grow,
                    budget_ms=None if round_checks is not None else round_ms * grow)
                rounds += 1
                now_left = sum(1 for r in inv.records
                               if r.state.value == "unknown" and "budget" in r.reason)
                say(f"round {rounds}: {len(inv.records)} branches, {now_left} not yet "
                    f"classified ({time.monotonic() - started:.1f} s)")
                if now_left == 0:
                    return rounds
                stalled = stalled + 1 if left is not None and now_left >= left else 0
                if stalled >= STALLED_ROUNDS:
                    say(f"no branch classified in {stalled} rounds: stopping (the next pass "
                        "continues from the cache)")
                    return rounds
                left = now_left
    except LockBusyError as exc:
        say(f"another pass is running ({exc}); nothing to do")
        return 0
