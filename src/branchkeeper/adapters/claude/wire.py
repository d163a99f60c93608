"""Claude Code's hook wire format: parse the event JSON on stdin, build each event's answer.

The shapes are pinned in ``docs/claude-code-hooks.md`` (with their sources) and in
``tests/test_hook_wire.py``. This module is on the hook hot path: it imports only the standard
library's ``json`` (``typing`` is already loaded).

Input (every event): ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``; inside a
sub-agent also ``agent_id`` and ``agent_type``. Per event: ``tool_name``/``tool_input``
(PreToolUse, PostToolUse), ``tool_response`` (PostToolUse), ``prompt`` (UserPromptSubmit),
``source`` (SessionStart), ``stop_hook_active`` (Stop, SubagentStop), ``name`` (WorktreeCreate;
some builds spell it ``worktree_name``), ``worktree_path`` (WorktreeRemove).

Output: see the builders below. A response with empty ``stdout`` and exit 0 is "nothing to say".
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

#: The events ``branchkeeper hook EVENT`` answers, in Claude Code's spelling.
EVENTS: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "SubagentStop",
    "WorktreeCreate",
    "WorktreeRemove",
)

#: Largest stdin accepted, in bytes; a larger payload is malformed input (fail open).
MAX_INPUT_BYTES = 4 * 1024 * 1024

#: Exit status that blocks with stderr as the reason (Claude Code's "exit 2").
EXIT_BLOCK = 2


class InputError(ValueError):
    """The event JSON is malformed, has a wrong type, or lacks a field the event needs."""


class HookEvent:
    """One parsed hook event (read-only by convention; a plain slotted class, because the
    dataclasses module costs ~9 ms of import time on the hook path).

    ``event`` is the EVENT argument (trusted over ``hook_event_name``, which is kept as given).
    ``agent_id`` is ``""`` on the main thread. ``tool_input`` is the tool's argument object
    (``{}`` for events without one). ``raw`` is the whole decoded payload.
    """

    __slots__ = ("agent_id", "agent_type", "cwd_text", "event", "hook_event_name", "name",
                 "prompt", "raw", "session_id", "source", "stop_hook_active", "tool_input",
                 "tool_name", "tool_response", "transcript_path", "worktree_path")

    def __init__(self, *, event: str, session_id: str, cwd: str, hook_event_name: str = "",
                 transcript_path: str = "", agent_id: str = "", agent_type: str = "",
                 tool_name: str = "", tool_input: dict[str, Any] | None = None,
                 tool_response: Any = None, prompt: str = "", source: str = "",
                 stop_hook_active: bool = False, name: str = "", worktree_path: str = "",
                 raw: dict[str, Any] | None = None) -> None:
        self.event = event
        self.session_id = session_id
        self.cwd_text = cwd
        self.hook_event_name = hook_event_name
        self.transcript_path = transcript_path
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.tool_name = tool_name
        self.tool_input: dict[str, Any] = tool_input if tool_input is not None else {}
        self.tool_response = tool_response
        self.prompt = prompt
        self.source = source
        self.stop_hook_active = stop_hook_active
        self.name = name
        self.worktree_path = worktree_path
        self.raw: dict[str, Any] = raw if raw is not None else {}

    @property
    def cwd(self) -> Path:
        """The input's ``cwd`` (absolute; it follows the agent into worktrees)."""
        from pathlib import Path

        return Path(self.cwd_text)

    @property
    def thread(self) -> str:
        """``<session_id>:<agent_id>`` (agent empty for the main thread): the record value."""
        return f"{self.session_id}:{self.agent_id}"

    @property
    def command(self) -> str:
        """The Bash command (``tool_input.command``), or ``""`` for other tools."""
        value = self.tool_input.get("command") if self.tool_name == "Bash" else None
        return value if isinstance(value, str) else ""


