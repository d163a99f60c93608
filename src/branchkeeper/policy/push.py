"""Force pushes that overwrite commits only the remote holds (``R-GIT-PUSH-FORCE-OVERWRITE``;
issue 17, section 1).

``git push --force``, ``-f``, a ``+`` refspec and ``--force-with-lease`` in every spelling
replace a remote branch with whatever is pushed. Judged from local refs only (no network):
the remote branch's tracking tip must be contained in what is pushed, or in another ref that
will still hold it (a local branch or tag, another remote-tracking ref); otherwise the deny
names those commits (count, subjects) and the way out. A lease does not help: checked
against a tracking ref this clone fetched but never merged, it lets the push drop exactly
those commits. A remote branch this clone has never fetched shows nothing to lose; a URL
remote has no tracking refs, so nothing can be proven. A dry run pushes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import (
    commit_of,
    commits_only_in,
    current_branch,
    push_destinations,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import Plan, deleted_refs, describe
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.gitpush import ForcePush
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote

R_PUSH_FORCE = "R-GIT-PUSH-FORCE-OVERWRITE"


def force_push_decision(how: str, *, remote: str, branch: str,
                        commits: Sequence[tuple[str, str]], mode: str) -> Decision:
    """Deny ``how`` when ``commits`` ((short id, subject), newest first) are held only by
    ``remote``'s ``branch``, which the push replaces; ``mode``: ``force_removal.mode``."""
    if not commits or mode == "off":
        return ALLOW
    n = len(commits)
    return Decision(
        Verdict.DENY, R_PUSH_FORCE,
        f"`{how}` would overwrite {shell_quote(remote)}/{shell_quote(branch)} and drop {n} "
        f"commit{'s' if n != 1 else ''} that only the remote holds (this clone fetched "
        f"{'them' if n != 1 else 'it'} but no local branch or tag contains "
        f"{'them' if n != 1 else 'it'}; a lease checked against that tracking ref does not "
        "protect them):\n" + "\n".join(listed([f"{h} {s}" for h, s in commits])),
        "Bring those commits in first: " + git_cmd("pull", "--rebase", remote, branch)
        + " (then push without --force), or merge them; or push your work to a new branch "
        "instead (" + git_cmd("push", remote, f"HEAD:refs/heads/{branch}-rework") + "); or ask "
        "a human whether the remote's commits may go.")


def _unproven(how: str, why: str) -> Decision:
    return unparsed_decision(f"`{how}` force-pushes", why)


def force_push_decisions(plan: Plan, repos: GuardRepos, unparsed: str) -> list[Decision]:
    """``R-GIT-PUSH-FORCE-OVERWRITE`` for every forced push of ``plan`` (module docstring):
    one ``symbolic-ref`` when the current branch is pushed, one ``for-each-ref`` for where a
    branch is pushed without a refspec, one ``rev-parse`` per revision pushed and one ``log``
    per remote branch whose tip the pushed commit does not contain."""
    out: list[Decision] = []
    excluded = deleted_refs(d for d, _ in plan.destructions)
    for fp, g in plan.force_pushes:
        how = describe(g)
        if unparsed:
            out.append(_unproven(how, f"the command could not be read in full ({unparsed})"))
            continue
        if fp.dynamic or g.cwd is None:
            out.append(_unproven(how, "a remote, a revision or the directory comes from an "
                                      "expansion the guard cannot know"))
            continue
        facts = repos.of(g.cwd, g)
        if facts is None or facts.config.branches.force_removal.mode == "off":
            continue
        try:
            out.extend(_judge(fp, g, facts, excluded))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(_unproven(how, f"git could not answer ({why})"))
    return out


def _targets(fp: ForcePush, g: GitInvocation, facts: GuardFacts
             ) -> list[tuple[str, str, str]] | Decision:
    """(revision pushed, remote, remote branch) for each branch ``fp`` overwrites, or a
    decision when that cannot be known."""
    assert g.cwd is not None
    cfg = facts.config.branches
    if fp.all_branches:
        pairs = [(b, b) for b in facts.lean(fp.remote or cfg.remote).local]
    elif fp.src is not None and fp.dst is not None:
        pairs = [(fp.src, fp.dst)]
    else:
        ref = current_branch(g.cwd, git_dir=g.git_dir, work_tree=g.work_tree)
        if ref is None:
            return ALLOW  # a detached HEAD without a destination: git refuses the push
        name = ref.removeprefix("refs/heads/")
        pairs = [(fp.src or name, fp.dst or name)]
    if fp.remote is not None:
        if "/" in fp.remote or ":" in fp.remote or fp.remote.startswith("."):
            return _unproven(describe(g), "the remote is a URL or a path, so no tracking ref "
                                          "shows what it holds")
        return [(src, fp.remote, dst) for src, dst in pairs]
    sent = push_destinations(g.cwd, [s.removeprefix("refs/heads/") for s, _ in pairs], g.config)
    out = []
    for src, _ in pairs:
        tracking = sent.get(src.removeprefix("refs/heads/"))
        if tracking is not None:  # refs/remotes/<remote>/<branch>
            remote, _, branch = tracking.removeprefix("refs/remotes/").partition("/")
            out.append((src, remote, branch))
    return out


def _judge(fp: ForcePush, g: GitInvocation, facts: GuardFacts,
           excluded: Sequence[str]) -> list[Decision]:
    assert g.cwd is not None
    targets = _targets(fp, g, facts)
    if isinstance(targets, Decision):
        return [targets]
    out: list[Decision] = []
    for src, remote, branch in targets:
        tip = facts.lean(remote).remote.get(branch)
        if not tip:
            continue  # never fetched: this clone knows of nothing there to lose
        pushed = commit_of(g.cwd, src, git_dir=g.git_dir)
        if pushed is None or pushed == tip:
            continue  # git refuses an unknown revision; pushing the same commit changes nothing
        tracking = f"refs/remotes/{remote}/{branch}"
        # <remote>/HEAD is a name for one of the tracking refs, not a holder of its own
        commits = commits_only_in(facts.repo, tip, pushed=pushed,
                                  excluded_refs=[tracking, f"refs/remotes/{remote}/HEAD",
                                                 *excluded])
        out.append(force_push_decision(describe(g), remote=remote, branch=branch,
                                       commits=commits,
                                       mode=facts.config.branches.force_removal.mode))
    return out
