"""Gemini CLI as a :class:`~branchkeeper.adapters.hooks.host.Host` (issue 14).

Events registered: SessionStart, BeforeTool (``run_shell_command``: the command guard),
AfterTool (``run_shell_command``, ``write_file``, ``replace``: records), BeforeAgent (turns),
AfterAgent (the Stop guard: Gemini's end of a turn) and SessionEnd. Gemini has no sub-agents.
"""

from branchkeeper.adapters.hooks.host import Delegate

TYPE_CHECKING = False
if TYPE_CHECKING:

    from branchkeeper.adapters.hooks.host import FastSpec

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

#: The host, as :data:`~branchkeeper.adapters.hosts.HOSTS` loads it.
HOST = Delegate(
    NAME, title=TITLE, events=EVENTS, fast=FAST, claude_events=CLAUDE_EVENTS,
    scopes=SCOPES)
