"""Facts of diffs, batched and cached: changed-path sets, patch-ids, whole branch diffs.

Issue 11, sections 2-4. Every fact comes from one stream per batch (``diff-tree --stdin``, or
``diff-tree --stdin -p | patch-id``), two streams side by side for large batches (git's diff
work is CPU-bound and the machine has two cores), each resumed past an item whose object is
missing (:func:`~branchkeeper.git.isolate.run_isolated`), so a missing blob makes only the
items that need it unknown. Per-commit facts are cached by commit id
(:class:`~branchkeeper.state.commit_cache.CommitCache`); range facts by ``(base, tip)`` in the
inventory cache.

The user's diff settings never change a fact here (field case C09): plumbing ``diff-tree``
ignores the porcelain ``diff.*`` settings, and the options that could still change the text are
pinned on the command line (:data:`PINNED`). Binary changes are hashed in full (``--binary``),
so two different binary edits of one path never share a patch-id. Where git has it, ``patch-id
--verbatim`` keeps whitespace in the hash (:func:`branchkeeper.git.repo.patch_id_mode`). Path
sets use ``--no-renames``, so a rename is its two paths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple, TypeVar

from branchkeeper.git.difftree import RawEntry, parse_numstat_z, parse_raw_z
from branchkeeper.git.isolate import Attempt, Failure, run_isolated
from branchkeeper.git.objects import missing_objects
from branchkeeper.git.repo import patch_id_mode
from branchkeeper.git.run import GitError, run_git, run_git_pipeline
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.state.commit_cache import CommitCache

K = TypeVar("K")
R = TypeVar("R")

#: Options pinned on every diff whose text is hashed or counted (STYLE.md: neutralise settings).
PINNED = (
    "-c", "core.quotePath=false",
    "-c", "diff.context=3",
    "-c", "diff.interHunkContext=0",
    "-c", "diff.algorithm=myers",
    "-c", "diff.indentHeuristic=true",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.relative=false",
)
_DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-U3",
              "--full-index", "--binary", "--diff-algorithm=myers", "--no-relative")

#: Items per git process; two run at once. Under a budget, smaller batches keep what a spent
#: budget interrupts small (what was answered is cached for the next run).
CHUNK = 50_000
CHUNK_BUDGETED = 2_000
#: Below this many items one stream is enough.
PARALLEL_MIN = 400
_RAW = ("diff-tree", "--stdin", "-r", "--raw", "-z", "--no-renames", "--no-abbrev")
_ZERO = frozenset({"0" * 40, "0" * 64})


def path_set_hash(paths: Sequence[str]) -> int:
    """A 64-bit hash of a set of paths (order and repeats ignored); 0 for the empty set."""
    if not paths:
        return 0
    digest = hashlib.blake2b("\0".join(sorted(set(paths))).encode("utf-8", "surrogateescape"),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") or 1


class WholeDiff(NamedTuple):
    """A branch's whole diff from a base commit: the hash of its changed paths and, per path,
    the branch side's ``(mode, blob)`` (``None`` where the branch deletes the path)."""

    paths_hash: int
    entries: dict[str, tuple[str, str] | None]


def _settle(keys: Sequence[str], headers: Sequence[str], *, failed: bool) -> int:
    """How many leading items of a batch are settled, given the record headers printed in
    input order (a failed run's last record may be incomplete)."""
    if not failed:
        return len(keys)
    if not headers:
        return 0
    position = {k: i for i, k in enumerate(keys)}
    return position.get(headers[-1], 0)


