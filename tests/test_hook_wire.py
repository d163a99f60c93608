"""The wire format: parsing event JSON and the exact output shapes (docs/claude-code-hooks.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.claude import wire


def _bytes(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_parse_pre_tool_use_in_subagent() -> None:
    event = wire.parse_event("PreToolUse", _bytes({
        "session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status"}, "agent_id": "a1",
        "agent_type": "general-purpose"}))
    assert (event.session_id, event.cwd, event.agent_id, event.command, event.thread) == (
        "s", Path("/r"), "a1", "git status", "s:a1")


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
    with pytest.raises(wire.InputError) as info:
        wire.parse_event(event, _bytes(payload))
    assert str(info.value) == message


def test_worktree_create_accepts_either_spelling_of_name() -> None:
    for key in ("name", "worktree_name"):
        event = wire.parse_event("WorktreeCreate", _bytes({"session_id": "s", "cwd": "/r",
                                                           key: "feat"}))
        assert event.name == "feat"


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


def test_git_invocations_and_created_branches() -> None:
    calls = wire.git_invocations(
        "cd x && FOO=1 git -C y -c a=b --no-pager commit -m 'a; git reset' ; /usr/bin/git "
        "switch -c new\ngit checkout -b other main | cat && git branch fix.v2 && "
        "git branch -D old && git worktree add -b wt ../wt")
    assert calls == [["commit", "-m", "a; git reset"], ["switch", "-c", "new"],
                     ["checkout", "-b", "other", "main"], ["branch", "fix.v2"],
                     ["branch", "-D", "old"], ["worktree", "add", "-b", "wt", "../wt"]]
    assert wire.created_branches(calls) == ["new", "other", "fix.v2", "wt"]
    assert wire.git_invocations("echo 'unbalanced") == []
    assert wire.git_invocations("ls -la") == []
