"""What a ``git push`` invocation pushes, read from its words (issue 17; an outside trial,
F15): the forced updates of remote branches it asks for (:func:`force_pushes`, judged by
``policy.push``) and the parts that tell whether its configuration supplies the refspecs
(:func:`push_parts`, read by ``policy.fetch_config``). Text only: no git process.
"""

from __future__ import annotations

from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.gitargv import PUSH_OPTIONS, last_value
from branchkeeper.shell.model import GitInvocation


class ForcePush(NamedTuple):
    """A push that may replace a remote branch with a commit that does not contain it
    (``--force``/``-f``, ``--force-with-lease`` in every spelling, a ``+`` refspec): to
    ``remote`` (as written; None: the branch's push remote), ``src`` (the revision pushed;
    None: the current branch) onto the branch ``dst`` (None: where push.default sends the
    current branch); ``all_branches`` for ``--all``/``--branches``. ``dynamic``: a word is
    unknown."""

    remote: str | None
    src: str | None
    dst: str | None
    dynamic: bool
    cwd: str | None
    all_branches: bool = False


def force_pushes(g: GitInvocation) -> tuple[ForcePush, ...]:
    """Every forced update of a remote branch this ``git push`` asks for (issue 17): the
    lease of ``--force-with-lease`` is not counted as protection, since a tracking ref this
    clone fetched but never merged satisfies it. Deletions, ``--mirror`` and pushes to the
    repository itself are other rules'; a dry run pushes nothing."""
    if g.subcommand != "push":
        return ()
    p = gitopts.parse(g.args, g.args_dynamic, PUSH_OPTIONS)
    if p.has("dry-run", "delete", "mirror"):
        return ()
    forced = p.has("force", "force-with-lease")
    repo_opt = last_value(p, "repo")
    operands = list(p.operands)
    remote = repo_opt[1] if repo_opt else (operands.pop(0)[0] if operands else None)
    if remote in (".", "./"):
        return ()  # the repository itself: an overwrite of a local branch (_push_self)
    dynamic = g.dynamic or p.unknown
    if not operands:
        if not forced or (p.has("tags") and not p.has("all", "branches")):
            return ()
        return (ForcePush(remote, None, None, dynamic, g.cwd, p.has("all", "branches")),)
    out = []
    for spec, d in operands:
        body = spec[1:] if spec.startswith("+") else spec
        if not (forced or spec.startswith("+")) or not body or body.startswith(":"):
            continue
        src, colon, dst = body.partition(":")
        dst = dst if colon else ("" if src == "HEAD" else src)
        if dst.startswith("refs/") and not dst.startswith("refs/heads/"):
            continue  # a tag or another namespace: no tracking ref shows what it holds
        out.append(ForcePush(remote, src, dst.removeprefix("refs/heads/") or None,
                             dynamic or d, g.cwd))
    return tuple(out)


def push_parts(g: GitInvocation) -> tuple[str | None, int, bool]:
    """(the remote named, the number of refspecs named, whether it mirrors or pushes every
    branch or tag) of a ``git push`` invocation, read with the push option table (an option's
    value is no operand); a dynamic word counts as a named refspec."""
    p = gitopts.parse(g.args, g.args_dynamic, PUSH_OPTIONS)
    operands = list(p.operands)
    repo = next((v for k, v, _ in reversed(p.options) if k == "repo"), None)
    remote = repo if repo is not None else (operands.pop(0)[0] if operands else None)
    wide = p.has("mirror", "all", "branches", "tags", "delete")
    return remote, len(operands) + (1 if g.dynamic or p.unknown else 0), wide
