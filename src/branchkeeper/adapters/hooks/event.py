"""The host-neutral hook event (issue 14, point 1): what every host adapter maps its wire input
to, so the guards, records and summaries never see a host format.

A :class:`HookEvent` names its *kind* (one of :data:`KINDS`, e.g. :data:`PRE_TOOL`), the
session, the agent (``""`` on the main thread), the turn where the host has one, the working
directory, and for tool events the tool's *kind* (:data:`SHELL`, :data:`FILE_WRITE`,
:data:`AGENT_SPAWN`, :data:`OTHER`), the shell command and the paths written (each a
:class:`FileWrite`, with the whole new content for a whole-file write, so a rule below the
adapters can judge a write without reading a host's tool schema).

This module is on the hook path: it imports nothing at module level (``json`` and ``pathlib``
are imported where used), and its records are slotted classes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# -- event kinds ---------------------------------------------------------------------------------
PRE_TOOL = "pre_tool"
POST_TOOL = "post_tool"
POST_TOOL_FAILURE = "post_tool_failure"
PROMPT = "prompt"
SESSION_START = "session_start"
SESSION_END = "session_end"
STOP = "stop"
SUBAGENT_START = "subagent_start"
SUBAGENT_STOP = "subagent_stop"
STOP_FAILURE = "stop_failure"
WORKTREE_CREATE = "worktree_create"
WORKTREE_REMOVE = "worktree_remove"
#: An event this instance of which branchkeeper has nothing to do with (a recoverable error).
IGNORED = "ignored"
#: Every event kind a host event can map to.
KINDS = (PRE_TOOL, POST_TOOL, POST_TOOL_FAILURE, PROMPT, SESSION_START, SESSION_END, STOP,
         SUBAGENT_START, SUBAGENT_STOP, STOP_FAILURE, WORKTREE_CREATE, WORKTREE_REMOVE, IGNORED)

# -- tool kinds ----------------------------------------------------------------------------------
SHELL = "shell"
FILE_WRITE = "file_write"
AGENT_SPAWN = "agent_spawn"
OTHER = "other"

# -- what a file write does to its path ----------------------------------------------------------
#: The whole new content is known (``FileWrite.content``): Write, ``*** Add File``, write_file.
WRITE = "write"
#: Changed in part (an edit, a patch hunk); the new content is not in the event.
EDIT = "edit"
#: Removed, its content gone (``*** Delete File``): judged like ``rm`` of the path.
DELETE = "delete"
#: The old path of ``*** Move to``: its content lives on at the new path.
MOVED = "moved"
#: The new path of ``*** Move to``: whatever a file there held is replaced (judged like
#: ``rm`` of it).
REPLACE = "replace"

#: Largest stdin accepted, in bytes; a larger payload is malformed input (fail open).
MAX_INPUT_BYTES = 4 * 1024 * 1024


class InputError(ValueError):
    """The event JSON is malformed, has a wrong type, or lacks a field the event needs."""


class FileWrite:
    """One path a tool writes: ``path`` (absolute, resolved against the event's cwd when the
    host gave it relative), ``action`` (:data:`WRITE`, :data:`EDIT`, :data:`DELETE`, :data:`MOVED` or
    :data:`REPLACE`) and, for
    :data:`WRITE`, ``content``: the whole new text (None when the host did not give it)."""

    __slots__ = ("action", "content", "path")

    def __init__(self, path: str, action: str, content: str | None = None) -> None:
        self.path = path
        self.action = action
        self.content = content

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileWrite):
            return NotImplemented
        return (self.path, self.action, self.content) == (other.path, other.action,
                                                          other.content)

    def __hash__(self) -> int:
        return hash((self.path, self.action, self.content))

    def __repr__(self) -> str:
        return f"FileWrite({self.path!r}, {self.action!r}, {self.content!r})"


class HookEvent:
    """One hook event in host-neutral terms (read-only by convention; a slotted class, because
    the dataclasses module costs ~9 ms of import time on the hook path).

    - ``host``: the adapter that parsed it (``claude``, ``codex``, ...); ``kind``: one of
      :data:`KINDS`; ``wire_event``: the host's own event name (for logs);
    - ``session_id``; ``agent_id`` (``""`` on the main thread); ``agent_type``; ``turn_id``
      (``""`` where the host has none); ``cwd_text`` (absolute);
    - tool events: ``tool`` (:data:`SHELL`, :data:`FILE_WRITE`, :data:`AGENT_SPAWN`,
      :data:`OTHER`), ``tool_name`` (the host's name, for logs), ``command`` (shell),
      ``writes`` (:class:`FileWrite` tuple), ``isolation`` (an agent spawn into a new worktree),
      ``branch`` (a branch the spawn will work on, where the host names it);
    - ``succeeded``: after a tool, True, False or None (the host did not say);
    - ``source`` (session start: ``startup``, ``resume``, ``clear``, ``compact``, ...),
      ``reason`` (session end), ``error`` (stop failure), ``stop_hook_active``;
    - ``worktree_name`` (worktree create), ``worktree_path`` (worktree remove);
    - ``raw``: the decoded payload, for the log only (nothing below the adapters reads it).
    """

    __slots__ = ("agent_id", "agent_type", "branch", "command", "cwd_text", "error",
                 "hook_event_name", "host", "isolation", "kind", "raw", "reason", "session_id",
                 "source", "stop_hook_active", "succeeded", "tool", "tool_name",
                 "transcript_path", "turn_id", "wire_event", "worktree_name", "worktree_path",
                 "writes")

    def __init__(self, *, host: str, kind: str, wire_event: str, session_id: str, cwd: str,
                 agent_id: str = "", agent_type: str = "", turn_id: str = "",
                 hook_event_name: str = "", transcript_path: str = "", tool: str = "",
                 tool_name: str = "", command: str = "", writes: tuple[FileWrite, ...] = (),
                 isolation: bool = False, branch: str = "", succeeded: bool | None = None,
                 source: str = "", reason: str = "", error: str = "",
                 stop_hook_active: bool = False, worktree_name: str = "",
                 worktree_path: str = "", raw: dict[str, Any] | None = None) -> None:
        self.host = host
        self.kind = kind
        self.wire_event = wire_event
        self.session_id = session_id
        self.cwd_text = cwd
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.turn_id = turn_id
        self.hook_event_name = hook_event_name
        self.transcript_path = transcript_path
        self.tool = tool
        self.tool_name = tool_name
        self.command = command
        self.writes = writes
        self.isolation = isolation
        self.branch = branch
        self.succeeded = succeeded
        self.source = source
        self.reason = reason
        self.error = error
        self.stop_hook_active = stop_hook_active
        self.worktree_name = worktree_name
        self.worktree_path = worktree_path
        self.raw: dict[str, Any] = raw if raw is not None else {}

    @property
    def cwd(self) -> Path:
        """The working directory (absolute; it follows the agent into worktrees)."""
        from pathlib import Path

        return Path(self.cwd_text)

    @property
    def thread(self) -> str:
        """``<session_id>:<agent_id>`` (agent empty for the main thread): the record value."""
        return f"{self.session_id}:{self.agent_id}"

    def __repr__(self) -> str:
        return (f"HookEvent({self.host}:{self.wire_event} -> {self.kind}, "
                f"session={self.session_id!r}, agent={self.agent_id!r}, tool={self.tool!r}, "
                f"command={self.command!r}, writes={self.writes!r})")


# -- helpers every parser uses -------------------------------------------------------------------
def decode(data: bytes) -> dict[str, Any]:
    """The stdin bytes as a JSON object (UTF-8, invalid sequences replaced).

    Raises :class:`InputError` for input over :data:`MAX_INPUT_BYTES`, invalid JSON, absurd
    nesting, or a payload that is not an object.
    """
    import json

    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"input larger than {MAX_INPUT_BYTES} bytes")
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:  # JSONDecodeError; RecursionError is not a ValueError
        raise InputError(f"input is not valid JSON ({exc})") from None
    except RecursionError:
        raise InputError("input JSON is nested too deeply") from None
    if not isinstance(payload, dict):
        raise InputError(f"input must be a JSON object, not {type(payload).__name__}")
    return payload


def decode_prefix(data: bytes) -> dict[str, Any]:
    """The members of the JSON object ``data`` begins with that ``data`` holds in full, for a
    payload over :data:`MAX_INPUT_BYTES` of which only a prefix was read: every member before
    the cut (an object cut inside keeps its own complete members; a string, number or array
    cut inside is left out). Raises :class:`InputError` when ``data`` does not begin with an
    object."""
    import json

    text = data.decode("utf-8", errors="replace")
    start = len(text) - len(text.lstrip())
    if not text.startswith("{", start):
        raise InputError("input must be a JSON object")
    found, _, _ = _members(text, start, json.JSONDecoder(), 0)
    return found


def _members(text: str, i: int, dec: Any, depth: int) -> tuple[dict[str, Any], int, bool]:
    """(the complete members of the object at ``text[i] == "{"``, where it ends, whether it
    ends before the cut)."""
    out: dict[str, Any] = {}
    i += 1
    while True:
        i = _space(text, i)
        if text.startswith("}", i):
            return out, i + 1, True
        if not text.startswith('"', i):
            return out, i, False
        try:
            key, i = dec.raw_decode(text, i)  # a string: the member's name
        except ValueError:
            return out, i, False
        i = _space(text, i)
        if not text.startswith(":", i):
            return out, i, False
        i = _space(text, i + 1)
        if text.startswith("{", i) and depth < 32:
            value, i, whole = _members(text, i, dec, depth + 1)
            out[key] = value
            if not whole:
                return out, i, False
        else:
            try:
                out[key], i = dec.raw_decode(text, i)
            except (ValueError, RecursionError):
                return out, i, False
        i = _space(text, i)
        if text.startswith(",", i):
            i += 1
        elif not text.startswith("}", i):
            return out, i, False


def _space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def text(payload: dict[str, Any], key: str, *, required: bool = False) -> str:
    """``payload[key]`` as a string (``""`` when absent or null). Raises :class:`InputError`
    when it is required and absent, not a string, or holds a NUL byte."""
    value = payload.get(key)
    if value is None:
        if required:
            raise InputError(f"missing field {key!r}")
        return ""
    if not isinstance(value, str):
        raise InputError(f"field {key!r} must be a string, not {type(value).__name__}")
    if "\0" in value:
        raise InputError(f"field {key!r} contains a NUL byte")
    return value


def shell_command(value: object, key: str = "tool_input.command") -> str:
    """A shell tool's command (the field ``key``, named in the error) as one shell line, for
    every host: a string as it is (absent or null: ``""``); an argv list of strings (the form
    Codex's own shell tool runs, e.g. ``["bash", "-lc", "git status"]``, or
    ``["git", "branch", "-D", "x"]``) quoted word by word (``shlex.join``), so the guard reads
    what runs. Raises :class:`InputError` for anything else (never a silent allow of an
    unread command)."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        import shlex

        return shlex.join(value)
    raise InputError(f"field {key!r} must be a string or a list of strings")


def flag(payload: dict[str, Any], key: str) -> bool:
    """``payload[key]`` as a boolean (absent: False). Raises :class:`InputError` otherwise."""
    value = payload.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InputError(f"field {key!r} must be true or false")
    return value


def absolute(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd`` (POSIX paths; ``..`` is kept, not resolved)."""
    if path.startswith("/"):
        return path
    return cwd.rstrip("/") + "/" + path


def cwd_of(payload: dict[str, Any], *keys: str) -> str:
    """The first of ``keys`` (default ``cwd``) present: an absolute path. Raises
    :class:`InputError` when none is present or the value is not absolute."""
    for key in keys or ("cwd",):
        value = text(payload, key)
        if value:
            if not value.startswith("/"):
                raise InputError(f"field {key!r} must be an absolute path, not {value[:200]!r}")
            return value
    raise InputError(f"missing field {(keys or ('cwd',))[0]!r}")


def session_of(payload: dict[str, Any], key: str, *, kind: str) -> str:
    """The session id under ``key``. A guard decision needs no session (judging a command
    without one is safer than letting it through unjudged): on :data:`PRE_TOOL` a missing id
    reads as ``no-session``; every recording event needs it (:class:`InputError`)."""
    value = text(payload, key, required=kind != PRE_TOOL)
    if not value:
        if kind != PRE_TOOL:
            raise InputError(f"field {key!r} is empty")
        return "no-session"
    return value


#: Lines of a tool's text output that report its exit status (Claude Code's failure text;
#: Codex's unified exec output), read from the first few lines only.
_EXIT_LINES = ("Exit code ", "Process exited with code ")


def succeeded(response: Any) -> bool | None:
    """Whether a tool response reports success: False for ``interrupted``/``is_error``/
    ``success: false`` or a non-zero ``exit_code``/``exitCode``/``returncode``/``exit_status``
    (also inside a JSON string), or text with an ``Exit code N`` / ``Process exited with code
    N`` line (N non-zero) among its first lines; True for a response that says none of this;
    None for no response at all."""
    if response is None:
        return None
    if isinstance(response, str):
        if response.lstrip().startswith("{"):
            try:
                response = decode(response.encode("utf-8", "surrogatepass"))
            except InputError:
                return True
        else:
            for line in response.split("\n", 8)[:8]:
                line = line.strip()
                for prefix in _EXIT_LINES:
                    if line.startswith(prefix):
                        return line[len(prefix):].strip() == "0"
            return True
    if not isinstance(response, dict):
        return True
    if response.get("interrupted") is True or response.get("is_error") is True or \
            response.get("success") is False:
        return False
    for key in ("exit_code", "exitCode", "returncode", "exit_status"):
        code = response.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return False
    return True