def _raw_attempt(root: Path, lines: Sequence[str], keys: Sequence[str], env: dict[str, str] | None
                 ) -> tuple[list[tuple[str, list[RawEntry]]], int, GitError | None]:
    stdin = ("\n".join(lines) + "\n").encode("ascii")
    try:
        out, error = run_git([*PINNED, *_RAW], cwd=root, stdin=stdin, timeout=600,
                             env=env).stdout, None
    except GitError as exc:
        if exc.returncode is None:
            raise
        out, error = exc.stdout, exc
    records = parse_raw_z(out)
    settled = _settle(keys, [h for h, _ in records], failed=error is not None)
    if error is not None:
        records = [r for r in records if r[0] in set(keys[:settled])]
    return records, settled, error


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
        """Before a patch-id stream (which reads blobs): the items whose diff needs a blob the
        repository lacks, found from the trees alone (one ``diff-tree --raw`` stream and one
        object lookup), so a missing blob costs two processes however many items need it.
        Returns nothing when that check itself fails (the stream then isolates failures)."""
        if not lines:
            return {}
        try:
            records, _, error = _raw_attempt(self.root, lines, [str(k) for k in keys],
                                                   None)
            if error is not None:
                return {}
            blobs = {h: {o for e in es for o in (e.old_oid, e.new_oid)
                         if o not in _ZERO and "160000" not in (e.old_mode, e.new_mode)}
                     for h, es in records}
            missing = missing_objects(self.root, {o for os in blobs.values() for o in os},
                                      partial=self.partial)
        except GitError:
            return {}
        out: dict[K, Failure] = {}
        for k in keys:
            lacking = sorted(blobs.get(str(k), set()) & missing)
            if lacking:
                out[k] = Failure(lacking[0], f"object missing: {lacking[0]}")
        return out

    # -- running streams ------------------------------------------------------------------------
    def _streams(self, items: Sequence[K], one: Callable[[Sequence[K]], Attempt[K, R]]
                 ) -> tuple[dict[K, R], dict[K, Failure], list[K]]:
        """Answer ``items`` in chunks, two streams at once; returns (results, failures, the
        items the budget left unanswered)."""
        chunks = [items[i:i + self.chunk] for i in range(0, len(items), self.chunk)]
        if len(items) >= PARALLEL_MIN and len(chunks) == 1:
            half = (len(items) + 1) // 2
            chunks = [items[:half], items[half:]]
        results: dict[K, R] = {}
        failures: dict[K, Failure] = {}
        skipped: list[K] = []

        def run(part: Sequence[K]) -> tuple[dict[K, R], dict[K, Failure]] | None:
            if self.spent():
                return None
            return run_isolated(part, one)

        with ThreadPoolExecutor(max_workers=2) as pool:
            for part, answer in zip(chunks, pool.map(run, chunks), strict=True):
                if answer is None:
                    skipped.extend(part)
                    continue
                results.update(answer[0])
                failures.update(answer[1])
        return results, failures, skipped

    # -- per-commit facts -----------------------------------------------------------------------
    def path_sets(self, commits: Sequence[Oid]) -> tuple[dict[Oid, int], dict[Oid, Failure]]:
        """The changed-path hash of each (non-merge) commit against its first parent, cached
        by commit id. A commit the budget did not reach is absent from both maps."""
        known: dict[Oid, int] = {}
        todo: list[Oid] = []
        for c in dict.fromkeys(commits):
            value = self.cache.get_paths(c)
            if value is None:
                todo.append(c)
            else:
                known[c] = value
        progress.current().count("commit facts", len(known))
        if not todo:
            return known, {}

        def one(part: Sequence[Oid]) -> Attempt[Oid, int]:
            records, settled, error = _raw_attempt(self.root, part, part, None)
            found = {Oid(h): path_set_hash([e.path for e in es]) for h, es in records}
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
            found, settled, error = _pid_attempt(self.root, list(part), list(part))
            return Attempt({c: found.get(c, "") for c in part[:settled]}, settled, error)

        if not todo:
            return known, {}
        absent = self._absent(todo, todo)
        results, failures, _ = self._streams([c for c in todo if c not in absent], one)
        for c, value in results.items():
            self.cache.put_pid(c, value)
        known.update(results)
        return known, {**failures, **absent}

    # -- range facts ----------------------------------------------------------------------------
    def whole_diffs(self, pairs: Sequence[tuple[Oid, Oid]]
                    ) -> tuple[dict[Oid, WholeDiff], dict[Oid, Failure]]:
        """``{tip: WholeDiff}`` of the diff ``base..tip`` for each ``(base, tip)`` (each tip
        once). Trees only: no blob is read, so only a missing tree fails an item."""
        by_tip = {tip: base for base, tip in pairs}
        tips = list(by_tip)

        def one(part: Sequence[Oid]) -> Attempt[Oid, WholeDiff]:
            lines = [f"{t} {by_tip[t]}" for t in part]
            records, settled, error = _raw_attempt(self.root, lines, part, None)
            found: dict[str, WholeDiff] = {}
            for header, entries in records:
                found[header] = WholeDiff(
                    path_set_hash([e.path for e in entries]),
                    {e.path: (None if e.new_oid in _ZERO else (e.new_mode, e.new_oid))
                     for e in entries})
            empty = WholeDiff(0, {})
            return Attempt({t: found.get(t, empty) for t in part[:settled]}, settled, error)

        results, failures, _ = self._streams(tips, one)
        return results, failures

    def range_patch_ids(self, pairs: Sequence[tuple[Oid, Oid]]
                        ) -> tuple[dict[Oid, str], dict[Oid, Failure]]:
        """``{tip: patch-id}`` of the whole diff ``base..tip`` (``""``: empty diff)."""
        by_tip = {tip: base for base, tip in pairs}

        def one(part: Sequence[Oid]) -> Attempt[Oid, str]:
            found, settled, error = _pid_attempt(self.root, [f"{t} {by_tip[t]}" for t in part],
                                                 list(part))
            return Attempt({t: found.get(t, "") for t in part[:settled]}, settled, error)

        tips = list(by_tip)
        absent = self._absent([f"{t} {by_tip[t]}" for t in tips], tips)
        results, failures, _ = self._streams([t for t in tips if t not in absent], one)
        return results, {**failures, **absent}


