"""What one worktree holds: tracked changes, untracked and ignored files, nested checkouts,
activity.

Implements the second document's retire and reaper gates' inputs ("clean", "free of protected
ignored content and nested worktrees", "idle past the activity window") and the first document,
section 11 (``status --porcelain`` lists what a removal would lose; ignored files are judged
separately because ``git worktree remove`` deletes them even without ``--force``).

One ``git status`` per worktree (and, only where its index flags files skip-worktree or
assume-unchanged, what :mod:`branchkeeper.analysis.hidden_edits` runs to find edits status
cannot see: those count as tracked changes); one ``git log --no-walk`` for the commit times of many HEADs.
Filesystem walks (activity, listing an ignored directory) are bounded by a file cap and say when
the cap was reached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from branchkeeper.analysis.hidden_edits import read_work
from branchkeeper.analysis.ignored import (
    DEFAULT_FILE_CAP,
    Blocked,
    IgnoredRules,
    IgnoredVerdict,
    judge_ignored,
)
from branchkeeper.git.indexfile import worktree_git_dir
from branchkeeper.git.repo import Worktree
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

__all__ = [
    "Activity", "Blocked", "IgnoredRules", "IgnoredVerdict", "Nested", "WorktreeStatus",
    "classify_worktree_ignored", "commit_times", "worktree_git_dir", "worktree_status",
]


@dataclass(frozen=True, slots=True)
class Nested:
    """A checkout inside another worktree: ``kind`` is ``"worktree"`` (of this repository) or
    ``"repository"`` (a ``.git`` of another repository). ``path`` is absolute."""

    path: Path
    kind: str


@dataclass(frozen=True, slots=True)
class Activity:
    """When a worktree last changed, and when it was added, as unix times (seconds; ``None``
    when unknown).

    ``files``: newest mtime among non-ignored files and directories (``.git``, ignored paths and
    nested checkouts skipped); ``files_capped`` is True when the walk stopped at the cap (the
    answer is then a lower bound). ``reflog``: the time of the newest entry of the worktree's
    HEAD reflog (a commit, a checkout, a reset: what the entry says, not when the file was last
    written). ``commit``: the HEAD commit's committer date. ``created``: the time of the first
    HEAD reflog entry (the ``worktree add``), else the mtime of the worktree's ``commondir``.
    ``walked``: False when the files were not walked (a survey that shows no idle figure for
    this worktree: :func:`with_files`); :attr:`latest` is then a lower bound, like a capped walk.
    """

    files: float | None
    files_capped: bool
    reflog: float | None
    commit: float | None
    created: float | None = None
    walked: bool = True

    @property
    def latest(self) -> float | None:
        """The newest of ``files``, ``reflog`` and ``commit``, or ``None`` when none is known:
        THE last-activity figure every command shows and the reaper's activity window reads."""
        known = [t for t in (self.files, self.reflog, self.commit) if t is not None]
        return max(known) if known else None

    def idle_hours(self, now: float) -> float | None:
        """Hours since :attr:`latest` at ``now`` (unix seconds; never negative), or ``None``."""
        latest = self.latest
        return None if latest is None else max(now - latest, 0.0) / 3600.0


@dataclass(frozen=True, slots=True)
class WorktreeStatus:
    """The contents of one worktree (paths relative to its root, POSIX separators).

    ``ignored`` lists what ``status --ignored=matching`` printed: a wholly ignored directory ends
    in ``/``. ``hidden``: the edits ``git status`` does not show (a skip-worktree or
    assume-unchanged file that differs from the index), also listed in ``tracked``.
    """

    path: Path
    tracked: tuple[str, ...]
    untracked: tuple[str, ...]
    ignored: tuple[str, ...]
    nested: tuple[Nested, ...]
    activity: Activity
    hidden: tuple[str, ...] = ()

    @property
    def dirty(self) -> bool:
        """True when there are tracked changes or untracked files."""
        return bool(self.tracked or self.untracked)


def reflog_times(git_dir: Path | None) -> tuple[float | None, float | None]:
    """(first, last) entry times of ``<git_dir>/logs/HEAD`` (unix seconds), ``None`` where
    absent or unreadable. Reads the first and the last line only."""
    if git_dir is None:
        return None, None
    try:
        data = (git_dir / "logs" / "HEAD").read_bytes()
    except OSError:
        return None, None
    lines = [ln for ln in data.split(b"\n") if ln]
    if not lines:
        return None, None

    def stamp(line: bytes) -> float | None:
        # "<old> <new> <name> <email> <unix time> <tz>\t<message>"
        head = line.split(b"\t", 1)[0].split()
        try:
            return float(head[-2])
        except (IndexError, ValueError):
            return None

    return stamp(lines[0]), stamp(lines[-1])


def _created(git_dir: Path | None, first_reflog: float | None) -> float | None:
    if first_reflog is not None:
        return first_reflog
    if git_dir is None:
        return None
    try:
        return (git_dir / "commondir").stat().st_mtime
    except OSError:
        return None


