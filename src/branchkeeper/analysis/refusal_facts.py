"""The repository facts the refusal rules read (issue 3, section 2; field case C05), as one
:class:`RefusalContext` (the rules themselves are :mod:`branchkeeper.analysis.refusals`).

Built by the inventory from what it already read: the upstreams of its ``for-each-ref``, which
also lists each remote's ``HEAD``, ``main`` and ``master`` (:data:`REMOTE_DEFAULT_PATTERNS`),
and its ``worktree list``. Only a bare repository costs a ``symbolic-ref`` (its current branch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from branchkeeper.git.repo import RepoFacts, Worktree
from branchkeeper.git.run import GitExit, run_git

if TYPE_CHECKING:
    from branchkeeper.model.config import Config

_HEADS = "refs/heads/"
_REMOTES = "refs/remotes/"


@dataclass(frozen=True, slots=True)
class CheckedOut:
    """Where a branch is checked out: the worktree ``path``, whether it is the main one, and
    whether its directory is gone (``prunable``: ``git worktree prune`` would drop the entry)."""

    path: str
    is_main: bool
    prunable: bool = False


@dataclass(frozen=True, slots=True)
class RefusalContext:
    """What the refusal rules read.

    ``default_name``: the resolved default branch (or ``None``); ``remote_defaults``: the branch
    each ``refs/remotes/*/HEAD`` points at plus ``main``/``master`` where any remote has them
    (C05); ``checked_out``: branch name -> its worktree; ``current``: the branch checked out where
    the command runs; ``dependents``: branch Y -> local branches whose upstream is
    ``refs/heads/Y`` (a stack).
    """

    default_name: str | None
    protected_names: frozenset[str]
    integration_lines: tuple[str, ...]
    exempt: tuple[str, ...]
    remote_defaults: frozenset[str] = frozenset()
    checked_out: Mapping[str, CheckedOut] = field(default_factory=dict)
    current: str | None = None
    dependents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


#: The refs, besides the inventory's own, that name every remote's default branch (C05): one
#: ``for-each-ref`` lists them with the rest.
REMOTE_DEFAULT_PATTERNS = ("refs/remotes/*/HEAD", "refs/remotes/*/main", "refs/remotes/*/master")


def current_branch(facts: RepoFacts, worktrees: Sequence[Worktree]) -> str | None:
    """The branch checked out where the command runs: the branch of the worktree at
    ``facts.toplevel`` (none when detached); in a bare repository (no worktree here) the
    branch ``HEAD`` names (one ``symbolic-ref``)."""
    if facts.toplevel is not None:
        here = facts.toplevel.resolve()
        for wt in worktrees:
            if wt.path.resolve() == here:
                return wt.branch[len(_HEADS):] if wt.branch and \
                    wt.branch.startswith(_HEADS) else None
    res = run_git(["symbolic-ref", "-q", "HEAD"], cwd=facts.root, check=False)
    # exit 1 = HEAD is detached (no current branch); other failures leave it unknown
    if res.returncode == GitExit.OK and res.text.strip().startswith(_HEADS):
        return res.text.strip()[len(_HEADS):]
    return None


def refusal_context(refs: Iterable[tuple[str, str, str]], config: Config, *,
                    default_name: str | None, worktrees: Sequence[Worktree],
                    current: str | None) -> RefusalContext:
    """A :class:`RefusalContext` from what the inventory read (no git process).

    ``refs``: ``(refname, upstream, symref)`` of every local branch and of the refs
    :data:`REMOTE_DEFAULT_PATTERNS` list (others are ignored); ``worktrees``: every worktree
    (main first); ``current``: :func:`current_branch`. The upstream of a local branch
    (``branch.X.merge = refs/heads/Y`` with ``branch.X.remote = .``) shows as ``refs/heads/Y``;
    the default branch of EVERY remote is the target of its ``refs/remotes/<r>/HEAD``, plus
    ``main`` and ``master`` when any remote has them (C05).
    """
    dependents: dict[str, list[str]] = {}
    remote_defaults: set[str] = set()
    for ref, upstream, symref in refs:
        if ref.startswith(_HEADS):
            if upstream.startswith(_HEADS):
                dependents.setdefault(upstream[len(_HEADS):], []).append(ref[len(_HEADS):])
            continue
        if not ref.startswith(_REMOTES):
            continue
        _remote, _, name = ref[len(_REMOTES):].partition("/")
        if name == "HEAD" and symref.startswith(_REMOTES):
            target = symref[len(_REMOTES):].partition("/")[2]
            if target:
                remote_defaults.add(target)
        elif name in ("main", "master"):
            remote_defaults.add(name)
    checked_out: dict[str, CheckedOut] = {}
    for wt in worktrees:
        if wt.branch and wt.branch.startswith(_HEADS):
            checked_out.setdefault(wt.branch[len(_HEADS):], CheckedOut(str(wt.path), wt.is_main,
                                                                 wt.prunable))
    b = config.branches
    protected = set(b.protected_names)
    if default_name:
        protected.add(default_name)
    return RefusalContext(
        default_name=default_name,
        protected_names=frozenset(protected),
        integration_lines=tuple(b.integration_lines),
        exempt=tuple(b.exempt),
        remote_defaults=frozenset(remote_defaults),
        checked_out=checked_out,
        current=current,
        dependents={k: tuple(sorted(v)) for k, v in dependents.items()},
    )
