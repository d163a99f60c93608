"""What a linked worktree's admin directory ``<common dir>/worktrees/<id>/`` holds that nothing
else does, read from the filesystem alone (no git process).

- its **per-worktree refs** (``refs/worktree/*``, ``refs/bisect/*``, ``refs/rewritten/*`` during
  a rebase): loose files under ``<admin>/refs/`` (and an ``<admin>/packed-refs`` if one exists).
  ``git for-each-ref`` run in another worktree does not list them, and ``git worktree remove``
  and ``git worktree prune`` delete them with the directory;
- its **submodule stores**: ``<admin>/modules/<name>/``, the git directories of the submodules
  initialised in that worktree. They can hold submodule commits that exist nowhere else, and
  ``git worktree prune`` deletes them too; ``git worktree remove`` refuses a worktree that has
  the directory ("working trees containing submodules cannot be moved or removed").

The admin directories are found through their ``gitdir`` files (the path of the worktree's
``.git`` file), which is where ``git worktree list`` reads each linked worktree's path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.git.types import Oid


@dataclass(frozen=True, slots=True)
class AdminDir:
    """One linked worktree's admin directory, read.

    ``path``: the admin directory; ``refs``: its per-worktree refs (full name, object id),
    sorted by name, symbolic refs left out (they name a ref that lives elsewhere);
    ``modules``: the names of the entries of ``<path>/modules/`` (its submodule stores),
    sorted; ``modules_dir``: whether that directory exists (git's own test before a removal,
    empty or not); ``unreadable``: why its refs could not all be read (a ref store of another
    format, an unreadable file), else ``None``.
    """

    path: Path
    refs: tuple[tuple[str, Oid], ...] = ()
    modules: tuple[str, ...] = ()
    modules_dir: bool = False
    unreadable: str | None = None


def admin_dirs(common_dir: Path) -> dict[str, Path]:
    """Worktree path (as ``git worktree list`` prints it) -> its admin directory, for every
    ``<common_dir>/worktrees/<id>/gitdir`` that can be read. A relative ``gitdir`` is taken
    relative to the admin directory. Never raises: an unreadable entry is left out."""
    out: dict[str, Path] = {}
    try:
        entries = list(os.scandir(common_dir / "worktrees"))
    except OSError:
        return out
    for entry in entries:
        admin = Path(entry.path)
        try:
            text = (admin / "gitdir").read_text("utf-8", "surrogateescape").strip()
        except OSError:
            continue
        if not text:
            continue
        dotgit = Path(text) if os.path.isabs(text) else Path(os.path.normpath(admin / text))
        out[str(dotgit.parent)] = admin
    return out


def _loose_refs(admin: Path) -> tuple[dict[str, Oid], str | None]:
    found: dict[str, Oid] = {}
    for here, dirs, files in os.walk(admin / "refs"):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".lock"):
                continue
            path = Path(here) / name
            try:
                text = path.read_text("ascii", "replace").strip()
            except OSError as exc:
                return found, f"could not read {path}: {exc.strerror}"
            if text.startswith("ref:"):
                continue
            try:
                found[path.relative_to(admin).as_posix()] = Oid.parse(text)
            except ValueError:
                return found, f"{path} does not hold an object id"
    return found, None


def _packed_refs(admin: Path) -> dict[str, Oid]:
    try:
        lines = (admin / "packed-refs").read_text("ascii", "replace").splitlines()
    except OSError:
        return {}
    found: dict[str, Oid] = {}
    for line in lines:
        oid, _, name = line.partition(" ")
        if line.startswith(("#", "^")) or not name.startswith("refs/"):
            continue
        try:
            found[name] = Oid.parse(oid)
        except ValueError:
            continue
    return found


def read_admin_dir(admin: Path) -> AdminDir:
    """The per-worktree refs and submodule stores of the admin directory ``admin`` (a walk of
    ``<admin>/refs/``, one read of ``<admin>/packed-refs``, one listing of
    ``<admin>/modules/``). A loose ref overrides a packed one, as in git. Never raises."""
    packed = _packed_refs(admin)
    loose, unreadable = _loose_refs(admin)
    if (admin / "reftable").exists():
        unreadable = f"{admin / 'reftable'}: a reftable ref store is not read"
    refs = {**packed, **loose}
    modules_dir = (admin / "modules").is_dir()
    try:
        modules = tuple(sorted(e.name for e in os.scandir(admin / "modules"))) \
            if modules_dir else ()
    except OSError:
        modules = ("?",)  # present but unreadable: it still counts as a store
    return AdminDir(admin, tuple(sorted(refs.items())), modules, modules_dir, unreadable)
