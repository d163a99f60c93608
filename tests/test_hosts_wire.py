"""Each host's wire format in isolation: its documented payloads (tests/hostutil.py) parsed into
the host-neutral event, and every answer in the host's exact output shape (docs/hosts.md)."""

from __future__ import annotations

import json

import pytest

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import Answer, HookResponse
from branchkeeper.adapters.hooks.event import FileWrite, InputError
from branchkeeper.adapters.hosts import HOSTS
from tests import hostutil

PATCH = ("*** Begin Patch\n*** Add File: notes/x.txt\n+hello\n+world\n*** Update File: src/a.py\n"
         "@@ def f():\n-    return 1\n+    return 2\n*** Update File: old.txt\n"
         "*** Move to: new/name.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n*** End Patch\n")


def test_every_host_maps_to_known_kinds() -> None:
    for name, load in HOSTS.items():
        host = load()
        assert name == host.NAME
        assert set(host.EVENTS.values()) <= set(E.KINDS), name
        assert set(host.FAST) <= set(host.EVENTS) and set(host.CLAUDE_EVENTS.values()) <= set(
            host.EVENTS), name


@pytest.mark.parametrize("case", hostutil.CASES, ids=[c.name for c in hostutil.CASES])
def test_documented_shell_payloads_parse_alike(case: hostutil.HostCase) -> None:
    host = HOSTS[case.name]()
    pre_event, pre = case.pre("/repo", "git switch -c x")
    post_event, post = case.post("/repo", "git switch -c x")
    stop_event, stop = case.stop("/repo")
    parsed = [host.parse(pre_event, pre), host.parse(post_event, post),
              host.parse(stop_event, stop)]
    assert [(p.kind, p.tool, p.command, p.cwd_text, p.agent_id) for p in parsed] == [
        ("pre_tool", "shell", "git switch -c x", "/repo", ""),
        ("post_tool", "shell", "git switch -c x", "/repo", ""),
        ("stop", "", "", "/repo", "")]
    assert parsed[1].succeeded is True
    assert len({p.session_id for p in parsed}) == 1 and parsed[0].session_id


