"""The repository facts the refusal rules read (issue 3, section 2; field case C05), as one
:class:`RefusalContext` (the rules themselves are :mod:`branchkeeper.policy.refusals`).

Two git processes: one ``for-each-ref`` over ``refs/heads`` and every remote's refs (upstreams
and each ``refs/remotes/*/HEAD`` target), one ``symbolic-ref -q HEAD`` for the current branch.
The worktrees come from the inventory's ``worktree list``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from branchkeeper.git.parse import records
from branchkeeper.git.repo import RepoFacts, Worktree
from branchkeeper.git.run import GitExit, run_git
from branchkeeper.model.config import Config

_HEADS = "refs/heads/"
_REMOTES = "refs/remotes/"


@dataclass(frozen=True, slots=True)
class CheckedOut:
    """Where a branch is checked out: the worktree ``path`` and whether it is the main one."""

    path: str
    is_main: bool


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


def read_refusal_context(facts: RepoFacts, config: Config, *, default_name: str | None,
                         worktrees: Sequence[Worktree]) -> RefusalContext:
    """Gather a :class:`RefusalContext` for the repository described by ``facts``.

    ``default_name``: the inventory's resolved default branch; ``worktrees``: every worktree
    (main first). Reads the upstream of every local branch (``branch.X.merge = refs/heads/Y``
    with ``branch.X.remote = .`` shows as upstream ``refs/heads/Y``) and the default branch of
    EVERY remote: the target of each ``refs/remotes/<r>/HEAD``, plus ``main`` and ``master``
    when any remote has them (C05). Raises :class:`GitError` when git cannot list refs.
    """
    out = run_git(["for-each-ref", "--format=%(refname)%00%(upstream)%00%(symref)",
                   "refs/heads", "refs/remotes"], cwd=facts.root).stdout
    dependents: dict[str, list[str]] = {}
    remote_defaults: set[str] = set()
    for ref, upstream, symref in records(out, fields=3):
        if ref.startswith(_HEADS):
            if upstream.startswith(_HEADS):
                dependents.setdefault(upstream[len(_HEADS):], []).append(ref[len(_HEADS):])
            continue
        if not ref.startswith(_REMOTES):
            continue
        rest = ref[len(_REMOTES):]
        _remote, _, name = rest.partition("/")
        if name == "HEAD" and symref.startswith(_REMOTES):
            target = symref[len(_REMOTES):].partition("/")[2]
            if target:
                remote_defaults.add(target)
        elif name in ("main", "master"):
            remote_defaults.add(name)
    current = None
    res = run_git(["symbolic-ref", "-q", "HEAD"], cwd=facts.root, check=False)
    # exit 1 = HEAD is detached (no current branch); other failures leave it unknown
    if res.returncode == GitExit.OK and res.text.strip().startswith(_HEADS):
        current = res.text.strip()[len(_HEADS):]
    checked_out: dict[str, CheckedOut] = {}
    for wt in worktrees:
        if wt.branch and wt.branch.startswith(_HEADS):
            checked_out.setdefault(wt.branch[len(_HEADS):], CheckedOut(str(wt.path), wt.is_main))
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
