"""The session-start routine (issue 18): ``prune`` reaps worktrees in the background with a
log, the passive count-only nudges, and the SessionStart due rule. Real repositories, real
processes; a background run is waited for by its log's end line (a generous bound, no sleep).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.clock import NOW_ENV
from tests.githookutil import bk, operations, undo
from tests.gitrepo import NOW, GitRepo
from tests.hookutil import run_hook
from tests.reaputil import add_worktree, age_files, no_gh

#: The longest a background run may take on a loaded machine before the test fails, seconds.
WAIT_S = 180.0
SESSION = "routine-session"


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    no_gh(tmp_path, monkeypatch)
    monkeypatch.delenv("BRANCHKEEPER_REAP_DISABLE")
    _bare, clone = remote_and_clone
    return clone


def state(repo: GitRepo, name: str) -> Path:
    return repo.path / ".git" / "branchkeeper" / name


def reapable(repo: GitRepo, tmp_path: Path, name: str) -> Path:
    """A linked worktree the reap gates let go: a new branch at main, idle and old."""
    path = tmp_path / name
    add_worktree(repo, path, "-b", name, start="main")
    age_files(path)
    return path


def wait_for_end(log: Path, count: int = 1) -> str:
    """The log once it holds ``count`` end lines (the completion marker)."""
    deadline = time.monotonic() + WAIT_S
    text = ""
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if text.count("\n=== end pid ") + text.startswith("=== end pid ") >= count:
            return text
        time.sleep(0.05)
    raise AssertionError(f"{log} has no {count} end line(s) after {WAIT_S:g} s:\n{text}")


def prune_json(repo: GitRepo, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    res = bk(repo, "prune", "--no-fetch", "--json", *args, env=env)
    assert res.returncode == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def _started(notes: list[str], repo: GitRepo) -> int:
    log = state(repo, "worktree-reap.log")
    [line] = [n for n in notes if n.startswith("worktree reap started")]
    m = re.fullmatch(r"worktree reap started in the background \(pid (\d+), --min-age-hours 3\); "
                     rf"it waits for this prune, then logs to {re.escape(str(log))}", line)
    assert m, line
    return int(m.group(1))


def test_prune_reaps_in_the_background_with_a_logged_run(repo: GitRepo, tmp_path: Path) -> None:
    done = reapable(repo, tmp_path, "done")
    data = prune_json(repo)
    pid = _started(data["notes"], repo)
    text = wait_for_end(state(repo, "worktree-reap.log"))
    lines = text.splitlines()
    assert re.fullmatch(rf"=== worktree reap: \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ pid {pid} args: "
                        rf"-C {re.escape(str(repo.path))} worktree reap --min-age-hours 3 "
                        r"--lock-wait 900", lines[0]), lines[0]
    assert f"removed: {done} (done)" in lines
    assert lines[-1] == f"=== end pid {pid}: exit 0"
    assert not done.exists()
    # log and undo cover what it removed
    [op] = [o for o in operations(repo) if o["op"] != "prune"]
    assert undo(repo, op["id"]) == 0
    assert done.is_dir() and GitRepo(done).git("symbolic-ref", "--short", "HEAD") == "done"


def test_two_prunes_at_once_reap_each_worktree_once(repo: GitRepo, tmp_path: Path) -> None:
    done = reapable(repo, tmp_path, "done")
    cmd = [sys.executable, "-m", "branchkeeper", "-C", str(repo.path), "prune", "--no-fetch"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    results = [p.communicate(timeout=WAIT_S) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    text = wait_for_end(state(repo, "worktree-reap.log"), 2)
    assert len(re.findall(r"^=== worktree reap: ", text, re.M)) == 2
    assert len(re.findall(r"^=== end pid \d+: exit 0$", text, re.M)) == 2
    assert text.count(f"removed: {done} (done)") == 1
    assert not done.exists()


@pytest.mark.parametrize("switch", ["--no-reap", "env", "config", "--dry-run"])
def test_the_switches_start_no_reap(repo: GitRepo, tmp_path: Path, switch: str) -> None:
    done = reapable(repo, tmp_path, "done")
    args: list[str] = []
    env: dict[str, str] = {}
    if switch == "env":
        env["BRANCHKEEPER_REAP_DISABLE"] = "1"
    elif switch == "config":
        (repo.path / ".branchkeeper.yaml").write_text("worktrees:\n  reap_from_prune: false\n")
    else:
        args.append(switch)
    notes = prune_json(repo, *args, env=env)["notes"]
    expected = {"--no-reap": "worktree reap not started (--no-reap)",
                "env": "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)",
                "config": "worktree reap not started (worktrees.reap_from_prune is false)",
                "--dry-run": "dry run: fetch, worktree prune and the background worktree reap "
                             "not run"}[switch]
    assert expected in notes
    assert not any(n.startswith("worktree reap started") for n in notes)
    assert not state(repo, "worktree-reap.log").exists()
    assert done.is_dir()


# -- SessionStart and the nudges --------------------------------------------------------------
def session_start(repo: GitRepo, *, env: dict[str, str] | None = None) -> list[str]:
    res = run_hook("SessionStart", {"session_id": SESSION, "cwd": str(repo.path),
                                    "hook_event_name": "SessionStart", "source": "startup",
                                    "transcript_path": "/dev/null"}, env=env)
    assert res.returncode == 0, res.stderr
    if not res.stdout:
        return []
    out = json.loads(res.stdout)
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text.splitlines()


def routine_lines(lines: list[str]) -> list[str]:
    """The lines of the routine (the nudge, the due line) among SessionStart's."""
    return [ln for ln in lines if "linked worktrees" in ln or " prune" in ln]


