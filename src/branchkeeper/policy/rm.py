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
from branchkeeper.policy.facts import GuardRepos, child_checkouts, git_failed
from branchkeeper.policy.plan import Plan, deleted_refs, describe, glob_only, under
from branchkeeper.policy.targets import Deleted, rm_spares_root
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.model import Invocation
from branchkeeper.shell.quoting import shell_quote


def expand_rm_globs(plan: Plan) -> Plan:
    """The plan with each glob ``rm -r`` target replaced by its matches (Python's ``glob`` in
    the ``rm``'s cwd, like bash without dotglob: each match is then judged as a static
    target); a target from any other expansion stays as it is (the deletion rule judges it)."""
    targets: list[tuple[str, Invocation]] = []
    for target, inv in plan.rm_targets:
        expanded = {w for w, d in zip(inv.argv, inv.dynamic_args, strict=False) if d}
        if target in ("/", "//") and target not in expanded and rm_spares_root(inv):
            continue  # rm refuses the root directory
        if target not in expanded and target.startswith("/"):
            targets.append((target, inv))
        elif inv.cwd is not None and glob_only(target):
            pattern = target if target.startswith("/") else os.path.join(inv.cwd, target)
            matches = sorted(globlib.glob(pattern))[:1000]
            targets += [(os.path.normpath(m), inv) for m in matches]
            targets += [] if matches else [(os.path.normpath(pattern), inv)]
        else:
            targets.append((target, inv))
    return plan._replace(rm_targets=tuple(targets))


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


def rm_worktrees(plan: Plan, found: Sequence[Deleted] = ()) -> list[tuple[str, Invocation]]:
    """Linked worktrees that a recursive ``rm`` deletes (the target is the worktree or holds
    it), each with its ``rm``: found on the filesystem alone (``<common>/worktrees/*/gitdir`` of
    the repository around the ``rm``'s cwd and around the target), no git process. ``found``:
    deletions whose targets a ``find`` selects: each linked worktree it reaches
    (:func:`find_reaches`) counts too."""
    hits: dict[str, Invocation] = {}
    static = [(t, inv) for t, inv in plan.rm_targets if t.startswith("/")]
    found = [d for d in found if not d.truncates]  # emptying files removes no worktree
    static += [(t, d.inv) for d in found for t in d.paths]  # e.g. fed to xargs by echo
    for target, inv in static:
        real = os.path.realpath(target)
        for wt in _linked_near(inv.cwd, real):
            if under(wt, real):
                hits.setdefault(wt, inv)
    for d in found:
        for scope, recursive in d.scopes:
            everything = scope.names is None and not scope.files_only  # -delete of it all
            for start in scope.starts:
                if not (recursive or everything) or not start.startswith("/"):
                    continue
                real = os.path.realpath(start)
                for wt in _linked_near(d.inv.cwd, real):
                    if find_reaches(scope.starts, scope.names, wt) and not scope.files_only:
                        hits.setdefault(wt, d.inv)
    return list(hits.items())


def _linked_near(cwd: str | None, real: str) -> list[str]:
    """Linked worktrees of the repositories around ``cwd``, around ``real`` and of the
    checkouts directly under ``real``."""
    out: list[str] = []
    seen: set[str] = set()
    for where in (cwd, real, *child_checkouts(real)):
        repo = locate(where) if where else None
        if repo is None or repo.common_dir in seen:
            continue
        seen.add(repo.common_dir)
        out += linked_worktree_paths(repo)
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
