"""Gemini CLI as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered: SessionStart, BeforeTool (``run_shell_command``: the command guard),
AfterTool (``run_shell_command``, ``write_file``, ``replace``: records), BeforeAgent (turns),
AfterAgent (the Stop guard: Gemini's end of a turn) and SessionEnd. Gemini has no sub-agents.
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

NAME = "gemini"
TITLE = "Gemini CLI"
EVENTS: "dict[str, str]" = {
    "SessionStart": "session_start", "SessionEnd": "session_end", "BeforeTool": "pre_tool",
    "AfterTool": "post_tool", "BeforeAgent": "prompt", "AfterAgent": "stop",
}
_SHELL = frozenset({"run_shell_command"})
_NONE: "frozenset[str]" = frozenset()
FAST: "dict[str, FastSpec]" = {
    "BeforeTool": ("tool_name", _SHELL, ("tool_input", "command"), "pre", b"{}", _NONE),
    "AfterTool": ("tool_name", _SHELL, ("tool_input", "command"), "post", b"{}", _NONE),
}
CLAUDE_EVENTS: "dict[str, str]" = {}
SCOPES = ("project", "user")


def parse(event: str, payload: "dict[str, Any]") -> "HookEvent":
    from branchkeeper.adapters.gemini import wire
    from branchkeeper.adapters.hooks.event import InputError

    if event not in EVENTS:
        raise InputError(f"unknown hook event {event!r}")
    return wire.parse(event, EVENTS[event], payload)


def render(event: "HookEvent", answer: "Answer") -> "HookResponse":
    from branchkeeper.adapters.gemini import wire

    return wire.render(event, answer)


def fail_open(event: str, message: str) -> "HookResponse":
    from branchkeeper.adapters.gemini import wire

    return wire.fail_open(event, message)


def caller(payload: "dict[str, Any]", env: "Mapping[str, str]") -> str:
    return NAME


def config_path(scope: str, *, project_root: "Path | None", home: "Path") -> "Path":
    from branchkeeper.adapters.gemini.install import settings_path

    return settings_path(scope, project_root=project_root, home=home)


def present(*, project_root: "Path | None", home: "Path") -> bool:
    return (home / ".gemini").is_dir() or (project_root is not None
                                           and (project_root / ".gemini").is_dir())


def installed(*, project_root: "Path | None", home: "Path") -> bool:
    from branchkeeper.adapters.gemini.install import settings_files
    from branchkeeper.adapters.hooks.install import file_has_ours

    return any(file_has_ours(p) for p in settings_files(project_root=project_root, home=home))


def merge(settings: "dict[str, Any]", program: str) -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.gemini import install

    return install.merge(settings, program)


def unmerge(settings: "dict[str, Any]") -> "tuple[dict[str, Any], list[Change]]":
    from branchkeeper.adapters.gemini import install

    return install.unmerge(settings)
