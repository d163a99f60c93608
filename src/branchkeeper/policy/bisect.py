"""``git bisect reset`` and ``git bisect start``: both delete the worktree's ``refs/bisect/*``
(section 11; docs/guard.md, ``R-GIT-BRANCH-FORCE-DELETE`` (bisect)). A bisect ref can be the
only hold on a commit (the sweep lists it as LOST WORK RISK); the facts are
:func:`branchkeeper.analysis.worktree_store.bisect_refs_at_risk`, read only for those
commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from branchkeeper.analysis.guard_facts import GUARD_TIMEOUT_S
from branchkeeper.analysis.lost_work import rescue_command
from branchkeeper.analysis.worktree_store import HeldRef, bisect_refs_at_risk
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.facts import GuardFacts

R_BISECT = "R-GIT-BRANCH-FORCE-DELETE"


def bisect_decision(held: Sequence[HeldRef], *, how: str, worktree: str, remote: str | None,
                    mode: str) -> Decision:
    """Deny ``how`` (a ``git bisect reset|start``) when a bisect ref of ``worktree`` (its
    directory) holds commits nothing else holds (``held``), naming each ref and the command
    the sweep prints to keep it (:func:`rescue_command`, pushed to ``remote`` when one is
    configured). ``mode``: ``force_removal.mode`` (``off`` allows)."""
    if not held or mode == "off":
        return ALLOW
    label = Path(worktree).name
    problems = [f"{h.ref} holds {h.count} commit(s) no branch, tag or remote holds"
                for h in held]
    steps = [rescue_command(f"{label}-{h.ref.rsplit('/', 1)[-1]}", h.tip, remote)
             for h in held]
    return Decision(
        Verdict.DENY, R_BISECT,
        f"`{how}` would lose work: it deletes the bisect refs of this worktree, the only "
        "refs holding:\n" + "\n".join(listed(problems)),
        "Keep each first (" + "; ".join(steps) + "), then run it; or ask a human.")


def judge_bisect(facts: GuardFacts, *, how: str) -> Decision:
    """Read the bisect refs of the worktree ``facts`` stands in (:func:`bisect_refs_at_risk`)
    and decide :func:`bisect_decision`. Raises GitError when they cannot be read (the caller
    denies)."""
    repo = facts.repo
    held = bisect_refs_at_risk(Path(repo.root), Path(repo.common_dir), timeout=GUARD_TIMEOUT_S)
    cfg = facts.config.branches
    return bisect_decision(held, how=how, worktree=str(repo.root), remote=cfg.remote,
                           mode=cfg.force_removal.mode)
