"""GitHub Copilot CLI as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered (camelCase, so the payload is camelCase): sessionStart, userPromptSubmitted,
preToolUse on ``bash`` (the command guard), postToolUse and postToolUseFailure (records; no
matcher there, so the no-git fast path also answers the read-only tools at once), agentStop
(the Stop guard), errorOccurred (an unrecoverable error abandons the branches, like
StopFailure) and sessionEnd. Not subagentStop: it names the sub-agent by type, not by id.
The PascalCase names are the events of Copilot's snake_case dialect, which it uses for the
entries it reads from ``.claude/settings.json``; ``CLAUDE_EVENTS`` maps them.
"""

from branchkeeper.adapters.hooks.host import Delegate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from branchkeeper.adapters.hooks.host import FastSpec

NAME = "copilot"
TITLE = "GitHub Copilot CLI"
EVENTS: "dict[str, str]" = {
    "sessionStart": "session_start", "sessionEnd": "session_end",
    "userPromptSubmitted": "prompt", "preToolUse": "pre_tool", "postToolUse": "post_tool",
    "postToolUseFailure": "post_tool_failure", "agentStop": "stop",
    "subagentStop": "subagent_stop", "errorOccurred": "stop_failure",
    "SessionStart": "session_start", "SessionEnd": "session_end", "UserPromptSubmit": "prompt",
    "PreToolUse": "pre_tool", "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool_failure", "Stop": "stop", "SubagentStop": "subagent_stop",
    "ErrorOccurred": "stop_failure",
}
_SHELL = frozenset({"bash"})
_NONE: "frozenset[str]" = frozenset()
#: Tools with nothing to judge or record (postToolUse has no matcher, so it sees them all).
_READS = frozenset({"view", "glob", "grep", "web_fetch", "ask_user"})
FAST: "dict[str, FastSpec]" = {
    "preToolUse": ("toolName", _SHELL, ("toolArgs", "command"), "pre", b"", _READS),
    "postToolUse": ("toolName", _SHELL, ("toolArgs", "command"), "post", b"", _READS),
    "PreToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "pre", b"", _READS),
    "PostToolUse": ("tool_name", _SHELL, ("tool_input", "command"), "post", b"", _READS),
}
CLAUDE_EVENTS: "dict[str, str]" = {
    name: name for name in ("SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse",
                            "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop")}
SCOPES = ("project", "user")


class _Copilot(Delegate):
    """Copilot CLI's own rule for where its configuration lives; the rest is
    :class:`Delegate`'s."""

    def present(self, *, project_root: "Path | None", home: "Path") -> bool:
        from branchkeeper.adapters.copilot.install import user_dir

        return user_dir(home).parent.is_dir() or (project_root is not None and any(
            (project_root / ".github" / d).is_dir() for d in ("hooks", "copilot")))


#: The host, as :data:`~branchkeeper.adapters.hosts.HOSTS` loads it.
HOST = _Copilot(
    NAME, title=TITLE, events=EVENTS, fast=FAST, claude_events=CLAUDE_EVENTS,
    scopes=SCOPES, command_keys=("bash", "command"))
