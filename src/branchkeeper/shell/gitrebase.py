"""Read a ``git rebase`` that starts a rebase with ``--onto``: the one form whose plain reading
drops commits from the branch it rewrites (issue 17, the guard's outside trial).

``git rebase --onto NEW UPSTREAM [BRANCH]`` replays ``UPSTREAM..BRANCH`` onto ``NEW`` and sets
BRANCH to the result. The commits of BRANCH that ``UPSTREAM`` also reaches but ``NEW`` does not
are not replayed: BRANCH no longer holds them (``git rebase --onto main feat`` while on
``feat`` drops every commit of feat since main, as ``git reset --hard main`` does). Without
``--onto`` the new base is UPSTREAM itself, so nothing is dropped; ``--root`` replays every
commit and ``--keep-base`` keeps the base: neither drops any. Which of the dropped commits
another ref still holds is for the policy. Pure; the record is a NamedTuple (hook path).
"""

from __future__ import annotations

from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.model import GitInvocation

# builtin/rebase.c (git 2.39 to 2.47) options; `C` takes a number, `S` an optional key id.
_REBASE = gitopts.spec(
    "|onto= |keep-base |verify |no-verify q|quiet v|verbose n|no-stat |stat |signoff "
    "|committer-date-is-author-date |reset-author-date |ignore-whitespace |whitespace= "
    "|ignore-date C= |continue |skip |abort |quit |edit-todo |show-current-patch |apply "
    "m|merge i|interactive |rerere-autoupdate |empty= |autosquash |update-refs S|gpg-sign? "
    "|autostash x|exec= r|rebase-merges? |fork-point s|strategy= X|strategy-option= |root "
    "|reschedule-failed-exec |reapply-cherry-picks k|keep-empty f|force-rebase |no-ff "
    "|allow-empty-message |trailer= |preserve-merges"
)
#: Options that act on a rebase in progress instead of starting one.
_ACTIONS = ("continue", "skip", "abort", "quit", "edit-todo", "show-current-patch")


class RebaseOnto(NamedTuple):
    """``git rebase --onto NEW [UPSTREAM [BRANCH]]``: ``onto`` the new base as written,
    ``upstream`` (None: the branch's configured upstream, ``BRANCH@{upstream}``), ``branch``
    (None: the current branch), ``dynamic`` when a word comes from an expansion or an option
    is one git does not know."""

    onto: str
    upstream: str | None
    branch: str | None
    dynamic: bool
    cwd: str | None


def rebase_onto(g: GitInvocation) -> RebaseOnto | None:
    """The ``--onto`` rebase ``g`` starts, or None: another subcommand, a rebase without
    ``--onto`` (or with ``--root``/``--keep-base``: nothing is dropped), an action on a rebase
    in progress (``--continue``, ``--abort``...), or a form git refuses (more than two
    operands)."""
    if g.subcommand != "rebase":
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _REBASE)
    onto = p.values("onto")
    if not onto or onto[-1][1] is None or p.has(*_ACTIONS) or p.has("root", "keep-base"):
        return None
    ops = [t for t, _ in p.operands]
    if len(ops) > 2:
        return None  # git prints its usage and does nothing
    dynamic = g.dynamic or p.unknown or p.dynamic
    return RebaseOnto(onto[-1][1], ops[0] if ops else None, ops[1] if len(ops) > 1 else None,
                      dynamic, g.cwd)
