"""The operation journal: an append-only JSON Lines audit trail of every destructive step
(issue 3, section 6; DESIGN.md guarantee 3).

``<state dir>/journal.jsonl`` holds one JSON object per line. An operation is written as events
sharing its id:

- ``begin``: ``op``, ``items`` (``{"ref", "old", "remote", "restore"}`` each), ``bundle`` (see
  :meth:`BundleInfo.to_json`, or null), ``archives`` (archives of ignored files, see
  :meth:`ArchiveInfo.to_json`; absent when there are none), ``note``, ``argv``: written BEFORE
  anything is touched;
- ``step``: more ``items`` (with their own ``bundle`` and ``archives``) of the same operation,
  written before that step touches anything: a command that works item by item (``worktree
  reap``) is one operation of N steps. Journals written before steps existed have one
  operation per item and read as they were;
- ``item``: one per ref result (``ref``, ``result`` = deleted/moved/raced/kept/failed,
  ``reason``);
- ``end``: ``status`` = done/partial/failed;
- ``undo``: ``status`` (done/partial/failed) and per-ref ``results`` of a ``branchkeeper undo``.

Every append holds the ``journal`` lock, writes whole lines and fsyncs. A line torn by a crash
mid-write (or any unparsable line) is skipped and reported by :meth:`Journal.load`, never fatal;
the next append starts on a fresh line. An operation with a ``begin`` but no ``end`` reads back
as ``interrupted``.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from branchkeeper.git.types import Oid
from branchkeeper.state import faults
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.bundles import BundleInfo
from branchkeeper.state.lock import repo_lock
from branchkeeper.state.statedir import journal_path

JOURNAL_VERSION = 1
_LOCK_WAIT_S = 30.0


class ItemOutcome(Enum):
    """The per-ref result of an operation (the ``item`` event)."""

    DELETED = "deleted"
    #: the ref was moved (a rewind the git-level hook kept the old tip of); undo moves it back.
    MOVED = "moved"
    RACED = "raced"
    KEPT = "kept"
    FAILED = "failed"


class OpStatus(Enum):
    """The status of an operation (``end`` event; ``interrupted`` when it has none)."""

    DONE = "done"
    PARTIAL = "partial"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class JournalItem:
    """One ref an operation is about to change: full ``ref``, its ``old`` tip, the ``remote``
    name for a remote branch (``ref`` is then the branch's ref on that remote, e.g.
    ``refs/heads/x``), and the shell-quoted ``restore`` command printed to the user.
    ``new`` is set when the operation moves the ref instead of deleting it (a park marker):
    undo then moves it back from ``new`` to ``old``."""

    ref: str
    old: Oid
    remote: str | None
    restore: str
    new: Oid | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ref": self.ref, "old": self.old, "remote": self.remote,
                                "restore": self.restore}
        if self.new is not None:
            data["new"] = self.new
        return data


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The outcome for one ref (``reason`` empty when there is nothing to add); ``remote`` is
    the remote's name for a remote item (its ``ref`` is then the ref on that remote)."""

    ref: str
    outcome: ItemOutcome
    reason: str = ""
    remote: str | None = None

    @property
    def key(self) -> str:
        return result_key(self.ref, self.remote)


def result_key(ref: str, remote: str | None) -> str:
    """The key of an item's result: its ref, qualified by the remote for a remote item, so a
    local branch and its remote copy (both ``refs/heads/x``) never share one."""
    return ref if remote is None else f"{remote}:{ref}"


