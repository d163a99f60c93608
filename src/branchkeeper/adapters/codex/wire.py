"""OpenAI Codex CLI's hook wire format (docs/hosts.md, Codex): its event JSON mapped onto the
host-neutral :class:`~branchkeeper.adapters.hooks.event.HookEvent`, and each answer in the only
shapes Codex accepts.

Input (developers.openai.com/codex/hooks): ``session_id`` (sub-agents share the parent's),
``transcript_path``, ``cwd``, ``hook_event_name``, ``model``, ``permission_mode``; turn-scoped
events add ``turn_id``; inside a sub-agent ``agent_id``/``agent_type``. PreToolUse and
PostToolUse: ``tool_name`` (``Bash``, ``apply_patch``, MCP names) and ``tool_input``, where
``Bash`` and ``apply_patch`` put the command, or the raw patch body, in ``tool_input.command``;
PostToolUse adds ``tool_response`` and also runs after a Bash command that exited non-zero.

Output: Codex rejects a JSON object with any field it does not accept for the event (the hook
run is then marked failed and the tool call proceeds), treats ``permissionDecision: "ask"`` and
``"allow"`` without ``updatedInput`` as failures, and needs a non-empty deny reason. So a deny
is exactly ``hookSpecificOutput`` with ``hookEventName``, ``permissionDecision: "deny"`` and
``permissionDecisionReason``; an ask is rendered as that deny; a warning is
``hookSpecificOutput.additionalContext``; a Stop block is ``{"decision": "block", "reason"}``,
a Stop notice ``{"systemMessage"}`` (Stop has no ``hookSpecificOutput``); silence is no output.
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import HookResponse, dump
from branchkeeper.adapters.hooks.event import FileWrite, HookEvent, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
_CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "SessionStart"})
#: What Codex cannot ask: the deny that stands for a question.
ASK_NOTE = ("Codex cannot put this to the person at the keyboard, so branchkeeper refuses it: "
            "ask a human to run it.")


def patch_writes(patch: str, cwd: str) -> tuple[FileWrite, ...]:
    """The files an ``apply_patch`` body writes, from its ``*** Add File:``, ``*** Update
    File:``, ``*** Delete File:`` and ``*** Move to:`` headers (paths relative to ``cwd``, as
    the tool requires). An added file's ``+`` lines are its whole new content; a deleted file
    is :data:`~E.DELETE`, a move's old path :data:`~E.MOVED` and its new one :data:`~E.REPLACE`
    (a file already there is overwritten)."""
    out: list[FileWrite] = []
    adding: list[str] | None = None
    for line in patch.split("\n"):
        if line.startswith("*** "):
            if adding is not None:
                out[-1] = FileWrite(out[-1].path, E.WRITE, "".join(adding))
                adding = None
            header, _, path = line[4:].partition(": ")
            path = path.strip()
            if not path:
                continue
            target = E.absolute(path, cwd)
            if header == "Add File":
                out.append(FileWrite(target, E.WRITE))
                adding = []
            elif header == "Update File":
                out.append(FileWrite(target, E.EDIT))
            elif header == "Delete File":
                out.append(FileWrite(target, E.DELETE))
            elif header == "Move to" and out and target != out[-1].path:
                moved = out.pop()
                out += [FileWrite(moved.path, E.MOVED), FileWrite(target, E.REPLACE)]
        elif adding is not None and line.startswith("+"):
            adding.append(line[1:] + "\n")
    if adding is not None:
        out[-1] = FileWrite(out[-1].path, E.WRITE, "".join(adding))
    return tuple(out)


def _tool(event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any]:
    if event not in _TOOL_EVENTS:
        return {}
    name = E.text(payload, "tool_name", required=True)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise InputError("field 'tool_input' must be a JSON object")
    command = E.shell_command(tool_input.get("command"))
    if name == "Bash":
        return {"tool_name": name, "tool": E.SHELL, "command": command}
    if name == "apply_patch":
        return {"tool_name": name, "tool": E.FILE_WRITE, "writes": patch_writes(command, cwd)}
    return {"tool_name": name, "tool": E.OTHER}


def parse(event: str, kind: str, payload: dict[str, Any]) -> HookEvent:
    """Map Codex's ``event`` with its decoded ``payload``; raises :class:`InputError` for a
    field of the wrong type or a missing one the event needs (``session_id`` except on
    PreToolUse, an absolute ``cwd``, ``tool_name``/``tool_input`` on tool events)."""
    cwd = E.cwd_of(payload)
    ok: bool | None = None
    if event == "PostToolUse":  # also runs after a failed Bash command: read its response
        ok = E.succeeded(payload.get("tool_response"))
    return HookEvent(
        host="codex", kind=kind, wire_event=event,
        session_id=E.session_of(payload, "session_id", kind=kind), cwd=cwd,
        agent_id=E.text(payload, "agent_id"), agent_type=E.text(payload, "agent_type"),
        turn_id=E.text(payload, "turn_id"), hook_event_name=E.text(payload, "hook_event_name"),
        transcript_path=E.text(payload, "transcript_path"), succeeded=ok,
        source=E.text(payload, "source"), stop_hook_active=E.flag(payload, "stop_hook_active"),
        raw=payload, **_tool(event, payload, cwd))


def _specific(event: str, **fields: str) -> HookResponse:
    return HookResponse(stdout=dump({"hookSpecificOutput": {"hookEventName": event, **fields}}))


def render(event: HookEvent, answer: A.Answer) -> HookResponse:
    """Codex's wire output of ``answer`` (see the module docstring)."""
    kind, wire = answer.kind, event.wire_event
    if kind == A.QUIET:
        return HookResponse()
    if wire == "PreToolUse" and kind in (A.DENY, A.ASK):
        reason = answer.full_text or "branchkeeper refused this command."
        if kind == A.ASK:
            reason = f"{reason}\n\n{ASK_NOTE}"
        response = _specific("PreToolUse", permissionDecision="deny",
                             permissionDecisionReason=reason)
        response.blocking = reason
        return response
    if wire in ("Stop", "SubagentStop"):
        if kind == A.BLOCK and answer.text:
            return HookResponse(stdout=dump({"decision": "block", "reason": answer.text}),
                                blocking=answer.text)
        text = answer.full_text
        return HookResponse(stdout=dump({"systemMessage": text})) if text else HookResponse()
    if wire in _CONTEXT_EVENTS and answer.full_text:
        return _specific(wire, additionalContext=answer.full_text)
    return HookResponse()


def fail_open(event: str, message: str) -> HookResponse:
    """Malformed input or an internal error: exit 0 and no output (Codex: success, the call
    proceeds), one line on stderr."""
    return HookResponse(stderr=f"branchkeeper hook codex {event}: ignored: {message}")
