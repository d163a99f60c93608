"""``<common dir>/branchkeeper`` that is not a directory: every command and hook says so in one
line (what it is, what to do) instead of an ``OSError``; hooks fail open; nothing is written.
Also the reference-transaction hand-off's atomic write and the one process-liveness test."""

from __future__ import annotations

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


@pytest.mark.parametrize("event,extra", [
    ("SessionStart", {"source": "startup"}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "git switch -c x"}}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}}),
])
def test_hooks_fail_open_with_the_same_words(tmp_path: Path, event: str,
                                             extra: dict[str, object]) -> None:
    repo, state, message = _blocked(tmp_path)
    payload = {"hook_event_name": event, "session_id": "s1", "cwd": str(repo.path), **extra}
    done = hook(event, payload)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        0, b"", f"branchkeeper hook {event}: ignored: {message}\n")
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
