"""Verified archives of a worktree's ignored files: save before destroy (issue 12, section 1;
DESIGN.md guarantee 3).

``git worktree remove`` deletes ignored files. ``--archive-ignored`` first copies the ones the
ignored-content rule keeps (:mod:`branchkeeper.analysis.ignored`) into a tar archive under
``<state dir>/archives/``: written to a temporary file and fsynced, then read back and compared
member by member (type, mode, bytes, link target) with the files on disk, then renamed into
place and the directory fsynced. A failure deletes the partial file and raises
:class:`ArchiveError`; nothing destructive may follow. :func:`restore_archive` (``undo``) puts
the files back and never overwrites an existing file or writes through a symbolic link.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.types import Oid
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.bundles import remove_debris
from branchkeeper.state.statedir import archives_dir

_LABEL_BAD = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1 << 20


class ArchiveError(BranchkeeperError):
    """An archive could not be written or did not verify; the partial file was deleted."""


def _safe_member(name: str) -> bool:
    pure = PurePosixPath(name)
    return bool(name) and not pure.is_absolute() and ".." not in pure.parts and "\0" not in name


def _check_members(root: Path, members: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in dict.fromkeys(members):
        if not _safe_member(name) or name.endswith("/"):
            raise ArchiveError(f"cannot archive {name!r}: not a file path inside the worktree")
        try:
            mode = (root / name).lstat().st_mode
        except OSError as exc:
            raise ArchiveError(f"cannot archive {name}: {exc.strerror}") from None
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise ArchiveError(f"cannot archive {name}: not a regular file or symbolic link")
        out.append(name)
    return out


def _same_bytes(member: tarfile.TarInfo, tar: tarfile.TarFile, source: Path) -> bool:
    extracted = tar.extractfile(member)
    if extracted is None:
        return False
    with extracted, source.open("rb") as fh:
        while True:
            a, b = extracted.read(_CHUNK), fh.read(_CHUNK)
            if a != b:
                return False
            if not a:
                return True


def verify_archive(path: Path, root: Path, members: Sequence[str]) -> None:
    """Read ``path`` back and compare every member with ``root/<member>``: the same set of
    names, the same type, permission bits, bytes (regular files) or target (symbolic links).
    Raises :class:`ArchiveError` on the first difference."""
    try:
        with tarfile.open(path, "r:") as tar:
            found = tar.getmembers()
            names = [m.name for m in found]
            if sorted(names) != sorted(members):
                raise ArchiveError(f"archive {path} lists {len(names)} member(s), expected "
                                   f"{len(members)}")
            for m in found:
                source = root / m.name
                st = source.lstat()
                if m.isreg() and stat.S_ISREG(st.st_mode):
                    same = (m.mode & 0o7777) == (st.st_mode & 0o7777) and \
                        m.size == st.st_size and _same_bytes(m, tar, source)
                elif m.issym() and stat.S_ISLNK(st.st_mode):
                    same = m.linkname == os.readlink(source)
                else:
                    same = False
                if not same:
                    raise ArchiveError(f"archive {path}: {m.name} does not match the file on disk")
    except (OSError, tarfile.TarError) as exc:
        raise ArchiveError(f"archive {path} does not read back: {exc}") from None


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def archive_files(common_dir: Path, root: Path, members: Sequence[str], *, branch: str | None,
                  head: Oid | None, label: str) -> ArchiveInfo:
    """Write and verify ``<state dir>/archives/<stamp>-<id>-<label>.tar`` holding ``members``
    (POSIX paths relative to the worktree ``root``: regular files and symbolic links, stored
    as links, never followed). ``branch`` (full ref) and ``head`` record the checkout so undo
    can re-create it. Returns the :class:`ArchiveInfo`. Raises :class:`ArchiveError` when a
    member is not a file, the archive cannot be written, or it does not read back identical
    (the partial file is deleted either way)."""
    names = _check_members(root, members)
    if not names:
        raise ArchiveError("nothing to archive")
    remove_debris(common_dir)  # what an interrupted earlier write left (we hold the lock)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = _LABEL_BAD.sub("-", label).strip("-.")[:40] or "worktree"
    directory = archives_dir(common_dir)
    final = directory / f"{stamp}-{secrets.token_hex(2)}-{safe}.tar"
    tmp = directory / f".{final.name}.tmp"
    try:
        with tarfile.open(tmp, "w:", format=tarfile.PAX_FORMAT) as tar:
            for name in names:
                tar.add(root / name, arcname=name, recursive=False)
        _fsync_file(tmp)
        verify_archive(tmp, root, names)
        os.replace(tmp, final)
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except (OSError, tarfile.TarError) as exc:
        tmp.unlink(missing_ok=True)
        raise ArchiveError(f"could not write the archive {final}: {exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ArchiveInfo(path=final, worktree=str(root), branch=branch, head=head,
                       members=tuple(names), size_bytes=final.stat().st_size,
                       sha256=_digest(final))


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What :func:`restore_archive` did: members written back, members left alone because a
    file (or link) is already there, and members that failed, each with why."""

    restored: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = field(default=())