@dataclass(frozen=True, slots=True)
class UndoRecord:
    """One ``undo`` event: when, overall status, and ref -> (result word, reason)."""

    time: str
    status: str
    results: dict[str, tuple[str, str]] = field(hash=False)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of an operation: its ``items``, the ``bundle`` and the ``archives`` written for
    them. The ``begin`` event is the first step; each ``step`` event adds one."""

    items: tuple[JournalItem, ...]
    bundle: BundleInfo | None = None
    archives: tuple[ArchiveInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class Operation:
    """An operation reconstructed from its events. ``time`` is the begin time (ISO 8601 UTC).
    ``items`` and ``archives`` are those of every step, in order; ``bundle`` is the first
    step's that has one (:attr:`bundles` lists them all); ``steps`` is empty for an operation
    built by hand (it is then its own single step)."""

    id: str
    op: str
    time: str
    status: OpStatus
    items: tuple[JournalItem, ...]
    results: dict[str, ItemResult] = field(hash=False)
    bundle: BundleInfo | None
    note: str
    argv: tuple[str, ...]
    undos: tuple[UndoRecord, ...] = ()
    archives: tuple[ArchiveInfo, ...] = ()
    steps: tuple[Step, ...] = ()

    @property
    def parts(self) -> tuple[Step, ...]:
        """The steps, or the operation itself as one step when it has none recorded."""
        return self.steps or (Step(self.items, self.bundle, self.archives),)

    @property
    def bundles(self) -> tuple[BundleInfo, ...]:
        """Every bundle the operation's steps wrote, in order."""
        return tuple(s.bundle for s in self.parts if s.bundle is not None)

    @property
    def undone(self) -> UndoRecord | None:
        """The last undo that completed (status ``done``), if any."""
        for record in reversed(self.undos):
            if record.status == "done":
                return record
        return None


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A journal line that could not be read: 1-based line number and why."""

    lineno: int
    reason: str


@dataclass(frozen=True, slots=True)
class JournalContents:
    """Everything :meth:`Journal.load` read: operations (oldest first) and skipped lines."""

    operations: tuple[Operation, ...]
    skipped: tuple[SkippedLine, ...]


def new_operation_id() -> str:
    """A sortable id: UTC timestamp plus 4 random hex digits, e.g. ``20261129T235959Z-3f9a``."""
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(2)}"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _torn(fd: int, payload: bytes, point: str) -> None:
    """Fault point ``journal.torn_<event>``: write ``payload`` up to the middle of its last
    line, flush, then die."""
    if point == faults.ACTIVE:
        start = payload.rfind(b"\n", 0, len(payload) - 1) + 1
        os.write(fd, payload[: start + max(1, (len(payload) - start) // 2)])
        os.fsync(fd)
        faults.kill()


class Journal:
    """The journal of the repository whose common git dir is ``common_dir``."""

    def __init__(self, common_dir: Path) -> None:
        self.common_dir = common_dir
        self.path = journal_path(common_dir)

    # -- writing --------------------------------------------------------------------------------
    def _append(self, events: Sequence[Mapping[str, Any]]) -> None:
        payload = "".join(
            json.dumps({"v": JOURNAL_VERSION, **e}, ensure_ascii=False, sort_keys=True) + "\n"
            for e in events
        ).encode("utf-8", "surrogateescape")
        with repo_lock(self.common_dir, "journal", wait_s=_LOCK_WAIT_S):
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                size = os.fstat(fd).st_size
                if size:
                    # A torn last line (crash mid-write) must not swallow the next event.
                    with self.path.open("rb") as fh:
                        fh.seek(size - 1)
                        if fh.read(1) != b"\n":
                            payload = b"\n" + payload
                if faults.ACTIVE is not None and events:
                    _torn(fd, payload, f"journal.torn_{events[0].get('event')}")
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)

    def begin(self, op: str, items: Sequence[JournalItem], *, bundle: BundleInfo | None,
              note: str = "", argv: Sequence[str] | None = None,
              archives: Sequence[ArchiveInfo] = ()) -> str:
        """Record that ``op`` is about to change ``items``; return the new operation id.

        ``archives``: the verified archives of ignored files the operation wrote before
        removing worktrees. ``argv`` defaults to this process's command line
        (``branchkeeper ...``). Written and fsynced before the caller touches anything
        (guarantee 3).
        """
        op_id = new_operation_id()
        command = list(argv) if argv is not None else ["branchkeeper", *sys.argv[1:]]
        event: dict[str, Any] = {
            "event": "begin", "id": op_id, "time": _now(), "op": op,
            "items": [i.to_json() for i in items],
            "bundle": bundle.to_json() if bundle is not None else None,
            "note": note, "argv": command,
        }
        if archives:
            event["archives"] = [a.to_json() for a in archives]
        self._append([event])
        return op_id

    def step(self, op_id: str, items: Sequence[JournalItem], *,
             bundle: BundleInfo | None = None, archives: Sequence[ArchiveInfo] = ()) -> None:
        """Record that operation ``op_id`` is about to change ``items`` too (one more step,
        with its own bundle and archives); written and fsynced before the caller touches
        them (guarantee 3)."""
        event: dict[str, Any] = {"event": "step", "id": op_id, "time": _now(),
                                 "items": [i.to_json() for i in items],
                                 "bundle": bundle.to_json() if bundle is not None else None}
        if archives:
            event["archives"] = [a.to_json() for a in archives]
        self._append([event])

    def record(self, op_id: str, *results: ItemResult) -> None:
        """Append one ``item`` event per result (all in one write and fsync)."""
        if results:
            self._append([{"event": "item", "id": op_id, "time": _now(), "ref": r.ref,
                           "remote": r.remote, "result": r.outcome.value, "reason": r.reason}
                          for r in results])

    def end(self, op_id: str, status: OpStatus) -> None:
        """Append the ``end`` event (``status`` is done, partial or failed)."""
        if status is OpStatus.INTERRUPTED:
            raise ValueError("an operation cannot end as interrupted")
        self._append([{"event": "end", "id": op_id, "time": _now(), "status": status.value}])

    def record_undo(self, op_id: str, status: str, results: Mapping[str, tuple[str, str]]) -> None:
        """Append an ``undo`` event: ``status`` done/partial/failed, ref -> (result, reason)."""
        self._append([{"event": "undo", "id": op_id, "time": _now(), "status": status,
                       "results": {ref: list(r) for ref, r in results.items()}}])

    # -- reading --------------------------------------------------------------------------------
    def load(self) -> JournalContents:
        """Read the whole journal: operations oldest first, plus the lines that were skipped.

        Never raises on content: unparsable lines, unknown events and events for an unknown id are
        skipped and listed. A missing journal reads as empty.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return JournalContents((), ())
        skipped: list[SkippedLine] = []
        begins: dict[str, dict[str, Any]] = {}
        extra: dict[str, list[dict[str, Any]]] = {}
        for lineno, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line.decode("utf-8", "surrogateescape"))
                if not isinstance(event, dict):
                    raise ValueError("not an object")
                kind, op_id = str(event["event"]), str(event["id"])
            except (ValueError, KeyError) as exc:
                skipped.append(SkippedLine(lineno, f"unreadable line ({exc})"))
                continue
            if kind == "begin":
                begins[op_id] = event
                extra.setdefault(op_id, [])
            elif kind in ("step", "item", "end", "undo") and op_id in begins:
                extra[op_id].append(event)
            else:
                skipped.append(SkippedLine(lineno, f"{kind} event for unknown operation {op_id}"))
        operations: list[Operation] = []
        for op_id, begin in begins.items():
            try:
                operations.append(_build(begin, extra[op_id]))
            except (ValueError, KeyError, TypeError) as exc:
                skipped.append(SkippedLine(0, f"operation {op_id} unreadable ({exc})"))
        return JournalContents(tuple(operations), tuple(skipped))

    def operations(self) -> list[Operation]:
        """Every readable operation, oldest first (newest last)."""
        return list(self.load().operations)

    def get(self, op_id: str) -> Operation | None:
        """The operation with id ``op_id``, or ``None``."""
        for operation in self.load().operations:
            if operation.id == op_id:
                return operation
        return None


