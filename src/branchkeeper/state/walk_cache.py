"""The last unmerged-history walk, under ``<common git dir>/branchkeeper/walk.bin``.

Issue 16 (a warm sweep): the subgraph walk (one ``rev-list --boundary --stdin``) is the largest
git cost of a sweep that finds nothing new, and its output is fixed by its input: the tips,
the excluded base commits (object ids, never ref names), the format and the shallow grafts.
The analysis layer derives a key from exactly those and keeps the raw output of the latest
walk here; a later sweep with the same key reads it instead of walking again.

The file: magic ``BKWK``, a format version (u16), the 32-byte key, then the output compressed
with zlib (whose checksum catches a torn or damaged file). A missing, short, corrupt,
other-version or other-key file is a miss; writes are atomic (temp file, ``os.replace``); only
the latest walk is kept, so the file is bounded by one walk's output (about 0.3 MB per 1,000
branches compressed). Errors while writing are ignored: it is only a cache.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
import zlib
from pathlib import Path

__all__ = ["FILE_NAME", "load_walk", "save_walk"]

FILE_NAME = "walk.bin"
_MAGIC = b"BKWK"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<4sH32s")


def load_walk(common_dir: Path, key: bytes) -> bytes | None:
    """The walk output stored under ``key`` (32 bytes), or None on any miss."""
    try:
        blob = (common_dir / "branchkeeper" / FILE_NAME).read_bytes()
    except OSError:
        return None
    if len(blob) < _HEAD.size:
        return None
    magic, version, stored = _HEAD.unpack_from(blob)
    if magic != _MAGIC or version != FORMAT_VERSION or stored != key:
        return None
    try:
        return zlib.decompress(blob[_HEAD.size:])
    except zlib.error:
        return None


def save_walk(common_dir: Path, key: bytes, data: bytes) -> None:
    """Store ``data`` under ``key`` (32 bytes), replacing the previous walk atomically."""
    if len(key) != 32:
        raise ValueError("walk cache key must be 32 bytes")
    directory = common_dir / "branchkeeper"
    blob = _HEAD.pack(_MAGIC, FORMAT_VERSION, key) + zlib.compress(data, 1)
    with contextlib.suppress(OSError):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".walk.", dir=directory)
        left: str | None = tmp
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, directory / FILE_NAME)
            left = None
        finally:  # on an error, Ctrl-C or SIGTERM between the two steps: no temp file is left
            if left is not None:
                with contextlib.suppress(OSError):
                    os.unlink(left)