def _pid_attempt(root: Path, lines: list[str], keys: list[Oid]
                 ) -> tuple[dict[str, str], int, GitError | None]:
    """One ``diff-tree --stdin -p | patch-id`` run: ``{key: pid}`` for the settled items."""
    stdin = ("\n".join(lines) + "\n").encode("ascii")
    try:
        out, error = run_git_pipeline(
            [*PINNED, "diff-tree", "--stdin", "-p", "-r", *_DIFF_OPTS],
            ["patch-id", f"--{patch_id_mode()}"], cwd=root, stdin=stdin, timeout=600,
        ).stdout, None
    except GitError as exc:
        if exc.returncode is None:
            raise
        out, error = exc.stdout, exc
    pairs = [line.split() for line in out.decode("ascii", "replace").splitlines()]
    pairs = [p for p in pairs if len(p) == 2]
    settled = _settle(keys, [p[1] for p in pairs], failed=error is not None)
    allowed = set(keys[:settled])
    return {c: pid for pid, c in pairs if c in allowed}, settled, error


def _numstat_attempt(root: Path, lines: Sequence[str], keys: Sequence[str],
                     env: dict[str, str] | None
                     ) -> tuple[dict[str, list[tuple[str, int | None, int | None]]], int,
                                GitError | None]:
    """One ``diff-tree --stdin --numstat`` run: ``{key: [(path, added, deleted)]}`` for the
    settled items (``keys``: the header each line prints)."""
    stdin = ("\n".join(lines) + "\n").encode("ascii")
    try:
        out, error = run_git([*PINNED, "diff-tree", "--stdin", "-r", "--numstat", "-z",
                              "--no-renames"], cwd=root, stdin=stdin, timeout=600,
                             env=env).stdout, None
    except GitError as exc:
        if exc.returncode is None:
            raise
        out, error = exc.stdout, exc
    records = parse_numstat_z(out)
    settled = _settle(keys, [h for h, _ in records], failed=error is not None)
    allowed = set(keys[:settled])
    return ({h: [(e.path, e.added, e.deleted) for e in es] for h, es in records if h in allowed},
            settled, error)


Counts = list[tuple[str, int | None, int | None]]


def tree_numstat(root: Path, pairs: Sequence[tuple[str, str]], *, env: dict[str, str]
                 ) -> tuple[dict[tuple[str, str], Counts], dict[tuple[str, str], Failure]]:
    """Changed lines from tree ``a`` to tree ``b`` for each ``(a, b)``: ``[(path, added,
    deleted)]`` (``None`` counts for a binary file), one ``diff-tree --numstat`` stream run
    with ``env`` (the scratch object store where the trees were written)."""
    todo = list(dict.fromkeys(pairs))

    def one(part: Sequence[tuple[str, str]]) -> Attempt[tuple[str, str], Counts]:
        keys = [f"{a} {b}" for a, b in part]
        found, settled, error = _numstat_attempt(root, keys, keys, env)
        return Attempt({p: found.get(k, []) for p, k in zip(part[:settled], keys, strict=False)},
                       settled, error)

    return run_isolated(todo, one)


def range_line_counts(root: Path, pairs: Sequence[tuple[Oid, Oid]]
                      ) -> tuple[dict[Oid, int], dict[Oid, Failure]]:
    """Lines added plus deleted in ``base..tip`` for each ``(base, tip)`` (each tip once),
    keyed by tip; binary files count 0. One ``diff-tree --numstat`` stream; a tip whose blobs
    are missing is in the failures."""
    by_tip = {tip: base for base, tip in pairs}

    def one(part: Sequence[Oid]) -> Attempt[Oid, int]:
        found, settled, error = _numstat_attempt(root, [f"{t} {by_tip[t]}" for t in part],
                                                 list(part), None)
        return Attempt({t: sum((a or 0) + (d or 0) for _, a, d in found.get(t, []))
                        for t in part[:settled]}, settled, error)

    return run_isolated(list(by_tip), one)