def _items(event: Mapping[str, Any]) -> tuple[JournalItem, ...]:
    return tuple(
        JournalItem(ref=str(i["ref"]), old=Oid.parse(str(i["old"])),
                    remote=None if i.get("remote") is None else str(i["remote"]),
                    restore=str(i.get("restore", "")),
                    new=Oid.parse(str(i["new"])) if i.get("new") else None)
        for i in event["items"]
    )


def _step(event: Mapping[str, Any]) -> Step:
    bundle = BundleInfo.from_json(event["bundle"]) if event.get("bundle") else None
    archives = tuple(ArchiveInfo.from_json(a) for a in event.get("archives") or ())
    return Step(_items(event), bundle, archives)


def _build(begin: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Operation:
    steps = [_step(begin)]
    results: dict[str, ItemResult] = {}
    status = OpStatus.INTERRUPTED
    undos: list[UndoRecord] = []
    for event in events:
        kind = event["event"]
        if kind == "step":
            steps.append(_step(event))
        elif kind == "item":
            remote = None if event.get("remote") is None else str(event["remote"])
            result = ItemResult(str(event["ref"]), ItemOutcome(event["result"]),
                                str(event.get("reason", "")), remote)
            results[result.key] = result
        elif kind == "end":
            status = OpStatus(event["status"])
        else:
            undos.append(UndoRecord(
                time=str(event["time"]), status=str(event["status"]),
                results={str(k): (str(v[0]), str(v[1])) for k, v in dict(event["results"]).items()},
            ))
    return Operation(
        id=str(begin["id"]), op=str(begin["op"]), time=str(begin["time"]), status=status,
        items=tuple(i for s in steps for i in s.items), results=results,
        bundle=next((s.bundle for s in steps if s.bundle is not None), None),
        note=str(begin.get("note", "")), argv=tuple(str(a) for a in begin.get("argv", [])),
        undos=tuple(undos), archives=tuple(a for s in steps for a in s.archives),
        steps=tuple(steps) if len(steps) > 1 else (),
    )
