"""Three-way merges in one process, never written into the user's object store.

Issue 11, section 1: the content proofs merge a branch tip into a base commit and compare trees.
``git merge-tree --write-tree --stdin`` (``--write-tree`` is git 2.38, ``--stdin`` git 2.39) reads
one ``<branch1> <branch2>`` pair per line and merges each with git's own merge base (a recursive
one for a criss-cross). Its output (``--stdin`` implies ``-z``) is, per merge::

    <status> NUL <tree> NUL                   status 1 = clean, 0 = conflicted
    [conflicted entries, each "<mode> <oid> <stage>\\t<path>" NUL]   (only when conflicted)
    [NUL, then messages, each "<n> NUL <path>... NUL <type> NUL <text> NUL"]  (with --messages)
    NUL                                       end of this merge

A pair without a merge base stops the whole process (``refusing to merge unrelated histories``,
exit 128), as does an object git cannot read; the merges printed before it are complete, so
:func:`~branchkeeper.git.isolate.run_isolated` resumes after the failing pair. Large batches run
as two such processes side by side (:func:`merge_pairs`), each bounded by silence (no output, no
CPU time), never by a fixed time that a larger repository would pass.

Rename detection is left as git sets it, because it is not what a merge costs: git 2.39's
merge-tree ignores ``merge.renames=false`` (merge-ort detects renames whatever it says), and
neither it nor ``merge.renameLimit=1`` nor ``merge.directoryRenames=false`` changed one byte of
the output of 600 candidate merges sampled from the landing check of a 39,000-branch repository,
or their CPU time by more than run-to-run noise. What costs is git finding each pair's merge
base: for a candidate far ahead of the branch's fork it walks every commit in between, about 80%
of that merge's CPU. ``--merge-base`` (git 2.40), which would skip the walk, cannot be combined
with ``--stdin``.

merge-tree writes the result trees and merged blobs. :class:`ScratchObjects` points it at a
temporary object directory under ``<common dir>/branchkeeper/tmp/`` with the repository's own
object directory as an alternate: every object is read from the repository, every new one lands
in the scratch directory, and the repository gains nothing. The directory stays for the
follow-up ``diff-tree`` of result trees in the same sweep and is removed on exit, on an
exception, on SIGTERM; one left by a killed run is removed by the next.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import NamedTuple

from branchkeeper.git.isolate import Attempt, Failure, run_isolated
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import STREAM_IDLE_S, STREAM_MEMORY, GitError, stream_git
from branchkeeper.git.types import Oid
from branchkeeper.process import pid_alive

#: Scratch directories older than this are removed whoever made them (seconds).
STALE_AFTER_S = 24 * 3600.0

_OID = re.compile(rb"\A[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_ENTRY = re.compile(rb"\A[0-7]{6} [0-9a-f]{40}(?:[0-9a-f]{24})? [123]\t(.+)\Z", re.DOTALL)


class MergeMessage(NamedTuple):
    """One informational message of a merge: the ``paths`` it names, its ``kind``
    (``Auto-merging``, ``CONFLICT (contents)``...) and its ``text``."""

    paths: tuple[str, ...]
    kind: str
    text: str


class MergeOutcome(NamedTuple):
    """One merge: ``clean``, the result ``tree`` (with conflict markers where not clean), the
    conflicted paths in order, and the messages (empty unless asked for)."""

    clean: bool
    tree: Oid
    conflicts: tuple[str, ...] = ()
    messages: tuple[MergeMessage, ...] = ()


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_merge_tree(data: bytes, *, messages: bool) -> tuple[list[MergeOutcome], bool]:
    """Parse ``merge-tree --write-tree --stdin`` output (``messages``: run with ``--messages``).

    Returns the complete merges in input order and whether ``data`` ended exactly after one (a
    process that died mid-way leaves a partial record, which is dropped). Raises
    :class:`ParseError` when a complete record has a field of the wrong shape.
    """
    fields = data.split(b"\0")
    out: list[MergeOutcome] = []
    i, n = 0, len(fields) - 1  # the last split piece follows the final NUL: not a field
    while i < n:
        status = fields[i]
        if status not in (b"0", b"1"):
            raise ParseError(f"merge-tree: bad merge status {status[:40]!r}")
        if i + 1 >= n:
            return out, False
        tree = fields[i + 1]
        if not _OID.match(tree):
            raise ParseError(f"merge-tree: bad tree id {tree[:80]!r}")
        i += 2
        if status == b"1" and i < n and fields[i] != b"":
            raise ParseError(f"merge-tree: a clean merge followed by {fields[i][:80]!r}")
        conflicts: list[str] = []
        while i < n and fields[i] != b"" and status == b"0":
            entry = _ENTRY.match(fields[i])
            if entry is None:
                raise ParseError(f"merge-tree: bad conflicted entry {fields[i][:120]!r}")
            path = _text(entry.group(1))
            if path not in conflicts:
                conflicts.append(path)
            i += 1
        if i >= n:
            return out, False
        i += 1  # the empty field: end of the merge, or (with messages) start of them
        notes: list[MergeMessage] = []
        if messages:
            while i < n and fields[i] != b"":
                count = fields[i]
                if not count.isdigit() or int(count) < 1:
                    raise ParseError(f"merge-tree: bad message path count {count[:40]!r}")
                k = int(count)
                if i + k + 2 >= n:
                    return out, False
                paths = tuple(_text(p) for p in fields[i + 1:i + 1 + k])
                notes.append(MergeMessage(paths, _text(fields[i + 1 + k]),
                                          _text(fields[i + 2 + k]).rstrip("\n")))
                i += k + 3
            if i >= n:
                return out, False
            i += 1
        out.append(MergeOutcome(status == b"1", Oid(tree.decode("ascii")), tuple(conflicts),
                                tuple(notes)))
    return out, True


class ScratchObjects:
    """A temporary object directory for git commands that write objects (see module docs).

    Use as a context manager; :meth:`env` is the environment to run those commands with.
    ``common_dir`` is the repository's common git directory.
    """

    def __init__(self, common_dir: Path) -> None:
        self.common_dir = common_dir
        self.parent = common_dir / "branchkeeper" / "tmp"
        self.path: Path | None = None
        self._old_term: object = None

    def env(self) -> dict[str, str]:
        """``GIT_OBJECT_DIRECTORY`` (the scratch dir) and the repository's objects as the
        alternate. Raises ``RuntimeError`` outside the ``with`` block."""
        if self.path is None:
            raise RuntimeError("ScratchObjects used outside its with-block")
        return {"GIT_OBJECT_DIRECTORY": str(self.path),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.common_dir / "objects")}

    def __enter__(self) -> ScratchObjects:
        remove_stale(self.parent)
        self.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f"objects-{os.getpid()}-", dir=self.parent))
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._old_term = signal.signal(signal.SIGTERM, _raise_on_term)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._old_term is not None:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGTERM, self._old_term)  # type: ignore[arg-type]
            self._old_term = None
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a scratch object directory was open: raised so that every
    ``finally`` runs; the command line treats it as an interruption (exit 130)."""


