"""Cursor as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered: sessionStart, beforeShellExecution (the command guard), preToolUse on
``Write`` (the tamper rule on file writes), postToolUse and
postToolUseFailure on ``Shell`` (records), afterFileEdit (touches), beforeSubmitPrompt (turns),
stop (the Stop guard), subagentStart (a named new branch for a sub-agent) and sessionEnd. Not
subagentStop: its input does not say which sub-agent stopped, so its parent's stop judges.
``CLAUDE_EVENTS`` is Cursor's own mapping of the Claude Code entries it also runs.
"""

from branchkeeper.adapters.hooks.host import Delegate

TYPE_CHECKING = False
if TYPE_CHECKING:

    from branchkeeper.adapters.hooks.host import FastSpec

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

#: The host, as :data:`~branchkeeper.adapters.hosts.HOSTS` loads it.
HOST = Delegate(
    NAME, title=TITLE, events=EVENTS, fast=FAST, claude_events=CLAUDE_EVENTS,
    scopes=SCOPES)
