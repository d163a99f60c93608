"""The texts of the guard's ref-loss decisions and the last sweep's word on a deleted tip
(first document, sections 7 and 11; issue 11, sections 1 and 5): ``branch -D`` and ``update-ref
-d`` of a tip no other ref contains (``R-GIT-BRANCH-FORCE-DELETE``), also in the sweep's words
for a tip it found squash- or rebase-merged and for one it found superseded, ``tag -d``
(``R-GIT-TAG-DELETE``) and an overwrite of a branch (``R-GIT-BRANCH-OVERWRITE``). The
``*_decision`` functions are pure texts of facts; :func:`landed_tips` and :func:`superseded_tips` read the
last-sweep file (no git). :mod:`branchkeeper.policy.removal` gathers the facts and calls them.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.git.types import push_argv
from branchkeeper.model.words import state_word
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.facts import GuardFacts
from branchkeeper.shell.quoting import git_cmd, shell_quote
from branchkeeper.state.last_sweep import read_sweep

R_BRANCH_FORCE = "R-GIT-BRANCH-FORCE-DELETE"
R_OVERWRITE = "R-GIT-BRANCH-OVERWRITE"
R_TAG_DELETE = "R-GIT-TAG-DELETE"


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
        + git_cmd(*push_argv(remote, short)[1:]) + "). Then `branchkeeper delete -- "
        + shell_quote(short) + "` proves the work is preserved, writes a recovery bundle and "
        "can be undone. If the work is truly unwanted, ask a human to delete it.")


def landed_delete_decision(landed: Sequence[tuple[str, str, str, str]], *, lost_commits: int,
                           mode: str, how: str) -> Decision:
    """``branch -D`` / ``update-ref -d`` of a branch whose tip no other ref contains but that
    the last sweep found merged by content (squash- or rebase-merged) at that tip: the same deny
    as :func:`branch_delete_decision` (its commits would be reachable from no ref), in the
    sweep's words, with the command the sweep suggests for it. ``landed``: (branch, tip, state
    word, the sweep's ``cleanup`` text) tuples; other arguments as :func:`branch_delete_decision`."""
    if not landed or mode == "off":
        return ALLOW
    names, short, plural = _lost_branches([(n, t) for n, t, _, _ in landed])
    words = sorted({w for _, _, w, _ in landed})
    q = shell_quote(short)
    text = next((c for n, _, _, c in landed if n == short), "")
    refused = text.removeprefix("not deleted: ") if text.startswith("not deleted: ") else ""
    way = (f"`branchkeeper delete -- {q}` proves the work is preserved again, writes a recovery "
           "bundle and can be undone." if not refused else
           f"The last sweep says `branchkeeper delete` keeps it for now: {refused}.")
    return Decision(
        Verdict.DENY, R_BRANCH_FORCE,
        f"`{how}` would leave commits in no ref: the last sweep found the branch{plural} below "
        f"{' or '.join(words)} (the work is on the base), but no other branch, tag or "
        f"remote-tracking ref contains the tip ({lost_commits} commit"
        f"{'s' if lost_commits != 1 else ''} would be reachable from no ref):\n"
        + "\n".join(listed(names)),
        f"Delete it the proven way instead: {way} If git must delete it, ask a human.")


def superseded_delete_decision(superseded: Sequence[tuple[str, str]], *, mode: str, how: str
                               ) -> Decision:
    """``branch -D`` of a branch the last sweep found ``superseded`` at its tip (issue 11,
    section 1): another branch contains its commits, but that branch landed as a squash without
    some of its lines, so the containment proof does not hold by content. Denied like a loss,
    with the ways out the sweep names. ``superseded``: (branch, tip) pairs; other arguments as
    :func:`branch_delete_decision`."""
    if not superseded or mode == "off":
        return ALLOW
    names, short, plural = _lost_branches(superseded)
    q = shell_quote(short)
    return Decision(
        Verdict.DENY, R_BRANCH_FORCE,
        f"`{how}` would lose work: the last sweep found the branch{plural} below superseded: "
        "their commits are inside a branch that landed as a squash, but changed lines of theirs "
        "did not land (`branchkeeper sweep` lists them):\n" + "\n".join(listed(names)),
        f"Keep the work: park it (branchkeeper park --reason '<why it waits>' -- {q}), or delete "
        f"it deliberately with its bundle (branchkeeper delete --allow-unproven --reason "
        f"'<why>' -- {q}); or ask a human.")


def tag_delete_decision(lost: Sequence[tuple[str, str]], *, lost_commits: int, remote: str,
                        mode: str, how: str) -> Decision:
    """``git tag -d``/``--delete`` (issue 17): the same containment proof as ``branch -D``:
    deny when a deleted tag is the only ref holding its commit. ``lost``: (full tag ref, tip)
    pairs no other ref contains; other arguments as :func:`branch_delete_decision`."""
    if not lost or mode == "off":
        return ALLOW
    names = [f"{shell_quote(n.removeprefix('refs/tags/'))} at {tip[:10]}" for n, tip in lost]
    first = lost[0][0].removeprefix("refs/tags/")
    return Decision(
        Verdict.DENY, R_TAG_DELETE,
        f"`{how}` would lose work: no branch, other tag or remote-tracking ref contains the "
        f"commit of the tag{'s' if len(lost) > 1 else ''} below ({lost_commits} commit"
        f"{'s' if lost_commits != 1 else ''} would be reachable from no ref):\n"
        + "\n".join(listed(names)),
        "Keep the work first: push the tag (" + git_cmd("push", remote, "refs/tags/" + first)
        + ") or put its commit on a branch (" + git_cmd("branch", first + "-keep",
                                                        "refs/tags/" + first)
        + "); then delete it. Or ask a human.")


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
        "Keep the work first: push it (" + git_cmd(*push_argv(remote, short)[1:]) + ") or keep it "
        "on another branch (" + git_cmd("branch", short + "-keep", short) + "); then the "
        "overwrite is allowed. Or use a new branch name instead; or ask a human.")


def landed_tips(facts: GuardFacts, gone: list[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """(branch, tip, state word, cleanup text) of the branches among ``gone`` (full refs whose
    tips no other ref contains) that the last sweep found merged by content at that tip
    (:func:`~branchkeeper.model.words.state_word`; the text of its ``cleanup`` map, ``""``
    without one): one read of the last-sweep file."""
    heads = [(r[len("refs/heads/"):], t) for r, t in gone if r.startswith("refs/heads/")]
    if not heads:
        return []
    sweep = read_sweep(facts.repo)
    cleanup = sweep.cleanup or {}
    out = []
    for name, tip in heads:
        entry = sweep.entry(name, tip)
        if entry is not None and entry.state in _LANDED:
            text = cleanup.get(name)
            out.append((name, tip, state_word(entry.state), text if type(text) is str else ""))
    return out


#: The states of the last sweep in which a tip no other ref contains is on the base by content.
_LANDED = frozenset({"patch_equivalent", "merged", "merged_into_line"})


def superseded_tips(facts: GuardFacts, contained: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (branch, tip) pairs of ``contained`` (full refs whose tips another ref contains)
    that the last sweep found superseded at that tip: one read of the last-sweep file, only
    when some branch is contained."""
    heads = [(r[len("refs/heads/"):], t) for r, t in contained if r.startswith("refs/heads/")]
    if not heads:
        return []
    sweep = read_sweep(facts.repo)
    out = []
    for name, tip in heads:
        entry = sweep.entry(name, tip)
        if entry is not None and entry.state == "superseded":
            out.append((name, tip))
    return out
