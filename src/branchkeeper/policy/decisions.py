"""Reading a parsed command into what the guard must judge (issue 5 sections 2-3).

Pure: :func:`plan_command` sorts a :class:`ParsedCommand` into creations, destructions,
evacuations and recursive ``rm`` targets, with no git process and no filesystem access. The
guard (:mod:`branchkeeper.policy.guard`) gathers facts only for what the plan holds, so a
command with nothing to judge costs no git process at all.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from branchkeeper.policy.gitargv import (
    Creation,
    Destruction,
    Evacuation,
    creation,
    destruction,
    evacuation,
)
from branchkeeper.policy.shell import git_invocations, rm_recursive_targets
from branchkeeper.policy.shellmodel import GitInvocation, Invocation, ParsedCommand

#: Destruction kinds that section 13 pairs with an evacuation.
PAIRED_KINDS = frozenset({"branch_force_delete", "branch_delete", "update_ref_delete",
                          "worktree_remove", "worktree_remove_force"})


@dataclass(frozen=True, slots=True)
class Plan:
    """What one command asks of the guard, each item with the git invocation (or the ``rm``
    invocation) it came from."""

    parsed: ParsedCommand
    creations: tuple[tuple[Creation, GitInvocation], ...]
    destructions: tuple[tuple[Destruction, GitInvocation], ...]
    evacuations: tuple[tuple[Evacuation, GitInvocation], ...]
    rm_targets: tuple[tuple[str, Invocation], ...]

    @property
    def empty(self) -> bool:
        """True when there is nothing to judge (no git process is then needed)."""
        return not (self.creations or self.destructions or self.evacuations)


def plan_command(parsed: ParsedCommand) -> Plan:
    """Sort every git invocation of ``parsed`` into creation / destruction / evacuation, and
    collect recursive ``rm`` targets (section 13 pairs them with an evacuation)."""
    creations: list[tuple[Creation, GitInvocation]] = []
    destructions: list[tuple[Destruction, GitInvocation]] = []
    evacuations: list[tuple[Evacuation, GitInvocation]] = []
    for g in git_invocations(parsed):
        c = creation(g)
        if c is not None:
            creations.append((c, g))
        destructions.extend((d, g) for d in destruction(g))
        e = evacuation(g)
        if e is not None:
            evacuations.append((e, g))
    rms = tuple((t, inv) for inv in parsed.invocations for t in rm_recursive_targets(inv))
    return Plan(parsed, tuple(creations), tuple(destructions), tuple(evacuations), rms)


def deleted_refs(destructions: Iterable[Destruction]) -> tuple[str, ...]:
    """Full names of every local ref the destructions delete (branch deletes, update-ref)."""
    out: list[str] = []
    for d in destructions:
        if d.kind in ("branch_force_delete", "branch_delete", "update_ref_delete"):
            out.extend(d.refs)
    return tuple(dict.fromkeys(out))


_REV_SPLIT = re.compile(r"\.\.\.?")


def rev_branch_names(rev: str | None) -> tuple[str, ...]:
    """Branch-like names a revision operand mentions (``main..feat`` -> main, feat;
    ``^x~2`` -> x); the caller keeps those that are local branches."""
    if not rev:
        return ()
    names = []
    for part in _REV_SPLIT.split(rev):
        part = part.lstrip("^")
        cut = min((i for i in (part.find(c) for c in "~^@:") if i >= 0), default=len(part))
        part = part[:cut]
        part = part[len("refs/heads/"):] if part.startswith("refs/heads/") else part
        if part and part != "HEAD":
            names.append(part)
    return tuple(names)


def under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or inside it (both absolute, normalised)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def describe(g: GitInvocation | Invocation) -> str:
    """The command's own text, for messages (the source span, else the argv joined)."""
    src = g.source
    argv = g.invocation.argv if isinstance(g, GitInvocation) else g.argv
    text = (src or " ".join(argv)).strip()
    return text if len(text) <= 200 else text[:197] + "..."
