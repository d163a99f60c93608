"""An interruption between writing a state file's temp copy and renaming it leaves no temp file
(DESIGN.md: no half-written file is left; a SIGTERM arrives in Python as an exception raised
wherever the interpreter is, here simulated at the rename)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from branchkeeper.state.jsonfile import read_json, write_json_atomic
from branchkeeper.state.walk_cache import FILE_NAME, load_walk, save_walk


def _interrupt(*_args: object) -> None:
    raise KeyboardInterrupt


def test_json_write_interrupted_at_rename_leaves_old_file_and_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "state" / "last.json"
    write_json_atomic(target, {"n": 1})
    monkeypatch.setattr(os, "replace", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(target, {"n": 2})
    monkeypatch.undo()
    assert sorted(p.name for p in target.parent.iterdir()) == ["last.json"]
    assert read_json(target) == {"n": 1}


def test_json_write_of_unserialisable_data_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "last.json"
    with pytest.raises(TypeError):
        write_json_atomic(target, {"n": object()})
    assert list(tmp_path.iterdir()) == []


def test_walk_cache_save_interrupted_at_rename_leaves_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = b"k" * 32
    save_walk(tmp_path, key, b"first")
    monkeypatch.setattr(os, "replace", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        save_walk(tmp_path, key, b"second")
    monkeypatch.undo()
    assert sorted(p.name for p in (tmp_path / "branchkeeper").iterdir()) == [FILE_NAME]
    assert load_walk(tmp_path, key) == b"first"
