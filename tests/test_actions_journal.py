"""The journal: round trip, a torn last line, interrupted operations."""

from __future__ import annotations

import json
import re
from pathlib import Path

from branchkeeper.git.types import Oid
from branchkeeper.state.journal import (
    ItemOutcome,
    ItemResult,
    Journal,
    JournalItem,
    Operation,
    OpStatus,
    SkippedLine,
    new_operation_id,
)
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo

A = Oid("a" * 40)
B = Oid("b" * 40)


def test_operation_id_shape() -> None:
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{4}", new_operation_id())


def test_round_trip_with_torn_line(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    journal = Journal(common_dir_of(repo.path))
    items = [
        JournalItem("refs/heads/x", A, None, "git fetch b.bundle refs/heads/x:refs/heads/x"),
        JournalItem("refs/heads/y", B, "origin", "git push origin bbb:refs/heads/y"),
    ]
    first = journal.begin("delete", items, bundle=None, note="n1", argv=["branchkeeper", "delete"])
    journal.record(first, ItemResult("refs/heads/x", ItemOutcome.DELETED),
                   ItemResult("refs/heads/y", ItemOutcome.RACED, "moved"))
    journal.end(first, OpStatus.PARTIAL)
    # A crash mid-write leaves half a line without its newline.
    with journal.path.open("ab") as fh:
        fh.write(b'{"v": 1, "event": "item", "id": "' + first.encode() + b'", "re')
    second = journal.begin("prune", items[:1], bundle=None, argv=["branchkeeper", "prune"])

    lines = journal.path.read_bytes().split(b"\n")
    assert len(lines) == 7 and lines[-1] == b""  # begin, 2 items, end, torn, begin, ""
    assert json.loads(lines[5])["id"] == second

    contents = journal.load()
    time1 = contents.operations[0].time
    time2 = contents.operations[1].time
    assert contents.operations == (
        Operation(
            id=first, op="delete", time=time1, status=OpStatus.PARTIAL, items=tuple(items),
            results={
                "refs/heads/x": ItemResult("refs/heads/x", ItemOutcome.DELETED, ""),
                "refs/heads/y": ItemResult("refs/heads/y", ItemOutcome.RACED, "moved"),
            },
            bundle=None, note="n1", argv=("branchkeeper", "delete"), undos=(),
        ),
        Operation(
            id=second, op="prune", time=time2, status=OpStatus.INTERRUPTED, items=(items[0],),
            results={}, bundle=None, note="", argv=("branchkeeper", "prune"), undos=(),
        ),
    )
    assert len(contents.skipped) == 1
    assert contents.skipped[0].lineno == 5
    assert contents.skipped[0].reason.startswith("unreadable line (")
    assert journal.get(second) == contents.operations[1]
    assert journal.get("nope") is None
    assert [o.id for o in journal.operations()] == [first, second]


def test_undo_event_and_garbage(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    journal = Journal(common_dir_of(repo.path))
    op = journal.begin("delete", [JournalItem("refs/heads/x", A, None, "r")], bundle=None)
    journal.end(op, OpStatus.DONE)
    journal.record_undo(op, "partial", {"refs/heads/x": ("conflict", "exists")})
    assert journal.get(op) is not None and journal.get(op).undone is None  # type: ignore[union-attr]
    journal.record_undo(op, "done", {"refs/heads/x": ("restored", "")})
    with journal.path.open("a") as fh:
        fh.write('[1, 2]\n{"v": 1, "event": "end", "id": "ghost", "status": "done"}\n')
    contents = journal.load()
    (operation,) = contents.operations
    assert [u.status for u in operation.undos] == ["partial", "done"]
    assert operation.undone is not None
    assert operation.undone.results == {"refs/heads/x": ("restored", "")}
    assert contents.skipped == (
        SkippedLine(5, "unreadable line (not an object)"),
        SkippedLine(6, "end event for unknown operation ghost"),
    )


def test_missing_journal_is_empty(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    journal = Journal(common_dir_of(repo.path))
    assert journal.operations() == []
    assert journal.load().skipped == ()
