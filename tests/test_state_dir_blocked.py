"""``<common dir>/branchkeeper`` that is not a directory: every command and hook says so in one
line (what it is, what to do) instead of an ``OSError``; hooks fail open, but the command guard
still judges (it needs no state); nothing is written.
Also the reference-transaction hand-off's atomic write and the one process-liveness test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from branchkeeper.git.types import Oid
from branchkeeper.process import pid_alive
from branchkeeper.state import githook_pending
from tests.gitrepo import GitRepo
from tests.reliability_util import bk, hook


def _blocked(tmp_path: Path) -> tuple[GitRepo, Path, str]:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n"})
    repo.git("branch", "topic")
    state = repo.path / ".git" / "branchkeeper"
    state.write_text("not a directory\n")
    message = (f"{state} exists but is not a directory: branchkeeper keeps its journal, "
               "bundles and caches there; move it aside (`mv`) and run again")
    return repo, state, message


@pytest.mark.parametrize("argv", [["sweep"], ["sweep", "--json"], ["prune", "--dry-run"],
                                  ["delete", "--dry-run", "--", "topic"], ["undo"], ["log"]])
def test_commands_name_the_blocking_file_and_exit_4(tmp_path: Path, argv: list[str]) -> None:
    repo, state, message = _blocked(tmp_path)
    done = bk(repo.path, *argv)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        4, b"", f"branchkeeper: error: {message}\n")
    assert state.read_text() == "not a directory\n"
    assert repo.has_ref("refs/heads/topic")


def test_session_start_fails_open_with_the_same_words(tmp_path: Path) -> None:
    repo, state, message = _blocked(tmp_path)
    payload = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(repo.path),
               "source": "startup"}
    done = hook("SessionStart", payload)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        0, b"", f"branchkeeper hook SessionStart: ignored: {message}\n")
    assert state.read_text() == "not a directory\n"


@pytest.mark.parametrize("command", ["git switch -c x", "ls"])
def test_harmless_commands_are_allowed_quietly(tmp_path: Path, command: str) -> None:
    repo, state, _message = _blocked(tmp_path)
    payload = {"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": str(repo.path),
               "tool_name": "Bash", "tool_input": {"command": command}}
    done = hook("PreToolUse", payload)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert state.read_text() == "not a directory\n"


def test_the_guard_still_judges_a_command_when_the_state_path_is_blocked(tmp_path: Path) -> None:
    """No state is kept, but the guard needs none: a delete that loses work is still denied by
    the hook, as ``check`` denies it (never a silent allow)."""
    repo, state, _message = _blocked(tmp_path)
    repo.switch("only-here", create=True)
    repo.commit("work kept nowhere else", files={"w.txt": "w\n"})
    repo.switch("main")
    payload = {"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": str(repo.path),
               "tool_name": "Bash", "tool_input": {"command": "git branch -D only-here"}}
    done = hook("PreToolUse", payload)
    checked = bk(repo.path, "check", "--json", "--", "git branch -D only-here")
    assert done.returncode == 0 and checked.returncode == 2
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"] == json.loads(checked.stdout)["text"]
    assert state.read_text() == "not a directory\n"


def test_handoff_write_is_atomic_and_leaves_no_temp_file(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n"})
    common = repo.path / ".git"
    path = githook_pending.pending_path(common, 4242)
    tip = Oid.parse(repo.rev("HEAD"))
    entries = {"refs/heads/x": githook_pending.Pending("refs/heads/x", tip, None)}
    githook_pending.save(path, 4242, entries)
    assert githook_pending.load(path) == entries
    assert sorted(os.listdir(path.parent)) == [path.name]
    path.unlink()
    path.mkdir()  # the replace step fails (a directory is in the way): an error, no leftover
    with pytest.raises(IsADirectoryError):
        githook_pending.save(path, 4242, entries)
    assert sorted(os.listdir(path.parent)) == [path.name]
    assert os.listdir(path) == []


def test_pid_alive_tells_live_from_gone_and_invalid() -> None:
    assert pid_alive(os.getpid()) is True
    assert [pid_alive(p) for p in (2**22 + 12345, -(2**70), 2**70)] == [False, False, False]
