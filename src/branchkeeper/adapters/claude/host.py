"""Claude Code as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Parsing and rendering are :mod:`branchkeeper.adapters.claude.wire`; the settings files are
:mod:`branchkeeper.adapters.claude.install`. Both are imported where used: the fast path reads
only this module's constants.

**Who ran us.** Cursor (with its third-party hooks setting on) and GitHub Copilot CLI also run
the hooks in ``.claude/settings*.json``, with their own payloads and answers. :func:`caller`
tells them apart (``CLAUDE_CODE_CHILD_SESSION=1`` is set only by Claude Code; Cursor sends
``cursor_version``/``conversation_id`` and sets ``CURSOR_VERSION``; Copilot sends camelCase
``sessionId``/``toolName`` or a ``timestamp``, which Claude Code never sends), and the entry
point then stays quiet when that host has branchkeeper entries of its own (never the guard
twice) or answers in that host's format (never Claude's format to Cursor).
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

NAME = "claude"
TITLE = "Claude Code"
EVENTS: "dict[str, str]" = {
    "PreToolUse": "pre_tool", "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool_failure", "UserPromptSubmit": "prompt",
    "SessionStart": "session_start", "SessionEnd": "session_end", "Stop": "stop",
    "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop",
    "StopFailure": "stop_failure", "WorktreeCreate": "worktree_create",
    "WorktreeRemove": "worktree_remove",
}
_SHELL = frozenset({"Bash"})
_NONE: "frozenset[str]" = frozenset()
FAST: "dict[str, FastSpec]" = {
    "PreToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "pre", b"", _NONE),
    "PostToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "post", b"", _NONE),
}
CLAUDE_EVENTS: "dict[str, str]" = {}
SCOPES = ("project", "local", "user")


def parse(event: str, payload: "dict[str, Any]") -> "HookEvent":
    from branchkeeper.adapters.claude import wire
    from branchkeeper.adapters.hooks.event import InputError

    if event not in EVENTS:
        raise InputError(f"unknown hook event {event!r}")
    return wire.parse(event, EVENTS[event], payload)


def render(event: "HookEvent", answer: "Answer") -> "HookResponse":
    from branchkeeper.adapters.claude import wire

    return wire.render(event, answer)


def fail_open(event: str, message: str) -> "HookResponse":
    from branchkeeper.adapters.claude import wire

    return wire.fail_open(event, message)


def caller(payload: "dict[str, Any]", env: "Mapping[str, str]") -> str:
    """``claude``, or ``cursor``/``copilot`` when that host ran a Claude Code entry."""
    if env.get("CLAUDE_CODE_CHILD_SESSION") == "1":
        return NAME
    if "cursor_version" in payload or "conversation_id" in payload or env.get("CURSOR_VERSION"):
        return "cursor"
    if "sessionId" in payload or "toolName" in payload or "timestamp" in payload:
        return "copilot"
    return NAME


def config_path(scope: str, *, project_root: "Path | None", home: "Path") -> "Path":
    from branchkeeper.adapters.claude.install import settings_path

    return settings_path(scope, project_root=project_root, home=home)


def present(*, project_root: "Path | None", home: "Path") -> bool:
    return (home / ".claude").is_dir() or (project_root is not None
                                           and (project_root / ".claude").is_dir())


def installed(*, project_root: "Path | None", home: "Path") -> bool:
    from branchkeeper.adapters.claude.install import settings_files
    from branchkeeper.adapters.hooks.install import file_has_ours

    return any(file_has_ours(p) for p in settings_files(project_root=project_root, home=home))


def merge(settings: "dict[str, Any]", program: str) -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.claude import install

    return install.merge(settings, program)


def unmerge(settings: "dict[str, Any]") -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.claude import install

    return install.unmerge(settings)
