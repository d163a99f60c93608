"""Each agent host's documented hook payloads, field by field, and a way to drive the command
``branchkeeper install --host HOST`` wrote (shared by the per-host end-to-end tests).

Sources (cited again in docs/hosts.md):

- Claude Code: https://code.claude.com/docs/en/hooks ("PreToolUse input", "PostToolUse input",
  "Stop input", "SessionEnd input", "StopFailure input"), as mirrored in
  thevibeworks/claude-code-docs@3f1ef7c ``content/en/docs/claude-code/hooks.md``.
- Codex CLI: https://developers.openai.com/codex/hooks (2026-06-27: "Common input fields",
  "PreToolUse", "PostToolUse", "Stop"); openai/codex ``codex-rs/hooks/schema/generated/
  pre-tool-use.command.input.schema.json`` and ``stop.command.input.schema.json``; a Bash
  ``tool_response`` is the output text (openai/codex#42864).
- Cursor: https://cursor.com/docs/hooks ("Input (all hooks)", "beforeShellExecution",
  "postToolUse", "stop").
- Gemini CLI: google-gemini/gemini-cli@5411f11 ``docs/hooks/reference.md`` and
  ``packages/core/src/hooks/types.ts`` (BeforeTool, AfterTool, AfterAgent), tool parameters from
  ``packages/core/src/tools/definitions/base-declarations.ts``.
- GitHub Copilot CLI: github/docs@2199f62 ``content/copilot/reference/hooks-reference.md``
  ("preToolUse", "postToolUse", "agentStop", camelCase input).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from branchkeeper.adapters.hooks.answer import dump

Payload = dict[str, Any]


# -- Claude Code ------------------------------------------------------------------------------------
def claude_pre(cwd: str, command: str) -> tuple[str, Payload]:
    return "PreToolUse", {
        "session_id": "abc123", "prompt_id": "550e8400-e29b-41d4-a716-446655440000",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl", "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it", "timeout": 120000,
                       "run_in_background": False},
        "tool_use_id": "toolu_01ABC123"}


def claude_post(cwd: str, command: str) -> tuple[str, Payload]:
    _, payload = claude_pre(cwd, command)
    return "PostToolUse", {**payload, "hook_event_name": "PostToolUse",
                           "tool_response": {"stdout": "", "stderr": "", "interrupted": False,
                                             "isImage": False},
                           "duration_ms": 12}


def claude_stop(cwd: str) -> tuple[str, Payload]:
    return "Stop", {
        "session_id": "abc123", "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": cwd, "permission_mode": "default", "hook_event_name": "Stop",
        "stop_hook_active": False, "last_assistant_message": "Done.", "background_tasks": [],
        "session_crons": []}


# -- Codex CLI ------------------------------------------------------------------------------------
CODEX_SESSION = "019a0000-0000-7000-8000-000000000001"


def codex_pre(cwd: str, command: str) -> tuple[str, Payload]:
    return "PreToolUse", {
        "session_id": CODEX_SESSION, "turn_id": "1", "transcript_path": None, "cwd": cwd,
        "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_abc123"}


def codex_post(cwd: str, command: str) -> tuple[str, Payload]:
    _, payload = codex_pre(cwd, command)
    return "PostToolUse", {**payload, "hook_event_name": "PostToolUse", "tool_response": ""}


def codex_stop(cwd: str) -> tuple[str, Payload]:
    return "Stop", {
        "session_id": CODEX_SESSION, "turn_id": "1", "transcript_path": None, "cwd": cwd,
        "hook_event_name": "Stop", "model": "gpt-5-codex", "permission_mode": "default",
        "stop_hook_active": False, "last_assistant_message": "Done."}


# -- Cursor ---------------------------------------------------------------------------------------
def _cursor_common(event: str, cwd: str) -> Payload:
    return {"conversation_id": "c-123", "generation_id": "g-456", "model": "claude-sonnet-4",
            "hook_event_name": event, "cursor_version": "2.0.77", "workspace_roots": [cwd],
            "user_email": None, "transcript_path": None}


def cursor_pre(cwd: str, command: str) -> tuple[str, Payload]:
    return "beforeShellExecution", {**_cursor_common("beforeShellExecution", cwd),
                                    "command": command, "cwd": cwd, "sandbox": False}


def cursor_post(cwd: str, command: str) -> tuple[str, Payload]:
    return "postToolUse", {**_cursor_common("postToolUse", cwd), "tool_name": "Shell",
                           "tool_input": {"command": command, "working_directory": cwd},
                           "tool_output": json.dumps({"exitCode": 0, "stdout": ""}),
                           "tool_use_id": "abc123", "cwd": cwd, "duration": 5432}


def cursor_stop(cwd: str) -> tuple[str, Payload]:
    return "stop", {**_cursor_common("stop", cwd), "status": "completed", "loop_count": 0}


# -- Gemini CLI -----------------------------------------------------------------------------------
def _gemini_common(event: str, cwd: str) -> Payload:
    return {"session_id": "5f1c0000-0000-4000-8000-000000000001",
            "transcript_path": "/home/u/.gemini/tmp/p/chats/session-1.json", "cwd": cwd,
            "hook_event_name": event, "timestamp": "2026-09-01T12:00:00.000Z"}


def gemini_pre(cwd: str, command: str) -> tuple[str, Payload]:
    return "BeforeTool", {**_gemini_common("BeforeTool", cwd), "tool_name": "run_shell_command",
                          "tool_input": {"command": command, "description": "Run it"}}


def gemini_post(cwd: str, command: str) -> tuple[str, Payload]:
    return "AfterTool", {**_gemini_common("AfterTool", cwd), "tool_name": "run_shell_command",
                         "tool_input": {"command": command, "description": "Run it"},
                         "tool_response": {"llmContent": "", "returnDisplay": ""}}


def gemini_stop(cwd: str) -> tuple[str, Payload]:
    return "AfterAgent", {**_gemini_common("AfterAgent", cwd), "prompt": "make branch x",
                          "prompt_response": "Done.", "stop_hook_active": False}


# -- GitHub Copilot CLI ---------------------------------------------------------------------------
COPILOT_SESSION = "85a696df-0000-4000-8000-000000000001"


def copilot_pre(cwd: str, command: str) -> tuple[str, Payload]:
    return "preToolUse", {"sessionId": COPILOT_SESSION, "timestamp": 1788992290306, "cwd": cwd,
                          "toolName": "bash",
                          "toolArgs": {"command": command, "description": "Run it"}}


def copilot_post(cwd: str, command: str) -> tuple[str, Payload]:
    _, payload = copilot_pre(cwd, command)
    return "postToolUse", {**payload, "timestamp": 1788992291000,
                           "toolResult": {"resultType": "success", "textResultForLlm": ""}}


def copilot_stop(cwd: str) -> tuple[str, Payload]:
    return "agentStop", {"sessionId": COPILOT_SESSION, "timestamp": 1788992299000, "cwd": cwd,
                         "transcriptPath": "/home/u/.copilot/session-state/s.jsonl",
                         "stopReason": "end_turn"}


# -- what each host expects back ------------------------------------------------------------------
class HostCase(NamedTuple):
    """One host's fixtures and answers: the shell events, the Stop event, the silent answer,
    how a deny and a Stop block look, and malformed input's answer on stdout."""

    name: str
    pre: Callable[[str, str], tuple[str, Payload]]
    post: Callable[[str, str], tuple[str, Payload]]
    stop: Callable[[str], tuple[str, Payload]]
    silent: bytes
    deny: Callable[[str], bytes]
    block: Callable[[str], bytes]