def test_codex_apply_patch_gives_every_path_and_added_content() -> None:
    """PR openai/codex#18391: the raw patch body is ``tool_input.command``; paths are relative
    to cwd (the tool refuses absolute ones)."""
    event, payload = hostutil.codex_pre("/repo", "")
    payload = {**payload, "tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    parsed = HOSTS["codex"]().parse(event, payload)
    assert (parsed.tool, parsed.command) == ("file_write", "")
    assert parsed.writes == (
        FileWrite("/repo/notes/x.txt", E.WRITE, "hello\nworld\n"),
        FileWrite("/repo/src/a.py", E.EDIT),
        FileWrite("/repo/old.txt", E.MOVED), FileWrite("/repo/new/name.txt", E.REPLACE),
        FileWrite("/repo/gone.txt", E.DELETE))


@pytest.mark.parametrize(("response", "ok"), [
    ("Switched to branch 'x'\n", True),
    ("Chunk ID: t\nProcess exited with code 0\nFinal output:\nok", True),
    ("Chunk ID: t\nProcess exited with code 1\nFinal output:\nCONFLICT", False),
    ({"exit_code": 128, "stderr": "fatal"}, False),
    ('{"exitCode": 1}', False),
    (None, None),
])
def test_codex_post_tool_use_reads_the_exit_status_it_can(response: object,
                                                         ok: bool | None) -> None:
    event, payload = hostutil.codex_post("/repo", "git merge topic")
    parsed = HOSTS["codex"]().parse(event, {**payload, "tool_response": response})
    assert parsed.succeeded is ok


def test_other_hosts_file_writes() -> None:
    gemini = HOSTS["gemini"]().parse("AfterTool", {
        "session_id": "g", "cwd": "/repo", "tool_name": "write_file",
        "tool_input": {"file_path": "notes/x.txt", "content": "hello\n"},
        "tool_response": {"llmContent": "ok"}})
    copilot = HOSTS["copilot"]().parse("postToolUse", {
        "sessionId": "p", "timestamp": 1, "cwd": "/repo", "toolName": "edit",
        "toolArgs": {"path": "/repo/a.py"}, "toolResult": {"resultType": "success"}})
    cursor = HOSTS["cursor"]().parse("afterFileEdit", {
        "conversation_id": "c", "workspace_roots": ["/repo"], "hook_event_name": "afterFileEdit",
        "file_path": "/repo/b.py", "edits": [{"old_string": "", "new_string": "x"}]})
    assert [(p.tool, p.writes) for p in (gemini, copilot, cursor)] == [
        ("file_write", (FileWrite("/repo/notes/x.txt", E.WRITE, "hello\n"),)),
        ("file_write", (FileWrite("/repo/a.py", E.EDIT),)),
        ("file_write", (FileWrite("/repo/b.py", E.EDIT),))]


def test_gemini_shell_runs_in_its_dir_path() -> None:
    parsed = HOSTS["gemini"]().parse("BeforeTool", {
        "session_id": "g", "cwd": "/repo", "tool_name": "run_shell_command",
        "tool_input": {"command": "git switch -c x", "dir_path": "sub/dir"}})
    assert (parsed.cwd_text, parsed.command) == ("/repo/sub/dir", "git switch -c x")


def test_codex_argv_command_is_read_as_its_quoted_words() -> None:
    parsed = HOSTS["codex"]().parse("PreToolUse", {
        "session_id": "s", "cwd": "/r", "tool_name": "Bash",
        "tool_input": {"command": ["bash", "-lc", "git branch -D 'my x'"]}})
    assert (parsed.tool, parsed.command) == (E.SHELL, "bash -lc 'git branch -D '\"'\"'my x'\"'\"''")


@pytest.mark.parametrize("cwd", [None, ""])
def test_cursor_empty_cwd_falls_back_to_the_first_workspace_root(cwd: str | None) -> None:
    parsed = HOSTS["cursor"]().parse("beforeShellExecution", {
        "conversation_id": "c", "cwd": cwd, "workspace_roots": ["/ws/one", "/ws/two"],
        "command": "git branch -D loc"})
    assert (parsed.cwd_text, parsed.command) == ("/ws/one", "git branch -D loc")


def test_cursor_sub_agent_start_names_its_branch() -> None:
    parsed = HOSTS["cursor"]().parse("subagentStart", {
        "conversation_id": "child", "workspace_roots": ["/repo"], "subagent_id": "abc-123",
        "subagent_type": "generalPurpose", "task": "t", "parent_conversation_id": "conv-456",
        "tool_call_id": "tc-789", "is_parallel_worker": False, "git_branch": "feature/auth"})
    assert (parsed.kind, parsed.session_id, parsed.agent_id, parsed.branch, parsed.tool) == (
        "subagent_start", "conv-456", "abc-123", "feature/auth", "agent_spawn")


def test_copilot_recoverable_error_is_ignored() -> None:
    host = HOSTS["copilot"]()
    base = {"sessionId": "p", "timestamp": 1, "cwd": "/repo", "errorContext": "model_call",
            "error": {"message": "429", "name": "RateLimitError"}}
    assert host.parse("errorOccurred", {**base, "recoverable": True}).kind == "ignored"
    fatal = host.parse("errorOccurred", {**base, "recoverable": False})
    assert (fatal.kind, fatal.error) == ("stop_failure", "RateLimitError")


@pytest.mark.parametrize(("host", "event", "payload", "message"), [
    ("codex", "Stop", {"cwd": "/r"}, "missing field 'session_id'"),
    ("codex", "PreToolUse", {"session_id": "s", "cwd": "/r", "tool_name": "Bash",
                             "tool_input": "ls"}, "field 'tool_input' must be a JSON object"),
    ("cursor", "beforeShellExecution", {"conversation_id": "c", "cwd": "/r"},
     "missing field 'command'"),
    ("cursor", "stop", {"conversation_id": "c"}, "missing field 'cwd'"),
    ("codex", "PreToolUse", {"session_id": "s", "cwd": "/r", "tool_name": "Bash",
                             "tool_input": {"command": ["git", 3]}},
     "field 'tool_input.command' must be a string or a list of strings"),
    ("gemini", "BeforeTool", {"session_id": "s", "cwd": "rel", "tool_name": "x",
                              "tool_input": {}}, "field 'cwd' must be an absolute path, not 'rel'"),
    ("copilot", "preToolUse", {"sessionId": "s", "cwd": "/r", "toolName": "bash",
                               "toolArgs": "[1]"},
     "input must be a JSON object, not list"),
    ("copilot", "agentStop", {"sessionId": 3, "cwd": "/r"},
     "field 'sessionId' must be a string, not int"),
])
def test_bad_payloads_are_input_errors(host: str, event: str, payload: dict[str, object],
                                       message: str) -> None:
    with pytest.raises(InputError) as info:
        HOSTS[host]().parse(event, payload)
    assert str(info.value) == message


def _render(host: str, event: str, payload: dict[str, object], answer: Answer) -> HookResponse:
    h = HOSTS[host]()
    return h.render(h.parse(event, payload), answer)


def _json(response: HookResponse) -> object:
    return json.loads(response.stdout) if response.stdout else None


def test_codex_answers_only_what_codex_accepts() -> None:
    event, pre = hostutil.codex_pre("/r", "x")
    ask = _render("codex", event, pre, Answer(A.ASK, "needs a yes"))
    assert _json(ask) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "needs a yes\n\nCodex cannot put this to the person at the "
                                    "keyboard, so branchkeeper refuses it: ask a human to run it."}}
    warn = _render("codex", event, pre, Answer(A.CONTEXT, "same stem as y"))
    assert _json(warn) == {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                  "additionalContext": "same stem as y"}}
    stop_event, stop = hostutil.codex_stop("/r")
    assert _json(_render("codex", stop_event, stop, Answer(A.NOTICE, "later"))) == {
        "systemMessage": "later"}
    assert _render("codex", stop_event, stop, A.SILENT) == HookResponse()


