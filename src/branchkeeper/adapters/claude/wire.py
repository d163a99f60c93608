"""Claude Code's hook wire format: its event JSON mapped onto the host-neutral
:class:`~branchkeeper.adapters.hooks.event.HookEvent`, and each answer in Claude Code's shape.

The shapes are pinned in ``docs/claude-code-hooks.md`` and ``docs/hosts.md`` (with their
sources) and in ``tests/test_hook_wire.py``. On the hook path: only ``json`` is imported, and
only when an answer is built.

Input (every event): ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``; inside a
sub-agent also ``agent_id`` and ``agent_type``. Per event: ``tool_name``/``tool_input``
(PreToolUse, PostToolUse, PostToolUseFailure), ``tool_response`` (PostToolUse), ``prompt``
(UserPromptSubmit), ``source`` (SessionStart), ``reason`` (SessionEnd), ``error``
(StopFailure), ``stop_hook_active`` (Stop, SubagentStop), ``name`` (WorktreeCreate; some builds
spell it ``worktree_name``), ``worktree_path`` (WorktreeRemove).

Output: see the builders below. A response with empty ``stdout`` and exit 0 is "nothing to say".
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.answer import EXIT_BLOCK, HookResponse, dump
from branchkeeper.adapters.hooks.event import FileWrite, HookEvent, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
#: Claude Code's file-writing tools: whole-file writes carry their new content.
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit"})


def _writes(tool: str, tool_input: dict[str, Any], cwd: str) -> tuple[FileWrite, ...]:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    path = tool_input.get(key)
    if not isinstance(path, str) or not path or "\0" in path:
        return ()
    if tool == "Write":
        content = tool_input.get("content")
        return (FileWrite(E.absolute(path, cwd), E.WRITE,
                          content if isinstance(content, str) else None),)
    return (FileWrite(E.absolute(path, cwd), E.EDIT),)


def _tool(event: str, payload: dict[str, Any], cwd: str) -> dict[str, Any]:
    """The tool fields of a tool event (``tool``, ``tool_name``, ``command``, ``writes``,
    ``isolation``)."""
    if event not in _TOOL_EVENTS:
        return {}
    name = E.text(payload, "tool_name", required=True)
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise InputError("field 'tool_input' must be a JSON object")
    out: dict[str, Any] = {"tool_name": name, "tool": E.OTHER}
    if name == "Bash":
        command = tool_input.get("command")
        out.update(tool=E.SHELL, command=E.shell_command(command))
    elif name == "Write" or name in _EDIT_TOOLS:
        out.update(tool=E.FILE_WRITE, writes=_writes(name, tool_input, cwd))
    elif name in ("Agent", "Task"):
        out.update(tool=E.AGENT_SPAWN, isolation=tool_input.get("isolation") == "worktree")
    return out


def parse(event: str, kind: str, payload: dict[str, Any]) -> HookEvent:
    """Map Claude Code's ``event`` (of event ``kind``) with its decoded ``payload`` onto a
    :class:`HookEvent`.

    Raises :class:`InputError` for a field of the wrong type or a missing field the event
    needs (``session_id`` except on PreToolUse, an absolute ``cwd`` always;
    ``tool_name``/``tool_input`` for tool events; ``name`` for WorktreeCreate; an absolute
    ``worktree_path`` for WorktreeRemove).
    """
    session_id = E.session_of(payload, "session_id", kind=kind)
    cwd = E.cwd_of(payload)
    fields = _tool(event, payload, cwd)
    name = E.text(payload, "name") or E.text(payload, "worktree_name")
    if event == "WorktreeCreate" and not name:
        given = [k for k in ("name", "worktree_name") if k in payload]
        raise InputError(f"field {given[0]!r} is empty" if given else "missing field 'name'")
    worktree_path = E.text(payload, "worktree_path", required=event == "WorktreeRemove")
    if event == "WorktreeRemove" and not worktree_path.startswith("/"):
        raise InputError("field 'worktree_path' must be an absolute path")
    ok: bool | None = None
    if event == "PostToolUse":  # fires after success; a response may still say otherwise
        ok = E.succeeded(payload.get("tool_response")) is not False
    elif event == "PostToolUseFailure":
        ok = False
    return HookEvent(
        host="claude", kind=kind, wire_event=event, session_id=session_id, cwd=cwd,
        agent_id=E.text(payload, "agent_id"), agent_type=E.text(payload, "agent_type"),
        hook_event_name=E.text(payload, "hook_event_name"),
        transcript_path=E.text(payload, "transcript_path"), succeeded=ok,
        source=E.text(payload, "source"), reason=E.text(payload, "reason"),
        error=E.text(payload, "error"), stop_hook_active=E.flag(payload, "stop_hook_active"),
        worktree_name=name, worktree_path=worktree_path, raw=payload, **fields)


# -- answers ---------------------------------------------------------------------------------------
def quiet() -> HookResponse:
    """Nothing to say: no stdout, exit 0."""
    return HookResponse()


def pre_tool_use(decision: str | None, reason: str = "", context: str = "") -> HookResponse:
    """PreToolUse answer: ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", ...}}``.

    ``decision`` is ``"deny"`` or ``"ask"`` (with ``permissionDecisionReason``), or ``None`` for
    context only. ``"allow"`` is refused (ValueError): it would skip the user's permission prompt,
    and a guard that has no objection must stay out of the permission flow. ``context`` becomes
    ``additionalContext``. Both empty -> :func:`quiet`.
    """
    if decision not in (None, "deny", "ask"):
        raise ValueError(f"PreToolUse decision must be deny, ask or None, not {decision!r}")
    out: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if decision is not None:
        out["permissionDecision"] = decision
        out["permissionDecisionReason"] = reason
    if context:
        out["additionalContext"] = context
    if len(out) == 1:
        return quiet()
    return HookResponse(stdout=dump({"hookSpecificOutput": out}),
                        blocking=reason if decision == "deny" else "")


#: Events whose answer may carry ``hookSpecificOutput.additionalContext``.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
                  "SubagentStart")


def context(event: str, text: str) -> HookResponse:
    """``additionalContext`` for one of :data:`CONTEXT_EVENTS`; empty -> quiet.

    Shape: ``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``.
    """
    if event not in CONTEXT_EVENTS:
        raise ValueError(f"{event} has no additionalContext output")
    if not text:
        return quiet()
    return HookResponse(
        stdout=dump({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    )


def stop_block(reason: str) -> HookResponse:
    """Stop/SubagentStop refusal: ``{"decision": "block", "reason": REASON}`` (exit 0)."""
    if not reason:
        raise ValueError("a Stop block needs a reason: it is the agent's next instruction")
    return HookResponse(stdout=dump({"decision": "block", "reason": reason}), blocking=reason)


def stop_notice(text: str) -> HookResponse:
    """Stop/SubagentStop without a block: ``{"systemMessage": TEXT}`` (shown to the user; the
    stop goes ahead); empty -> :func:`quiet`."""
    if not text:
        return quiet()
    return HookResponse(stdout=dump({"systemMessage": text}))


def worktree_created(path: Path | str, note: str = "") -> HookResponse:
    """WorktreeCreate success: the absolute path as the last (only) stdout line, exit 0."""
    return HookResponse(stdout=f"{path}\n", stderr=note, blocking=(
        f"branchkeeper: created {path} but could not print its path (stdout is closed)"))


def worktree_refused(reason: str) -> HookResponse:
    """WorktreeCreate refusal: exit 2 with the reason on stderr; the creation is aborted."""
    return HookResponse(exit_code=EXIT_BLOCK, stderr=reason)


def render(event: HookEvent, answer: A.Answer) -> HookResponse:
    """Claude Code's wire output of ``answer`` (docs/claude-code-hooks.md, Output)."""
    kind, wire = answer.kind, event.wire_event
    if kind == A.QUIET:
        return quiet()
    if wire == "PreToolUse":
        if kind in (A.DENY, A.ASK):
            return pre_tool_use(kind, answer.text, answer.context)
        return pre_tool_use(None, context=answer.full_text)
    if wire in ("Stop", "SubagentStop"):
        return stop_block(answer.text) if kind == A.BLOCK else stop_notice(answer.full_text)
    if wire == "WorktreeCreate":
        if kind == A.PATH:
            return worktree_created(answer.text, answer.context)
        if kind == A.REFUSE:
            return worktree_refused(answer.text)
        return HookResponse(exit_code=1, stderr=answer.full_text)
    if wire in CONTEXT_EVENTS and kind == A.CONTEXT:
        return context(wire, answer.full_text)
    # SessionEnd (JSON output is discarded there), WorktreeRemove, notes: stderr for the person.
    return HookResponse(stderr=answer.full_text)


def fail_open(event: str, message: str) -> HookResponse:
    """Malformed input or an internal error: exit 0, no stdout, one line on stderr (never a
    deny by accident). WorktreeCreate is the exception: creating the worktree is our job, so it
    exits 1 and Claude Code aborts the creation."""
    if event == "WorktreeCreate":
        return HookResponse(exit_code=1, stderr=(
            f"branchkeeper: WorktreeCreate failed, the worktree was not created: {message}"))
    return HookResponse(stderr=f"branchkeeper hook {event}: ignored: {message}")
