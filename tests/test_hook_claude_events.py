"""The newer Claude Code events (issue 14, point 2) and the hosts that run Claude Code's entries
(Cursor, GitHub Copilot), through the real installed hook command.

Payload fields from the Claude Code hooks reference (https://code.claude.com/docs/en/hooks:
"PostToolUseFailure input", "SessionEnd input", "StopFailure input", "SubagentStart input"), the
Cursor reference (https://cursor.com/docs/hooks, "preToolUse") and the Copilot reference
(github/docs ``content/copilot/reference/hooks-reference.md``, the VS Code compatible input).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.policy.command import decide_command
from tests.gitrepo import GitRepo
from tests.hostutil import fire, install


@pytest.fixture
def work(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    clone.commit("ignore hook files", files={".gitignore": ".claude/\n.cursor/\n.github/\n"})
    clone.git("push", "-q", "origin", "main")
    install(clone.path, "claude")
    return clone


def _p(repo: GitRepo | Path, event: str, session: str, **extra: Any) -> dict[str, Any]:
    path = repo.path if isinstance(repo, GitRepo) else repo
    return {"session_id": session, "transcript_path": "/home/u/.claude/projects/p/s.jsonl",
            "cwd": str(path), "permission_mode": "default", "hook_event_name": event, **extra}


def _bash(repo: GitRepo, session: str, command: str, *, ok: bool = True) -> Any:
    """Run ``command`` for real, then fire PostToolUse (or PostToolUseFailure)."""
    ran = subprocess.run(["bash", "-c", command], cwd=repo.path, capture_output=True, text=True)
    assert (ran.returncode == 0) is ok, ran.stderr
    tool = {"tool_name": "Bash", "tool_input": {"command": command, "description": "run"},
            "tool_use_id": "toolu_01ABC123"}
    if ok:
        return fire(repo.path, "claude", "PostToolUse", _p(
            repo, "PostToolUse", session, **tool, tool_response={
                "stdout": ran.stdout, "stderr": ran.stderr, "interrupted": False}))
    return fire(repo.path, "claude", "PostToolUseFailure", _p(
        repo, "PostToolUseFailure", session, **tool, is_interrupt=False, duration_ms=40,
        error=f"Exit code {ran.returncode}\n{ran.stdout}{ran.stderr}"))


def _records(repo: GitRepo) -> str:
    return repo.git("config", "--get-regexp", r"^branch\..*\.branchkeeper", check=False)


def _context(start: subprocess.CompletedProcess[bytes]) -> str:
    return str(json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"])


def test_post_tool_use_failure_records_no_success(work: GitRepo) -> None:
    work.switch("topic", create=True)
    work.commit("t", files={"f.txt": "topic\n"})
    work.switch("main")
    work.commit("m", files={"f.txt": "main\n"})
    failed = _bash(work, "pf", "git merge -q -m m topic", ok=False)  # a conflict
    assert (failed.returncode, failed.stdout, failed.stderr) == (0, b"", b"")
    # the merge stopped half-way: the checkout's branch is touched (the Stop guard judges
    # it), but no cleanup-after-merge advice and no record of a branch made
    assert _records(work) == "branch.main.branchkeepertouchedby pf:"
    work.git("merge", "--abort")
    made = _bash(work, "pf", "git switch -c topic", ok=False)  # exists already
    assert (made.returncode, made.stdout) == (0, b"")
    assert "branch.topic" not in _records(work)


def test_session_end_summary_is_shown_and_reported_next_start(work: GitRepo) -> None:
    _bash(work, "se", "git switch -q -c wip && echo w > w.txt && git add w.txt && "
                      "git commit -q -m w")
    end = fire(work.path, "claude", "SessionEnd", _p(work, "SessionEnd", "se", reason="other"))
    assert (end.returncode, end.stdout) == (0, b"")
    tip = work.rev("wip")[:10]
    assert end.stderr.decode() == (
        "branchkeeper: this session ends leaving work unfinished on these branches:\n"
        f"- wip: commits no remote holds (tip {tip}: not on any origin branch nor in main); "
        "push them\n    git push -u origin wip\n")
    start = fire(work.path, "claude", "SessionStart", _p(work, "SessionStart", "s2",
                                                         source="startup"))
    assert _context(start).splitlines()[2:4] == [
        "Left unfinished when a session ended (finish them):", "  wip: unpushed (thread se:)"]
    # nothing left: quiet
    work.git("push", "-q", "-u", "origin", "wip")
    again = fire(work.path, "claude", "SessionEnd", _p(work, "SessionEnd", "se", reason="other"))
    assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")


def test_stop_failure_abandons_the_branches_and_the_next_start_says_so(work: GitRepo) -> None:
    _bash(work, "sf", "git switch -q -c died && echo d > d.txt && git add d.txt && "
                      "git commit -q -m d")
    failure = fire(work.path, "claude", "StopFailure", _p(
        work, "StopFailure", "sf", error="rate_limit", error_details="429 Too Many Requests",
        last_assistant_message="API Error: Rate limit reached"))
    assert (failure.returncode, failure.stdout, failure.stderr) == (0, b"", b"")
    start = fire(work.path, "claude", "SessionStart", _p(work, "SessionStart", "next",
                                                         source="resume"))
    assert _context(start).splitlines()[2:4] == [
        "Stopped by an error before finishing (finish them):",
        "  died: unpushed, stopped by rate_limit (thread sf:)"]


def test_subagent_start_binds_the_isolated_worktree_at_once(work: GitRepo) -> None:
    spawn = fire(work.path, "claude", "PreToolUse", _p(
        work, "PreToolUse", "sa", tool_name="Agent", tool_use_id="toolu_2",
        tool_input={"prompt": "fix it", "description": "fixer", "subagent_type": "general-purpose",
                    "isolation": "worktree"}))
    assert (spawn.returncode, spawn.stdout) == (0, b"")
    made = fire(work.path, "claude", "WorktreeCreate", _p(work, "WorktreeCreate", "sa",
                                                          name="fix-1"))
    path = work.path / ".claude" / "worktrees" / "fix-1"
    assert (made.returncode, made.stdout) == (0, f"{path}\n".encode())
    started = fire(work.path, "claude", "SubagentStart", _p(
        work, "SubagentStart", "sa", agent_id="agent-abc123", agent_type="general-purpose"))
    assert (started.returncode, started.stdout, started.stderr) == (0, b"", b"")
    lines = _records(work).splitlines()
    assert lines[0] == "branch.worktree-fix-1.branchkeepercreator sa:agent-abc123"
    assert lines[2:] == ["branch.worktree-fix-1.branchkeeperroute worktree_create",
                         "branch.worktree-fix-1.branchkeepertouchedby sa:agent-abc123"]


def test_subagent_start_binds_nothing_when_two_worktrees_wait(work: GitRepo) -> None:
    for _ in ("par-1", "par-2"):
        fire(work.path, "claude", "PreToolUse", _p(
            work, "PreToolUse", "sp", tool_name="Agent", tool_use_id="toolu_3",
            tool_input={"prompt": "p", "description": "d", "isolation": "worktree"}))
    for name in ("par-1", "par-2"):
        fire(work.path, "claude", "WorktreeCreate", _p(work, "WorktreeCreate", "sp", name=name))
    fire(work.path, "claude", "SubagentStart", _p(work, "SubagentStart", "sp",
                                                  agent_id="agent-1", agent_type="Explore"))
    creators = [line for line in _records(work).splitlines() if "creator " in line]
    assert creators == ["branch.worktree-par-1.branchkeepercreator sp:",
                        "branch.worktree-par-2.branchkeepercreator sp:"]


def _lonely(work: GitRepo) -> str:
    work.switch("lonely", create=True)
    work.commit("l", files={"l.txt": "l\n"})
    work.switch("main")
    decision = decide_command("git branch -D lonely", cwd=str(work.path))
    assert decision.verdict.value == "deny"
    return decision.text


def _cursor_pre(work: GitRepo, command: str) -> dict[str, Any]:
    return {"conversation_id": "c-123", "generation_id": "g-456", "model": "claude-sonnet-4",
            "hook_event_name": "preToolUse", "cursor_version": "2.0.77",
            "workspace_roots": [str(work.path)], "user_email": None, "transcript_path": None,
            "tool_name": "Shell", "tool_input": {"command": command,
                                                 "working_directory": str(work.path)},
            "tool_use_id": "abc123", "cwd": str(work.path)}


def test_cursor_running_claude_entries_is_answered_in_cursors_format(work: GitRepo) -> None:
    text = _lonely(work)
    env = {"CURSOR_VERSION": "2.0.77", "CURSOR_PROJECT_DIR": str(work.path),
           "CLAUDE_PROJECT_DIR": str(work.path)}
    payload = _cursor_pre(work, "git branch -D lonely")
    alone = fire(work.path, "claude", "PreToolUse", payload, env=env)
    assert (alone.returncode, alone.stderr) == (0, b"")
    assert json.loads(alone.stdout) == {"permission": "deny", "user_message": text,
                                        "agent_message": text}
    # with Cursor's own entries installed as well, the Claude entry stays out: one guard only
    install(work.path, "cursor")
    both = fire(work.path, "claude", "PreToolUse", payload, env=env)
    assert (both.returncode, both.stdout, both.stderr) == (0, b"", b"")
    log = (work.path / ".git" / "branchkeeper" / "hook.log").read_text().splitlines()
    assert json.loads(log[-1])["message"] == (
        "claude entry run by cursor, which has its own entries: quiet")


def test_copilot_running_claude_entries_is_answered_in_copilots_format(work: GitRepo) -> None:
    text = _lonely(work)
    payload = {"hook_event_name": "PreToolUse", "session_id": "85a696df-0000",
               "timestamp": "2026-09-09T10:00:00.000Z", "cwd": str(work.path),
               "tool_name": "bash", "tool_input": {"command": "git branch -D lonely"}}
    result = fire(work.path, "claude", "PreToolUse", payload)
    assert (result.returncode, result.stderr) == (0, b"")
    assert json.loads(result.stdout) == {"permissionDecision": "deny",
                                         "permissionDecisionReason": text}


def test_claude_code_itself_is_never_mistaken_for_another_host(work: GitRepo) -> None:
    """``CLAUDE_CODE_CHILD_SESSION=1`` is set only by Claude Code (v2.1.172+): a Claude Code
    session started inside Cursor's terminal still gets Claude's format."""
    text = _lonely(work)
    payload = _p(work, "PreToolUse", "cc", tool_name="Bash", tool_use_id="toolu_4",
                 tool_input={"command": "git branch -D lonely"})
    result = fire(work.path, "claude", "PreToolUse", payload,
                  env={"CLAUDE_CODE_CHILD_SESSION": "1", "CURSOR_VERSION": "2.0.77"})
    assert json.loads(result.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": text}}
