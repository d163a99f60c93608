"""Cursor as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered: sessionStart, beforeShellExecution (the command guard), preToolUse on
``Write`` (the tamper rule on file writes), postToolUse and
postToolUseFailure on ``Shell`` (records), afterFileEdit (touches), beforeSubmitPrompt (turns),
stop (the Stop guard), subagentStart (a named new branch for a sub-agent) and sessionEnd. Not
subagentStop: its input does not say which sub-agent stopped, so its parent's stop judges.
``CLAUDE_EVENTS`` is Cursor's own mapping of the Claude Code entries it also runs.
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

NAME = "cursor"
TITLE = "Cursor"
EVENTS: "dict[str, str]" = {
    "sessionStart": "session_start", "sessionEnd": "session_end",
    "beforeShellExecution": "pre_tool", "preToolUse": "pre_tool", "postToolUse": "post_tool",
    "postToolUseFailure": "post_tool_failure", "afterFileEdit": "post_tool",
    "beforeSubmitPrompt": "prompt", "stop": "stop", "subagentStart": "subagent_start",
    "subagentStop": "subagent_stop",
}
_SHELL = frozenset({"Shell", "Bash"})
_NONE: "frozenset[str]" = frozenset()
_READS = frozenset({"Read", "Grep", "Glob"})
FAST: "dict[str, FastSpec]" = {
    "beforeShellExecution": (None, _NONE, ("command",), "pre", b"{}", _NONE),
    "preToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "pre", b"{}", _READS),
    "postToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "post", b"{}", _READS),
}
CLAUDE_EVENTS: "dict[str, str]" = {
    "PreToolUse": "preToolUse", "PostToolUse": "postToolUse",
    "UserPromptSubmit": "beforeSubmitPrompt", "Stop": "stop", "SubagentStop": "subagentStop",
    "SessionStart": "sessionStart", "SessionEnd": "sessionEnd",
}
SCOPES = ("project", "user")


def parse(event: str, payload: "dict[str, Any]") -> "HookEvent":
    from branchkeeper.adapters.cursor import wire
    from branchkeeper.adapters.hooks.event import InputError

    if event not in EVENTS:
        raise InputError(f"unknown hook event {event!r}")
    return wire.parse(event, EVENTS[event], payload)


def render(event: "HookEvent", answer: "Answer") -> "HookResponse":
    from branchkeeper.adapters.cursor import wire

    return wire.render(event, answer)


def fail_open(event: str, message: str) -> "HookResponse":
    from branchkeeper.adapters.cursor import wire

    return wire.fail_open(event, message)


def caller(payload: "dict[str, Any]", env: "Mapping[str, str]") -> str:
    return NAME


def config_path(scope: str, *, project_root: "Path | None", home: "Path") -> "Path":
    from branchkeeper.adapters.cursor.install import hooks_path

    return hooks_path(scope, project_root=project_root, home=home)


def present(*, project_root: "Path | None", home: "Path") -> bool:
    return (home / ".cursor").is_dir() or (project_root is not None
                                           and (project_root / ".cursor").is_dir())


def installed(*, project_root: "Path | None", home: "Path") -> bool:
    from branchkeeper.adapters.cursor.install import hooks_files
    from branchkeeper.adapters.hooks.install import file_has_ours

    return any(file_has_ours(p) for p in hooks_files(project_root=project_root, home=home))


def merge(settings: "dict[str, Any]", program: str) -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.cursor import install

    return install.merge(settings, program)


def unmerge(settings: "dict[str, Any]") -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.cursor import install

    return install.unmerge(settings)