def linked(repo: GitRepo, tmp_path: Path, count: int) -> None:
    for i in range(count):
        repo.worktree_add(tmp_path / f"wt{i}", "-b", f"wt{i}")


NUDGE = ("branchkeeper: 6 linked worktrees (more than 5); see which can go: branchkeeper "
         "worktree reap --dry-run --explain")


def test_session_start_nudges_only_past_the_threshold(repo: GitRepo, tmp_path: Path) -> None:
    prune_json(repo, "--no-reap")  # the due line stays out of it
    linked(repo, tmp_path, 5)
    assert routine_lines(session_start(repo)) == []
    repo.worktree_add(tmp_path / "wt5", "-b", "wt5")
    assert routine_lines(session_start(repo)) == [NUDGE]


def _merge(repo: GitRepo) -> list[str]:
    command = "git merge -q --ff-only feat"
    repo.git("merge", "-q", "--ff-only", "feat")
    res = run_hook("PostToolUse", {
        "session_id": SESSION, "cwd": str(repo.path), "transcript_path": "/dev/null",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False}})
    assert res.returncode == 0, res.stderr
    if not res.stdout:
        return []
    text: str = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    return text.splitlines()


@pytest.mark.parametrize("count", [5, 6])
def test_a_merge_on_the_default_branch_nudges_past_the_threshold(repo: GitRepo, tmp_path: Path,
                                                                count: int) -> None:
    linked(repo, tmp_path, count)
    repo.switch("feat", create=True)
    repo.commit("feat", files={"feat.txt": "f\n"})
    repo.switch("main")
    lines = _merge(repo)
    assert [ln for ln in lines if "linked worktrees" in ln] == ([NUDGE] if count == 6 else [])


def test_the_due_rule(repo: GitRepo) -> None:
    due = "branchkeeper: the session-start prune is due ({}); run: branchkeeper prune"
    assert routine_lines(session_start(repo)) == [due.format("no prune recorded")]
    prune_json(repo, "--no-reap")
    record = json.loads(state(repo, "last-prune.json").read_text())
    assert record == {"time": NOW, "branch": "main", "worktree": str(repo.path.resolve())}
    assert routine_lines(session_start(repo)) == []
    later = {NOW_ENV: str(NOW + 29 * 60)}
    assert routine_lines(session_start(repo, env=later)) == []
    later = {NOW_ENV: str(NOW + 31 * 60)}
    assert routine_lines(session_start(repo, env=later)) == [
        due.format("the last prune ran 31 minutes ago")]
    repo.switch("other", create=True)
    assert routine_lines(session_start(repo)) == [
        due.format("the branch changed since the last prune (main -> other)")]
    (repo.path / ".branchkeeper.yaml").write_text("session_start:\n  prune: off\n")
    assert routine_lines(session_start(repo)) == []


def test_session_start_can_start_the_prune_in_the_background(repo: GitRepo) -> None:
    (repo.path / ".branchkeeper.yaml").write_text("session_start:\n  prune: background\n")
    [line] = routine_lines(session_start(repo))
    log = state(repo, "prune.log")
    m = re.fullmatch(r"branchkeeper: started `branchkeeper prune` in the background \(pid (\d+); "
                     rf"log {re.escape(str(log))}\)", line)
    assert m, line
    text = wait_for_end(log)
    assert re.match(rf"=== prune: \S+ pid {m.group(1)} args: -C {re.escape(str(repo.path))} "
                    r"prune\n", text), text
    assert text.endswith(f"=== end pid {m.group(1)}: exit 0\n")
    assert routine_lines(session_start(repo)) == []  # recorded: not due again
    wait_for_end(state(repo, "worktree-reap.log"))  # the prune's own background reap
    assert os.path.exists(state(repo, "last-prune.json"))