class HookResponse:
    """What the hook process prints and how it exits.

    ``stdout`` is printed as is (already JSON, or the WorktreeCreate path line); ``stderr`` is a
    message for the person or, with exit 2, the reason Claude Code shows. ``blocking``, set on a
    deny, a Stop block and a created worktree's path, is what to say on stderr with exit 2 when
    stdout cannot be written (closed): a refusal must not turn into a silent allow.
    """

    __slots__ = ("blocking", "exit_code", "stderr", "stdout")

    def __init__(self, stdout: str = "", exit_code: int = 0, stderr: str = "",
                 blocking: str = "") -> None:
        self.stdout = stdout
        self.exit_code = exit_code
        self.stderr = stderr
        self.blocking = blocking

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookResponse):
            return NotImplemented
        return (self.stdout, self.exit_code, self.stderr) == (
            other.stdout, other.exit_code, other.stderr)

    def __hash__(self) -> int:
        return hash((self.stdout, self.exit_code, self.stderr))

    def __repr__(self) -> str:
        return f"HookResponse({self.stdout!r}, {self.exit_code}, {self.stderr!r})"


def _text(payload: dict[str, Any], key: str, *, required: bool = False) -> str:
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


def parse_event(event: str, data: bytes) -> HookEvent:
    """Parse the stdin bytes of hook ``event`` into a :class:`HookEvent`.

    Bytes are decoded as UTF-8 with invalid sequences replaced. Raises :class:`InputError` for
    input over :data:`MAX_INPUT_BYTES`, invalid JSON, a non-object payload, a field of the wrong
    type, or a missing field the event needs (``session_id`` and an absolute ``cwd`` always;
    ``tool_name``/``tool_input`` for tool events; ``name`` for WorktreeCreate; ``worktree_path``
    for WorktreeRemove).
    """
    if event not in EVENTS:
        raise InputError(f"unknown hook event {event!r}")
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"input larger than {MAX_INPUT_BYTES} bytes")
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:  # JSONDecodeError, RecursionError is not a ValueError
        raise InputError(f"input is not valid JSON ({exc})") from None
    except RecursionError:
        raise InputError("input JSON is nested too deeply") from None
    if not isinstance(payload, dict):
        raise InputError(f"input must be a JSON object, not {type(payload).__name__}")
    # A guard decision needs no session: judging a command without one is safer than letting
    # it through unjudged. Every recording event needs it.
    session_id = _text(payload, "session_id", required=event != "PreToolUse")
    if not session_id:
        if event != "PreToolUse":
            raise InputError("field 'session_id' is empty")
        session_id = "no-session"
    cwd = _text(payload, "cwd", required=True)
    if not cwd.startswith("/"):
        raise InputError(f"field 'cwd' must be an absolute path, not {cwd[:200]!r}")
    tool_input: dict[str, Any] = {}
    tool_name = _text(payload, "tool_name", required=event in ("PreToolUse", "PostToolUse"))
    if event in ("PreToolUse", "PostToolUse"):
        value = payload.get("tool_input")
        if not isinstance(value, dict):
            raise InputError("field 'tool_input' must be a JSON object")
        tool_input = value
    stop_hook_active = payload.get("stop_hook_active", False)
    if not isinstance(stop_hook_active, bool):
        raise InputError("field 'stop_hook_active' must be true or false")
    name = _text(payload, "name") or _text(payload, "worktree_name")
    if event == "WorktreeCreate" and not name:
        raise InputError("missing field 'name'")
    worktree_path = _text(payload, "worktree_path", required=event == "WorktreeRemove")
    if event == "WorktreeRemove" and not worktree_path.startswith("/"):
        raise InputError("field 'worktree_path' must be an absolute path")
    return HookEvent(
        event=event,
        session_id=session_id,
        cwd=cwd,
        hook_event_name=_text(payload, "hook_event_name"),
        transcript_path=_text(payload, "transcript_path"),
        agent_id=_text(payload, "agent_id"),
        agent_type=_text(payload, "agent_type"),
        tool_name=tool_name,
        tool_input=tool_input,
        tool_response=payload.get("tool_response"),
        prompt=_text(payload, "prompt"),
        source=_text(payload, "source"),
        stop_hook_active=stop_hook_active,
        name=name,
        worktree_path=worktree_path,
        raw=payload,
    )


def _dump(obj: dict[str, Any]) -> str:
    # ASCII-only JSON: branch names decoded with surrogateescape can never break the encoding.
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))


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
    return HookResponse(stdout=_dump({"hookSpecificOutput": out}),
                        blocking=reason if decision == "deny" else "")


