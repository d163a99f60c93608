"""Claude Code's wire format: parsing event JSON and the exact output shapes
(docs/claude-code-hooks.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.claude import host, wire
from branchkeeper.adapters.hooks.event import EDIT, SHELL, WRITE, FileWrite, HookEvent, InputError, decode


def _bytes(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _parse(event: str, data: bytes) -> HookEvent:
    return host.HOST.parse(event, decode(data))


def test_parse_pre_tool_use_in_subagent() -> None:
    event = _parse("PreToolUse", _bytes({
        "session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status"}, "agent_id": "a1",
        "agent_type": "general-purpose"}))
    assert (event.session_id, event.cwd, event.agent_id, event.command, event.thread,
            event.tool, event.kind) == ("s", Path("/r"), "a1", "git status", "s:a1", SHELL,
                                        "pre_tool")


def test_parse_file_writes_carry_paths_and_whole_content() -> None:
    """Fields from the Claude Code hooks reference, PreToolUse input (Write: ``file_path``,
    always absolute, and ``content``; Edit: ``file_path``, ``old_string``, ``new_string``)."""
    base = {"session_id": "abc123", "cwd": "/repo", "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_use_id": "toolu_01DEF456"}
    write = _parse("PreToolUse", _bytes({**base, "tool_name": "Write", "tool_input": {
        "file_path": "/repo/notes/x.txt", "content": "hello\n"}}))
    edit = _parse("PreToolUse", _bytes({**base, "tool_name": "Edit", "tool_input": {
        "file_path": "/repo/a.py", "old_string": "a", "new_string": "b", "replace_all": False}}))
    assert (write.tool, write.writes) == ("file_write",
                                          (FileWrite("/repo/notes/x.txt", WRITE, "hello\n"),))
    assert edit.writes == (FileWrite("/repo/a.py", EDIT),)


@pytest.mark.parametrize(("event", "payload", "message"), [
    ("Stop", [], "input must be a JSON object, not list"),
    ("Stop", {"cwd": "/r"}, "missing field 'session_id'"),
    ("Stop", {"session_id": 5, "cwd": "/r"}, "field 'session_id' must be a string, not int"),
    ("Stop", {"session_id": "s", "cwd": "rel"}, "field 'cwd' must be an absolute path, not 'rel'"),
    ("Stop", {"session_id": "s", "cwd": "/r", "stop_hook_active": "yes"},
     "field 'stop_hook_active' must be true or false"),
    ("PreToolUse", {"session_id": "s", "cwd": "/r", "tool_name": "Bash", "tool_input": "ls"},
     "field 'tool_input' must be a JSON object"),
    ("WorktreeCreate", {"session_id": "s", "cwd": "/r"}, "missing field 'name'"),
    ("WorktreeRemove", {"session_id": "s", "cwd": "/r", "worktree_path": "x"},
     "field 'worktree_path' must be an absolute path"),
])
def test_parse_rejects(event: str, payload: object, message: str) -> None:
    with pytest.raises(InputError) as info:
        _parse(event, _bytes(payload))
    assert str(info.value) == message


def test_worktree_create_accepts_either_spelling_of_name() -> None:
    for key in ("name", "worktree_name"):
        event = _parse("WorktreeCreate", _bytes({"session_id": "s", "cwd": "/r", key: "feat"}))
        assert event.worktree_name == "feat"


def test_output_shapes() -> None:
    assert wire.pre_tool_use("deny", "no", "ctx").stdout == (
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
        '"permissionDecisionReason":"no","additionalContext":"ctx"}}')
    assert wire.pre_tool_use(None, context="note").stdout == (
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"note"}}')
    assert wire.pre_tool_use(None) == wire.quiet() == wire.HookResponse("", 0, "")
    with pytest.raises(ValueError):
        wire.pre_tool_use("allow")
    assert wire.stop_block("finish x").stdout == '{"decision":"block","reason":"finish x"}'
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
        assert json.loads(wire.context(event, "é").stdout) == {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": "é"}}
        assert wire.context(event, "") == wire.quiet()
    assert wire.worktree_created(Path("/r/.claude/worktrees/x")) == wire.HookResponse(
        "/r/.claude/worktrees/x\n", 0, "")
    assert wire.worktree_refused("cap") == wire.HookResponse("", 2, "cap")
