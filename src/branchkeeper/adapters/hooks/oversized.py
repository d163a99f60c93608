"""Hook input over the size the hook reads (docs/guard.md, ``R-GIT-UNPARSED-DESTRUCTIVE``): a
huge payload must never get through what a small one would be refused or asked.

Malformed input fails open, but a payload over
:data:`~branchkeeper.adapters.hooks.event.MAX_INPUT_BYTES` before a tool is not malformed: it is
a tool call the hook read only the beginning of. Its members read in full
(:func:`~branchkeeper.adapters.hooks.event.decode_prefix`) are judged as the guard judges any
call, where the cut cannot hide anything: a shell command read in full, the paths a file write
names (its content, which may have been cut, counts as unknown: a protected path is asked), a
tool with nothing to judge. Anything else, a command or a path cut off or missing, is denied,
saying why. After a tool and for every other event, a payload that large still fails open
(nothing there is a guard). No module-level imports (hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from branchkeeper.adapters.hooks.answer import Answer
    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.policy.decision import Decision


def refusal(host: str, wire_event: str, why: str) -> tuple[HookEvent, Answer]:
    """The deny of a tool call the hook could not read (``why``), and a bare event of
    ``host``'s ``wire_event`` to render it for."""
    from branchkeeper.adapters.hooks import event as E
    from branchkeeper.policy.decision import Decision, Verdict
    from branchkeeper.policy.unread import R_UNPARSED

    return deny(host, wire_event, Decision(
        Verdict.DENY, R_UNPARSED,
        f"The hook input is larger than {E.MAX_INPUT_BYTES} bytes (4 MiB) and the guard read "
        f"only its beginning: {why}, so the tool call cannot be judged.",
        "Split the work into smaller tool calls (a shorter command, a smaller file written in "
        "parts); or ask a human."))


def deny(host: str, wire_event: str, decision: Decision) -> tuple[HookEvent, Answer]:
    """The deny ``decision`` of a tool call whose input was not read in full, and a bare event
    of ``host``'s ``wire_event`` to render it for (also :mod:`.unreadable`'s)."""
    from branchkeeper.adapters.hooks import answer as A
    from branchkeeper.adapters.hooks import event as E

    bare = E.HookEvent(host=host, kind=E.PRE_TOOL, wire_event=wire_event,
                       session_id="no-session", cwd="/")
    return bare, A.Answer(A.DENY, decision.text)


def judgeable(event: HookEvent) -> HookEvent | str:
    """``event`` (parsed from the complete members of an oversized payload) made safe to
    judge, or why it cannot be: a shell command must be there (a string is read whole or not
    at all), a file write must name its paths (their content then counts as unknown), an agent
    spawn counts as one into a new worktree (its ``isolation`` may lie past the cut)."""
    from branchkeeper.adapters.hooks import event as E

    if event.tool == E.SHELL:
        return event if event.command else "the command lies past that point"
    if event.tool == E.FILE_WRITE:
        if not event.writes:
            return "the path the tool writes lies past that point"
        event.writes = tuple(E.FileWrite(w.path, E.EDIT if w.action == E.WRITE else w.action)
                             for w in event.writes)
        return event
    if event.tool == E.AGENT_SPAWN:
        event.isolation = True
    return event
