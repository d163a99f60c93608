"""Destructive-route decisions (first document sections 7, 11, 13; issue 5 section 3).

Pure functions of facts the guard gathered (see :mod:`branchkeeper.analysis.guard_facts`):
lossless force removal (``R-GIT-BRANCH-FORCE-DELETE``, ``R-GIT-WORKTREE-REMOVE-FORCE``),
remote deletes (``R-GIT-PUSH-DELETE-REMOTE``) and evacuate-then-destroy
(``R-GIT-EVACUATE-DESTROY``). A destructive route the parser could not read is
:mod:`branchkeeper.policy.unread`'s. Every printed name and path is shell-quoted.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import WorktreeContents
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.shell.quoting import git_cmd, shell_quote

R_BRANCH_FORCE = "R-GIT-BRANCH-FORCE-DELETE"
R_WORKTREE_FORCE = "R-GIT-WORKTREE-REMOVE-FORCE"
R_PUSH_DELETE = "R-GIT-PUSH-DELETE-REMOTE"
R_OVERWRITE = "R-GIT-BRANCH-OVERWRITE"
def _lost_branches(lost: Sequence[tuple[str, str]]) -> tuple[list[str], str, str]:
    """For a message: each (name, tip) quoted, the first name without ``refs/heads/``, and
    the plural ending of "branch"."""
    names = [f"{shell_quote(n)} at {tip[:10]}" for n, tip in lost]
    first = lost[0][0]
    return names, first.removeprefix("refs/heads/"), "es" if len(lost) > 1 else ""


def branch_delete_decision(lost: Sequence[tuple[str, str]], *, lost_commits: int, remote: str,
                           mode: str, how: str) -> Decision:
    """``branch -D`` / ``-d -f`` / ``update-ref -d`` (section 11): deny when some deleted tip is
    contained in no ref outside those the same command deletes. ``lost``: (branch or ref name,
    tip) pairs that no other ref contains; ``lost_commits``: commits reachable from no other
    ref; ``how``: the command's spelling for the message; ``mode``: ``force_removal.mode``."""
    if not lost or mode == "off":
        return ALLOW
    names, short, plural = _lost_branches(lost)
    return Decision(
        Verdict.DENY, R_BRANCH_FORCE,
        f"`{how}` would lose work: no other branch, tag or remote-tracking ref contains the "
        f"tip of the branch{plural} below ({lost_commits} commit"
        f"{'s' if lost_commits != 1 else ''} would be reachable from no ref):\n"
        + "\n".join(listed(names)),
        "Keep the work first: merge it into the branch of the lane it serves, or push it ("
        + git_cmd("push", "-u", remote, short) + "). Then `branchkeeper delete -- "
        + shell_quote(short) + "` proves the work is preserved, writes a recovery bundle and "
        "can be undone. If the work is truly unwanted, ask a human to delete it.")


def branch_overwrite_decision(lost: Sequence[tuple[str, str]], *, lost_commits: int,
                              remote: str, mode: str, how: str) -> Decision:
    """``branch -f``, ``checkout -B``, ``switch -C``, ``worktree add -B``, ``branch -M/-C``,
    forced ``fetch``/``push .`` refspecs, ``update-ref REF NEW`` (issue 5 section 2): moving an
    existing branch loses its commits exactly like a delete. ``lost``: (branch, current tip)
    pairs whose tip no ref outside those the command deletes or overwrites contains, and that
    the new value does not contain; other arguments as :func:`branch_delete_decision`."""
    if not lost or mode == "off":
        return ALLOW
    names, short, plural = _lost_branches(lost)
    return Decision(
        Verdict.DENY, R_OVERWRITE,
        f"`{how}` would overwrite an existing branch and lose work: no other branch, tag or "
        f"remote-tracking ref contains the current tip of the branch{plural} below, and the new "
        f"value does not contain it ({lost_commits} commit{'s' if lost_commits != 1 else ''} "
        "would be reachable from no ref):\n" + "\n".join(listed(names)),
        "Keep the work first: push it (" + git_cmd("push", "-u", remote, short) + ") or keep it "
        "on another branch (" + git_cmd("branch", short + "-keep", short) + "); then the "
        "overwrite is allowed. Or use a new branch name instead; or ask a human.")


