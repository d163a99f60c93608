"""The inventory cache under ``<common git dir>/branchkeeper/cache.json``.

Results that never change for the same inputs are kept: the patch-id of a commit, the patch-id
of a ``(merge base, tip)`` range, a merge base of ``(tip, base tip)``. A missing, unreadable or
corrupt cache is treated as empty (it is only a cache); writes are atomic (temp file, replace),
so a crash or a second sweep running at once never leaves a torn file.

Only entries used by the latest run are written back, so the file does not grow without bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["InventoryCache"]

CACHE_VERSION = 3


@dataclass
class InventoryCache:
    """Maps of cached results; ``used`` collects what this run read or wrote."""

    path: Path | None
    commit_pid: dict[str, str] = field(default_factory=dict)
    range_pid: dict[str, str] = field(default_factory=dict)
    merge_base: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    used_commit: set[str] = field(default_factory=set)
    used_range: set[str] = field(default_factory=set)
    used_mb: set[str] = field(default_factory=set)
    used_counts: set[str] = field(default_factory=set)
    #: The keys of each map as read from the file (None: nothing was read), so that a run
    #: which neither added nor dropped an entry does not rewrite it (a warm sweep at 5,000
    #: branches would spend ~80 ms encoding and writing the same 2 MB).
    loaded: tuple[frozenset[str], ...] | None = None

    @classmethod
    def load(cls, common_dir: Path | None) -> InventoryCache:
        """Read the cache (an empty one when absent, unreadable, corrupt or another version)."""
        from branchkeeper.git.repo import patch_id_mode  # not on the hook path

        if common_dir is None:
            return cls(None)
        path = common_dir / "branchkeeper" / "cache.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return cls(path)
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION \
                or data.get("pid_mode") != patch_id_mode():
            return cls(path)

        def section(name: str) -> dict[str, Any]:
            value = data.get(name)
            return value if isinstance(value, dict) else {}

        cache = cls(
            path,
            commit_pid={k: v for k, v in section("commit_pid").items() if isinstance(v, str)},
            range_pid={k: v for k, v in section("range_pid").items() if isinstance(v, str)},
            merge_base={k: v for k, v in section("merge_base").items() if isinstance(v, str)},
            counts={k: v for k, v in section("counts").items() if isinstance(v, int)},
            extra=section("extra"),
        )
        if all(len(section(name)) == len(got) for name, got in (
                ("commit_pid", cache.commit_pid), ("range_pid", cache.range_pid),
                ("merge_base", cache.merge_base), ("counts", cache.counts))):
            cache.loaded = (frozenset(cache.commit_pid), frozenset(cache.range_pid),
                            frozenset(cache.merge_base), frozenset(cache.counts))
        return cache

    def save(self) -> None:
        """Write the entries this run used, atomically; errors are ignored (it is a cache)."""
        if self.path is None:
            return
        # Entries are only ever added for missing keys, so equal key sets mean equal maps.
        if self.loaded is not None and self.loaded == tuple(frozenset(used) for used in (
                self.used_commit, self.used_range, self.used_mb, self.used_counts)):
            return
        from branchkeeper.git.repo import patch_id_mode

        data = {
            "version": CACHE_VERSION,
            "pid_mode": patch_id_mode(),
            "commit_pid": {k: self.commit_pid[k] for k in self.used_commit if k in self.commit_pid},
            "range_pid": {k: self.range_pid[k] for k in self.used_range if k in self.range_pid},
            "merge_base": {k: self.merge_base[k] for k in self.used_mb if k in self.merge_base},
            "counts": {k: self.counts[k] for k in self.used_counts if k in self.counts},
            "extra": self.extra,
        }
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".cache-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(data, separators=(",", ":")))  # dumps: the C encoder
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