def _raise_on_term(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


def remove_stale(parent: Path, *, now: float | None = None) -> list[Path]:
    """Remove scratch directories under ``parent`` whose process is gone or that are older
    than :data:`STALE_AFTER_S`; return the ones removed. Errors are ignored."""
    removed: list[Path] = []
    now = time.time() if now is None else now
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) < 3 or parts[0] != "objects" or not parts[1].isdigit():
            continue
        try:
            old = now - entry.stat().st_mtime > STALE_AFTER_S
        except OSError:
            continue
        if old or (int(parts[1]) != os.getpid() and not pid_alive(int(parts[1]))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@contextlib.contextmanager
def scratch_objects(common_dir: Path) -> Iterator[ScratchObjects]:
    """``with scratch_objects(common) as scratch:`` (see :class:`ScratchObjects`)."""
    with ScratchObjects(common_dir) as scratch:
        yield scratch


Pair = tuple[str, str]

#: Seconds a ``merge-tree --stdin`` stream may go without output or CPU time before it is
#: taken for hung (a stream that keeps answering runs as long as its work takes).
IDLE_S = STREAM_IDLE_S
#: Below this many pairs one stream; from it on, the pairs are split over ``streams``.
PARALLEL_MIN = 64


def merge_pairs(root: Path, pairs: Sequence[Pair], *, scratch: ScratchObjects,
                streams: int = 2, idle: float | None = None
                ) -> tuple[dict[Pair, MergeOutcome], dict[Pair, Failure]]:
    """Merge every ``(branch1, branch2)`` pair (commit ids) with one ``merge-tree --stdin``
    process per stream, more only where a pair fails (unrelated histories, a missing object).

    From :data:`PARALLEL_MIN` pairs on, the pairs are cut into ``streams`` runs of
    neighbouring pairs, merged side by side (merging is CPU-bound: one stream per core).
    Returns ``(outcomes, failures)``; each distinct pair is in one of them. The result trees
    are in ``scratch``. When a pair fails on a missing object, the other pairs with the same
    ``branch2`` fail with it unprobed (they read the same branch). A stream that shows no sign
    of life for ``idle`` seconds is ended: the pairs it had not answered fail with
    :data:`STOPPED`, whatever their number (no bound on the whole run, which a larger
    repository would pass; ``idle`` None: :data:`IDLE_S`). Raises nothing for git failures.
    """
    idle = IDLE_S if idle is None else idle
    todo = list(dict.fromkeys(pairs))
    parts = streams if len(todo) >= PARALLEL_MIN and streams > 1 else 1
    size = -(-len(todo) // parts) if todo else 1
    runs = [todo[i:i + size] for i in range(0, len(todo), size)]
    if len(runs) <= 1:
        return _merge_stream(root, todo, scratch, idle)
    outcomes: dict[Pair, MergeOutcome] = {}
    failures: dict[Pair, Failure] = {}
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        for done, failed in pool.map(lambda part: _merge_stream(root, part, scratch, idle),
                                     runs):
            outcomes.update(done)
            failures.update(failed)
    return outcomes, failures


#: What a pair reads as when its stream stopped answering before it (see :func:`merge_pairs`).
STOPPED = "the merge check stopped answering"


def _merge_stream(root: Path, todo: list[Pair], scratch: ScratchObjects, idle: float
                  ) -> tuple[dict[Pair, MergeOutcome], dict[Pair, Failure]]:
    """One stream of :func:`merge_pairs` (its failures isolated by
    :func:`~branchkeeper.git.isolate.run_isolated`)."""
    stalled: dict[Pair, Failure] = {}

    def run(batch: Sequence[Pair]) -> Attempt[Pair, MergeOutcome]:
        stdin = "".join(f"{a} {b}\n" for a, b in batch).encode("ascii")
        chunks: list[bytes] = []
        error: GitError | None = None
        try:
            # diff3 markers: a conflict's base side lets the superseded count read the
            # branch's own change (analysis/conflict_lines.py); clean merges are unaffected
            chunks.extend(stream_git([*STREAM_MEMORY, "-c", "merge.conflictStyle=diff3",
                                      "merge-tree", "--write-tree", "--stdin", "--no-messages"],
                                     cwd=root, stdin=stdin, idle=idle, env=scratch.env()))
        except GitError as exc:
            error = exc
        try:
            merged, _ = parse_merge_tree(b"".join(chunks), messages=False)
        except ParseError as exc:
            for pair in batch:
                stalled[pair] = Failure(None, str(exc))
            return Attempt({}, len(batch), None)
        results = dict(zip(batch, merged, strict=False))
        if error is not None and error.returncode is None:  # ended, or never started
            why = error.summary  # what happened; the argv is git's own business
            for pair in batch[len(merged):]:
                stalled[pair] = Failure(None, f"{STOPPED} ({why})")
            return Attempt(results, len(batch), None)
        if error is None and len(merged) != len(batch):
            for pair in batch[len(merged):]:
                stalled[pair] = Failure(None, f"merge-tree answered {len(merged)} of "
                                              f"{len(batch)} merges")
        return Attempt(results, len(merged) if error is not None else len(batch), error)

    outcomes, failures = run_isolated(todo, run, group=lambda pair: pair[1])
    failures.update(stalled)
    return outcomes, failures
