"""Gemini CLI's hook wire format (docs/hosts.md, Gemini CLI): its event JSON mapped onto the
host-neutral :class:`~branchkeeper.adapters.hooks.event.HookEvent`, and each answer in Gemini's
shape.

Input (google-gemini/gemini-cli ``docs/hooks/reference.md``, ``packages/core/src/hooks/types.ts``):
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``. BeforeTool /
AfterTool: ``tool_name`` (``run_shell_command`` with ``command`` and an optional ``dir_path``
it runs in; ``write_file`` with ``file_path`` and ``content``; ``replace`` with ``file_path``),
``tool_input``; AfterTool adds ``tool_response`` (``llmContent``, ``returnDisplay``, ``error``).
AfterAgent (the end of a turn, Gemini's Stop): ``prompt``, ``prompt_response``,
``stop_hook_active``. SessionStart: ``source``; SessionEnd: ``reason``. Gemini has no
sub-agent events.

Output: ``{"decision": "deny", "reason": ...}`` refuses a tool (and, on AfterAgent, sends the
agent back to work with the reason as its next prompt); ``hookSpecificOutput.additionalContext``
adds context on SessionStart and AfterTool; ``systemMessage`` is shown to the person. Silence
is ``{}`` with nothing on stderr (Gemini reads stderr when stdout is empty).
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import HookResponse, dump
from branchkeeper.adapters.hooks.event import FileWrite, HookEvent, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SILENT = "{}"
#: The deny that stands for a question (Gemini's reference documents no "ask").
ASK_NOTE = ("Gemini CLI has no documented way to put this to the person at the keyboard, so "
            "branchkeeper refuses it: ask a human to run it.")


def _tool(event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any]:
    if event not in ("BeforeTool", "AfterTool"):
        return {}
    name = E.text(payload, "tool_name", required=True)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise InputError("field 'tool_input' must be a JSON object")
    if name == "run_shell_command":
        command = tool_input.get("command")
        out: dict[str, Any] = {"tool_name": name, "tool": E.SHELL,
                               "command": E.shell_command(command)}
        where = tool_input.get("dir_path")
        if isinstance(where, str) and where and "\0" not in where:
            out["cwd"] = E.absolute(where, cwd)
        return out
    if name in ("write_file", "replace"):
        path = tool_input.get("file_path")
        writes: tuple[FileWrite, ...] = ()
        if isinstance(path, str) and path and "\0" not in path:
            content = tool_input.get("content")
            writes = (FileWrite(E.absolute(path, cwd), E.WRITE, content)
                      if name == "write_file" and isinstance(content, str)
                      else FileWrite(E.absolute(path, cwd), E.EDIT),)
        return {"tool_name": name, "tool": E.FILE_WRITE, "writes": writes}
    return {"tool_name": name, "tool": E.OTHER}


def _succeeded(response: Any) -> bool | None:
    if isinstance(response, dict) and response.get("error"):
        return False
    return E.succeeded(response)


def parse(event: str, kind: str, payload: dict[str, Any]) -> HookEvent:
    """Map Gemini's ``event`` with its decoded ``payload``; raises :class:`InputError` for a
    field of the wrong type or a missing one the event needs."""
    cwd = E.cwd_of(payload)
    fields = _tool(event, payload, cwd)
    return HookEvent(
        host="gemini", kind=kind, wire_event=event,
        session_id=E.session_of(payload, "session_id", kind=kind), cwd=fields.pop("cwd", cwd),
        hook_event_name=E.text(payload, "hook_event_name"),
        transcript_path=E.text(payload, "transcript_path"),
        succeeded=_succeeded(payload.get("tool_response")) if event == "AfterTool" else None,
        source=E.text(payload, "source"), reason=E.text(payload, "reason"),
        stop_hook_active=E.flag(payload, "stop_hook_active"), raw=payload, **fields)


def render(event: HookEvent, answer: A.Answer) -> HookResponse:
    """Gemini's wire output of ``answer`` (see the module docstring)."""
    kind, wire = answer.kind, event.wire_event
    text = answer.full_text
    if wire == "BeforeTool" and kind in (A.DENY, A.ASK):
        reason = text or "branchkeeper refused this command."
        if kind == A.ASK:
            reason = f"{reason}\n\n{ASK_NOTE}"
        return HookResponse(stdout=dump({"decision": "deny", "reason": reason}), blocking=reason)
    if wire == "AfterAgent" and kind == A.BLOCK and answer.text:
        return HookResponse(stdout=dump({"decision": "deny", "reason": answer.text}),
                            blocking=answer.text)
    if wire in ("SessionStart", "AfterTool") and kind == A.CONTEXT and text:
        return HookResponse(stdout=dump({"hookSpecificOutput": {
            "hookEventName": wire, "additionalContext": text}}))
    if kind in (A.CONTEXT, A.NOTICE) and text:
        return HookResponse(stdout=dump({"systemMessage": text}))
    return HookResponse(stdout=SILENT)


def fail_open(event: str, message: str) -> HookResponse:
    """Malformed input or an internal error: ``{}`` (Gemini then ignores stderr), exit 0, one
    line on stderr for the log."""
    return HookResponse(stdout=SILENT, stderr=f"branchkeeper hook gemini {event}: ignored: "
                                              f"{message}")
