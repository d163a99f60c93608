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
"""

from __future__ import annotations

import re
from typing import NamedTuple

from branchkeeper.git.parse import ParseError

_OID = r"[0-9a-f]{40}(?:[0-9a-f]{24})?"
_HEADER = re.compile(rf"\A{_OID}\Z")
_PAIR_HEADER = re.compile(rf"\A({_OID} {_OID})\n(.*)\Z", re.DOTALL)
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


def parse_raw_z(data: bytes) -> list[tuple[str, list[RawEntry]]]:
    """``diff-tree --stdin --raw -z --no-renames --no-abbrev`` output -> ``[(header,
    entries)]`` in output order. Raises :class:`ParseError` on an entry of the wrong shape."""
    out: list[tuple[str, list[RawEntry]]] = []
    tokens = _tokens(data)
    i = 0
    while i < len(tokens):
        header, rest = _header(tokens[i])
        if header is not None:
            out.append((header, []))
            if rest is None:
                i += 1
                continue
            tokens[i] = rest
        if not out:
            raise ParseError(f"diff-tree: an entry before any header: {tokens[i][:80]!r}")
        meta = _META.match(tokens[i])
        if meta is None or i + 1 >= len(tokens):
            if meta is not None:
                break  # the path of the last entry was cut off
            raise ParseError(f"diff-tree: bad raw entry {tokens[i][:120]!r}")
        old_mode, new_mode, old_oid, new_oid, status = meta.groups()
        out[-1][1].append(RawEntry(old_mode, new_mode, old_oid, new_oid, status, tokens[i + 1]))
        i += 2
    return out


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
