"""Branch records as plain JSON values and back, for the stored sweep result (issue 16).

A record is a row: its fields in declaration order, each as JSON (an enum by its value, an
object id as its text, a tuple as a list). Every nested record (proof, park marker,
supersession, refusal, dispositions) is written once into a table per class and referred to by
its index, so a decode builds each distinct one once and the records share it (they are
immutable); at 5,000 branches that is a few hundred objects instead of some thirty thousand.

The converters are derived from the classes' own type hints, so a field added to a record is
written and read without a change here; a value of a shape the hints do not allow raises
:class:`ValueError` (or :class:`TypeError`, :class:`IndexError`, :class:`KeyError`) on decode,
and the caller treats it as no stored result.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Any

from branchkeeper.git.types import Oid
from branchkeeper.model import records as _records
from branchkeeper.model.records import BranchRecord

__all__ = ["Decoder", "Encoder", "field_index"]

_Conv = Callable[[Any], Any]


def field_index(cls: type, name: str) -> int:
    """The position of field ``name`` in a row of ``cls``."""
    return [f.name for f in dataclasses.fields(cls)].index(name)


def _strip_none(hint: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (hint, False)."""
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return hint, False


def _hints(cls: type) -> list[tuple[str, Any, bool]]:
    hints = typing.get_type_hints(cls, vars(_records) | {"Oid": Oid})
    return [(f.name, *_strip_none(hints[f.name])) for f in dataclasses.fields(cls)]


class Encoder:
    """Turns records into rows; :meth:`tables` are the nested records, by class name."""

    def __init__(self) -> None:
        self._tables: dict[str, list[Any]] = {}
        self._index: dict[tuple[str, Any], int] = {}
        self._plans: dict[type, list[tuple[str, _Conv]]] = {}

    def tables(self) -> dict[str, list[Any]]:
        return self._tables

    def row(self, obj: Any) -> list[Any]:
        """The fields of the record ``obj`` as JSON values."""
        plan = self._plans.get(type(obj))
        if plan is None:
            plan = self._plans[type(obj)] = [(name, self._conv(h))
                                             for name, h, _ in _hints(type(obj))]
        return [None if (v := getattr(obj, name)) is None else conv(v) for name, conv in plan]

    def _ref(self, obj: Any) -> int:
        name = type(obj).__name__
        row = self.row(obj)
        key = (name, repr(row))
        at = self._index.get(key)
        if at is None:
            table = self._tables.setdefault(name, [])
            at = self._index[key] = len(table)
            table.append(row)
        return at

    def _conv(self, hint: Any) -> _Conv:
        if dataclasses.is_dataclass(hint):
            return self._ref
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return lambda v: v.value
        if typing.get_origin(hint) is tuple:
            inner = self._conv(_strip_none(typing.get_args(hint)[0])[0])
            return lambda v: [inner(x) for x in v]
        return _same


def _same(value: Any) -> Any:
    return value


class Decoder:
    """Builds records from rows and the nested ``tables`` an :class:`Encoder` wrote. The rows
    are trusted to be what an encoder wrote (the stored file carries a digest of them): only
    their shape is checked, not each plain value's type."""

    def __init__(self, tables: dict[str, list[Any]]) -> None:
        self._tables = tables
        self._built: dict[type, list[Any]] = {}
        self._plans: dict[type, list[tuple[int, _Conv]]] = {}

    def record(self, row: list[Any]) -> BranchRecord:
        """One :class:`~branchkeeper.model.records.BranchRecord` (raises on a bad row)."""
        return self.build(BranchRecord, row)  # type: ignore[no-any-return]

    def build(self, cls: type, row: list[Any]) -> Any:
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plan(cls)
        if type(row) is not list or len(row) != self._width[cls]:
            raise ValueError(f"a {cls.__name__} row of the wrong shape")
        values = row[:]
        for i, conv in plan:  # only the fields that are not plain JSON values
            if values[i] is not None:
                values[i] = conv(values[i])
        return cls(*values)

    def _plan(self, cls: type) -> list[tuple[int, _Conv]]:
        hints = _hints(cls)
        plan = [(i, conv) for i, (_, hint, _) in enumerate(hints)
                if (conv := self._conv(hint)) is not None]
        self._width = {**getattr(self, "_width", {}), cls: len(hints)}
        self._plans[cls] = plan
        return plan

    def _conv(self, hint: Any) -> _Conv | None:
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            return self._table(hint).__getitem__
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return {m.value: m for m in hint}.__getitem__
        if hint is Oid:
            return Oid
        if typing.get_origin(hint) is tuple:
            inner = self._conv(_strip_none(typing.get_args(hint)[0])[0])
            return tuple if inner is None else (lambda v: tuple(map(inner, v)))
        if hint in (str, int, float, bool):
            return None
        raise ValueError(f"no converter for {hint!r}")

    def _table(self, cls: type) -> list[Any]:
        """Every nested record of ``cls``, built once (those it refers to first)."""
        built = self._built.get(cls)
        if built is None:
            rows = self._tables.get(cls.__name__, [])
            if type(rows) is not list:
                raise ValueError(f"a {cls.__name__} table that is not a list")
            built = self._built[cls] = [self.build(cls, row) for row in rows]
        return built
