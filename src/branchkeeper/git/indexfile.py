"""Whether a git index file may hold entries flagged skip-worktree or assume-unchanged, read
from the file itself (no git process).

``git status`` does not look at such entries' files, so an edit there is invisible to it. Asking
git (``ls-files -v``) costs a process per worktree and prints every tracked path; this scan of
the index's entry headers lets a worktree without any flagged entry skip that process.

The answer is conservative: ``False`` only when the whole entry table was read and no entry
carries either bit; anything unexpected (a version other than 2-4, a split index, a truncated
or inconsistent table, an object format other than SHA-1) answers ``True``, and the caller asks
git. Index format: git's ``Documentation/gitformat-index.txt``.
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["may_hold_flags", "worktree_git_dir"]

_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_SKIP_WORKTREE = 0x4000  # in the extended flags word
_HASH = 20  # SHA-1; another object format misaligns the table and reads as "may"
_FIXED = 40 + _HASH + 2  # ten 32-bit stat fields, the object id, the flags word
_NAME_MASK = 0x0FFF


def may_hold_flags(index: Path) -> bool:
    """True unless the index file at ``index`` is readable, wholly parsed and has no entry
    with the assume-unchanged (``CE_VALID``) or skip-worktree bit. A missing index (no entry at
    all) is ``False``. Reads the file; never raises."""
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if len(data) < 12 + _HASH or data[:4] != b"DIRC":
        return True
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return True
    end = _scan(data, version, count)
    return end is None or _split_index(data, end)


def _scan(data: bytes, version: int, count: int) -> int | None:
    """The offset after the entry table, or None when an entry is flagged or the table does
    not parse."""
    if version == 4:
        return _scan_v4(data, count)
    pos, limit, flags_at = 12, len(data) - _HASH, _FIXED - 2
    flags_of = struct.Struct(">H").unpack_from
    for _ in range(count):
        if pos + _FIXED > limit:
            return None
        (flags,) = flags_of(data, pos + flags_at)
        if flags & (_ASSUME_VALID | _EXTENDED):
            if flags & _ASSUME_VALID or version < 3 or \
                    flags_of(data, pos + _FIXED)[0] & _SKIP_WORKTREE:
                return None
            head = _FIXED + 2
        else:
            head = _FIXED
        name_len = flags & _NAME_MASK
        if name_len == _NAME_MASK:
            nul = data.find(b"\0", pos + head, limit)
            if nul < 0:
                return None
            name_len = nul - pos - head
        elif pos + head + name_len >= limit or data[pos + head + name_len] != 0:
            return None
        pos += (head + name_len + 8) & ~7
    return pos if pos <= limit else None


def _scan_v4(data: bytes, count: int) -> int | None:
    """:func:`_scan` of a version 4 index (paths prefix-compressed, entries not padded): only
    the path's length is followed, never the path itself."""
    pos, limit, length = 12, len(data) - _HASH, 0
    flags_of = struct.Struct(">H").unpack_from
    find = data.find
    for _ in range(count):
        if pos + _FIXED > limit:
            return None
        (flags,) = flags_of(data, pos + _FIXED - 2)
        head = _FIXED
        if flags & (_ASSUME_VALID | _EXTENDED):
            if flags & _ASSUME_VALID or flags_of(data, pos + _FIXED)[0] & _SKIP_WORKTREE:
                return None
            head += 2
        start = pos + head
        if start < limit and data[start] < 0x80:
            strip, start = data[start], start + 1
        else:
            cut, start = _varint(data, start, limit)
            if cut is None:
                return None
            strip = cut
        if strip > length:
            return None
        name_len = flags & _NAME_MASK
        if name_len == _NAME_MASK:
            nul = find(b"\0", start, limit)
            if nul < 0 or length - strip + nul - start < _NAME_MASK:
                return None
        else:
            nul = start + name_len - (length - strip)
            if nul < start or nul >= limit or data[nul] != 0:
                return None
        length += nul - start - strip
        pos = nul + 1
    return pos


def _varint(data: bytes, pos: int, limit: int) -> tuple[int | None, int]:
    """git's offset varint (``varint.c``) at ``pos``: (value or None when cut off, next pos)."""
    if pos >= limit:
        return None, pos
    byte = data[pos]
    value = byte & 0x7F
    pos += 1
    while byte & 0x80:
        if pos >= limit:
            return None, pos
        byte = data[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
        pos += 1
    return value, pos


def _split_index(data: bytes, pos: int) -> bool:
    """True when the extensions from ``pos`` hold a ``link`` (split index: the entries live in
    a shared index this scan did not read) or do not parse."""
    limit = len(data) - _HASH
    while pos < limit:
        if pos + 8 > limit:
            return True
        signature = data[pos:pos + 4]
        size = int.from_bytes(data[pos + 4:pos + 8], "big")
        if signature == b"link":
            return True
        pos += 8 + size
    return pos != limit


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
