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

from branchkeeper.adapters.hooks.host import Delegate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from branchkeeper.adapters.hooks.host import FastSpec

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


class _Claude(Delegate):
    """Claude Code's own rule for who ran an entry; the rest is :class:`Delegate`'s."""

    def caller(self, payload: "dict[str, Any]", env: "Mapping[str, str]") -> str:
        """``claude``, or ``cursor``/``copilot`` when that host ran a Claude Code entry."""
        if env.get("CLAUDE_CODE_CHILD_SESSION") == "1":
            return NAME
        if ("cursor_version" in payload or "conversation_id" in payload
                or env.get("CURSOR_VERSION")):
            return "cursor"
        if "sessionId" in payload or "toolName" in payload or "timestamp" in payload:
            return "copilot"
        return NAME


#: The host, as :data:`~branchkeeper.adapters.hosts.HOSTS` loads it.
HOST = _Claude(
    NAME, title=TITLE, events=EVENTS, fast=FAST, claude_events=CLAUDE_EVENTS,
    scopes=SCOPES)
