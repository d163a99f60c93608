"""Hook input before a tool that cannot be read (docs/guard.md, ``R-GIT-UNPARSED-DESTRUCTIVE``):
a payload the decoder refuses (nested too deeply in a field nothing reads, a stray byte) or
whose fields have the wrong type must not let through a command the guard would refuse.

Malformed input fails open, except before a tool when what can be recovered from the raw bytes
may be judged: the shell command (:func:`recovered_commands`) mentions something the guard
reads (:func:`~branchkeeper.adapters.hooks.fast.risky`: ``git``, ``rm``, …), or, when no
command can be recovered, the bytes name one of :data:`_WORDS` as a word once their JSON
escapes are undone. That is denied, saying why; anything else still fails open.

The fast path stays sound: it answers only a payload :func:`fast.scan` reads, and for such a
payload the command recovered here is the one the fast path read (the last of the command key
path), so a command it let through is let through here too. No module-level imports (hook
path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

    from branchkeeper.adapters.hooks.answer import Answer
    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.adapters.hooks.host import FastSpec

#: Words that, in bytes whose command cannot be recovered, send a tool call to the deny
#: (``fast.GUARD_WORDS`` as whole words, so ``permission_mode`` is no ``rm``), read after
#: every JSON escape is undone (``g\\u0069t`` is ``git``).
_WORDS = r"(?<![A-Za-z0-9_])(?:git|rm|unlink|shred|truncate)(?![A-Za-z0-9_])|-delete"
#: A JSON escape: ``\\uXXXX`` or one character.
_ESCAPE = r"\\(u[0-9a-fA-F]{4}|.)"
#: What splits a word in JSON text (the escaped white space) or only quotes it in the shell
#: (``g\\it``, ``g''it``, ``"rm"``: dropped before the words are read).
_SPACES = {"n": " ", "t": " ", "r": " ", "b": " ", "f": " "}
_SHELL_QUOTES = {ord("\\"): None, ord("'"): None, ord('"'): None}
#: A JSON string, and a ``"command"`` member holding one or a list of them.
_STRING = r'"(?:[^"\\]|\\.)*"'
_COMMAND = (r'"command"\s*:\s*(' + _STRING + r"|\[\s*(?:" + _STRING + r"\s*(?:,\s*" + _STRING
            + r"\s*)*)?\])")


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    return chr(int(code[1:], 16)) if len(code) == 5 else _SPACES.get(code, code)


def recovered_commands(data: bytes, spec: FastSpec | None) -> list[str] | None:
    """The shell commands readable in the raw ``data``, or None when none can be read. Where
    :func:`fast.scan` reads ``data`` with the host's command key path (``spec``), its one value;
    else every ``"command": "…"`` (or a list of strings, joined as :func:`event.shell_command`
    joins them) in the text."""
    import json
    import re

    from branchkeeper.adapters.hooks.event import InputError, shell_command
    from branchkeeper.adapters.hooks.fast import NOT_STRING, scan

    if spec is not None:
        key = tuple(k.encode() for k in spec[2])
        found = scan(data, frozenset({key}))
        value = found.get(key) if found is not None else None
        if value is not None and value != NOT_STRING:
            return [value.decode("utf-8", "replace")]
    out = []
    for m in re.finditer(_COMMAND, data.decode("utf-8", "replace")):
        try:
            out.append(shell_command(json.loads(m.group(1), strict=False)))
        except (ValueError, InputError):  # JSONDecodeError is a ValueError
            continue
    return out or None


def refusal_reason(data: bytes, spec: FastSpec | None) -> str | None:
    """Why a tool call whose input could not be read is denied, or None (fail open): a
    recovered command that mentions what the guard reads, or no command recovered and the
    bytes (their JSON escapes undone, shell quotes and backslashes dropped) mention git or rm
    (:data:`_WORDS`)."""
    import re

    from branchkeeper.adapters.hooks.fast import risky

    commands = recovered_commands(data, spec)
    if commands is not None:
        hit = next((c for c in commands if risky(c.encode("utf-8", "surrogateescape"))), None)
        if hit is None:
            return None
        shown = hit if len(hit) <= 200 else hit[:200] + "…"
        return f"its command `{shown}` may hold a route the guard judges"
    text = re.sub(_ESCAPE, _unescape, data.decode("utf-8", "replace"))
    if re.search(_WORDS, text.translate(_SHELL_QUOTES)) is None:
        return None
    return "no command could be recovered from it, and it mentions git or rm"


def refusal(host: str, wire_event: str, error: str, why: str) -> tuple[HookEvent, Answer]:
    """The deny (``R-GIT-UNPARSED-DESTRUCTIVE``) of a tool call whose input could not be read
    (``error``, the reader's words) for the reason ``why`` (:func:`refusal_reason`), and a bare
    event of ``host``'s ``wire_event`` to render it for."""
    from branchkeeper.adapters.hooks.oversized import deny
    from branchkeeper.policy.decision import Decision, Verdict
    from branchkeeper.policy.unread import R_UNPARSED

    return deny(host, wire_event, Decision(
        Verdict.DENY, R_UNPARSED,
        f"The hook input could not be read ({error}) and {why}, so the tool call cannot be "
        "judged.",
        "Run the command again as a plain tool call (the command a string or a list of "
        "strings, no deeply nested or malformed field); or ask a human."))
