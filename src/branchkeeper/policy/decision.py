"""What a guard decides: :class:`Decision` and the same-turn :class:`EvacuationRecord`.

Issue 5 section 3: a decision is allow, warn (allow with context) or deny, with a rule id, a
reason, the specific way out and, on every deny, the principle text of section 12. Both
records are NamedTuples, not frozen dataclasses: the hook imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE


class Verdict(StrEnum):
    """Allow, warn (allow with a message), ask (a person decides: issue 19) or deny; ordered
    by severity. A host with a working ask puts the question to the person at the keyboard;
    a host without one denies, saying to ask a human (its adapter decides)."""

    ALLOW = "allow"
    WARN = "warn"
    ASK = "ask"
    DENY = "deny"

    @property
    def severity(self) -> int:
        """0 allow, 1 warn, 2 ask, 3 deny: a deny wins over an ask when rules disagree."""
        return {"allow": 0, "warn": 1, "ask": 2, "deny": 3}[self.value]

    @property
    def exit_code(self) -> int:
        """The exit code of ``branchkeeper check``: 0 allow, 1 warn, 2 deny, 3 ask."""
        return {"allow": 0, "warn": 1, "ask": 3, "deny": 2}[self.value]


class Decision(NamedTuple):
    """One guard decision.

    ``rule_id`` is empty for a plain allow; ``reason`` one or more lines saying what the rule
    found; ``way_out`` the specific commands or steps (shell-quoted); ``context`` extra lines
    (LOST WORK RISK branches, noisy-stage branches, "could not judge" notes) shown on any
    verdict.
    """

    verdict: Verdict
    rule_id: str = ""
    reason: str = ""
    way_out: str = ""
    context: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The whole message: ``[rule] reason``, the way out, the context lines and, on a deny,
        the principle text. Empty for a plain allow with nothing to say."""
        parts: list[str] = []
        if self.reason:
            parts.append(f"[{self.rule_id}] {self.reason}" if self.rule_id else self.reason)
        if self.way_out:
            parts.append(self.way_out)
        if self.context:
            parts.append("\n".join(self.context))
        if self.verdict is Verdict.DENY:
            parts.append(BRANCH_LIMIT_PRINCIPLE)
        return "\n\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        """``{"verdict", "rule_id", "reason", "way_out", "context": [...], "text"}``."""
        return {"verdict": self.verdict.value, "rule_id": self.rule_id, "reason": self.reason,
                "way_out": self.way_out, "context": list(self.context), "text": self.text}

    def with_context(self, lines: Iterable[str]) -> Decision:
        """This decision with ``lines`` appended to its context (duplicates dropped)."""
        merged = tuple(dict.fromkeys((*self.context, *lines)))
        return Decision(self.verdict, self.rule_id, self.reason, self.way_out, merged)


ALLOW = Decision(Verdict.ALLOW)


def combine(decisions: Iterable[Decision]) -> Decision:
    """The most severe decision (the first at that severity); every other decision's reason and
    context become context lines of it, so nothing found is hidden."""
    found = list(decisions)
    if not found:
        return ALLOW
    top = max(found, key=lambda d: d.verdict.severity)  # max keeps the first of equals
    extra: list[str] = []
    for d in found:
        if d is top:
            continue
        if d.reason:
            extra.append(f"Also [{d.rule_id}]: {d.reason}" if d.rule_id else d.reason)
        extra.extend(d.context)
    return top.with_context(extra)


class EvacuationRecord(NamedTuple):
    """One evacuation seen in a command (section 13): the ``worktree`` it read (absolute path),
    the ``branch`` it read (name), the ``output`` path it wrote, and the ``command`` text."""

    worktree: str | None
    branch: str | None
    output: str
    command: str

    def to_json(self) -> dict[str, Any]:
        """``{"worktree", "branch", "output", "command"}``."""
        return {"worktree": self.worktree, "branch": self.branch, "output": self.output,
                "command": self.command}

    @classmethod
    def from_json(cls, data: Any) -> EvacuationRecord:
        """Inverse of :meth:`to_json`; raises ValueError on a malformed record."""
        if not isinstance(data, dict):
            raise ValueError("evacuation record: not an object")
        wt, br, out, cmd = (data.get(k) for k in ("worktree", "branch", "output", "command"))
        if not (wt is None or isinstance(wt, str)) or not (br is None or isinstance(br, str)) \
                or not isinstance(out, str) or not isinstance(cmd, str):
            raise ValueError("evacuation record: bad field types")
        return cls(wt, br, out, cmd)


#: Most items a decision's text lists before "... and N more".
MAX_LISTED = 20


def listed(items: Sequence[str]) -> list[str]:
    """``items`` as the indented list lines of a decision's text, at most :data:`MAX_LISTED`
    of them and then "... and N more"."""
    lines = [f"  - {i}" for i in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        lines.append(f"  ... and {len(items) - MAX_LISTED} more")
    return lines
