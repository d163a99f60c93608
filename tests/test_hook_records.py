"""Creator/touch records in git config, and session state (issue 6, section 2)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from branchkeeper.state import branch_records as records
from branchkeeper.state.session import EXPIRY_S, SessionState, SessionStore, state_filename
from tests.gitrepo import GitRepo

NAMES = ["feature.v2", "a/b.c/d", "ünïcode-ß", "-leading-dash", "x.lock-free", "dots.in.name"]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"README.md": "hi\n"})
    return repo


def test_records_round_trip_with_awkward_names(repo: GitRepo) -> None:
    for name in NAMES:
        repo.git("update-ref", f"refs/heads/{name}", "HEAD")
        assert records.write_creator(repo.path, name, session_id="s", agent_id="a",
                                     route=records.ROUTE_BASH, now=1000)
        records.add_touch(repo.path, name, session_id="s", agent_id="")
        records.add_touch(repo.path, name, session_id="s", agent_id="")
        records.add_touch(repo.path, name, session_id="t", agent_id="b")
    found = records.read_records(repo.path)
    assert found == {name: records.BranchRecords(name, "s:a", 1000, "bash", ("s:", "t:b"))
                     for name in NAMES}
    assert found[NAMES[0]].threads == frozenset({"s:a", "s:", "t:b"})


def test_creator_needs_the_ref(repo: GitRepo) -> None:
    assert not records.write_creator(repo.path, "missing", session_id="s", agent_id="",
                                     route=records.ROUTE_BASH)
    assert records.read_records(repo.path) == {}


def test_bind_creator_agent(repo: GitRepo) -> None:
    repo.branch("worktree-x")
    records.write_creator(repo.path, "worktree-x", session_id="s", agent_id="",
                          route=records.ROUTE_WORKTREE_CREATE, now=5)
    assert records.bind_creator_agent(repo.path, "worktree-x", session_id="s", agent_id="a1")
    assert not records.bind_creator_agent(repo.path, "worktree-x", session_id="s", agent_id="a2")
    assert records.read_records(repo.path)["worktree-x"].creator == "s:a1"


def test_parse_records_keeps_values_with_newlines() -> None:
    data = b"branch.a.b.branchkeepercreator\ns:x\x00branch.a.b.branchkeeperroute\nl1\nl2\x00"
    assert records.parse_records(data) == {
        "a.b": records.BranchRecords("a.b", "s:x", None, "l1\nl2", ())}


def test_config_lock_retries_then_fails(repo: GitRepo) -> None:
    repo.branch("b")
    lock = repo.path / ".git" / "config.lock"
    lock.write_text("")
    with pytest.raises(records.RecordWriteError):
        records.add_touch(repo.path, "b", session_id="s", agent_id="")
    lock.unlink()
    records.add_touch(repo.path, "b", session_id="s", agent_id="")
    assert records.read_records(repo.path)["b"].touched_by == ("s:",)


def test_state_filename_is_confined() -> None:
    for hostile in ["../../x", "/etc/passwd", "a\0b", "..", "", "é/é"]:
        name = state_filename(hostile)
        assert "/" not in name and name not in (".", "..") and name.endswith(".json")
    assert state_filename("abc") != state_filename("abc/")
    assert state_filename("2f1c0b7e-39a1-4c55-9d0e-5d8e1b1f7a10") == \
        "2f1c0b7e-39a1-4c55-9d0e-5d8e1b1f7a10.json"
    hostile = state_filename("x/")
    assert hostile.startswith("x.") and hostile != state_filename(hostile[:-5])
    assert state_filename("") != state_filename("session")


def test_session_state_helpers_and_turn_keys(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, "sid")
    with store.update() as state:
        state.advance_turn()
        state.add_evacuation("", {"branch": "x", "target": "/tmp/p.patch"})
        state.add_evacuation("ag", {"branch": "y"})
        assert state.rate_ok("noisy", now=100.0)
        assert not state.rate_ok("noisy", now=200.0)
        assert state.rate_ok("noisy", now=3701.0)
    state = store.read()
    assert state.current_evacuations("") == [{"branch": "x", "target": "/tmp/p.patch"}]
    state.advance_turn()
    assert state.current_evacuations("") == []
    assert state.current_evacuations("ag") == [{"branch": "y"}]


@pytest.mark.parametrize("content", ["{", "[]", '{"version": 1}', '{"version": 1, '
                                     '"session_id": "sid", "turn": -1}', "\xff"])
def test_corrupt_state_reads_as_fresh(tmp_path: Path, content: str) -> None:
    store = SessionStore(tmp_path, "sid")
    store.directory.mkdir(parents=True)
    store.path.write_bytes(content.encode("utf-8", "surrogateescape")
                           if content != "\xff" else b"\xff")
    assert store.read() == SessionState("sid")
    assert store.problems and store.problems[0].startswith("corrupt session state")


def test_expiry_removes_old_files_only(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, "new")
    store.directory.mkdir(parents=True)
    old = store.directory / state_filename("old")
    old.write_text("{}")
    stale = time.time() - EXPIRY_S - 10
    os.utime(old, (stale, stale))
    with store.update() as state:
        state.advance_turn()
    assert not old.exists()
    assert json.loads(store.path.read_text())["turn"] == 1


def test_read_creators_is_the_records_with_a_creator(repo: GitRepo) -> None:
    from branchkeeper.state.creators import read_creators

    assert read_creators(repo.path) == frozenset()  # no record at all: git exits 1
    for name in [*NAMES, "touched-only", "emptied"]:
        repo.git("update-ref", f"refs/heads/{name}", "HEAD")
    for name in NAMES:
        assert records.write_creator(repo.path, name, session_id="s", agent_id="a",
                                     route=records.ROUTE_BASH, now=1000)
    records.add_touch(repo.path, "touched-only", session_id="s", agent_id="")
    repo.git("config", "branch.emptied.branchkeeperCreator", "s:a")
    repo.git("config", "--add", "branch.emptied.branchkeeperCreator", "")
    expected = frozenset(n for n, r in records.read_records(repo.path).items() if r.creator)
    assert read_creators(repo.path) == expected == frozenset(NAMES)


def test_read_creators_loads_no_dataclasses(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from branchkeeper.state.creators import read_creators; "
            "print('dataclasses' in sys.modules, 'branchkeeper.state.branch_records' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    assert out == "False False\n"
