"""Discarding uncommitted work (``R-GIT-DISCARD-CHANGES``; issue 5 section 2): ``reset
--hard``, ``checkout -f`` / ``checkout -- <paths>``, ``restore``, ``switch -f``, ``clean -f``,
``stash drop/clear``, ``mv -f`` over a file, a stash save followed by a drop in one
command, and a stash save over edits a skip-worktree or assume-unchanged flag hides (each of
them sees those edits: ``discardable``).

:func:`discard_decisions` runs one bounded ``status`` (or one stash look-up) per discarding git
command, in the worktree it acts on; the deny texts list what would be thrown away.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import clean_removes, discardable, is_commitish, read_tips
from branchkeeper.analysis.hidden_edits import unflag_command
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.discard_plan import (
    clean_enters_repositories,
    reset_target,
    reset_with_paths,
    stash_then_drop,
)
from branchkeeper.policy.facts import GuardRepos, git_failed
from branchkeeper.policy.plan import Plan, describe, glob_only
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote

R_DISCARD = "R-GIT-DISCARD-CHANGES"

_DISCARDS = {"reset_hard": "staged or unstaged changes to tracked files",
             "reset_merge": "staged changes", "git_rm_force": "changes to tracked files",
             "checkout_force": "changes to tracked files", "checkout_paths": "changes to tracked files",
             "restore": "changes to tracked files", "switch_force": "changes to tracked files",
             "clean": "files git does not track",
             "mv_force": "uncommitted changes or untracked files the move writes over",
             "save_stash": "edits a skip-worktree or assume-unchanged flag hides: the stash "
                           "leaves them out and its reset overwrites them"}  # fmt: skip


def discard_decision(kind: str, worktree: str, paths: Sequence[str], *, mode: str, how: str,
                     ignored: bool = False) -> Decision:
    """``R-GIT-DISCARD-CHANGES`` (issue 5 section 2): ``reset --hard``, ``checkout -f`` /
    ``checkout -- <paths>``, ``restore``, ``switch -f``, ``clean -f``, ``stash drop/clear``.
    ``paths``: what the one ``status`` of ``worktree`` found that the command throws away (for
    ``stash_*`` kinds: the stash entries, ``["refs/stash"]`` when one exists); empty allows.
    ``mode``: ``branches.force_removal.mode`` (block | off); ``ignored``: a ``clean -x/-X``."""
    if not paths or mode == "off":
        return ALLOW
    wt = shell_quote(worktree)
    if kind.startswith("stash_"):
        return Decision(
            Verdict.DENY, R_DISCARD,
            f"`{how}` would delete stashed work: the stash of {wt} holds entries that no branch "
            "contains, and a dropped stash is reachable from no ref.",
            "Keep the stashed work first: turn it into a branch (" + git_cmd(
                "-C", worktree, "stash", "branch", "<name>") + ") and commit or push it, or "
            "apply it and commit; or ask a human.")
    if kind == "save_stash":
        return Decision(
            Verdict.DENY, R_DISCARD,
            f"`{how}` would discard uncommitted work in {wt} ({_DISCARDS[kind]}):\n"
            + "\n".join(listed([shell_quote(p) for p in paths])),
            "Clear the flags and commit those edits first (" + str(unflag_command(
                worktree, paths)) + " && " + git_cmd("-C", worktree, "commit", "-a") + "), "
            "then run the command again; or ask a human.")
    what = _DISCARDS.get(kind, "uncommitted work")
    if kind == "clean" and ignored:
        what = "files git does not track, ignored ones included"
    return Decision(
        Verdict.DENY, R_DISCARD,
        f"`{how}` would discard uncommitted work in {wt} ({what}):\n"
        + "\n".join(listed([shell_quote(p) for p in paths])),
        "Commit the work first (" + git_cmd("-C", worktree, "add", "-A") + " && "
        + git_cmd("-C", worktree, "commit") + ") or stash it ("
        + git_cmd("-C", worktree, "stash", "push", "--include-untracked") + "), then run the "
        "command again; or ask a human.")


def stash_drop_decision(worktree: str, paths: Sequence[str], *, mode: str, how: str,
                        save: str) -> Decision:
    """A stash save and a ``stash drop``/``clear`` in ONE command (``R-GIT-DISCARD-CHANGES``):
    ``paths`` are what the one ``status`` of ``worktree`` found for the save to stash (empty
    allows); ``save`` and ``how`` spell the two steps."""
    if not paths or mode == "off":
        return ALLOW
    wt = shell_quote(worktree)
    return Decision(
        Verdict.DENY, R_DISCARD,
        f"`{save}` then `{how}` in one command would discard uncommitted work in {wt}: the "
        "stash takes it and the drop leaves it reachable from no ref:\n"
        + "\n".join(listed([shell_quote(p) for p in paths])),
        "Commit the work first (" + git_cmd("-C", worktree, "add", "-A") + " && "
        + git_cmd("-C", worktree, "commit") + "), or keep the stash (drop nothing); or ask a "
        "human.")


def discard_decisions(plan: Plan, repos: GuardRepos, unparsed: str) -> list[Decision]:
    """``R-GIT-DISCARD-CHANGES``: one ``status`` (or one stash look-up) per discarding git
    command, in the worktree it acts on."""
    out: list[Decision] = []
    saves = {id(drop): (save, u, i) for save, drop, u, i in stash_then_drop(plan.parsed, plan.discards)}
    for x, g in plan.discards:
        how = describe(g)
        if unparsed:
            out.append(unparsed_decision(f"`{how}` discards work", "the command could not be "
                                         f"read in full ({unparsed})"))
            continue
        if g.cwd is None:
            out.append(unparsed_decision(f"`{how}` discards work", "the directory comes from "
                                         "an expansion the guard cannot know"))
            continue
        try:
            facts = repos.of(g.cwd, g)
            if facts is None or facts.config.branches.force_removal.mode == "off":
                continue
            where = g.work_tree or facts.repo.toplevel or g.cwd
            if id(g) in saves and not unparsed:
                save, u, i = saves[id(g)]
                stashed = discardable(g.cwd, (), tracked=True, untracked=u, ignored=i,
                                      git_dir=g.git_dir, work_tree=g.work_tree)
                if stashed:
                    out.append(stash_drop_decision(
                        where, stashed, mode=facts.config.branches.force_removal.mode, how=how,
                        save=describe(save)))
                    continue
            if x.kind == "checkout_maybe_path":
                op = x.pathspecs[0]
                if not x.dynamic and not glob_only(op) and not os.path.lexists(
                        os.path.join(g.work_tree or g.cwd, op)):
                    continue  # no such path: a branch or commit to switch to (no git process)
                if not x.dynamic and is_commitish(g.cwd, op, git_dir=g.git_dir):
                    continue  # switches to a branch or commit: git keeps (or refuses over) edits
                x = x._replace(kind="checkout_paths")
            if x.kind.startswith("stash_"):
                found: Sequence[str] = list(read_tips(facts.repo, ["refs/stash"]))
            else:
                specs = () if x.dynamic else x.pathspecs
                if x.kind == "mv_force" and not x.dynamic:
                    moved = _mv_targets(x.pathspecs, g.cwd)
                    if not moved:
                        continue  # several sources and no directory to move them into: git refuses
                    specs = moved
                if x.pathspec_file is not None and not x.dynamic:
                    listed_specs = pathspecs_from(x.pathspec_file, g.cwd, nul=x.pathspec_nul)
                    if listed_specs == ():
                        continue  # the file names no path: nothing is touched
                    specs = listed_specs or ()
                if x.kind == "clean" and x.excludes:  # git applies its -e patterns itself
                    found = clean_removes(g.cwd, specs, excludes=x.excludes,
                                          untracked=x.untracked, ignored=x.ignored,
                                          git_dir=g.git_dir, work_tree=g.work_tree)
                else:
                    found = discardable(g.cwd, specs, tracked=x.kind != "clean",
                                        untracked=x.untracked, ignored=x.ignored,
                                        git_dir=g.git_dir, work_tree=g.work_tree,
                                        staged_only=x.kind == "reset_merge",
                                        visible=x.kind != "save_stash")
                if x.kind == "clean" and not clean_enters_repositories(g):
                    found = [f for f in found if not _only_repositories(os.path.join(where, f))]
                if found and x.kind in ("reset_hard", "reset_merge") and _git_refuses(g):
                    continue
            out.append(discard_decision(x.kind, where, found, how=how, ignored=x.ignored,
                                        mode=facts.config.branches.force_removal.mode))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(f"`{how}` discards work",
                                         f"git could not answer ({why})"))
    return out


def _mv_targets(operands: Sequence[str], cwd: str) -> tuple[str, ...]:
    """The paths ``git mv -f SRC... DST`` run in ``cwd`` writes over, as literal pathspecs:
    DST/<name of each SRC> when DST is a directory, else DST itself for one SRC; () when git
    refuses (several sources, DST no directory). The filesystem only."""
    *sources, dst = operands
    if os.path.isdir(os.path.join(cwd, dst)):
        return tuple(":(literal)" + posixpath.join(dst, posixpath.basename(s.rstrip("/")))
                     for s in sources)
    return (":(literal)" + dst,) if len(sources) == 1 else ()


def _git_refuses(g: GitInvocation) -> bool:
    """Whether git refuses this ``reset --hard``/``--merge`` and changes nothing: a literal
    pathspec after ``--`` (git: "Cannot do hard reset with paths"), or a commit operand that
    names no commit (one ``rev-parse --verify``; git then reads it as a path, and refuses the
    same way)."""
    if reset_with_paths(g):
        return True
    rev = reset_target(g)
    return rev is not None and not is_commitish(g.cwd or ".", rev, git_dir=g.git_dir)


def pathspecs_from(name: str, cwd: str, *, nul: bool) -> tuple[str, ...] | None:
    """The pathspecs of ``--pathspec-from-file=NAME`` (relative to ``cwd``; one per line, or
    NUL-separated with ``nul``), read as git reads them; None (the caller then judges the
    whole worktree) for stdin (``-``), an unreadable file, or one too large to be a list of
    paths."""
    if name == "-":
        return None
    try:
        with open(os.path.join(cwd, name), "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return None
    if len(data) >= 1 << 20:
        return None
    parts = data.split(b"\0") if nul else data.splitlines()
    return tuple(p.decode("utf-8", "surrogateescape") for p in parts if p)


def _only_repositories(path: str) -> bool:
    """True when ``git clean`` (single ``-f``) would delete nothing under ``path``: it is, or
    holds nothing but, nested repositories or worktrees, which clean skips. Stops at the first
    other file, so a large ignored tree costs one directory read."""
    if os.path.lexists(os.path.join(path, ".git")):
        return True
    if not os.path.isdir(path) or os.path.islink(path):
        return False
    for root, dirs, files in os.walk(path):
        if files:
            return False
        dirs[:] = [d for d in dirs if not os.path.lexists(os.path.join(root, d, ".git"))]
    return True
