"""What deleting files or a repository's git directory would lose (issue 17, section 1).

The guard judges ``rm``, ``find -delete``/``-exec rm``, interpreters' deletions and ``git rm
-f`` by what they remove, not by their shape: :func:`work_at_risk` reads, with ONE bounded
``git status`` per worktree limited to the targets, the work that exists nowhere else
(changes a commit does not hold, untracked files, ignored files that no
``branches.cleanup_after_merge.regenerable`` glob covers); :func:`unpushed_work` reads which
commits a repository holds that no remote-tracking ref contains, the loss when its git
directory goes. Nothing here decides; :mod:`branchkeeper.policy.deletion` does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from branchkeeper.analysis.guard_facts import GUARD_TIMEOUT_S, ignored_blocking
from branchkeeper.analysis.hidden_edits import hidden_edits
from branchkeeper.git.parse import ParseError, zsplit
from branchkeeper.git.run import run_git

if TYPE_CHECKING:
    from branchkeeper.analysis.ignored import Blocked
    from branchkeeper.git.locate import Repo
    from branchkeeper.model.config import Config


class AtRisk(NamedTuple):
    """Work under some paths of one worktree that exists nowhere else (paths relative to the
    worktree ``root``): ``changed`` tracked files whose work-tree version no commit or index
    entry holds (modified, type-changed or unmerged in the work tree); ``staged`` changes held
    only by the index (lost when the index goes with the git directory, kept when only the
    file goes); ``untracked`` files; ``ignored`` ignored paths no regenerable glob covers."""

    root: str
    changed: tuple[str, ...]
    staged: tuple[str, ...]
    untracked: tuple[str, ...]
    ignored: tuple[Blocked, ...]

    def lost(self, *, with_index: bool) -> list[str]:
        """Each path at risk with what it holds, for a message (``with_index``: the index goes
        too, so staged changes count)."""
        out = [f"{p} (uncommitted changes)" for p in self.changed]
        out += [f"{p} (staged changes)" for p in self.staged] if with_index else []
        out += [f"{p} (untracked)" for p in self.untracked]
        out += [f"{b.path} (ignored, {b.reason})" for b in self.ignored]
        return out


def work_at_risk(root: str, pathspecs: Sequence[str] | None, config: Config) -> AtRisk:
    """The work at risk under ``pathspecs`` (relative to ``root``, taken literally; None = the
    whole worktree) in the worktree at ``root``: ONE bounded ``git status --porcelain -z``
    with untracked files listed one by one and ignored ones matched, the ignored paths judged
    by the regenerable globs; the edits a skip-worktree or assume-unchanged flag hides from it
    (:func:`~branchkeeper.analysis.hidden_edits.hidden_edits`, no process when the index flags
    nothing) among the changed files. Raises GitError, or ParseError on malformed output."""
    specs = [] if pathspecs is None else [f":(literal){p}" for p in pathspecs]
    out = run_git(["-c", "core.quotePath=false", "status", "--porcelain=v1", "-z",
                   "--no-renames", "--untracked-files=all", "--ignored=matching",
                   "--ignore-submodules=none", "--", *specs],
                  cwd=root, timeout=GUARD_TIMEOUT_S).stdout
    changed: list[str] = []
    staged: list[str] = []
    untracked: list[str] = []
    ignored: list[str] = []
    for entry in zsplit(out):
        if len(entry) < 4 or entry[2] != " ":
            raise ParseError(f"unexpected status entry: {entry[:200]!r}")
        x, y, path = entry[0], entry[1], entry[3:]
        if x + y == "??":
            untracked.append(path)
        elif x + y == "!!":
            ignored.append(path)
        elif y in "MTU" or x == "U" or x + y in ("AA", "DD"):
            changed.append(path)
        elif x in "MATR":
            staged.append(path)
    seen = set(changed)
    changed += [p for p in hidden_edits(root, timeout=GUARD_TIMEOUT_S)
                if p not in seen and _within(p, pathspecs)]
    blocking = ignored_blocking(root, ignored, config) if ignored else ()
    return AtRisk(root, tuple(changed), tuple(staged), tuple(untracked), blocking)


def _within(path: str, pathspecs: Sequence[str] | None) -> bool:
    """Whether ``path`` is one of the literal ``pathspecs`` or beneath one (None: the whole
    worktree)."""
    if pathspecs is None:
        return True
    return any(spec in ("", ".") or path == spec.rstrip("/")
               or path.startswith(spec.rstrip("/") + "/") for spec in pathspecs)


class Unpushed(NamedTuple):
    """What a repository holds that no remote-tracking ref contains: ``refs`` (full names, and
    ``HEAD of <worktree>`` for a detached worktree) whose tip is such a commit, ``stashes``
    (stash entries), and ``commits``, the number of such commits."""

    refs: tuple[str, ...]
    stashes: int
    commits: int


def _unpushed(cwd: str, tips: Sequence[str], held: Sequence[str], gone: Sequence[str]
              ) -> set[str]:
    """The commits reachable from ``tips`` and from no remote-tracking ref (but those of the
    remotes ``gone``) nor ``held`` commit (one ``rev-list``)."""
    ex = [f"--exclude={name}/*" for name in gone]
    return set(run_git(["rev-list", *dict.fromkeys(tips), "--not", *ex, "--remotes", *held,
                        "--"], cwd=cwd, timeout=GUARD_TIMEOUT_S).text.split())


def _beneath(path: str, dirs: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d.rstrip("/") + "/")
               for d in (os.path.realpath(x) for x in dirs))


def unpushed_work(repo: Repo, deleted: Sequence[str] = ()) -> Unpushed:
    """Commits of ``repo`` that would be lost with its git directory: those reachable from a
    local branch, a tag, a stash entry or a worktree's HEAD and from no remote-tracking ref,
    nor from a tag that a remote on this machine holds at the same commit
    (:mod:`branchkeeper.analysis.remote_tags`). ``deleted``: the directories the same command
    removes whole (absolute); a remote on this machine that lies in one of them holds nothing,
    its tracking refs included. One ``for-each-ref``, one ``rev-list``; one ``git config`` when
    ``deleted`` is given or a tag holds such commits; one ``reflog`` when a stash exists and one
    ``worktree list`` when linked worktrees do; when a tag holds such commits, one
    ``for-each-ref`` per remote that is a directory here (plus one ``rev-list`` when one of
    them holds it). Raises GitError."""
    from branchkeeper.analysis.guard_facts import read_worktrees
    from branchkeeper.analysis.remote_tags import path_remotes, tags_held_by

    cwd = repo.root
    listed = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)",
                      "refs/heads", "refs/tags", "refs/stash"], cwd=cwd,
                     timeout=GUARD_TIMEOUT_S).text
    tips: dict[str, str] = {}
    for line in listed.splitlines():
        ref, oid, peeled = [*line.split("\0"), "", ""][:3]
        tips[ref] = peeled or oid
    stash: list[str] = []
    if "refs/stash" in tips:
        stash = run_git(["reflog", "show", "--format=%H", "refs/stash", "--"], cwd=cwd,
                        timeout=GUARD_TIMEOUT_S).text.split()
        del tips["refs/stash"]
    if os.path.isdir(os.path.join(repo.common_dir, "worktrees")):
        for wt in read_worktrees(repo):
            if wt.detached and wt.head is not None:
                tips[f"HEAD of {wt.path}"] = str(wt.head)
    every = [*tips.values(), *stash]
    if not every:
        return Unpushed((), 0, 0)
    remotes = path_remotes(repo) if deleted else None
    gone = [n for n, d in (remotes or {}).items() if _beneath(d, deleted)]
    found = _unpushed(cwd, every, (), gone)
    tags = {r: t for r, t in tips.items() if r.startswith("refs/tags/") and t in found}
    if tags and remotes is None:
        remotes = path_remotes(repo)
    kept = {n: d for n, d in (remotes or {}).items() if n not in gone}
    pushed = tags_held_by(kept, tags) if tags and kept else frozenset()
    if pushed:  # a pushed tag leaves no local trace: the remotes that are directories here tell
        found = _unpushed(cwd, every, [tags[r] for r in pushed], gone)
    refs = tuple(r for r, t in tips.items() if t in found)
    return Unpushed(refs, sum(1 for s in stash if s in found), len(found))