def worktree_remove_decision(path: str, *, force: bool, contents: WorktreeContents,
                             head_lost: str | None, mode: str, spelled: str = "") -> Decision:
    """``worktree remove [--force]`` (section 11). With ``--force``: deny when the worktree is
    dirty. Both forms: deny when ``head_lost`` (its HEAD commit, contained in no other ref) is
    set (git removes a clean detached worktree without ``--force``, and its commit becomes
    unreachable) or ignored content matches no regenerable glob (paths listed). ``spelled``: the command
    when it is not a ``worktree remove`` (a recursive ``rm`` of the worktree, judged as a
    forced removal)."""
    if mode == "off":
        return ALLOW
    problems: list[str] = []
    if force and contents.dirty:
        problems.append("uncommitted changes or untracked files:")
        problems += listed([shell_quote(p) for p in contents.dirty])
    if head_lost:
        problems.append(f"HEAD {head_lost[:10]} is contained in no branch, tag or "
                        "remote-tracking ref (a detached HEAD, or its branch is deleted too)")
    if contents.ignored_blocking:
        problems.append("ignored files that no branches.cleanup_after_merge.regenerable glob "
                        "covers (git worktree remove deletes them, --force or not):")
        problems += listed([f"{shell_quote(b.path)} ({b.reason})"
                             for b in contents.ignored_blocking])
    if not problems:
        return ALLOW
    head = (f"`{spelled}` would delete the worktree {shell_quote(path)} and lose work:"
            if spelled else
            f"`{'git worktree remove --force' if force else 'git worktree remove'} "
            f"{shell_quote(path)}` would lose work:")
    steps = []
    if force and contents.dirty:
        steps.append("commit the changes on the worktree's branch ("
                     + git_cmd("-C", path, "add", "-A") + " && "
                     + git_cmd("-C", path, "commit") + ") or ask a human")
    if head_lost:
        steps.append("put HEAD on a branch and push it (" + git_cmd("-C", path, "switch", "-c",
                     "<name>") + ", then git push -u)")
    if contents.ignored_blocking:
        steps.append("consume each listed ignored path, move it to a tracked home, or delete it "
                     "deliberately")
    return Decision(
        Verdict.DENY, R_WORKTREE_FORCE,
        head + "\n" + "\n".join(problems),
        "First " + "; ".join(steps) + "; then remove the worktree without --force ("
        + git_cmd("worktree", "remove", path) + "), or let `branchkeeper worktree retire "
        + shell_quote(path) + "` check it for you.")


def remote_delete_decision(remote: str, refused: Sequence[tuple[str, str]],
                           unproven: Sequence[tuple[str, str]]) -> Decision:
    """Remote deletes (section 7): ``refused`` (name, why) are never deleted by an agent (the
    default, integration lines, exempt and protected names); ``unproven`` (name, why) have no
    tracking tip that is an ancestor of the remote default or a line's remote ref."""
    if not refused and not unproven:
        return ALLOW
    lines = [f"{shell_quote(n)}: {why}" for n, why in (*refused, *unproven)]
    way = []
    if refused:
        way.append("The default branch, integration lines, exempt and protected names are never "
                   "deleted on the remote by an agent; ask a human.")
    if unproven:
        first = unproven[0][0]
        way.append("Merge the work into the default branch or an integration line and push it, "
                   f"then {git_cmd('fetch', remote)} and delete again; or run "
                   f"`branchkeeper delete --remote -- {shell_quote(first)}`, which proves the "
                   "work is preserved and keeps a recovery bundle.")
    return Decision(Verdict.DENY, R_PUSH_DELETE,
                    f"Deleting on {shell_quote(remote)} is not proven safe:\n"
                    + "\n".join(listed(lines)), " ".join(way))


def push_mass_decision(kind: str, remote: str | None) -> Decision:
    """``push --mirror`` / ``push --prune`` (section 7): deleting every remote branch missing
    locally cannot be proven lossless here, so deny with the one-by-one way out."""
    flag = "--mirror" if kind == "push_mirror" else "--prune"
    where = shell_quote(remote) if remote else "the remote"
    return Decision(
        Verdict.DENY, R_PUSH_DELETE,
        f"`git push {flag}` deletes every branch on {where} that is missing locally; the guard "
        "cannot prove that none of them holds work.",
        "Push the branches you mean by name, and delete remote branches one at a time with "
        "`git push <remote> --delete <name>` (each is proven) or `branchkeeper delete --remote "
        "-- <name>`. A mirror push is for a human to run.")