def context(event: str, text: str) -> HookResponse:
    """``additionalContext`` for SessionStart, UserPromptSubmit or PostToolUse; empty -> quiet.

    Shape: ``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``.
    """
    if event not in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
        raise ValueError(f"{event} has no additionalContext output")
    if not text:
        return quiet()
    return HookResponse(
        stdout=_dump({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    )


def stop_block(reason: str) -> HookResponse:
    """Stop/SubagentStop refusal: ``{"decision": "block", "reason": REASON}`` (exit 0)."""
    if not reason:
        raise ValueError("a Stop block needs a reason: it is the agent's next instruction")
    return HookResponse(stdout=_dump({"decision": "block", "reason": reason}), blocking=reason)


def stop_notice(text: str) -> HookResponse:
    """Stop/SubagentStop without a block: ``{"systemMessage": TEXT}`` (shown to the user; the
    stop goes ahead); empty -> :func:`quiet`."""
    if not text:
        return quiet()
    return HookResponse(stdout=_dump({"systemMessage": text}))


def worktree_created(path: Path, note: str = "") -> HookResponse:
    """WorktreeCreate success: the absolute path as the last (only) stdout line, exit 0."""
    return HookResponse(stdout=f"{path}\n", stderr=note, blocking=(
        f"branchkeeper: created {path} but could not print its path (stdout is closed)"))


def worktree_refused(reason: str) -> HookResponse:
    """WorktreeCreate refusal: exit 2 with the reason on stderr; the creation is aborted."""
    return HookResponse(exit_code=EXIT_BLOCK, stderr=reason)


# -- reading a Bash command cheaply ---------------------------------------------------------------
# A shlex stand-in for the tree-sitter reader, from before the guard existed. The hook no longer
# calls it (it reads commands through ``events.git_invocations``); it only ever fed records,
# never a deny.

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "{", "}"})
_GIT_VALUE_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                             "--super-prefix", "--config-env", "--exec-path"})


def git_invocations(command: str) -> list[list[str]]:
    """The argument lists (global options removed, subcommand first) of each ``git`` call.

    ``"cd x && git -C y commit -m 'a;b'"`` -> ``[["commit", "-m", "a;b"]]``. A command shlex
    cannot split (unbalanced quotes) gives ``[]``.
    """
    import shlex

    lexer = shlex.shlex(command.replace("\n", ";"), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    simple: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or (token and set(token) <= set(";&|()")):
            simple.append([])
        else:
            simple[-1].append(token)
    out: list[list[str]] = []
    for words in simple:
        i = 0
        while i < len(words) and "=" in words[i] and not words[i].startswith(("=", "-")):
            i += 1  # VAR=value prefixes
        if i >= len(words) or words[i].rsplit("/", 1)[-1] != "git":
            continue
        i += 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _GIT_VALUE_OPTS else 1
        if i < len(words):
            out.append(words[i:])
    return out


_BRANCH_CREATE_OK = frozenset({"-t", "--track", "--no-track", "-q", "--quiet", "-f", "--force"})


def created_branches(invocations: list[list[str]]) -> list[str]:
    """Branch names the git calls create: ``switch -c/-C/--create``, ``checkout -b/-B``,
    ``worktree add -b/-B`` and the plain create form of ``git branch <n> [<start>]``.

    The DWIM form ``worktree add <path>`` is left to the real parser (whether it created a branch
    depends on the refs before the command ran).
    """
    names: list[str] = []
    for args in invocations:
        sub, rest = args[0], args[1:]
        flags: tuple[str, ...]
        if sub == "worktree" and rest[:1] == ["add"]:
            sub, rest, flags = "worktree add", rest[1:], ("-b", "-B")
        elif sub == "switch":
            flags = ("-c", "-C", "--create", "--force-create")
        elif sub == "checkout":
            flags = ("-b", "-B")
        elif sub == "branch":
            positionals = [a for a in rest if not a.startswith("-")]
            options = [a for a in rest if a.startswith("-")]
            if 1 <= len(positionals) <= 2 and all(o in _BRANCH_CREATE_OK for o in options):
                names.append(positionals[0])
            continue
        else:
            continue
        for j, arg in enumerate(rest):
            if arg in flags and j + 1 < len(rest):
                names.append(rest[j + 1])
                break
            if arg.startswith(("--create=", "--force-create=")):
                names.append(arg.split("=", 1)[1])
                break
    return [n for n in names if n and not n.startswith("-")]
