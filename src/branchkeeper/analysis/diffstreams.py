"""One batched diff stream and what answers it: patch-ids, raw entries and line counts.

Issue 11, sections 2-4. Each function here runs one ``diff-tree --stdin`` stream (or one
``diff-tree --stdin -p | patch-id`` pipeline) over a batch and says how many leading items it
settled and which git failure stopped it (an :class:`~branchkeeper.git.isolate.Attempt`), so a
missing object makes only the items that need it unknown: :func:`answer` sets aside the items
lacking a blob (:func:`absent_items`) and isolates the rest
(:func:`~branchkeeper.git.isolate.run_isolated`). Line counts (:func:`range_line_counts`,
:func:`tree_numstat`) are answered here whole; the cached per-sweep facts built on these
streams are :class:`branchkeeper.analysis.commitfacts.DiffFacts`.

The user's diff settings never change a fact here (field case C09): plumbing ``diff-tree``
ignores the porcelain ``diff.*`` settings, and the options that could still change the text are
pinned on the command line (:data:`PINNED`). Binary changes are hashed in full (``--binary``),
so two different binary edits of one path never share a patch-id. Where git has it, ``patch-id
--verbatim`` keeps whitespace in the hash (:func:`branchkeeper.git.repo.patch_id_mode`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from branchkeeper.git.difftree import RawRecord, iter_raw_z, parse_numstat_z, split_z
from branchkeeper.git.isolate import Attempt, Failure, run_isolated, stop_failure, stopped
from branchkeeper.git.objects import missing_objects
from branchkeeper.git.repo import patch_id_mode
from branchkeeper.git.run import (
    STREAM_IDLE_S,
    STREAM_MEMORY,
    GitError,
    run_git_pipeline,
    stream_git,
)
from branchkeeper.git.types import Oid

K = TypeVar("K")
R = TypeVar("R")

#: Options pinned on every diff whose text is hashed or counted (STYLE.md: neutralise settings),
#: and the memory bounds of a stream (:data:`~branchkeeper.git.run.STREAM_MEMORY`).
PINNED = (
    *STREAM_MEMORY,
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

#: Items per git process; two run at once. Without a budget a batch is cut in two halves only
#: (the git process count stays flat whatever the history length: a stream's output is read
#: as it arrives, so its size costs no memory); under a budget, smaller batches keep what a
#: spent budget interrupts small (what was answered is cached for the next run).
CHUNK = 1 << 40
CHUNK_BUDGETED = 2_000
#: Below this many items one stream is enough.
PARALLEL_MIN = 400
_RAW = ("diff-tree", "--stdin", "-r", "--raw", "-z", "--no-renames", "--no-abbrev")
#: Seconds a stream here may go without output or CPU time before it is ended (read at call
#: time): its work grows with the repository, so no fixed time bounds it. The items it left
#: unanswered fail with :func:`~branchkeeper.git.isolate.stop_failure` (never cached).
IDLE_S = STREAM_IDLE_S
#: The object id git prints for an absent side (SHA-1 and SHA-256).
ZERO_OIDS = frozenset({"0" * 40, "0" * 64})


def _settle(keys: Sequence[str], headers: Sequence[str], *, failed: bool) -> int:
    """How many leading items of a batch are settled, given the record headers printed in
    input order (a failed run's last record may be incomplete)."""
    if not failed:
        return len(keys)
    if not headers:
        return 0
    position = {k: i for i, k in enumerate(keys)}
    return position.get(headers[-1], 0)


def raw_attempt(root: Path, lines: Sequence[str], keys: Sequence[str],
                 take: Callable[[RawRecord], None], env: dict[str, str] | None = None
                 ) -> tuple[int, GitError | None]:
    """One ``diff-tree --stdin --raw`` stream over ``lines``, each record handed to ``take``
    as it is read (the last one only once it is known complete). Returns how many leading
    items are settled and the git failure that stopped the stream (None: all of them)."""
    stdin = ("\n".join(lines) + "\n").encode("ascii")
    last: RawRecord | None = None
    try:
        for record in iter_raw_z(split_z(stream_git([*PINNED, *_RAW], cwd=root, stdin=stdin,
                                                    idle=IDLE_S, env=env))):
            if last is not None:
                take(last)
            last = record
    except GitError as exc:
        return _settle(keys, [last[0]] if last is not None else [], failed=True), exc
    if last is not None:
        take(last)
    return len(keys), None


def _blobs(metas: Sequence[bytes]) -> set[str]:
    """The blob ids a record's raw entries name on either side (no submodule commits)."""
    out: set[str] = set()
    for meta in metas:
        old_mode, new_mode, old_oid, new_oid = meta[1:].split(b" ", 4)[:4]
        if b"160000" in (old_mode, new_mode):
            continue
        out.update(o.decode("ascii") for o in (old_oid, new_oid))
    return out - ZERO_OIDS


def absent_items(root: Path, lines: Sequence[str], keys: Sequence[K], *, partial: bool,
                 headers: Sequence[str] | None = None, known: set[str] | None = None
                 ) -> dict[K, Failure]:
    """The items whose diff needs a blob the repository lacks, found from the trees alone
    (one ``diff-tree --raw`` stream and one object lookup), so a missing blob costs two
    processes however many items need it: after a stream that reads blobs failed
    (patch-ids, line counts), or before one when the run already knows missing blobs
    (``known``: then they are the ones looked for, and no lookup runs). ``headers``: the
    header each item prints (default ``str(key)``; two items with one header share their
    blobs). Returns nothing when that check itself fails (the stream then isolates
    failures)."""
    if not lines:
        return {}
    blobs: defaultdict[str, set[str]] = defaultdict(set)
    heads = [str(k) for k in keys] if headers is None else list(headers)

    def take(record: RawRecord) -> None:
        blobs[record[0]] |= _blobs(record[1])

    try:
        _, error = raw_attempt(root, lines, heads, take)
        if error is not None:
            return {}
        missing = known if known is not None else missing_objects(
            root, {o for os in blobs.values() for o in os}, partial=partial)
    except GitError:
        return {}
    out: dict[K, Failure] = {}
    for k, head in zip(keys, heads, strict=True):
        lacking = sorted(blobs.get(head, set()) & missing)
        if lacking:
            out[k] = Failure(lacking[0], f"object missing: {lacking[0]}")
    return out


def answer(part: Sequence[K], one: Callable[[Sequence[K]], Attempt[K, R]],
           absent: Callable[[Sequence[K]], dict[K, Failure]] | None
           ) -> tuple[dict[K, R], dict[K, Failure]]:
    """Answer ``part`` by ``one`` (one stream); when that fails and ``absent`` is given, the
    items of the rest lacking an object (:func:`absent_items`) are set aside before the rest
    is isolated (:func:`~branchkeeper.git.isolate.run_isolated`), so a stream that does not
    fail costs nothing more and one that does costs a few processes, not one per item."""
    if absent is None:
        return run_isolated(part, one)
    first = one(part)
    if first.error is None:
        return first.results, {}
    rest = part[first.settled:]
    if stopped(first.error):  # not about an item: nothing to look for
        return first.results, {k: stop_failure(first.error) for k in rest}
    lacking = absent(rest)
    found, failed = run_isolated([k for k in rest if k not in lacking], one)
    return {**first.results, **found}, {**failed, **lacking}


def halves(items: Sequence[K], chunk: int) -> list[Sequence[K]]:
    """``items`` in runs of at most ``chunk``, and at least two when there are
    :data:`PARALLEL_MIN` or more. Runs, not every other item: git reads neighbouring commits
    of one history far faster (their trees share objects it has just unpacked), so callers
    pass items in history order. No items, no runs."""
    if not items:
        return []
    parts = max(-(-len(items) // chunk), 2 if len(items) >= PARALLEL_MIN else 1)
    size = -(-len(items) // parts)
    return [items[i:i + size] for i in range(0, len(items), size)]



#: An item of :meth:`DiffFacts.patch_ids_with_ranges`: ``("c", commit)``, against its first
#: parent, or ``("r", tip)``, the tip's whole diff from its base.
PidItem = tuple[str, Oid]


def _pid_pipeline(root: Path, lines: list[str]) -> tuple[bytes, GitError | None]:
    """One ``diff-tree --stdin -p | patch-id`` run over ``lines``: its output, and the error
    that ended it (``None``: it finished; the output then holds every answer)."""
    stdin = ("\n".join(lines) + "\n").encode("ascii")
    try:
        return run_git_pipeline(
            [*PINNED, "diff-tree", "--stdin", "-p", "-r", *_DIFF_OPTS],
            ["patch-id", f"--{patch_id_mode()}"], cwd=root, stdin=stdin, idle=IDLE_S,
        ).stdout, None
    except GitError as exc:
        return exc.stdout, exc


def pid_items_attempt(root: Path, lines: list[str], items: Sequence[PidItem],
                       redo: set[PidItem]) -> Attempt[PidItem, str]:
    """One patch-id pipeline over mixed items (:data:`PidItem`). patch-id names each answer
    by the line's first commit, so a commit line and a range line of one tip print the same
    name: answers are placed on the lines in order, each on the first line of its name past
    the line answered before it (a line without a patch prints nothing). Where a name has
    several lines and only some answered, which one did is not known: those lines go to
    ``redo`` and have no result here. A failed run settles the lines before its last
    answer (that one may be cut short)."""
    out, error = _pid_pipeline(root, lines)
    where: defaultdict[str, deque[int]] = defaultdict(deque)
    for i, (_, c) in enumerate(items):
        where[c].append(i)
    found: dict[int, str] = {}
    last = -1
    for row in out.decode("ascii", "replace").splitlines():
        fields = row.split()
        if len(fields) != 2:
            continue
        queue = where.get(fields[1])
        while queue and queue[0] <= last:
            queue.popleft()
        if queue:
            last = queue.popleft()
            found[last] = fields[0]
    settled = len(items) if error is None else max(last, 0)
    names: defaultdict[str, list[int]] = defaultdict(list)
    for i in range(settled):
        names[items[i][1]].append(i)
    unsure = {i for ids in names.values() if len(ids) > 1
              and 0 < sum(i in found for i in ids) < len(ids) for i in ids}
    redo.update(items[i] for i in unsure)
    return Attempt({items[i]: found.get(i, "") for i in range(settled) if i not in unsure},
                   settled, error)


def pid_attempt(root: Path, lines: list[str], keys: list[Oid]
                 ) -> tuple[dict[str, str], int, GitError | None]:
    """One ``diff-tree --stdin -p | patch-id`` run: ``{key: pid}`` for the settled items."""
    out, error = _pid_pipeline(root, lines)
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
    chunks: list[bytes] = []
    error: GitError | None = None
    try:
        chunks.extend(stream_git([*PINNED, "diff-tree", "--stdin", "-r", "--numstat", "-z",
                                  "--no-renames"], cwd=root, stdin=stdin, idle=IDLE_S, env=env))
    except GitError as exc:
        error = exc
    out = b"".join(chunks)
    if error is not None and not out.endswith(b"\0"):
        out = out[:out.rfind(b"\0") + 1]  # a last entry cut mid-write: dropped
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


def range_line_counts(root: Path, pairs: Sequence[tuple[Oid, Oid]], *, partial: bool = False,
                      known_missing: set[str] | None = None
                      ) -> tuple[dict[Oid, int], dict[Oid, Failure]]:
    """Lines added plus deleted in ``base..tip`` for each ``(base, tip)`` (each tip once),
    keyed by tip; binary files count 0. ``diff-tree --numstat`` streams, two at once for a
    large batch; a tip whose blobs are missing is in the failures (``partial``: a partial
    clone, see :func:`absent_items`). ``known_missing``: blobs this sweep already found
    missing (the proof steps'); then the tips needing one are set aside first, from one
    ``diff-tree --raw`` stream, so the counts do not fail on them, are not looked up again
    and are not rerun."""
    by_tip = {tip: base for base, tip in pairs}
    failures: dict[Oid, Failure] = {}
    if known_missing:
        failures.update(absent_items(root, [f"{t} {b}" for t, b in by_tip.items()],
                                     list(by_tip), partial=partial, known=known_missing))

    def one(part: Sequence[Oid]) -> Attempt[Oid, int]:
        found, settled, error = _numstat_attempt(root, [f"{t} {by_tip[t]}" for t in part],
                                                 list(part), None)
        return Attempt({t: sum((a or 0) + (d or 0) for _, a, d in found.get(t, []))
                        for t in part[:settled]}, settled, error)

    def run(part: Sequence[Oid]) -> tuple[dict[Oid, int], dict[Oid, Failure]]:
        return answer(part, one, lambda rest: absent_items(
            root, [f"{t} {by_tip[t]}" for t in rest], rest, partial=partial))

    counts: dict[Oid, int] = {}
    todo = [t for t in by_tip if t not in failures]
    with ThreadPoolExecutor(max_workers=2) as pool:
        for found, failed in pool.map(run, halves(todo, CHUNK) if todo else []):
            counts.update(found)
            failures.update(failed)
    return counts, failures
