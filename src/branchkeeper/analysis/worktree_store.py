"""What a linked worktree's admin directory holds that a removal or ``git worktree prune`` would
lose: per-worktree refs holding commits nothing else holds, and submodule stores (the
:mod:`branchkeeper.git.worktree_admin` reads; second document, "Cleanup: isolation worktrees":
every commit a worktree pins keeps a ref).

Git processes: one ``rev-list`` for the per-worktree refs of every worktree at once (none when
there is none); per worktree with a ``.gitmodules`` file and no submodule store, one
``git config --file`` listing its submodules' paths. The rest is a directory walk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.analysis.losing import reachable
from branchkeeper.analysis.worktree_status import worktree_git_dir
from branchkeeper.git.parse import zsplit
from branchkeeper.git.repo import Worktree
from branchkeeper.git.run import DEFAULT_TIMEOUT_S, GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.git.worktree_admin import AdminDir, admin_dirs, read_admin_dir

#: What keeps a commit, for a per-worktree ref: every branch, tag, remote-tracking ref and ref
#: of our own (``worktree_model.KEEPING_REFS``), as ``rev-list`` arguments.
KEEPING_ARGS = ("--branches", "--tags", "--remotes", "--glob=refs/branchkeeper/*")


@dataclass(frozen=True, slots=True)
class HeldRef:
    """A per-worktree ``ref`` at ``tip`` holding ``count`` commits that no branch, tag,
    remote-tracking ref or ref of ours holds (its only copy goes with the worktree)."""

    ref: str
    tip: Oid
    count: int


@dataclass(frozen=True, slots=True)
class WorktreeStore:
    """One linked worktree's admin directory, judged: ``admin`` (the directory), ``held``
    (its per-worktree refs holding commits nothing else holds, by name), ``modules`` (its
    submodule stores, the entries of ``<admin>/modules/``), ``modules_dir`` (that directory
    exists), ``error`` (why its refs could not be judged: its gate then fails closed)."""

    admin: Path
    held: tuple[HeldRef, ...] = ()
    modules: tuple[str, ...] = ()
    modules_dir: bool = False
    error: str | None = None


def unique_counts(root: Path, tips: Mapping[str, Oid], keeping: Sequence[str], *,
                  timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, tuple[Oid, int]]:
    """Ref -> (tip, commits reachable from it and from none of ``keeping``, ``rev-list``
    arguments such as ``--remotes``), for each of ``tips`` that holds at least one such commit.
    One ``rev-list --parents`` for all of them (none when ``tips`` is empty), bounded by
    ``timeout`` seconds. Raises
    :class:`GitError` when git fails (a missing object, say)."""
    if not tips:
        return {}
    stdin = "".join(f"{t}\n" for t in sorted(set(tips.values()))).encode()
    walked = run_git(["rev-list", "--parents", "--stdin", "--not", *keeping], cwd=root,
                     stdin=stdin, timeout=timeout).text
    parents: dict[Oid, tuple[Oid, ...]] = {}
    for line in walked.splitlines():
        commit, *rest = line.split()
        parents[Oid.parse(commit)] = tuple(Oid.parse(p) for p in rest)
    return {ref: (tip, len(reachable(tip, parents))) for ref, tip in tips.items()
            if tip in parents}  # a tip not walked: a keeping ref holds it


def read_stores(root: Path, common_dir: Path, worktrees: Sequence[Worktree]
                ) -> dict[str, WorktreeStore]:
    """Worktree path (``str``) -> its :class:`WorktreeStore`, for every linked worktree whose
    admin directory is found. One ``rev-list`` when any per-worktree ref exists; when it fails,
    every worktree with such refs gets ``error`` (fails closed). Never raises."""
    where = admin_dirs(common_dir)
    read: dict[str, AdminDir] = {}
    for wt in worktrees:
        admin = where.get(str(wt.path))
        if admin is not None and not wt.is_main and not wt.bare:
            read[str(wt.path)] = read_admin_dir(admin)
    tips = {(path, ref): oid for path, a in read.items() for ref, oid in a.refs}
    error = None
    counts: dict[str, tuple[Oid, int]] = {}
    try:
        counts = unique_counts(root, {f"{p}\0{r}": o for (p, r), o in tips.items()},
                               KEEPING_ARGS)
    except GitError as exc:
        error = f"could not walk its own refs ({str(exc).splitlines()[0]})"
    out: dict[str, WorktreeStore] = {}
    for path, a in read.items():
        held = tuple(HeldRef(ref, *counts[f"{path}\0{ref}"]) for ref, _oid in a.refs
                     if f"{path}\0{ref}" in counts)
        why = a.unreadable or (error if a.refs else None)
        out[path] = WorktreeStore(a.path, held, a.modules, a.modules_dir, why)
    return out


def initialised_submodules(path: Path, store: WorktreeStore | None) -> tuple[str, ...]:
    """What makes ``git worktree remove`` refuse the worktree at ``path``: its submodule stores
    (``modules/<name>``: git refuses on the directory alone, empty too), else each submodule
    path of its ``.gitmodules`` whose checkout has a ``.git`` (git's "populated"; one
    ``git config --file``, only when that file exists). A ``.gitmodules`` git cannot read
    counts as a submodule (fails closed)."""
    if store is not None and store.modules_dir:
        return tuple(f"modules/{m}" for m in store.modules) or ("modules/",)
    gitmodules = path / ".gitmodules"
    if not gitmodules.is_file():
        return ()
    res = run_git(["config", "-z", "--file", str(gitmodules), "--get-regexp",
                   r"^submodule\..*\.path$"], cwd=path, check=False)
    if res.returncode == 1:  # 1: no submodule path in the file
        return ()
    if res.returncode != 0:
        return (".gitmodules",)
    found = []
    for item in zsplit(res.stdout):
        _key, _, value = item.partition("\n")
        if value and (path / value / ".git").exists():
            found.append(value)
    return tuple(found)


def own_refs_at_risk(path: Path, *, timeout: float = DEFAULT_TIMEOUT_S
                     ) -> tuple[tuple[HeldRef, ...], tuple[str, ...]]:
    """(its own refs holding commits nothing else holds, its submodule stores) of the linked
    worktree at ``path``, whose ``.git`` file names its admin directory: what removing it
    loses beyond its files. One ``rev-list`` when it has own refs (none otherwise); a main
    worktree or a directory that is no worktree gives ``((), ())``. Raises :class:`GitError`
    when git fails (the guard's callers turn that into a deny)."""
    admin = worktree_git_dir(path)
    if admin is None or (path / ".git").is_dir() or not (admin / "commondir").is_file():
        return (), ()
    read = read_admin_dir(admin)
    if read.unreadable is not None:
        raise GitError(read.unreadable, argv=[], returncode=None)
    counts = unique_counts(path, dict(read.refs), KEEPING_ARGS, timeout=timeout)
    held = tuple(HeldRef(ref, *counts[ref]) for ref, _oid in read.refs if ref in counts)
    return held, tuple(str(admin / "modules" / m) for m in read.modules)


@dataclass(frozen=True, slots=True)
class GoneEntry:
    """A linked worktree entry whose directory is gone (``git worktree prune`` deletes it; a
    lock file spares it), judged from its admin directory: ``path`` (where its ``gitdir`` file
    says the checkout was), ``head`` (its detached HEAD when no branch, tag, remote-tracking
    ref or ref of ours holds it, else ``None``), ``held`` (its own refs holding commits nothing
    else holds) and ``modules`` (its submodule stores, ``<admin>/modules/<name>`` paths)."""

    path: str
    admin: Path
    head: Oid | None
    held: tuple[HeldRef, ...]
    modules: tuple[str, ...]

    @property
    def at_risk(self) -> bool:
        """Whether deleting the entry loses anything."""
        return self.head is not None or bool(self.held) or bool(self.modules)


def _detached_head(admin: Path) -> Oid | None:
    try:
        text = (admin / "HEAD").read_text("ascii", "replace").strip()
    except OSError:
        return None
    try:
        return None if text.startswith("ref:") else Oid.parse(text)
    except ValueError:
        return None


def gone_entries(root: Path, common_dir: Path, *, timeout: float = DEFAULT_TIMEOUT_S
                 ) -> list[GoneEntry]:
    """Every unlocked linked worktree entry of ``common_dir`` whose checkout is gone (its
    ``gitdir`` file names a ``.git`` that does not exist: what ``git worktree prune`` and
    ``git worktree remove`` of that path delete), sorted by path, judged as
    :class:`GoneEntry`. The filesystem, plus one ``rev-list`` for every detached HEAD and
    own ref of those entries together (none when there is none). Raises :class:`GitError`
    when git fails or an entry's refs cannot be read (the guard denies then)."""
    entries: list[tuple[str, AdminDir, Oid | None]] = []
    for path, admin in sorted(admin_dirs(common_dir).items()):
        if (admin / "locked").exists() or (Path(path) / ".git").exists():
            continue
        read = read_admin_dir(admin)
        if read.unreadable is not None:
            raise GitError(read.unreadable, argv=[], returncode=None)
        entries.append((path, read, _detached_head(admin)))
    tips = {f"{p}\0{r}": o for p, a, _h in entries for r, o in a.refs}
    tips.update({f"{p}\0HEAD": h for p, _a, h in entries if h is not None})
    counts = unique_counts(root, tips, KEEPING_ARGS, timeout=timeout)
    return [GoneEntry(p, a.path, h if f"{p}\0HEAD" in counts else None,
                      tuple(HeldRef(r, *counts[f"{p}\0{r}"]) for r, _o in a.refs
                            if f"{p}\0{r}" in counts),
                      tuple(str(a.path / "modules" / m) for m in a.modules))
            for p, a, h in entries]


def bisect_refs_at_risk(root: Path, common_dir: Path, *, timeout: float = DEFAULT_TIMEOUT_S
                        ) -> tuple[HeldRef, ...]:
    """The ``refs/bisect/*`` refs of the worktree at ``root`` (read from its git dir as
    :func:`read_admin_dir` reads it: a linked worktree's admin directory, the main worktree's
    ``.git``, ``common_dir`` when bare) that hold
    commits no branch, tag, remote-tracking ref or ref of ours holds: what ``git bisect
    reset`` and ``git bisect start`` delete. One ``rev-list`` when there is any such ref (none
    otherwise), run in ``root``. Raises :class:`GitError` when the refs cannot be read or git
    fails (the guard denies then)."""
    read = read_admin_dir(worktree_git_dir(root) or common_dir)
    if read.unreadable is not None:
        raise GitError(read.unreadable, argv=[], returncode=None)
    tips = {ref: oid for ref, oid in read.refs if ref.startswith("refs/bisect/")}
    counts = unique_counts(root, tips, KEEPING_ARGS, timeout=timeout)
    return tuple(HeldRef(ref, *counts[ref]) for ref in sorted(tips) if ref in counts)
