"""OpenAI Codex CLI as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered, of those the release documentation lists: SessionStart, PreToolUse,
PostToolUse, UserPromptSubmit, Stop, SubagentStop (SubagentStart names no worktree or branch,
and a sub-agent's own tool calls carry its ``agent_id``, which binds it at its first touch).
SessionEnd and StopFailure exist in newer sources but not in the documented release: an event
key a Codex release does not know could make it skip the whole ``hooks.json``, so they are not
written.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from branchkeeper.adapters.hooks.answer import Answer, HookResponse
    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.adapters.hooks.host import FastSpec
    from branchkeeper.adapters.hooks.install import Change

NAME = "codex"
TITLE = "Codex CLI"
EVENTS: "dict[str, str]" = {
    "SessionStart": "session_start", "PreToolUse": "pre_tool", "PostToolUse": "post_tool",
    "UserPromptSubmit": "prompt", "Stop": "stop", "SubagentStop": "subagent_stop",
}
_SHELL = frozenset({"Bash"})
_NONE: "frozenset[str]" = frozenset()
FAST: "dict[str, FastSpec]" = {
    "PreToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "pre", b"", _NONE),
    "PostToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "post", b"", _NONE),
}
CLAUDE_EVENTS: "dict[str, str]" = {}
SCOPES = ("project", "user")


def parse(event: str, payload: "dict[str, Any]") -> "HookEvent":
    from branchkeeper.adapters.codex import wire
    from branchkeeper.adapters.hooks.event import InputError

    if event not in EVENTS:
        raise InputError(f"unknown hook event {event!r}")
    return wire.parse(event, EVENTS[event], payload)


def render(event: "HookEvent", answer: "Answer") -> "HookResponse":
    from branchkeeper.adapters.codex import wire

    return wire.render(event, answer)


def fail_open(event: str, message: str) -> "HookResponse":
    from branchkeeper.adapters.codex import wire

    return wire.fail_open(event, message)


def caller(payload: "dict[str, Any]", env: "Mapping[str, str]") -> str:
    return NAME


def config_path(scope: str, *, project_root: "Path | None", home: "Path") -> "Path":
    from branchkeeper.adapters.codex.install import hooks_path

    return hooks_path(scope, project_root=project_root, home=home)


def present(*, project_root: "Path | None", home: "Path") -> bool:
    return (home / ".codex").is_dir() or (project_root is not None
                                          and (project_root / ".codex").is_dir())


def installed(*, project_root: "Path | None", home: "Path") -> bool:
    from branchkeeper.adapters.codex.install import hooks_files
    from branchkeeper.adapters.hooks.install import file_has_ours

    return any(file_has_ours(p) for p in hooks_files(project_root=project_root, home=home))


def merge(settings: "dict[str, Any]", program: str) -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.codex import install

    return install.merge(settings, program)


def unmerge(settings: "dict[str, Any]") -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.codex import install

    return install.unmerge(settings)
