"""Parsers for git's machine formats: NUL-delimited records and ``%00``-separated fields.

Every parser checks the field count of every record and raises :class:`ParseError` on a
mismatch, so a format change or a stray byte is an error, never a silently shifted column.
"""

from __future__ import annotations

from collections.abc import Iterator

from branchkeeper.git.types import Oid


class ParseError(ValueError):
    """Git printed something that does not have the shape the parser was told to expect."""


def zsplit(data: bytes) -> list[str]:
    """Split NUL-terminated ``-z`` output into strings (UTF-8, surrogateescape).

    ``b"a\\0b\\0"`` -> ``["a", "b"]``. A trailing NUL is optional; empty input gives ``[]``.
    """
    if not data:
        return []
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "surrogateescape") for p in parts]


def records(data: bytes, *, fields: int, sep: bytes = b"\0", end: bytes = b"\n") -> Iterator[list[str]]:
    """Yield records of exactly ``fields`` fields.

    Records end with ``end`` (default newline, as ``for-each-ref --format=...`` prints them) and
    fields are separated by ``sep`` (``%00`` in the format). Raises :class:`ParseError` when a
    record has another field count.
    """
    if not data:
        return
    chunks = data.split(end)
    if chunks and chunks[-1] == b"":
        chunks.pop()
    for chunk in chunks:
        parts = chunk.split(sep)
        if len(parts) != fields:
            raise ParseError(f"expected {fields} fields, got {len(parts)}: {chunk[:200]!r}")
        yield [p.decode("utf-8", "surrogateescape") for p in parts]


def oid_lines(data: bytes) -> list[Oid]:
    """Parse one full object id per line (``rev-list``, ``rev-parse``)."""
    out: list[Oid] = []
    for line in data.decode("ascii", "strict").splitlines():
        line = line.strip()
        if line:
            out.append(Oid.parse(line))
    return out


def parse_status_z(data: bytes) -> tuple[list[str], list[str], list[str]]:
    """Parse ``status --porcelain=v1 -z --no-renames`` into (tracked, untracked, ignored) paths.

    ``??`` entries are untracked, ``!!`` ignored (a wholly ignored directory ends in ``/`` with
    ``--ignored=matching``), anything else a tracked change. Raises :class:`ParseError` on an
    entry shorter than ``XY path``.
    """
    tracked: list[str] = []
    untracked: list[str] = []
    ignored: list[str] = []
    for entry in zsplit(data):
        if len(entry) < 4 or entry[2] != " ":
            raise ParseError(f"unexpected status entry: {entry[:200]!r}")
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        elif code == "!!":
            ignored.append(path)
        else:
            tracked.append(path)
    return tracked, untracked, ignored
