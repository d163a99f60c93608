"""Holds: record, release, list, and a corrupt holds file moved aside."""

from __future__ import annotations

import json
from pathlib import Path

from branchkeeper.state import holds
from branchkeeper.state.holds import Hold


def test_record_list_release(tmp_path: Path) -> None:
    common = tmp_path / "repo.git"
    common.mkdir()
    a = holds.record_hold(common, tmp_path / "w a", reason="live server", revisit="deploy",
                          owner="ana", auto=False)
    assert a == Hold(str(tmp_path / "w a"), "ana", "live server", "deploy", a.since)
    b = holds.record_hold(common, tmp_path / "wb", reason="retire blocked: SKIP_DIRTY",
                          revisit="clean", owner="bo", auto=True, blockers=["SKIP_DIRTY: x"])
    assert holds.list_holds(common) == [a, b]
    assert holds.hold_for(common, tmp_path / "wb") == b
    data = json.loads((common / "branchkeeper" / "holds.json").read_text())
    assert data == {"version": 1, "holds": {
        str(tmp_path / "w a"): {"owner": "ana", "reason": "live server", "revisit": "deploy",
                                "since": a.since, "auto": False, "blockers": []},
        str(tmp_path / "wb"): {"owner": "bo", "reason": "retire blocked: SKIP_DIRTY",
                               "revisit": "clean", "since": b.since, "auto": True,
                               "blockers": ["SKIP_DIRTY: x"]}}}
    # an automatic hold never replaces an explicit one
    again = holds.record_hold(common, tmp_path / "w a", reason="r", revisit="v", owner="x",
                              auto=True)
    assert again == a
    assert holds.release_hold(common, tmp_path / "w a", auto_only=True) is None
    assert holds.release_hold(common, tmp_path / "w a") == a
    assert holds.release_hold(common, tmp_path / "w a") is None
    assert holds.list_holds(common) == [b]


def test_corrupt_file_is_moved_aside(tmp_path: Path) -> None:
    common = tmp_path / "repo.git"
    (common / "branchkeeper").mkdir(parents=True)
    target = common / "branchkeeper" / "holds.json"
    target.write_text("{not json")
    holds.take_notes()
    assert holds.list_holds(common) == []
    notes = holds.take_notes()
    aside = [p for p in (common / "branchkeeper").iterdir() if p.name.startswith("holds.json.")]
    assert len(aside) == 1 and aside[0].read_text() == "{not json"
    assert aside[0].name.startswith("holds.json.corrupt-")
    assert notes == [f"holds file {target} was unreadable (Expecting property name enclosed in "
                     f"double quotes: line 1 column 2 (char 1)); moved aside to {aside[0]}; "
                     "starting with no holds"]
    h = holds.record_hold(common, tmp_path / "w", reason="r", revisit="v", owner="o", auto=False)
    assert holds.list_holds(common) == [h]
    assert aside[0].read_text() == "{not json"


def test_wrong_shape_is_corrupt_too(tmp_path: Path) -> None:
    common = tmp_path / "c"
    (common / "branchkeeper").mkdir(parents=True)
    (common / "branchkeeper" / "holds.json").write_text(
        '{"version": 1, "holds": {"/x": {"owner": 3}}}')
    holds.take_notes()
    assert holds.list_holds(common) == []
    [note] = holds.take_notes()
    assert "hold for '/x' has a field of the wrong type" in note