def _parent_ok(root: Path, dest: Path) -> str | None:
    """Create ``dest``'s missing parent directories under ``root``; why not, or ``None``. A
    component that is a symbolic link (or not a directory) is refused: nothing is written
    through a link out of the worktree."""
    current = root
    for part in dest.relative_to(root).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return f"{current.relative_to(root)} is a symbolic link"
        if current.exists():
            if not current.is_dir():
                return f"{current.relative_to(root)} is not a directory"
            continue
        try:
            current.mkdir()
        except OSError as exc:
            return f"cannot create {current.relative_to(root)}: {exc.strerror}"
    return None


def _restore_one(tar: tarfile.TarFile, m: tarfile.TarInfo, root: Path) -> str | None:
    """Write one member; "exists" when something is already at its path, an error text, or
    ``None`` when written."""
    if not _safe_member(m.name) or not (m.isreg() or m.issym()):
        return "not a file path inside the worktree"
    dest = root / m.name
    why = _parent_ok(root, dest)
    if why is not None:
        return why
    if os.path.lexists(dest):
        return "exists"
    if m.issym():
        os.symlink(m.linkname, dest)
        return None
    data = tar.extractfile(m)
    if data is None:
        return "unreadable member"
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, m.mode & 0o7777)
    with data, os.fdopen(fd, "wb") as out:
        for chunk in iter(lambda: data.read(_CHUNK), b""):
            out.write(chunk)
    os.chmod(dest, m.mode & 0o7777)  # the umask narrowed the mode os.open set
    os.utime(dest, (m.mtime, m.mtime))
    return None


def restore_archive(info: ArchiveInfo, *, into: Path | None = None) -> RestoreResult:
    """Put the archived files back under ``into`` (default: the worktree they came from, which
    must exist). An existing file is never overwritten (it is ``kept``); nothing is written
    through a symbolic link. Raises :class:`ArchiveError` when the archive is missing or its
    checksum differs (nothing is written then)."""
    root = into or Path(info.worktree)
    if not info.path.is_file():
        raise ArchiveError(f"the archive is gone: {info.path}")
    if _digest(info.path) != info.sha256:
        raise ArchiveError(f"the archive {info.path} changed since it was written (checksum)")
    if not root.is_dir():
        raise ArchiveError(f"{root} does not exist: re-create the worktree first "
                           f"({info.checkout_command()})")
    restored: list[str] = []
    kept: list[str] = []
    failed: list[tuple[str, str]] = []
    try:
        with tarfile.open(info.path, "r:") as tar:
            for m in tar.getmembers():
                try:
                    why = _restore_one(tar, m, root)
                except OSError as exc:
                    why = exc.strerror or str(exc)
                if why is None:
                    restored.append(m.name)
                elif why == "exists":
                    kept.append(m.name)
                else:
                    failed.append((m.name, why))
    except tarfile.TarError as exc:
        raise ArchiveError(f"archive {info.path} is unreadable: {exc}") from None
    return RestoreResult(tuple(restored), tuple(kept), tuple(failed))
