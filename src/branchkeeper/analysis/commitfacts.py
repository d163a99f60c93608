"""Facts of diffs, batched and cached: changed-path sets, patch-ids, whole branch diffs.

Issue 11, sections 2-4. Every fact comes from one stream per batch
(:mod:`branchkeeper.analysis.diffstreams`: ``diff-tree --stdin``, or ``diff-tree --stdin -p |
patch-id``), two streams side by side for large batches (git's diff work is CPU-bound and the
machine has two cores), each resumed past an item whose object is missing, so a missing blob
makes only the items that need it unknown. Per-commit facts are cached by commit id
(:class:`~branchkeeper.state.commit_cache.CommitCache`); range facts by ``(base, tip)`` in the
inventory cache. Path sets use ``--no-renames``, so a rename is its two paths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple, TypeVar

from branchkeeper.analysis.diffstreams import (
    CHUNK,
    CHUNK_BUDGETED,
    ZERO_OIDS,
    PidItem,
    absent_items,
    answer,
    halves,
    pid_attempt,
    pid_items_attempt,
    raw_attempt,
)
from branchkeeper.git.difftree import RawRecord
from branchkeeper.git.isolate import Attempt, Failure
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.state.commit_cache import CommitCache

K = TypeVar("K")
R = TypeVar("R")

#: Whole diffs of at most this many paths keep their raw entries (:class:`WholeDiff`).
ENTRIES_KEPT = 64


def path_set_hash(paths: Iterable[bytes]) -> int:
    """A 64-bit hash of a set of paths as git prints them (bytes; order and repeats
    ignored); 0 for the empty set."""
    unique = sorted(set(paths))
    if not unique:
        return 0
    digest = hashlib.blake2b(b"\0".join(unique), digest_size=8).digest()
    return int.from_bytes(digest, "big") or 1


class WholeDiff(NamedTuple):
    """A branch's whole diff from a base commit, as a few numbers (never its entries, which
    for a branch forked long ago run to thousands of paths): the hash of its changed paths,
    how many paths it changes, and the trees given to :meth:`DiffFacts.whole_diffs` that
    hold the branch's side of every one of them (same mode and blob, or equally absent)."""

    paths_hash: int
    paths: int
    holders: frozenset[str]
    #: the raw entries ``(meta, path)`` of a diff of at most :data:`ENTRIES_KEPT` paths (the
    #: merge check's pre-screen reads their blob ids), else None
    entries: tuple[tuple[bytes, bytes], ...] | None = None


#: A tree listing: ``{path: (mode, oid)}`` as git prints them (see
#: :func:`branchkeeper.git.objects.tree_listing`).
Listing = dict[bytes, tuple[bytes, bytes]]


def _held_by(metas: Sequence[bytes], paths: Sequence[bytes], trees: dict[str, Listing]
             ) -> frozenset[str]:
    """The trees of ``trees`` that have the new side of every raw entry."""
    out: list[str] = []
    for name, table in trees.items():
        for meta, path in zip(metas, paths, strict=True):
            _, new_mode, _, new_oid = meta[1:].split(b" ", 4)[:4]
            have = table.get(path)
            if (have is None) != (new_oid.decode("ascii") in ZERO_OIDS) or (
                    have is not None and have != (new_mode, new_oid)):
                break
        else:
            out.append(name)
    return frozenset(out)


def _split_cached(commits: Sequence[Oid], get: Callable[[Oid], R | None]
                  ) -> tuple[dict[Oid, R], list[Oid]]:
    """``commits`` (duplicates dropped, order kept) split into those the cache ``get`` knows,
    with their values, and the rest, still to compute."""
    known: dict[Oid, R] = {}
    todo: list[Oid] = []
    for c in dict.fromkeys(commits):
        value = get(c)
        if value is None:
            todo.append(c)
        else:
            known[c] = value
    return known, todo


