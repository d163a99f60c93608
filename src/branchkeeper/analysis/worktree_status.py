"""What one worktree holds: tracked changes, untracked and ignored files, nested checkouts,
activity.

Implements the second document's retire and reaper gates' inputs ("clean", "free of protected
ignored content and nested worktrees", "idle past the activity window") and the first document,
section 11 (``status --porcelain`` lists what a removal would lose; ignored files are judged
separately because ``git worktree remove`` deletes them even without ``--force``).

One ``git status`` per worktree; one ``git log --no-walk`` for the commit times of many HEADs.
Filesystem walks (activity, listing an ignored directory) are bounded by a file cap and say when
the cap was reached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from branchkeeper.analysis.ignored import Blocked, IgnoredVerdict, classify_ignored
from branchkeeper.git.parse import ParseError, zsplit
from branchkeeper.git.repo import Worktree
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

__all__ = [
    "Activity", "Blocked", "IgnoredRules", "IgnoredVerdict", "Nested", "WorktreeStatus",
    "classify_ignored", "classify_worktree_ignored", "commit_times", "worktree_git_dir",
    "worktree_status",
]

#: Most files one activity walk or one ignored-directory listing examines.
DEFAULT_FILE_CAP = 20000


@dataclass(frozen=True, slots=True)
class Nested:
    """A checkout inside another worktree: ``kind`` is ``"worktree"`` (of this repository) or
    ``"repository"`` (a ``.git`` of another repository). ``path`` is absolute."""

    path: Path
    kind: str


@dataclass(frozen=True, slots=True)
class Activity:
    """When a worktree last changed, as unix times (seconds; ``None`` when unknown).

    ``files``: newest mtime among non-ignored files and directories (``.git``, ignored paths and
    nested checkouts skipped); ``files_capped`` is True when the walk stopped at the cap (the
    answer is then a lower bound). ``reflog``: mtime of the worktree's ``logs/HEAD``.
    ``commit``: the HEAD commit's committer date.
    """

    files: float | None
    files_capped: bool
    reflog: float | None
    commit: float | None

    @property
    def latest(self) -> float | None:
        """The newest of the three, or ``None`` when none is known."""
        known = [t for t in (self.files, self.reflog, self.commit) if t is not None]
        return max(known) if known else None


@dataclass(frozen=True, slots=True)
class WorktreeStatus:
    """The contents of one worktree (paths relative to its root, POSIX separators).

    ``ignored`` lists what ``status --ignored=matching`` printed: a wholly ignored directory ends
    in ``/``. ``listings`` holds the contents of ignored directories read for classification
    (``None``: over the cap or unreadable).
    """

    path: Path
    tracked: tuple[str, ...]
    untracked: tuple[str, ...]
    ignored: tuple[str, ...]
    nested: tuple[Nested, ...]
    activity: Activity
    listings: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    @property
    def dirty(self) -> bool:
        """True when there are tracked changes or untracked files."""
        return bool(self.tracked or self.untracked)


@dataclass(frozen=True, slots=True)
class IgnoredRules:
    """The arguments of :func:`classify_ignored` bundled (from the config, plus the polarity)."""

    protected: tuple[str, ...] = (".env*", "*.local")
    regenerable: tuple[str, ...] = ()
    disposable: tuple[str, ...] = ()
    strict: bool = False
    agent_state_dir: str = ".agentic"
    agent_state_disposable: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: object, *, strict: bool = False) -> IgnoredRules:
        """Rules from a ``branchkeeper.model.config.Config`` (``worktrees:`` and
        ``branches.cleanup_after_merge.regenerable``)."""
        wt = config.worktrees  # type: ignore[attr-defined]
        regen = config.branches.cleanup_after_merge.regenerable  # type: ignore[attr-defined]
        return cls(
            protected=tuple(wt.protected_ignored), regenerable=tuple(regen),
            disposable=tuple(wt.disposable_ignored), strict=strict,
            agent_state_dir=wt.agent_state_dir,
            agent_state_disposable=tuple(wt.agent_state_disposable),
        )

    def classify(self, paths: Sequence[str],
                 listings: dict[str, tuple[str, ...] | None] | None = None) -> IgnoredVerdict:
        """:func:`classify_ignored` with these rules."""
        return classify_ignored(
            paths, protected=self.protected, regenerable=self.regenerable,
            disposable=self.disposable, strict=self.strict, agent_state_dir=self.agent_state_dir,
            agent_state_disposable=self.agent_state_disposable, listings=listings)


def parse_status_z(data: bytes) -> tuple[list[str], list[str], list[str]]:
    """Parse ``status --porcelain=v1 -z --no-renames`` into (tracked, untracked, ignored).

    Raises :class:`ParseError` on an entry shorter than ``XY path``.
    """
    tracked: list[str] = []
    untracked: list[str] = []
    ignored: list[str] = []
    for entry in zsplit(data):
        if len(entry) < 4 or entry[2] != " ":
            raise ParseError(f"unexpected status entry: {entry[:200]!r}")
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        elif code == "!!":
            ignored.append(path)
        else:
            tracked.append(path)
    return tracked, untracked, ignored


def worktree_git_dir(path: Path) -> Path | None:
    """The git dir of the worktree at ``path`` (``.git`` dir, or the ``gitdir:`` of a ``.git``
    file), or ``None`` when there is none."""
    dotgit = path / ".git"
    if dotgit.is_dir():
        return dotgit
    try:
        text = dotgit.read_text("utf-8", "surrogateescape")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else (path / target).resolve()


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


def list_dir(root: Path, rel_dir: str, *, cap: int) -> tuple[tuple[str, ...] | None, list[str]]:
    """Files under ``root/rel_dir`` (relative to ``root``), at most ``cap``; (``None``, ...) when
    over the cap or unreadable. Also returns nested ``.git`` holders found (relative dirs)."""
    files: list[str] = []
    nested: list[str] = []
    start = root / rel_dir
    try:
        for dirpath, dirnames, filenames in os.walk(start, onerror=_raise):
            rel = Path(dirpath).relative_to(root).as_posix()
            if ".git" in dirnames or ".git" in filenames:
                nested.append(rel + "/")
                dirnames[:] = []
                continue
            for name in filenames:
                files.append(f"{rel}/{name}")
                if len(files) > cap:
                    return None, nested
    except OSError:
        return None, nested
    return tuple(sorted(files)), nested


def _raise(exc: OSError) -> None:
    raise exc


def _walk_activity(root: Path, ignored: Sequence[str], nested: Sequence[Nested], *,
                   cap: int) -> tuple[float | None, bool]:
    skip_dirs = {e.rstrip("/") for e in ignored if e.endswith("/")}
    skip_files = {e for e in ignored if not e.endswith("/")}
    skip_abs = {n.path for n in nested}
    newest: float | None = None
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        dirnames[:] = [d for d in dirnames if d != ".git" and f"{prefix}{d}" not in skip_dirs
                       and here / d not in skip_abs]
        names = [f for f in filenames if f != ".git" and f"{prefix}{f}" not in skip_files]
        for name in [*names, *([] if rel == "." else ["."])]:
            seen += 1
            if seen > cap:
                return newest, True
            try:
                stamp = (here / name).lstat().st_mtime
            except OSError:
                continue
            newest = stamp if newest is None else max(newest, stamp)
    return newest, False


def worktree_status(path: Path, *, worktrees: Sequence[Worktree], head_time: float | None = None,
                    file_cap: int = DEFAULT_FILE_CAP) -> WorktreeStatus:
    """Collect the contents of the worktree at ``path`` (one ``git status``).

    ``worktrees``: every worktree of the repository (to find nested ones). ``head_time``: the HEAD
    commit's committer date when the caller has it (see :func:`commit_times`); otherwise it is
    read with one more git call. ``file_cap``: most files the activity walk examines. Raises
    :class:`~branchkeeper.git.run.GitError` when git fails, :class:`ParseError` on output of an
    unexpected shape.
    """
    # quotePath=false: paths as bytes, not C-quoted; --no-renames: one path per entry;
    # -uall: every untracked file by name; --ignored=matching: a wholly ignored dir as "dir/".
    out = run_git(["-c", "core.quotePath=false", "status", "--porcelain=v1", "-z", "--no-renames",
                   "--untracked-files=all", "--ignored=matching"], cwd=path).stdout
    tracked, untracked, ignored = parse_status_z(out)
    nested = _nested(path, [*untracked, *ignored], worktrees)
    git_dir = worktree_git_dir(path)
    reflog: float | None = None
    if git_dir is not None:
        try:
            reflog = (git_dir / "logs" / "HEAD").stat().st_mtime
        except OSError:
            reflog = None
    if head_time is None:
        res = run_git(["log", "-1", "--format=%ct", "HEAD", "--"], cwd=path, check=False)
        head_time = float(res.text.strip()) if res.returncode == 0 and res.text.strip() else None
    files, capped = _walk_activity(path, ignored, nested, cap=file_cap)
    return WorktreeStatus(
        path=path, tracked=tuple(tracked), untracked=tuple(untracked), ignored=tuple(ignored),
        nested=tuple(nested), activity=Activity(files, capped, reflog, head_time))


def classify_worktree_ignored(status: WorktreeStatus, rules: IgnoredRules, *,
                              file_cap: int = DEFAULT_FILE_CAP) -> IgnoredVerdict:
    """Classify ``status.ignored`` with ``rules``, listing (bounded by ``file_cap``) only the
    ignored directories whose contents decide. A nested checkout inside an ignored directory makes
    that directory protected. Reads the filesystem; runs no git."""
    verdict = rules.classify(status.ignored)
    if not verdict.needs_listing:
        return verdict
    listings: dict[str, tuple[str, ...] | None] = dict(status.listings)
    for rel in verdict.needs_listing:
        files, nested = list_dir(status.path, rel, cap=file_cap)
        listings[rel] = None if nested else files
    return rules.classify(status.ignored, listings)
