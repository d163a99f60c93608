"""How many changed lines of a branch did not land, when merging it into the landing commit
conflicts (issue 11, section 1: the ``superseded`` count).

A conflicted merge result holds conflict markers and, between them, the landing commit's side
(already on the base) and the branch's side. Counting the result's diff against the landing
commit would count the markers as changed lines. :func:`branch_side_counts` reads that diff as a
patch instead (one ``diff-tree -p --stdin`` stream for every conflicted merge) and counts, per
path, the lines added and deleted outside conflict hunks plus in each conflict hunk the lines of the
branch's own change (its side against the merge base's side: the merges run with
``merge.conflictStyle=diff3``) that the landing commit's side lacks. Markers never count.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from pathlib import Path

from branchkeeper.analysis import diffstreams
from branchkeeper.analysis.diffstreams import PINNED
from branchkeeper.git.run import GitError, stream_git

_HEADER = re.compile(rb"\A([0-9a-f]{40}(?:[0-9a-f]{24})?) ([0-9a-f]{40}(?:[0-9a-f]{24})?)\Z")
#: Whole files as context: a conflict hunk's sides are read from the patch.
_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-U1000000000",
         "--diff-algorithm=myers", "--no-relative")


class _Side(Enum):
    OUT = 0  # outside a conflict hunk: every changed line is the branch's
    OURS = 1  # the landing commit's side: already on the base
    BASE = 2  # the merge base's side (merge.conflictStyle=diff3)
    THEIRS = 3  # the branch's side


#: (target, result) tree ids -> per path in diff order: (added, deleted)
Counted = dict[tuple[str, str], list[tuple[int, int]]]


def hunk_missing(ours: Sequence[bytes], base: Sequence[bytes], theirs: Sequence[bytes]
                 ) -> tuple[int, int]:
    """One conflict hunk: ``(added, deleted)`` lines of the branch's own change (``base`` ->
    ``theirs``, by :mod:`difflib`) that the landing commit's side ``ours`` does not have,
    counted as multisets, copy by copy: an added line is missing once for each copy ``theirs``
    holds beyond ``ours`` (added twice, on ``ours`` once: one missing), a deleted line once for
    each copy ``ours`` still holds beyond ``theirs``."""
    surplus = Counter(theirs) - Counter(ours)  # copies the branch has that the base lacks
    leftover = Counter(ours) - Counter(theirs)  # copies the base keeps that the branch dropped
    added_lines: Counter[bytes] = Counter()
    deleted_lines: Counter[bytes] = Counter()
    matcher = difflib.SequenceMatcher(None, list(base), list(theirs), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            added_lines.update(theirs[j1:j2])
            deleted_lines.update(base[i1:i2])
    added = sum(min(n, surplus[x]) for x, n in added_lines.items())
    deleted = sum(min(n, leftover[x]) for x, n in deleted_lines.items())
    return added, deleted


def count_patch(lines: Sequence[bytes], *, ours: str, theirs: str) -> list[tuple[int, int]]:
    """Per file section of one tree pair's patch (``diff --git`` headers), in order: the lines
    the branch changed that are not on the landing commit, as ``(added, deleted)``: changed
    lines outside conflict hunks, and :func:`hunk_missing` of each hunk. ``ours``/``theirs``
    are the labels merge-tree wrote on the markers (the commit ids merged). The patch must
    carry whole files as context (a hunk's sides are read from it)."""
    out: list[tuple[int, int]] = []
    start, end = f"<<<<<<< {ours}".encode(), f">>>>>>> {theirs}".encode()
    side, in_hunk = _Side.OUT, False
    sections: dict[_Side, list[bytes]] = {}
    for line in lines:
        if line.startswith(b"diff --git "):
            out.append((0, 0))
            side, in_hunk = _Side.OUT, False
            continue
        if not out or line.startswith(b"@@"):
            in_hunk = in_hunk or bool(out)
            continue
        if not in_hunk or line[:1] not in (b"+", b"-", b" "):
            continue
        mark, body = line[:1], line[1:]
        if side is _Side.OUT and body == start:
            side, sections = _Side.OURS, {_Side.OURS: [], _Side.BASE: [], _Side.THEIRS: []}
        elif side is _Side.OURS and body.startswith(b"||||||| "):
            side = _Side.BASE
        elif side in (_Side.OURS, _Side.BASE) and body == b"=======":
            side = _Side.THEIRS
        elif side is _Side.THEIRS and body == end:
            a, d = hunk_missing(sections[_Side.OURS], sections[_Side.BASE],
                                sections[_Side.THEIRS])
            out[-1] = (out[-1][0] + a, out[-1][1] + d)
            side = _Side.OUT
        elif side is _Side.OUT and mark != b" ":
            added, deleted = out[-1]
            out[-1] = (added + 1, deleted) if mark == b"+" else (added, deleted + 1)
        elif side is not _Side.OUT and mark != b"-":
            sections[side].append(body)
    return out


def branch_side_counts(root: Path, merges: Sequence[tuple[str, str, str, str]], *,
                       env: dict[str, str]) -> Counted:
    """For each conflicted merge ``(target tree, result tree, target commit, tip commit)``: per
    path, ``(added, deleted)`` lines of the branch not on the target (:func:`count_patch`).
    One ``diff-tree -p --stdin`` stream run with ``env`` (the scratch store holding the result
    trees), read as git writes it (whole files as context: one pair's patch is kept at a time)
    and bounded by silence like every stream of the cold pass
    (:data:`branchkeeper.analysis.diffstreams.IDLE_S`, never a fixed time). {} when git fails
    or stops answering (the caller keeps its numstat counts and caches nothing of it)."""
    todo = list(dict.fromkeys(merges))
    if not todo:
        return {}
    stdin = "".join(f"{a} {b}\n" for a, b, _, _ in todo).encode("ascii")
    labels = {(a, b): (ours, theirs) for a, b, ours, theirs in todo}
    out: Counted = {}
    current: tuple[str, str] | None = None
    chunk: list[bytes] = []
    try:
        for line in _lines(stream_git([*PINNED, "diff-tree", "--stdin", "-p", "-r", *_OPTS],
                                      cwd=root, stdin=stdin, env=env,
                                      idle=diffstreams.IDLE_S)):
            header = _HEADER.match(line)
            pair = (header.group(1).decode(), header.group(2).decode()) if header else None
            if pair is not None and pair in labels:
                if current is not None:
                    out[current] = count_patch(chunk, ours=labels[current][0],
                                               theirs=labels[current][1])
                current, chunk = pair, []
            else:
                chunk.append(line)
    except GitError:
        return {}
    if current is not None:
        out[current] = count_patch(chunk, ours=labels[current][0], theirs=labels[current][1])
    return out


def _lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of a stream given in chunks, without their newline; the last one too."""
    tail = b""
    for chunk in chunks:
        if b"\n" not in chunk:  # a long line: no split until it ends
            tail += chunk
            continue
        parts = (tail + chunk).split(b"\n")
        tail = parts.pop()
        yield from parts
    yield tail
