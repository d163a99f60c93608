"""The inventory cache under ``<common git dir>/branchkeeper/cache.json``.

Results that never change for the same inputs are kept: the patch-id of a ``(merge base, tip)``
range, counts (lines changed, creation dates, commits behind), each tip's verdict of the proof
tiers that read only the tip and the bases (keyed by tip, valid while the bases and the
verdict's stamp are unchanged), and the outcome of merging a tip into a landing commit (keyed by
the pair). Per-commit facts live in the binary :mod:`~branchkeeper.state.commit_cache`. A
missing, unreadable or corrupt cache is treated as empty (it is only a cache); writes are atomic
(temp file, replace), so a crash or a second sweep running at once never leaves a torn file.

Only entries used by the latest run are written back, so the file does not grow without bound.
The values are plain JSON; what they mean is the analysis layer's business.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["InventoryCache", "TipFacts"]

CACHE_VERSION = 5
_SECTIONS = ("range_pid", "counts", "verdicts", "pairs", "tips")


@dataclass
class InventoryCache:
    """Maps of cached results; ``used_*`` collect what this run read or wrote."""

    path: Path | None
    range_pid: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    #: tip -> [stamp, verdict] (see :mod:`branchkeeper.analysis.proofcache`)
    verdicts: dict[str, list[Any]] = field(default_factory=dict)
    #: "<target>:<tip>" -> the outcome of merging tip into target
    pairs: dict[str, list[Any]] = field(default_factory=dict)
    #: tip commit -> [committer date, trailers, subject]: what the sweep's lean ref listing
    #: does not read (a commit's own facts never change)
    tips: dict[str, list[Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    used_range: set[str] = field(default_factory=set)
    used_counts: set[str] = field(default_factory=set)
    used_verdicts: set[str] = field(default_factory=set)
    used_pairs: set[str] = field(default_factory=set)
    used_tips: set[str] = field(default_factory=set)
    #: The keys of each map as read from the file (None: nothing was read), so that a run
    #: which neither added nor dropped an entry does not rewrite it (a warm sweep at 5,000
    #: branches would spend ~80 ms encoding and writing the same 2 MB).
    loaded: tuple[frozenset[str], ...] | None = None
    changed: bool = False

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
            range_pid={k: v for k, v in section("range_pid").items() if isinstance(v, str)},
            counts={k: v for k, v in section("counts").items() if isinstance(v, int)},
            verdicts={k: v for k, v in section("verdicts").items() if isinstance(v, list)},
            pairs={k: v for k, v in section("pairs").items() if isinstance(v, list)},
            tips={k: v for k, v in section("tips").items()
                  if isinstance(v, list) and len(v) == 3},
            extra=section("extra"),
        )
        sizes = (len(cache.range_pid), len(cache.counts), len(cache.verdicts), len(cache.pairs),
                 len(cache.tips))
        if all(len(section(name)) == size for name, size in zip(_SECTIONS, sizes, strict=True)):
            cache.loaded = (frozenset(cache.range_pid), frozenset(cache.counts),
                            frozenset(cache.verdicts), frozenset(cache.pairs),
                            frozenset(cache.tips))
        return cache

    # -- the verdict and pair sections -----------------------------------------------------------
    def get_verdict(self, tip: str, stamp: str) -> Any:
        """The cached verdict of ``tip`` under ``stamp``, or None."""
        entry = self.verdicts.get(tip)
        if entry is None or len(entry) != 2 or entry[0] != stamp:
            return None
        self.used_verdicts.add(tip)
        return entry[1]

    def put_verdict(self, tip: str, stamp: str, value: Any) -> None:
        self.verdicts[tip] = [stamp, value]
        self.used_verdicts.add(tip)
        self.changed = True

    def drop_verdict(self, tip: str) -> None:
        if self.verdicts.pop(tip, None) is not None:
            self.used_verdicts.discard(tip)
            self.changed = True

    def get_pair(self, key: str) -> list[Any] | None:
        value = self.pairs.get(key)
        if value is not None:
            self.used_pairs.add(key)
        return value

    def put_pair(self, key: str, value: list[Any]) -> None:
        self.pairs[key] = value
        self.used_pairs.add(key)
        self.changed = True

    def tip_facts(self) -> TipFacts:
        """The ``tips`` section as the lean ref listing reads and fills it."""
        return TipFacts(self)

    def save(self) -> None:
        """Write the entries this run used, atomically; errors are ignored (it is a cache)."""
        if self.path is None:
            return
        used = (self.used_range, self.used_counts, self.used_verdicts, self.used_pairs,
                self.used_tips)
        # Entries are only ever added for missing keys (or replaced when their stamp changed,
        # which sets ``changed``), so equal key sets mean equal maps.
        if not self.changed and self.loaded is not None \
                and self.loaded == tuple(frozenset(u) for u in used):
            return
        from branchkeeper.git.repo import patch_id_mode

        data = {
            "version": CACHE_VERSION,
            "pid_mode": patch_id_mode(),
            "range_pid": {k: self.range_pid[k] for k in self.used_range if k in self.range_pid},
            "counts": {k: self.counts[k] for k in self.used_counts if k in self.counts},
            "verdicts": {k: self.verdicts[k] for k in self.used_verdicts if k in self.verdicts},
            "pairs": {k: self.pairs[k] for k in self.used_pairs if k in self.pairs},
            "tips": {k: self.tips[k] for k in self.used_tips if k in self.tips},
            "extra": self.extra,
        }
        tmp = None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".cache-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(data, separators=(",", ":")))  # dumps: the C encoder
            os.replace(tmp, self.path)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


class TipFacts:
    """A mapping view of :attr:`InventoryCache.tips` that records what a run read or added
    (``tip -> [date, trailers, subject]``)."""

    def __init__(self, cache: InventoryCache) -> None:
        self._cache = cache

    def get(self, tip: str) -> list[Any] | None:
        value = self._cache.tips.get(tip)
        if value is not None:
            self._cache.used_tips.add(tip)
        return value

    def put(self, tip: str, value: list[Any]) -> None:
        self._cache.tips[tip] = value
        self._cache.used_tips.add(tip)
        self._cache.changed = True
