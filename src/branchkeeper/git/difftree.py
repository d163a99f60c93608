"""Parsers of ``git diff-tree --stdin -z`` output, ``--raw`` and ``--numstat``.

``diff-tree --stdin`` reads one item per line: ``<commit>`` (against its first parent),
``<commit> <base>`` (against an explicit base) or ``<tree> <tree>``. For each item with a
non-empty diff it prints a header, then the entries. The header is the commit id (NUL-ended)
for commit items, and ``<tree> <tree>`` ended by a newline (not a NUL, even with ``-z``) for a
tree pair. Items with an empty diff (and merge commits, without ``-m``) print nothing.

``--raw -z`` entries are ``:<old mode> <new mode> <old oid> <new oid> <status>`` NUL ``<path>``
NUL (``--no-renames``: one path each; ``--no-abbrev``: full ids). ``--numstat -z`` entries are
``<added>\\t<deleted>\\t<path>`` NUL, ``-`` for a binary file's counts.

A process that dies mid-way leaves its last record possibly incomplete; callers that keep what
was answered drop it (see :mod:`branchkeeper.git.isolate`).

:func:`iter_raw_z` reads ``--raw`` output as a stream of chunks (from
:func:`branchkeeper.git.run.stream_git`) and yields one record at a time, its entries as raw
bytes: the sweep's path sets of tens of thousands of commits are hashed record by record and
never held as entry objects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from branchkeeper.git.parse import ParseError

_OID = r"[0-9a-f]{40}(?:[0-9a-f]{24})?"
_HEADER = re.compile(rf"\A{_OID}\Z")
_PAIR_HEADER = re.compile(rf"\A({_OID} {_OID})\n(.*)\Z", re.DOTALL)
_HEADER_B = re.compile(rb"\A[0-9a-f]{40}(?:[0-9a-f]{24})?(?: [0-9a-f]{40}(?:[0-9a-f]{24})?)?\Z")
_META = re.compile(rf"\A:([0-7]{{6}}) ([0-7]{{6}}) ({_OID}) ({_OID}) ([ACDMRTUX][0-9]*)\Z")


class RawEntry(NamedTuple):
    """One ``--raw`` entry: modes and object ids on each side (all zeros where absent) and the
    status letter (``A``, ``D``, ``M``, ``T``...)."""

    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str
    status: str
    path: str


class NumstatEntry(NamedTuple):
    """One ``--numstat`` entry; ``added``/``deleted`` are None for a binary file."""

    added: int | None
    deleted: int | None
    path: str


def _tokens(data: bytes) -> list[str]:
    parts = data.decode("utf-8", "surrogateescape").split("\0")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def _header(token: str) -> tuple[str | None, str | None]:
    """(header, rest): a commit header token, a tree-pair header glued to its first entry by a
    newline, or (None, token) for an entry token."""
    if _HEADER.match(token):
        return token, None
    pair = _PAIR_HEADER.match(token)
    if pair:
        return pair.group(1), pair.group(2)
    return None, token


def split_z(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The NUL-terminated tokens of a ``-z`` stream given in chunks, without their NUL. A
    last token with no NUL after it (git died mid-write) is dropped."""
    tail = b""
    for chunk in chunks:
        parts = (tail + chunk).split(b"\0") if tail else chunk.split(b"\0")
        tail = parts.pop()
        yield from parts


RawRecord = tuple[str, list[bytes], list[bytes]]


def iter_raw_z(tokens: Iterable[bytes]) -> Iterator[RawRecord]:
    """``diff-tree --stdin --raw -z --no-renames --no-abbrev`` tokens (:func:`split_z`) ->
    ``(header, metas, paths)`` per record, in output order: ``metas[i]`` is the
    ``:<old mode> <new mode> <old oid> <new oid> <status>`` bytes of ``paths[i]``. A cut-off
    last entry is dropped. Raises :class:`ParseError` on a token of the wrong shape."""
    header: str | None = None
    metas: list[bytes] = []
    paths: list[bytes] = []
    meta: bytes | None = None
    for token in tokens:
        if meta is not None:
            metas.append(meta)
            paths.append(token)
            meta = None
        elif token[:1] == b":":
            if header is None:
                raise ParseError(f"diff-tree: an entry before any header: {token[:80]!r}")
            meta = token
        else:
            if header is not None:
                yield header, metas, paths
            head, newline, rest = token.partition(b"\n")
            if not _HEADER_B.match(head) or (newline and rest[:1] != b":"):
                raise ParseError(f"diff-tree: bad header {token[:120]!r}")
            header, metas, paths = head.decode("ascii"), [], []
            meta = rest if newline else None
    if header is not None:
        yield header, metas, paths


def raw_entry(meta: bytes, path: bytes) -> RawEntry:
    """One :class:`RawEntry` from a record's ``meta`` and ``path`` bytes (:func:`iter_raw_z`).
    Raises :class:`ParseError` when the meta is not a raw entry's."""
    found = _META.match(meta.decode("ascii", "replace"))
    if found is None:
        raise ParseError(f"diff-tree: bad raw entry {meta[:120]!r}")
    old_mode, new_mode, old_oid, new_oid, status = found.groups()
    return RawEntry(old_mode, new_mode, old_oid, new_oid, status,
                    path.decode("utf-8", "surrogateescape"))


def parse_raw_z(data: bytes) -> list[tuple[str, list[RawEntry]]]:
    """``diff-tree --stdin --raw -z --no-renames --no-abbrev`` output -> ``[(header,
    entries)]`` in output order. Raises :class:`ParseError` on an entry of the wrong shape."""
    if data and not data.endswith(b"\0"):
        data += b"\0"  # a last token cut mid-write: kept, as the old reader did
    return [(h, [raw_entry(m, p) for m, p in zip(ms, ps, strict=True)])
            for h, ms, ps in iter_raw_z(split_z([data]))]


def parse_numstat_z(data: bytes) -> list[tuple[str, list[NumstatEntry]]]:
    """``diff-tree --stdin --numstat -z --no-renames`` output -> ``[(header, entries)]``.
    Raises :class:`ParseError` on an entry of the wrong shape."""
    out: list[tuple[str, list[NumstatEntry]]] = []
    for token in _tokens(data):
        header, rest = _header(token)
        if header is not None:
            out.append((header, []))
            if rest is None:
                continue
            token = rest
        added, tab1, tail = token.partition("\t")
        deleted, tab2, path = tail.partition("\t")
        if not out or not tab1 or not tab2 or not path:
            raise ParseError(f"diff-tree: bad numstat entry {token[:120]!r}")
        if added == "-" and deleted == "-":
            out[-1][1].append(NumstatEntry(None, None, path))
        elif added.isdigit() and deleted.isdigit():
            out[-1][1].append(NumstatEntry(int(added), int(deleted), path))
        else:
            raise ParseError(f"diff-tree: bad numstat counts {token[:120]!r}")
    return out
