"""Per-commit facts that never change, under ``<common git dir>/branchkeeper/commits.bin``.

Issue 11, section 3: a commit's changed paths and its patch-id are fixed by its id, so a sweep
reads them from here and computes only the missing ones. Two maps:

- ``paths``: commit -> a 64-bit hash of the sorted set of paths (as git prints them, bytes)
  its diff against its first parent changes (see
  :func:`branchkeeper.analysis.commitfacts.path_set_hash`); 0 stands for "changes nothing"
  (empty commits);
- ``pids``: commit -> its patch-id (hex), ``""`` when it has no patch.

The file is compact and binary so that a 100,000-commit history stays a few MB: a header
(magic, format version, object-id and patch-id byte lengths, patch-id mode, two counts), then
fixed-size records ``<oid><u64 hash>`` and ``<oid><pid bytes>``. A missing, truncated,
corrupt or other-version file is an empty cache; patch-ids of another patch-id mode are
dropped; writes are atomic (temp file, ``os.replace``). Only entries the latest run used are
written back, and at most :data:`MAX_ENTRIES` of each map, so the file stays bounded by the
history a sweep looks at.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CommitCache"]

FILE_NAME = "commits.bin"
_MAGIC = b"BKCF"
#: 2: path hashes are taken over the paths' bytes (1 hashed decoded text, which sorts paths
#: that are not UTF-8 differently)
FORMAT_VERSION = 2
#: Most entries kept per map (a bound on the file: about 4 MB per 100,000 commits).
MAX_ENTRIES = 4_000_000
_HEAD = struct.Struct("<4sHBBBxII")  # magic, version, oid len, pid len, pid mode, counts
_MODES = {"stable": 0, "verbatim": 1}


@dataclass
class CommitCache:
    """The two maps (commit id hex -> value) and what this run used or added."""

    path: Path | None
    pid_mode: str
    paths: dict[str, int] = field(default_factory=dict)
    pids: dict[str, str] = field(default_factory=dict)
    used_paths: set[str] = field(default_factory=set)
    used_pids: set[str] = field(default_factory=set)
    added: bool = False

    @classmethod
    def load(cls, common_dir: Path | None, *, pid_mode: str) -> CommitCache:
        """Read the cache (empty when absent, unreadable, corrupt or another version)."""
        if common_dir is None:
            return cls(None, pid_mode)
        path = common_dir / "branchkeeper" / FILE_NAME
        cache = cls(path, pid_mode)
        try:
            blob = path.read_bytes()
        except OSError:
            return cache
        with contextlib.suppress(struct.error, ValueError):
            cache.paths, cache.pids = _decode(blob, pid_mode)
        return cache

    def get_paths(self, commit: str) -> int | None:
        value = self.paths.get(commit)
        if value is not None:
            self.used_paths.add(commit)
        return value

    def put_paths(self, commit: str, value: int) -> None:
        self.paths[commit] = value
        self.used_paths.add(commit)
        self.added = True

    def get_pid(self, commit: str) -> str | None:
        value = self.pids.get(commit)
        if value is not None:
            self.used_pids.add(commit)
        return value

    def put_pid(self, commit: str, value: str) -> None:
        self.pids[commit] = value
        self.used_pids.add(commit)
        self.added = True

    def save(self) -> None:
        """Write the entries this run used, atomically, when this run added any; errors are
        ignored (it is a cache)."""
        if self.path is None or not self.added:
            return
        paths = {c: self.paths[c] for c in self.used_paths if c in self.paths}
        pids = {c: self.pids[c] for c in self.used_pids if c in self.pids}
        blob = _encode(paths, pids, self.pid_mode)
        if blob is None:
            return
        tmp = None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".commits-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, self.path)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _decode(blob: bytes, pid_mode: str) -> tuple[dict[str, int], dict[str, str]]:
    """The two maps of a cache file; raises ``ValueError``/``struct.error`` when corrupt."""
    magic, version, oid_len, pid_len, mode, n_paths, n_pids = _HEAD.unpack_from(blob)
    if magic != _MAGIC or version != FORMAT_VERSION or oid_len not in (20, 32) \
            or pid_len not in (20, 32):
        raise ValueError("not a commit cache of this version")
    offset = _HEAD.size
    paths_size = n_paths * (oid_len + 8)
    pids_size = n_pids * (oid_len + pid_len)
    if len(blob) != offset + paths_size + pids_size:
        raise ValueError("truncated commit cache")
    paths = {o.hex(): h for o, h in struct.iter_unpack(
        f"<{oid_len}sQ", blob[offset:offset + paths_size])}
    pids: dict[str, str] = {}
    if mode == _MODES.get(pid_mode):
        zero = bytes(pid_len)
        pids = {o.hex(): ("" if p == zero else p.hex()) for o, p in struct.iter_unpack(
            f"<{oid_len}s{pid_len}s", blob[offset + paths_size:])}
    return paths, pids


def _encode(paths: dict[str, int], pids: dict[str, str], pid_mode: str) -> bytes | None:
    """The file's bytes, or None when the ids have mixed lengths (never written)."""
    keys = [*paths, *pids]
    if not keys:
        return _HEAD.pack(_MAGIC, FORMAT_VERSION, 20, 20, _MODES.get(pid_mode, 0), 0, 0)
    oid_len = len(keys[0]) // 2
    pid_values = [p for p in pids.values() if p]
    pid_len = len(pid_values[0]) // 2 if pid_values else 20
    if any(len(k) != 2 * oid_len for k in keys) or any(len(p) != 2 * pid_len
                                                         for p in pid_values):
        return None
    items_paths = list(paths.items())[:MAX_ENTRIES]
    items_pids = list(pids.items())[:MAX_ENTRIES]
    parts = [_HEAD.pack(_MAGIC, FORMAT_VERSION, oid_len, pid_len, _MODES.get(pid_mode, 0),
                        len(items_paths), len(items_pids))]
    path_rec = struct.Struct(f"<{oid_len}sQ")
    parts.extend(path_rec.pack(bytes.fromhex(c), h) for c, h in items_paths)
    zero = bytes(pid_len)
    pid_rec = struct.Struct(f"<{oid_len}s{pid_len}s")
    parts.extend(pid_rec.pack(bytes.fromhex(c), bytes.fromhex(p) if p else zero)
                 for c, p in items_pids)
    return b"".join(parts)
