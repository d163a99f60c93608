"""What the hook decides (:class:`Answer`, host-neutral) and what the process prints
(:class:`HookResponse`, one host's wire output). Each host's ``render`` turns the first into the
second; nothing else crosses that line.

On the hook path: no module-level imports, slotted classes.
"""

from __future__ import annotations

# -- answer kinds --------------------------------------------------------------------------------
#: Nothing to say: the host's silent answer.
QUIET = "quiet"
#: Refuse the tool call (``text``: the full deny text; ``context``: extra lines).
DENY = "deny"
#: Put the tool call to the person at the keyboard where the host can; hosts without a
#: question render it as a deny whose text says to ask a human.
ASK = "ask"
#: Allow, adding ``text`` for the agent (a warning, LOST WORK RISK lines, a summary).
CONTEXT = "context"
#: Refuse to stop (``text``: the agent's next instruction).
BLOCK = "block"
#: A non-blocking message for the person (a Stop warning, a SessionEnd summary, a note).
NOTICE = "notice"
#: WorktreeCreate made ``text`` (an absolute path); ``context``: a note for the person.
PATH = "path"
#: WorktreeCreate refused by a guard (``text``: the reason); the host aborts the creation.
REFUSE = "refuse"
#: WorktreeCreate could not be done (``text``: why); the host aborts the creation.
ERROR = "error"


class Answer:
    """One host-neutral answer: ``kind`` (see the module constants), ``text``, ``context``."""

    __slots__ = ("context", "kind", "text")

    def __init__(self, kind: str, text: str = "", context: str = "") -> None:
        self.kind = kind
        self.text = text
        self.context = context

    @property
    def full_text(self) -> str:
        """``text`` and ``context`` joined (for hosts with one message field)."""
        return "\n\n".join(t for t in (self.text, self.context) if t)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return (self.kind, self.text, self.context) == (other.kind, other.text, other.context)

    def __hash__(self) -> int:
        return hash((self.kind, self.text, self.context))

    def __repr__(self) -> str:
        return f"Answer({self.kind!r}, {self.text!r}, {self.context!r})"


#: The shared "nothing to say".
SILENT = Answer(QUIET)


class HookResponse:
    """What the hook process prints and how it exits.

    ``stdout`` is printed as is (already the host's JSON, or a path line); ``stderr`` is a
    message for the person or, with exit 2, the reason the host shows. ``blocking``, set on a
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


#: Exit status that blocks with stderr as the reason (Claude Code's "exit 2", honoured by Codex,
#: Cursor and Gemini too; GitHub Copilot treats it as a warning).
EXIT_BLOCK = 2


def dump(obj: object) -> str:
    """Compact ASCII-only JSON: branch names decoded with surrogateescape can never break the
    encoding."""
    import json

    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
