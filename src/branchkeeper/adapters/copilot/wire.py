"""GitHub Copilot CLI's hook wire format (docs/hosts.md, GitHub Copilot): its event JSON, in
both of its dialects, mapped onto the host-neutral
:class:`~branchkeeper.adapters.hooks.event.HookEvent`, and each answer in Copilot's shape.

Input (github/docs ``content/copilot/reference/hooks-reference.md``): an event configured in
camelCase (``preToolUse``, as branchkeeper installs them) sends camelCase fields: ``sessionId``,
``timestamp`` (ms), ``cwd``, ``toolName`` (``bash``, ``create``, ``edit``, ``task``...),
``toolArgs`` (an object, or in older releases a JSON string), ``toolResult``, ``error``,
``stopReason``, ``source``, ``reason``, ``recoverable``. An event configured in PascalCase (as
in ``.claude/settings.json``, which Copilot also reads) sends the snake_case dialect:
``session_id``, ``tool_name``, ``tool_input``, ``tool_result``, ``stop_reason``... Copilot names
no sub-agent in its stop events.

Output: ``{"permissionDecision": "deny"|"ask", "permissionDecisionReason": ...}`` on
preToolUse, **with exit 0**: Copilot treats exit 2 as a warning and runs the tool.
``{"decision": "block", "reason"}`` keeps an agentStop going; ``{"additionalContext"}`` adds
context at sessionStart. Silence is no output.
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import HookResponse, dump
from branchkeeper.adapters.hooks.event import FileWrite, HookEvent, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TOOL_EVENTS = frozenset({"preToolUse", "postToolUse", "postToolUseFailure", "PreToolUse",
                          "PostToolUse", "PostToolUseFailure"})
_PRE = frozenset({"preToolUse", "PreToolUse"})
_STOPS = frozenset({"agentStop", "Stop", "subagentStop", "SubagentStop"})


def _snake(event: str) -> bool:
    return event[:1].isupper()


def _args(value: Any) -> dict[str, Any]:
    """``toolArgs``: an object, or a JSON string holding one (older releases)."""
    if isinstance(value, str):
        value = E.decode(value.encode("utf-8", "surrogatepass")) if value.strip() else {}
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("field 'toolArgs' must be a JSON object or a string holding one")
    return value


def _first(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value and "\0" not in value:
            return value
    return None


def _tool(event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any]:
    if event not in _TOOL_EVENTS:
        return {}
    snake = _snake(event)
    name = E.text(payload, "tool_name" if snake else "toolName", required=True)
    args = _args(payload.get("tool_input" if snake else "toolArgs"))
    if name == "bash":
        command = args.get("command")
        return {"tool_name": name, "tool": E.SHELL,
                "command": E.shell_command(command)}
    if name in ("create", "edit"):
        # The reference names no argument keys for these tools; `path` is its own example's.
        path = _first(args, "path", "file_path", "filePath")
        content = _first(args, "file_text", "content", "fileText") if name == "create" else None
        writes = () if path is None else (
            (FileWrite(E.absolute(path, cwd), E.WRITE, content),) if content is not None
            else (FileWrite(E.absolute(path, cwd), E.EDIT),))
        return {"tool_name": name, "tool": E.FILE_WRITE, "writes": writes}
    if name == "task":
        return {"tool_name": name, "tool": E.AGENT_SPAWN}
    return {"tool_name": name, "tool": E.OTHER}


def _ok(event: str, payload: dict[str, Any]) -> bool | None:
    if event in ("postToolUseFailure", "PostToolUseFailure"):
        return False
    if event not in ("postToolUse", "PostToolUse"):
        return None
    result = payload.get("tool_result" if _snake(event) else "toolResult")
    if isinstance(result, dict):
        kind = result.get("result_type", result.get("resultType"))
        if isinstance(kind, str) and kind != "success":
            return False
    return True


def parse(event: str, kind: str, payload: dict[str, Any]) -> HookEvent:
    """Map Copilot's ``event`` (either dialect, told apart by the event name's case) with its
    decoded ``payload``; raises :class:`InputError` for a field of the wrong type or a missing
    one the event needs."""
    snake = _snake(event)
    key = (lambda k: k) if snake else _camel
    if event in ("errorOccurred", "ErrorOccurred") and payload.get("recoverable") is not False:
        kind = E.IGNORED  # the agent goes on: nothing was abandoned
    cwd = E.cwd_of(payload)
    fields = _tool(event, payload, cwd)
    error = payload.get("error")
    error_text = error.get("name") or error.get("message") if isinstance(error, dict) else error
    source = E.text(payload, "source")
    return HookEvent(
        host="copilot", kind=kind, wire_event=event,
        session_id=E.session_of(payload, key("session_id"), kind=kind), cwd=cwd,
        hook_event_name=E.text(payload, "hook_event_name"),
        transcript_path=E.text(payload, key("transcript_path")), succeeded=_ok(event, payload),
        source="startup" if source == "new" else source, reason=E.text(payload, "reason"),
        error=error_text if isinstance(error_text, str) else "", raw=payload, **fields)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def render(event: HookEvent, answer: A.Answer) -> HookResponse:
    """Copilot's wire output of ``answer`` (see the module docstring)."""
    kind, wire = answer.kind, event.wire_event
    text = answer.full_text
    if wire in _PRE and kind in (A.DENY, A.ASK):
        reason = text or "branchkeeper refused this command."
        return HookResponse(stdout=dump({"permissionDecision": kind,
                                         "permissionDecisionReason": reason}),
                            blocking=reason if kind == A.DENY else "")
    if wire in _STOPS and kind == A.BLOCK and answer.text:
        return HookResponse(stdout=dump({"decision": "block", "reason": answer.text}),
                            blocking=answer.text)
    if wire in ("sessionStart", "SessionStart") and kind == A.CONTEXT and text:
        return HookResponse(stdout=dump({"additionalContext": text}))
    return HookResponse()


def fail_open(event: str, message: str) -> HookResponse:
    """Malformed input or an internal error: exit 0, no output (Copilot's default behaviour),
    one line on stderr."""
    return HookResponse(stderr=f"branchkeeper hook copilot {event}: ignored: {message}")