def _b(obj: object) -> bytes:
    return dump(obj).encode()


CASES = [
    HostCase("claude", claude_pre, claude_post, claude_stop, b"",
             lambda t: _b({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                  "permissionDecision": "deny",
                                                  "permissionDecisionReason": t}}),
             lambda r: _b({"decision": "block", "reason": r})),
    HostCase("codex", codex_pre, codex_post, codex_stop, b"",
             lambda t: _b({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                  "permissionDecision": "deny",
                                                  "permissionDecisionReason": t}}),
             lambda r: _b({"decision": "block", "reason": r})),
    HostCase("cursor", cursor_pre, cursor_post, cursor_stop, b"{}",
             lambda t: _b({"permission": "deny", "user_message": t, "agent_message": t}),
             lambda r: _b({"followup_message": r})),
    HostCase("gemini", gemini_pre, gemini_post, gemini_stop, b"{}",
             lambda t: _b({"decision": "deny", "reason": t}),
             lambda r: _b({"decision": "deny", "reason": r})),
    HostCase("copilot", copilot_pre, copilot_post, copilot_stop, b"",
             lambda t: _b({"permissionDecision": "deny", "permissionDecisionReason": t}),
             lambda r: _b({"decision": "block", "reason": r})),
]


# -- driving the installed command ----------------------------------------------------------------
def install(repo: Path, host: str) -> subprocess.CompletedProcess[str]:
    """``branchkeeper install --host HOST --command absolute`` in ``repo`` (must succeed)."""
    done = subprocess.run([sys.executable, "-m", "branchkeeper", "install", "--host", host,
                           "--command", "absolute"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def config_file(repo: Path, host: str) -> Path:
    return repo / {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                   "cursor": ".cursor/hooks.json", "gemini": ".gemini/settings.json",
                   "copilot": ".github/hooks/branchkeeper.json"}[host]


def installed_command(repo: Path, host: str, event: str) -> str:
    """The command the host's configuration file runs for ``event`` (exactly one entry)."""
    hooks = json.loads(config_file(repo, host).read_text())["hooks"][event]
    commands = [h.get("command") or h.get("bash") for item in hooks
                for h in item.get("hooks", [item])]
    assert len(commands) == 1, commands
    return str(commands[0])


def fire(repo: Path, host: str, event: str, payload: Payload | None = None, *,
         raw: bytes | None = None, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[bytes]:
    """Run the installed command for ``event`` through the shell, as the host does, with
    ``payload`` (JSON) or ``raw`` on stdin; cwd is the repository, as for a project hook."""
    data = raw if raw is not None else json.dumps(payload).encode()
    full_env = {k: v for k, v in os.environ.items() if k != "BRANCHKEEPER_DEBUG"}
    full_env.update(env or {})
    return subprocess.run(["bash", "-c", installed_command(repo, host, event)], input=data,
                          capture_output=True, cwd=repo, env=full_env, timeout=60)