def test_cursor_answers() -> None:
    event, pre = hostutil.cursor_pre("/r", "x")
    assert _json(_render("cursor", event, pre, Answer(A.ASK, "a yes?"))) == {
        "permission": "ask", "user_message": "a yes?", "agent_message": "a yes?"}
    # a warning has no field before a shell command: the silent answer, never "allow"
    assert _render("cursor", event, pre, Answer(A.CONTEXT, "note")).stdout == "{}"
    start = {"conversation_id": "c", "workspace_roots": ["/r"], "session_id": "c",
             "is_background_agent": False, "composer_mode": "agent"}
    assert _json(_render("cursor", "sessionStart", start, Answer(A.CONTEXT, "summary"))) == {
        "additional_context": "summary"}
    sub = {"conversation_id": "c", "workspace_roots": ["/r"], "subagent_id": "s1",
           "git_branch": "new-b"}
    assert _json(_render("cursor", "subagentStart", sub, Answer(A.DENY, "cap"))) == {
        "permission": "deny", "user_message": "cap"}


def test_gemini_answers() -> None:
    event, pre = hostutil.gemini_pre("/r", "x")
    assert _json(_render("gemini", event, pre, Answer(A.CONTEXT, "note"))) == {
        "systemMessage": "note"}
    start = {"session_id": "s", "cwd": "/r", "source": "startup"}
    assert _json(_render("gemini", "SessionStart", start, Answer(A.CONTEXT, "sum"))) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "sum"}}
    assert _render("gemini", "SessionStart", start, A.SILENT).stdout == "{}"


def test_copilot_answers() -> None:
    event, pre = hostutil.copilot_pre("/r", "x")
    assert _json(_render("copilot", event, pre, Answer(A.ASK, "a yes?"))) == {
        "permissionDecision": "ask", "permissionDecisionReason": "a yes?"}
    assert _render("copilot", event, pre, Answer(A.CONTEXT, "note")) == HookResponse()
    start = {"sessionId": "p", "timestamp": 1, "cwd": "/r", "source": "new"}
    assert _json(_render("copilot", "sessionStart", start, Answer(A.CONTEXT, "sum"))) == {
        "additionalContext": "sum"}
    assert HOSTS["copilot"]().parse("sessionStart", start).source == "startup"


@pytest.mark.parametrize(("host", "stdout"), [("claude", ""), ("codex", ""), ("cursor", "{}"),
                                              ("gemini", "{}"), ("copilot", "")])
def test_fail_open_is_the_hosts_no_decision(host: str, stdout: str) -> None:
    event = next(iter(HOSTS[host]().FAST))
    response = HOSTS[host]().fail_open(event, "bad")
    assert (response.stdout, response.exit_code) == (stdout, 0)
    assert response.stderr.endswith(f"{event}: ignored: bad")
