"""A rebase that drops commits from the branch it rewrites (``R-GIT-BRANCH-OVERWRITE``; issue
17, the guard's outside trial).

``git rebase --onto NEW UPSTREAM [BRANCH]`` keeps ``UPSTREAM..BRANCH`` (replayed onto NEW) and
drops from BRANCH every commit that UPSTREAM reaches too but NEW does not
(:mod:`branchkeeper.shell.gitrebase`). When no other ref holds such a commit, the rebase loses
it exactly as ``git reset --hard NEW`` would, so it is judged as that overwrite: denied,
naming the commits (count, subjects), with the way out (a branch at the tip first). A
dropped commit that UPSTREAM holds as a branch, tag or remote-tracking ref, or that another
ref holds, is not lost: allowed. An interactive rebase's ``drop`` lines cannot be known
beforehand and are not judged; without ``--onto`` nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import (
    commit_of,
    commits_only_in,
    current_branch,
    merge_bases,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import Plan, deleted_refs, describe
from branchkeeper.policy.ref_loss import R_OVERWRITE
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.gitrebase import RebaseOnto
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote


def rebase_drop_decision(how: str, *, branch: str, upstream: str, onto: str,
                         commits: Sequence[tuple[str, str]], remote: str, mode: str
                         ) -> Decision:
    """Deny ``how`` when ``commits`` ((short id, subject), newest first) of ``branch`` are
    dropped by the rebase (``upstream`` reaches them, the new base ``onto`` does not) and no
    other ref holds them; ``mode``: ``force_removal.mode``."""
    if not commits or mode == "off":
        return ALLOW
    n = len(commits)
    s, them = ("s", "them") if n != 1 else ("", "it")
    q = shell_quote(branch)
    return Decision(
        Verdict.DENY, R_OVERWRITE,
        f"`{how}` would drop {n} commit{s} from the branch {q} that no other branch, tag or "
        f"remote-tracking ref holds ({shell_quote(upstream)} reaches {them}, the new base "
        f"{shell_quote(onto)} does not, so the rebase does not replay {them}):\n"
        + "\n".join(listed([f"{h} {subject}" for h, subject in commits])),
        "Keep them first: put a branch at the tip (" + git_cmd("branch", branch + "-keep", branch)
        + ") or push it (" + git_cmd("push", "-u", remote, branch) + "); then the rebase is "
        "allowed. To move only the newest commits, name the last commit to leave behind as the "
        "upstream (git rebase --onto NEW <that commit>); or ask a human.")


def rebase_decisions(plan: Plan, repos: GuardRepos, unparsed: str) -> list[Decision]:
    """Every ``--onto`` rebase of ``plan`` judged (module docstring): one ``symbolic-ref``
    without a branch operand, the ref table, one ``rev-parse`` each for the upstream and the
    new base, one ``merge-base --all`` and one ``log``. A word from an expansion, an unread
    command or a git failure is denied as unparsed."""
    out: list[Decision] = []
    excluded = deleted_refs(d for d, _ in plan.destructions)
    for r, g in plan.rebases:
        how = describe(g)
        if unparsed or r.dynamic or g.cwd is None:
            why = (f"the command could not be read in full ({unparsed})" if unparsed else
                   "a revision or the directory comes from an expansion the guard cannot know")
            out.append(unparsed_decision(f"`{how}` rewrites a branch", why))
            continue
        facts = repos.of(g.cwd, g)
        if facts is None or facts.config.branches.force_removal.mode == "off":
            continue
        try:
            out.append(_judge(r, g, facts, excluded))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(f"`{how}` rewrites a branch",
                                         f"git could not answer ({why})"))
    return out


def _judge(r: RebaseOnto, g: GitInvocation, facts: GuardFacts,
           excluded: Sequence[str]) -> Decision:
    assert g.cwd is not None
    if r.branch is not None:
        ref = "refs/heads/" + r.branch.removeprefix("refs/heads/")
        if facts.table().tip(ref) is None:
            return ALLOW  # a commit, not a branch: git rebases a detached HEAD, no branch moves
    else:
        found = current_branch(g.cwd, git_dir=g.git_dir, work_tree=g.work_tree)
        if found is None:
            return ALLOW  # a detached HEAD: the worktree rules judge what it leaves
        ref = found
    tip = facts.table().tip(ref)
    if tip is None:
        return ALLOW  # an unborn branch: nothing to drop
    name = ref.removeprefix("refs/heads/")
    upstream = r.upstream if r.upstream is not None else f"{name}@{{upstream}}"
    up = commit_of(g.cwd, upstream, git_dir=g.git_dir)
    new = commit_of(g.cwd, r.onto, git_dir=g.git_dir)
    if up is None or new is None:
        if "..." in r.onto and up is not None:
            raise ValueError(f"the new base {r.onto!r} names a merge base the guard does not "
                             "compute")
        return ALLOW  # git refuses a revision that names no commit, and rewrites nothing
    bases = merge_bases(facts.repo.root, up, str(tip))
    if not bases:
        return ALLOW
    dropped = commits_only_in(facts.repo, bases, pushed=new, excluded_refs=[ref, *excluded])
    return rebase_drop_decision(describe(g), branch=name, upstream=upstream, onto=r.onto,
                                commits=dropped, remote=facts.config.branches.remote,
                                mode=facts.config.branches.force_removal.mode)
