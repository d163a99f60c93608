"""The guard on ``rm -r``: which worktrees a removal reaches (globs expanded, dynamic targets
refused beside linked worktrees) and what removing them would lose (issue 5; first document,
sections 11 and 13)."""

from __future__ import annotations

import fnmatch
import glob as globlib
import os
from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import linked_worktree_paths, read_worktree_contents, unreachable_tips
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import locate
from branchkeeper.policy import removal as rr
from branchkeeper.policy.decision import Decision
from branchkeeper.policy.facts import GuardRepos, git_failed
from branchkeeper.policy.plan import Plan, deleted_refs, describe, glob_only, under
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.model import Invocation
from branchkeeper.shell.quoting import shell_quote


def expand_rm_globs(plan: Plan) -> tuple[Plan, list[tuple[str, Invocation]]]:
    """The plan with each glob ``rm -r`` target replaced by its matches (Python's ``glob`` in
    the ``rm``'s cwd, like bash without dotglob: each match is then judged as a static target),
    and the targets from any other expansion ($VAR, $(...), braces, loops, an unknown cwd)."""
    targets: list[tuple[str, Invocation]] = []
    unknown: list[tuple[str, Invocation]] = []
    for target, inv in plan.rm_targets:
        expanded = {w for w, d in zip(inv.argv, inv.dynamic_args, strict=False) if d}
        if target not in expanded and target.startswith("/"):
            targets.append((target, inv))
        elif inv.cwd is not None and glob_only(target):
            pattern = target if target.startswith("/") else os.path.join(inv.cwd, target)
            matches = sorted(globlib.glob(pattern))[:1000]
            targets += [(os.path.normpath(m), inv) for m in matches]
            targets += [] if matches else [(os.path.normpath(pattern), inv)]
        else:
            unknown.append((target, inv))
            targets.append((target, inv))
    return plan._replace(rm_targets=tuple(targets)), unknown


def unknown_rm(unknown: Sequence[tuple[str, Invocation]], cwd: str) -> list[Decision]:
    """``rm -r`` of a target the guard cannot know: denied when the repository around the
    ``rm`` has a linked worktree (read from files, no git process), else allowed (item 3).
    For the ``{}`` of ``find ... -exec rm -r {}`` only the worktrees find can reach count
    (:func:`find_reaches`)."""
    out: list[Decision] = []
    for target, inv in unknown:
        worktrees = _worktrees_near(inv.cwd or cwd)
        if inv.found_by is not None and "{}" in target:
            scope = inv.found_by
            worktrees = [w for w in worktrees if find_reaches(scope.starts, scope.names, w)]
        if worktrees:
            out.append(unparsed_decision(
                f"`{describe(inv)}` deletes {shell_quote(target)} recursively",
                "the target comes from an expansion (a variable, $(...), braces, a loop, "
                "xargs, find or an unknown directory), so the guard cannot tell whether it "
                "removes one of the repository's linked worktrees"))
            break
    return out


def _worktrees_near(where: str) -> list[str]:
    """Linked worktrees an ``rm`` of an unknown target run in ``where`` could reach: those of
    the repository around ``where``, or, outside every repository, those of the checkouts
    directly under it (``cd .. && ls -d wt-* | xargs rm -rf`` in the sibling layout)."""
    repo = locate(where)
    if repo is not None:
        return linked_worktree_paths(repo)
    found: dict[str, None] = {}
    for checkout in child_checkouts(where):
        near = locate(checkout)
        if near is not None:
            found.update(dict.fromkeys(linked_worktree_paths(near)))
    return list(found)


def find_reaches(starts: Sequence[str], names: Sequence[tuple[str, bool]] | None,
                 worktree: str) -> bool:
    """Whether ``find STARTS [-name P...] -exec rm -r {}`` can remove ``worktree`` (a real
    path): it lies at or under a starting point, and (with ``-name``/``-iname`` tests) some
    path find visits on the way down to it (the starting point, each directory below it, the
    worktree itself) has a base name matching one of the patterns. A starting point that is
    not absolute (unknown cwd) reaches everything."""
    for start in starts:
        if not start.startswith("/"):
            return True
        real = os.path.realpath(start)
        if not (worktree == real or under(worktree, real)):
            continue
        if names is None:
            return True
        parts = [os.path.basename(start) or start]
        parts += [] if worktree == real else os.path.relpath(worktree, real).split(os.sep)
        for part in parts:
            if any(fnmatch.fnmatchcase(part.lower() if nocase else part,
                                       pattern.lower() if nocase else pattern)
                   for pattern, nocase in names):
                return True
    return False


def rm_worktrees(plan: Plan) -> list[tuple[str, Invocation]]:
    """Linked worktrees that a recursive ``rm`` deletes (the target is the worktree or holds
    it), each with its ``rm``: found on the filesystem alone (``<common>/worktrees/*/gitdir`` of
    the repository around the ``rm``'s cwd and around the target), no git process."""
    hits: dict[str, Invocation] = {}
    for target, inv in plan.rm_targets:
        if not target.startswith("/"):
            continue  # an expansion: the evacuation rule alone looks at it
        real = os.path.realpath(target)
        seen: set[str] = set()
        for where in (inv.cwd, real, *child_checkouts(real)):
            repo = locate(where) if where else None
            if repo is None or repo.common_dir in seen:
                continue
            seen.add(repo.common_dir)
            for wt in linked_worktree_paths(repo):
                if under(wt, real):
                    hits.setdefault(wt, inv)
    return list(hits.items())


def child_checkouts(path: str, limit: int = 500) -> list[str]:
    """Direct subdirectories of ``path`` that are git checkouts (hold a ``.git``), looking at
    no more than ``limit`` entries: how a worktree is found under an ``rm`` target that lies
    outside every repository."""
    out: list[str] = []
    try:
        with os.scandir(path) as entries:
            for n, entry in enumerate(entries):
                if n >= limit:
                    break
                if entry.is_dir(follow_symlinks=False) and os.path.lexists(
                        os.path.join(entry.path, ".git")):
                    out.append(entry.path)
    except OSError:
        return out
    return out


def rm_decisions(plan: Plan, repos: GuardRepos, hits: Sequence[tuple[str, Invocation]]
                  ) -> list[Decision]:
    """``rm -r`` of a worktree judged like ``worktree remove --force`` (section 11)."""
    out: list[Decision] = []
    excluded = deleted_refs(d for d, _ in plan.destructions)
    for path, inv in hits:
        try:
            facts = repos.of(path)
            if facts is None:
                continue
            wt = facts.worktree_at(path)
            if wt is None or wt.is_main:
                continue
            head = None
            if wt.head is not None and (wt.detached or (wt.branch and wt.branch in excluded)):
                lost, _ = unreachable_tips(facts.repo, [str(wt.head)], excluded_refs=excluded)
                head = str(wt.head) if lost else None
            contents = read_worktree_contents(path, facts.config)
            out.append(rr.worktree_remove_decision(
                path, force=True, contents=contents, head_lost=head,
                mode=facts.config.branches.force_removal.mode, spelled=describe(inv)))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(f"`{describe(inv)}` deletes the worktree "
                                         f"{shell_quote(path)}", f"git could not answer ({why})"))
    return out