def commit_times(root: Path, oids: Sequence[Oid]) -> dict[Oid, float]:
    """Committer dates (unix seconds) of ``oids``, in one ``git log --no-walk``.

    Raises :class:`~branchkeeper.git.run.GitError` when git fails (e.g. a missing object).
    """
    unique = sorted(set(oids))
    if not unique:
        return {}
    out = run_git(["log", "--no-walk=unsorted", "--format=%H %ct", *unique, "--"], cwd=root)
    times: dict[Oid, float] = {}
    for line in out.text.splitlines():
        oid, _, stamp = line.partition(" ")
        times[Oid.parse(oid)] = float(stamp)
    return times


def _nested(path: Path, entries: Sequence[str], worktrees: Sequence[Worktree]) -> list[Nested]:
    found: dict[Path, Nested] = {}
    base = path.resolve()
    for wt in worktrees:
        other = wt.path.resolve() if wt.path.exists() else wt.path
        if other != base and other.is_relative_to(base):
            found[other] = Nested(other, "worktree")
    for entry in entries:
        if entry.endswith("/") and (path / entry / ".git").exists():
            where = (path / entry).resolve()
            found.setdefault(where, Nested(where, "repository"))
    return sorted(found.values(), key=lambda n: str(n.path))


def _walk_activity(root: Path, ignored: Sequence[str], nested: Sequence[Nested], *,
                   cap: int) -> tuple[float | None, bool]:
    """The newest ``lstat`` mtime among the files and directories under ``root`` (top-down, as
    ``os.walk`` visits them: ``.git``, the ``ignored`` entries and the ``nested`` checkouts
    skipped, symbolic links to directories not followed), and whether ``cap`` entries were
    reached first. Plain strings and ``os.scandir``: thousands of entries per worktree."""
    skip_dirs = {e.rstrip("/") for e in ignored if e.endswith("/")}
    skip_files = {e for e in ignored if not e.endswith("/")}
    skip_abs = {str(n.path) for n in nested}
    newest: float | None = None
    seen = 0
    stack: list[tuple[str, str]] = [(str(root), "")]  # (directory, its path relative to root)
    lstat = os.lstat
    while stack:
        here, prefix = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            continue
        subdirs: list[tuple[str, str]] = []
        names: list[str] = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if name != ".git" and prefix + name not in skip_dirs \
                        and entry.path not in skip_abs and not entry.is_symlink():
                    subdirs.append((entry.path, prefix + name + "/"))
            elif name != ".git" and prefix + name not in skip_files:
                names.append(entry.path)
        if prefix:
            names.append(here)
        for path in names:
            seen += 1
            if seen > cap:
                return newest, True
            try:
                stamp = lstat(path).st_mtime
            except OSError:
                continue
            newest = stamp if newest is None or stamp > newest else newest
        stack.extend(reversed(subdirs))
    return newest, False


def worktree_status(path: Path, *, worktrees: Sequence[Worktree], head_time: float | None = None,
                    file_cap: int = DEFAULT_FILE_CAP, walk: bool = True) -> WorktreeStatus:
    """Collect the contents of the worktree at ``path`` (one ``git status``; the hidden edits
    of :func:`~branchkeeper.analysis.hidden_edits.read_work` among ``tracked``).

    ``worktrees``: every worktree of the repository (to find nested ones). ``head_time``: the HEAD
    commit's committer date when the caller has it (see :func:`commit_times`); otherwise it is
    read with one more git call. ``file_cap``: most files the activity walk examines; without
    ``walk`` the files are not walked (``activity.walked`` False; :func:`with_files` walks them
    later). Raises :class:`~branchkeeper.git.run.GitError` when git fails, ``ParseError`` on
    output of an unexpected shape.
    """
    tracked, untracked, ignored, hidden = read_work(path)
    nested = _nested(path, [*untracked, *ignored], worktrees)
    git_dir = worktree_git_dir(path)
    first, last = reflog_times(git_dir)
    if head_time is None:
        res = run_git(["log", "-1", "--format=%ct", "HEAD", "--"], cwd=path, check=False)
        head_time = float(res.text.strip()) if res.returncode == 0 and res.text.strip() else None
    files, capped = _walk_activity(path, ignored, nested, cap=file_cap) if walk else (None, False)
    return WorktreeStatus(
        path=path, tracked=tuple(tracked), untracked=tuple(untracked), ignored=tuple(ignored),
        nested=tuple(nested), hidden=tuple(hidden),
        activity=Activity(files, capped, last, head_time, _created(git_dir, first), walk))


def with_files(status: WorktreeStatus, *, file_cap: int = DEFAULT_FILE_CAP) -> WorktreeStatus:
    """``status`` with its files walked (itself when they were): the activity walk
    :func:`worktree_status` skipped without ``walk``. Reads the filesystem only."""
    if status.activity.walked:
        return status
    files, capped = _walk_activity(status.path, status.ignored, status.nested, cap=file_cap)
    return replace(status, activity=replace(status.activity, files=files, files_capped=capped,
                                            walked=True))


def classify_worktree_ignored(status: WorktreeStatus, rules: IgnoredRules, *,
                              file_cap: int = DEFAULT_FILE_CAP) -> IgnoredVerdict:
    """:func:`~branchkeeper.analysis.ignored.judge_ignored` of ``status.ignored``: the one
    ignored-content rule, applied to a worktree already read. Reads the filesystem only."""
    return judge_ignored(status.path, status.ignored, rules, file_cap=file_cap)
