"""Moving a detached HEAD away from commits no ref holds (``R-GIT-DETACHED-HEAD-MOVE``; trial
finding F7; first document section 11: a commit is never left reachable from no ref).

``git checkout``/``switch`` to another commit or branch and ``git reset --hard|--keep|--merge
COMMIT`` on a detached HEAD leave its own commits held only by that worktree's HEAD reflog,
which ``git worktree remove`` deletes: judged like a force delete of that tip, as
``R-GIT-BRANCH-OVERWRITE`` judges a ``reset`` of a checked-out branch. Facts, only for such a
command on a detached HEAD: :func:`~branchkeeper.analysis.guard_facts.detached_only` (one
``symbolic-ref`` before it, one ``merge-base --is-ancestor`` and one ``rev-parse --verify``
after it, when it finds commits).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from branchkeeper.analysis.guard_facts import (
    current_branch,
    detached_only,
    is_ancestor,
    is_commitish,
)
from branchkeeper.analysis.lost_work import rescue_name
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import head_on_a_ref
from branchkeeper.git.types import Oid, push_argv
from branchkeeper.policy.decision import ALLOW, Decision, Verdict
from branchkeeper.policy.discard_plan import ORPHAN
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import describe
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote

R_DETACHED_MOVE = "R-GIT-DETACHED-HEAD-MOVE"

def _decision(how: str, top: str, head: str, count: int, remote: str) -> Decision:
    name = rescue_name(Path(top).name, Oid.parse(head))
    return Decision(
        Verdict.DENY, R_DETACHED_MOVE,
        f"`{how}` would lose work: HEAD is detached at {head[:10]} in {shell_quote(top)} and no "
        f"branch, tag or remote-tracking ref holds it; moving HEAD away leaves its {count} "
        f"commit{'s' if count != 1 else ''} held only by that worktree's HEAD reflog, which "
        "`git worktree remove` deletes.",
        "Keep the work first: " + git_cmd("-C", top, "branch", name, "HEAD") + ", then push it ("
        + git_cmd("-C", top, *push_argv(remote, name)[1:]) + "); then the move is allowed. "
        "Or ask a human.")


def _moves_nothing(g: GitInvocation, rev: str, head: str) -> bool:
    """Whether moving HEAD to ``rev`` keeps ``head`` or moves nothing: ``rev`` contains it;
    ``rev`` is no commit and the command a ``reset`` (git refuses it) or a single
    ``checkout`` operand naming a path (a path checkout). ``switch`` to a name that is no
    commit may create a branch from a remote one: it moves."""
    if rev == ORPHAN:
        return False
    assert g.cwd is not None
    if is_ancestor(g.cwd, head, rev):
        return True
    if is_commitish(g.cwd, rev, git_dir=g.git_dir):
        return False
    if g.subcommand == "reset":
        return True
    return g.subcommand == "checkout" \
        and os.path.lexists(os.path.join(g.cwd, rev))


def detached_move_decision(g: GitInvocation, rev: str, facts: GuardFacts) -> Decision | None:
    """The deny for moving the detached HEAD where ``g`` acts to ``rev`` (a
    :func:`~branchkeeper.policy.discard_plan.head_move_target` or a ``reset``'s commit), or
    None when HEAD reaches no commit that no branch, tag, remote-tracking ref or ref of ours
    holds, or ``rev`` contains it (:func:`_moves_nothing`). The caller knows HEAD is
    detached. Raises GitError."""
    assert g.cwd is not None
    found = detached_only(g.cwd, git_dir=g.git_dir, work_tree=g.work_tree)
    if found is None or _moves_nothing(g, rev, found[1]):
        return None
    return _decision(describe(g), *found, facts.config.branches.remote)


def detached_move_decisions(moves: Sequence[tuple[GitInvocation, str]], repos: GuardRepos
                            ) -> list[Decision]:
    """Each ``checkout``/``switch`` of ``moves`` (with its
    :func:`~branchkeeper.policy.discard_plan.head_move_target`) judged by
    :func:`detached_move_decision` when HEAD is detached where it acts (the ``HEAD`` file, else
    one ``symbolic-ref``); ``force_removal.mode`` ``off`` allows. A git failure is denied as
    unparsed."""
    out: list[Decision] = []
    for g, rev in moves:
        if g.cwd is None or g.dynamic or head_on_a_ref(g.cwd, git_dir=g.git_dir):
            continue  # on a branch, read from the HEAD file: no git process
        try:
            facts = repos.of(g.cwd, g)
            if facts is None or facts.config.branches.force_removal.mode == "off" \
                    or current_branch(g.cwd, git_dir=g.git_dir, work_tree=g.work_tree):
                continue
            found = detached_move_decision(g, rev, facts)
            if found is not None:
                out.append(found)
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(f"`{describe(g)}` moves a detached HEAD",
                                         f"git could not answer ({why})"))
    return out or [ALLOW]
