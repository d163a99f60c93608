"""OpenAI Codex CLI as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered, of those the release documentation lists: SessionStart, PreToolUse,
PostToolUse, UserPromptSubmit, Stop, SubagentStop (SubagentStart names no worktree or branch,
and a sub-agent's own tool calls carry its ``agent_id``, which binds it at its first touch).
SessionEnd and StopFailure exist in newer sources but not in the documented release: an event
key a Codex release does not know could make it skip the whole ``hooks.json``, so they are not
written.
"""

from branchkeeper.adapters.hooks.host import Delegate

TYPE_CHECKING = False
if TYPE_CHECKING:

    from branchkeeper.adapters.hooks.host import FastSpec

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

#: The host, as :data:`~branchkeeper.adapters.hosts.HOSTS` loads it.
HOST = Delegate(
    NAME, title=TITLE, events=EVENTS, fast=FAST, claude_events=CLAUDE_EVENTS,
    scopes=SCOPES)