class DiffFacts:
    """The batched, cached diff facts of one sweep. ``budgeted``: smaller batches;
    ``partial``: the repository is a partial clone (how missing objects are found)."""

    def __init__(self, root: Path, cache: CommitCache, *, budgeted: bool,
                 spent: Callable[[], bool], partial: bool = False) -> None:
        self.root = root
        self.cache = cache
        self.chunk = CHUNK_BUDGETED if budgeted else CHUNK
        self.spent = spent
        self.partial = partial

    def _absent(self, lines: Sequence[str], keys: Sequence[K]) -> dict[K, Failure]:
        return absent_items(self.root, lines, keys, partial=self.partial)

    def _absent_as(self, lines: Sequence[str], keys: Sequence[K], headers: Sequence[str]
                   ) -> dict[K, Failure]:
        return absent_items(self.root, lines, keys, partial=self.partial, headers=headers)

    # -- running streams ------------------------------------------------------------------------
    def _streams(self, items: Sequence[K] | Sequence[Sequence[K]],
                 one: Callable[[Sequence[K]], Attempt[K, R]],
                 absent: Callable[[Sequence[K]], dict[K, Failure]] | None = None, *,
                 chunked: bool = False) -> tuple[dict[K, R], dict[K, Failure], list[K]]:
        """Answer ``items`` in chunks, two streams at once; returns (results, failures, the
        items the budget left unanswered). ``absent``: when a chunk's stream fails, the
        items of its rest that lack an object (:meth:`_absent`), left out before the rest is
        isolated; a stream that does not fail costs nothing more. ``chunked``: ``items`` is
        already the list of chunks."""
        chunks: list[Sequence[K]] = list(items) if chunked else halves(  # type: ignore[arg-type]
            items, self.chunk)  # type: ignore[arg-type]
        results: dict[K, R] = {}
        failures: dict[K, Failure] = {}
        skipped: list[K] = []

        def run(part: Sequence[K]) -> tuple[dict[K, R], dict[K, Failure]] | None:
            if self.spent():
                return None
            return answer(part, one, absent)

        with ThreadPoolExecutor(max_workers=2) as pool:
            for part, answered in zip(chunks, pool.map(run, chunks), strict=True):
                if answered is None:
                    skipped.extend(part)
                    continue
                results.update(answered[0])
                failures.update(answered[1])
        return results, failures, skipped

    # -- per-commit facts -----------------------------------------------------------------------
    def path_sets(self, commits: Sequence[Oid]) -> tuple[dict[Oid, int], dict[Oid, Failure]]:
        """The changed-path hash of each (non-merge) commit against its first parent, cached
        by commit id. A commit the budget did not reach is absent from both maps."""
        known, todo = _split_cached(commits, self.cache.get_paths)
        meter = progress.current()  # captured: the streams run in worker threads
        meter.count("commit facts", len(known))
        if not todo:
            return known, {}
        meter.work(len(todo), unit="commits")

        def one(part: Sequence[Oid]) -> Attempt[Oid, int]:
            found: dict[str, int] = {}

            def take(record: RawRecord) -> None:
                found[record[0]] = path_set_hash(record[2])
                meter.advance()  # the count moves as the stream answers

            settled, error = raw_attempt(self.root, part, part, take)
            return Attempt({c: found.get(c, 0) for c in part[:settled]}, settled, error)

        results, failures, _ = self._streams(todo, one)
        for c, value in results.items():
            self.cache.put_paths(c, value)
        known.update(results)
        return known, failures

    def patch_ids(self, commits: Sequence[Oid]) -> tuple[dict[Oid, str], dict[Oid, Failure]]:
        """The patch-id of each commit against its first parent (``""``: no patch), cached."""
        known: dict[Oid, str] = {}
        todo: list[Oid] = []
        for c in dict.fromkeys(commits):
            value = self.cache.get_pid(c)
            if value is None:
                todo.append(c)
            else:
                known[c] = value
        progress.current().count("commit facts", len(known))

        def one(part: Sequence[Oid]) -> Attempt[Oid, str]:
            found, settled, error = pid_attempt(self.root, list(part), list(part))
            return Attempt({c: found.get(c, "") for c in part[:settled]}, settled, error)

        if not todo:
            return known, {}
        results, failures, _ = self._streams(todo, one, lambda rest: self._absent(rest, rest))
        for c, value in results.items():
            self.cache.put_pid(c, value)
        known.update(results)
        return known, failures

    def raw_entries(self, commits: Sequence[Oid]) -> dict[Oid, dict[bytes, bytes]]:
        """``{commit: {path: raw meta}}`` of each (non-merge) commit's diff against its first
        parent, for the commits git could read (one ``diff-tree --raw`` stream, two for a
        large batch; not cached: read only for the merge check's candidates). A commit whose
        stream failed is absent: the caller then decides nothing from it."""

        def one(part: Sequence[Oid]) -> Attempt[Oid, dict[bytes, bytes]]:
            found: dict[str, dict[bytes, bytes]] = {}

            def take(record: RawRecord) -> None:
                found[record[0]] = dict(zip(record[2], record[1], strict=True))

            settled, error = raw_attempt(self.root, part, part, take)
            return Attempt({c: found.get(c, {}) for c in part[:settled]}, settled, error)

        results, _, _ = self._streams(list(dict.fromkeys(commits)), one)
        return results

    # -- range facts ----------------------------------------------------------------------------
    def whole_diffs(self, pairs: Sequence[tuple[Oid, Oid]], trees: dict[str, Listing]
                    ) -> tuple[dict[Oid, WholeDiff], dict[Oid, Failure]]:
        """``{tip: WholeDiff}`` of the diff ``base..tip`` for each ``(base, tip)`` (each tip
        once), each checked against the listings ``trees`` (name -> listing) as it is read.
        Trees only: no blob is read, so only a missing tree fails an item."""
        by_tip = {tip: base for base, tip in pairs}
        tips = list(by_tip)

        def one(part: Sequence[Oid]) -> Attempt[Oid, WholeDiff]:
            lines = [f"{t} {by_tip[t]}" for t in part]
            found: dict[str, WholeDiff] = {}

            def take(record: RawRecord) -> None:
                header, metas, paths = record
                found[header] = WholeDiff(
                    path_set_hash(paths), len(paths), _held_by(metas, paths, trees),
                    tuple(zip(metas, paths, strict=True)) if len(paths) <= ENTRIES_KEPT
                    else None)

            settled, error = raw_attempt(self.root, lines, part, take)
            empty = WholeDiff(0, 0, frozenset())
            return Attempt({t: found.get(t, empty) for t in part[:settled]}, settled, error)

        results, failures, _ = self._streams(tips, one)
        return results, failures

    def range_patch_ids(self, pairs: Sequence[tuple[Oid, Oid]]
                        ) -> tuple[dict[Oid, str], dict[Oid, Failure]]:
        """``{tip: patch-id}`` of the whole diff ``base..tip`` (``""``: empty diff)."""
        by_tip = {tip: base for base, tip in pairs}

        def one(part: Sequence[Oid]) -> Attempt[Oid, str]:
            found, settled, error = pid_attempt(self.root, [f"{t} {by_tip[t]}" for t in part],
                                                 list(part))
            return Attempt({t: found.get(t, "") for t in part[:settled]}, settled, error)

        results, failures, _ = self._streams(
            list(by_tip), one, lambda rest: self._absent([f"{t} {by_tip[t]}" for t in rest], rest))
        return results, failures


    def patch_ids_with_ranges(self, commits: Sequence[Oid], pairs: Sequence[tuple[Oid, Oid]]
                              ) -> tuple[dict[PidItem, str], dict[PidItem, Failure]]:
        """:meth:`patch_ids` of ``commits`` and :meth:`range_patch_ids` of ``pairs`` (``(base,
        tip)``) from the same streams: ``{("c", commit) or ("r", tip): patch-id}`` (``""``:
        no patch) and the failures, same keys. Each stream lists its commits before its
        ranges (a range line grafts its base as the tip's parent in git's memory, which must
        not change a later commit line), and git's answers are matched to the lines in
        order (:func:`pid_items_attempt`); the rare answer that order cannot place (a
        commit and a range of one tip, one of them without a patch) is asked again in a
        stream of its own kind. Commit patch-ids are cached by commit id."""
        cached, todo = _split_cached(commits, self.cache.get_pid)
        out: dict[PidItem, str] = {("c", c): v for c, v in cached.items()}
        progress.current().count("commit facts", len(out))
        by_tip = {tip: base for base, tip in pairs}
        ranges: list[PidItem] = [("r", t) for t in by_tip]
        if not todo and not ranges:
            return out, {}
        commit_parts = halves([("c", c) for c in todo], self.chunk) if todo else []
        range_parts = halves(ranges, self.chunk) if ranges else []
        parts = [[*(commit_parts[i] if i < len(commit_parts) else ()),
                  *(range_parts[i] if i < len(range_parts) else ())]
                 for i in range(max(len(commit_parts), len(range_parts)))]
        redo: set[PidItem] = set()

        def line(item: PidItem) -> str:
            return item[1] if item[0] == "c" else f"{item[1]} {by_tip[item[1]]}"

        def one(part: Sequence[PidItem]) -> Attempt[PidItem, str]:
            return pid_items_attempt(self.root, [line(i) for i in part], part, redo)

        def absent(rest: Sequence[PidItem]) -> dict[PidItem, Failure]:
            return self._absent_as([line(i) for i in rest], rest, [i[1] for i in rest])

        results, failures, _ = self._streams(parts, one, absent, chunked=True)
        if redo:
            again_c, fc = self.patch_ids([c for kind, c in redo if kind == "c"])
            again_r, fr = self.range_patch_ids([(by_tip[t], t) for kind, t in redo
                                                if kind == "r"])
            results.update({("c", c): v for c, v in again_c.items()})
            results.update({("r", t): v for t, v in again_r.items()})
            failures.update({("c", c): f for c, f in fc.items()})
            failures.update({("r", t): f for t, f in fr.items()})
        for (kind, c), value in results.items():
            if kind == "c":
                self.cache.put_pid(c, value)
        out.update(results)
        return out, failures
