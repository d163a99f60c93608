"""Cursor's hook wire format (docs/hosts.md, Cursor): its event JSON mapped onto the
host-neutral :class:`~branchkeeper.adapters.hooks.event.HookEvent`, and each answer in Cursor's
shape.

Input (cursor.com/docs/hooks): every event carries ``conversation_id`` (our session),
``generation_id``, ``model``, ``hook_event_name``, ``cursor_version``, ``workspace_roots``,
``user_email``, ``transcript_path``; ``cwd`` only on some events, so the first workspace root
stands in. ``beforeShellExecution``: ``command``, ``cwd``, ``sandbox``. ``preToolUse`` /
``postToolUse`` / ``postToolUseFailure``: ``tool_name`` (``Shell``, ``Write``, ``Task``...),
``tool_input`` (Shell: ``command``), ``tool_output`` (a JSON string) or ``error_message``.
``afterFileEdit``: ``file_path``, ``edits``. ``stop``: ``status``, ``loop_count``.
``subagentStart``: ``subagent_id``, ``subagent_type``, ``parent_conversation_id``,
``git_branch``. ``sessionEnd``: ``reason``. Cursor also runs Claude Code's hook entries,
mapping the event names (``PreToolUse`` -> ``preToolUse``...) and tool names (``Bash`` ->
``Shell``); both spellings are read here.

Output: ``{"permission": "deny", "user_message": ..., "agent_message": ...}`` refuses
(``ask`` only on ``beforeShellExecution``, where Cursor enforces it); ``{"followup_message"}``
keeps a stop going; ``{"additional_context"}`` adds context on ``sessionStart`` and
``postToolUse``. Silence is ``{}``: never ``"permission": "allow"``, which answers Cursor's own
approval for it.
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import HookResponse, dump
from branchkeeper.adapters.hooks.event import FileWrite, HookEvent, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TOOL_EVENTS = frozenset({"preToolUse", "postToolUse", "postToolUseFailure"})
_SHELL_TOOLS = frozenset({"Shell", "Bash"})
SILENT = "{}"
#: The deny that stands for a question where Cursor does not enforce ``ask``.
ASK_NOTE = ("Cursor does not put this tool call to the person here, so branchkeeper refuses "
            "it: ask a human to run it.")


def _cwd(payload: dict[str, Any]) -> str:
    if payload.get("cwd"):  # absent, null or "": the first workspace root stands in
        return E.cwd_of(payload)
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and \
            roots[0].startswith("/"):
        return roots[0]
    return E.cwd_of(payload)  # raises: no cwd at all


def _file_write(tool_input: dict[str, Any], cwd: str, action: str) -> tuple[FileWrite, ...]:
    # Cursor does not document the Write tool's input; these are the keys seen in its events.
    for key in ("file_path", "path", "target_file"):
        path = tool_input.get(key)
        if isinstance(path, str) and path and "\0" not in path:
            content = tool_input.get("content")
            if action == E.WRITE and isinstance(content, str):
                return (FileWrite(E.absolute(path, cwd), E.WRITE, content),)
            return (FileWrite(E.absolute(path, cwd), E.EDIT),)
    return ()


def _required_command(payload: dict[str, Any]) -> str:
    """``beforeShellExecution``'s top-level ``command``: required; a string (without a NUL
    byte) or an argv list (:func:`E.shell_command`)."""
    value = payload.get("command")
    if value is None:
        raise InputError("missing field 'command'")
    return E.text(payload, "command") if isinstance(value, str) else \
        E.shell_command(value, "command")


def _tool(event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any]:
    if event == "beforeShellExecution":
        return {"tool_name": "Shell", "tool": E.SHELL,
                "command": _required_command(payload)}
    if event == "afterFileEdit":
        path = E.text(payload, "file_path", required=True)
        return {"tool_name": "Write", "tool": E.FILE_WRITE,
                "writes": (FileWrite(E.absolute(path, cwd), E.EDIT),)}
    if event not in _TOOL_EVENTS:
        return {}
    name = E.text(payload, "tool_name", required=True)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise InputError("field 'tool_input' must be a JSON object")
    if name in _SHELL_TOOLS:
        command = tool_input.get("command")
        where = tool_input.get("working_directory")
        out = {"tool_name": name, "tool": E.SHELL,
               "command": E.shell_command(command)}
        if isinstance(where, str) and where.startswith("/"):
            out["cwd"] = where
        return out
    if name in ("Write", "Edit"):
        return {"tool_name": name, "tool": E.FILE_WRITE,
                "writes": _file_write(tool_input, cwd, E.WRITE if name == "Write" else E.EDIT)}
    if name == "Task":
        return {"tool_name": name, "tool": E.AGENT_SPAWN}
    return {"tool_name": name, "tool": E.OTHER}


def parse(event: str, kind: str, payload: dict[str, Any]) -> HookEvent:
    """Map Cursor's ``event`` with its decoded ``payload``; raises :class:`InputError` for a
    field of the wrong type or a missing one the event needs (a conversation id except on the
    checks before a tool, a working directory, the tool's fields)."""
    cwd = _cwd(payload)
    fields = _tool(event, payload, cwd)
    cwd = fields.pop("cwd", cwd)
    session_key = "conversation_id" if payload.get("conversation_id") is not None \
        else "session_id"
    if event == "subagentStart" and payload.get("parent_conversation_id") is not None:
        session_key = "parent_conversation_id"
    ok: bool | None = None
    if event == "postToolUse":
        ok = E.succeeded(payload.get("tool_output", payload.get("tool_response")))
    elif event == "postToolUseFailure":
        ok = False
    elif event == "afterFileEdit":
        ok = True
    loops = payload.get("loop_count")
    branch = E.text(payload, "git_branch") if event == "subagentStart" else ""
    if event == "subagentStart":
        fields = {"tool": E.AGENT_SPAWN, "tool_name": E.text(payload, "subagent_type")}
    return HookEvent(
        host="cursor", kind=kind, wire_event=event,
        session_id=E.session_of(payload, session_key, kind=kind), cwd=cwd,
        agent_id=E.text(payload, "subagent_id"),
        agent_type=E.text(payload, "subagent_type"),
        hook_event_name=E.text(payload, "hook_event_name"),
        transcript_path=E.text(payload, "transcript_path"), succeeded=ok,
        source="startup" if event == "sessionStart" else "", reason=E.text(payload, "reason"),
        stop_hook_active=isinstance(loops, int) and not isinstance(loops, bool) and loops > 0,
        branch=branch, raw=payload, **fields)


def _deny(answer: A.Answer, *, ask: bool) -> HookResponse:
    text = answer.full_text or "branchkeeper refused this command."
    if answer.kind == A.ASK and not ask:
        text = f"{text}\n\n{ASK_NOTE}"
    permission = "ask" if answer.kind == A.ASK and ask else "deny"
    return HookResponse(stdout=dump({"permission": permission, "user_message": text,
                                     "agent_message": text}),
                        blocking=text if permission == "deny" else "")


def render(event: HookEvent, answer: A.Answer) -> HookResponse:
    """Cursor's wire output of ``answer`` (see the module docstring)."""
    kind, wire = answer.kind, event.wire_event
    if kind in (A.DENY, A.ASK) and wire in ("beforeShellExecution", "preToolUse",
                                            "subagentStart"):
        if wire == "subagentStart":  # "ask" is treated as "deny" there
            text = answer.full_text or "branchkeeper refused this sub-agent."
            return HookResponse(stdout=dump({"permission": "deny", "user_message": text}),
                                blocking=text)
        return _deny(answer, ask=wire == "beforeShellExecution")
    if wire in ("stop", "subagentStop") and kind == A.BLOCK and answer.text:
        return HookResponse(stdout=dump({"followup_message": answer.text}),
                            blocking=answer.text)
    if wire in ("sessionStart", "postToolUse") and kind == A.CONTEXT and answer.full_text:
        return HookResponse(stdout=dump({"additional_context": answer.full_text}))
    return HookResponse(stdout=SILENT)


def fail_open(event: str, message: str) -> HookResponse:
    """Malformed input or an internal error: ``{}`` (no decision) and exit 0, one line on
    stderr."""
    return HookResponse(stdout=SILENT, stderr=f"branchkeeper hook cursor {event}: ignored: "
                                              f"{message}")
