"""Before a file tool (any host's ``Write``/``Edit``, Codex's ``apply_patch``, Gemini's
``write_file``...): the neutral event lists the paths the tool writes, deletes or moves a file
onto (:class:`~branchkeeper.adapters.hooks.event.FileWrite`), and this module asks the guards
about them. Standard library imports only at module level (the hook path, issue 16)."""

from __future__ import annotations

import os

from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.glue import HookVerdict, _from_decision, _names_protected


def _how(event: E.HookEvent, write: E.FileWrite) -> str:
    """How a deny names the tool's removal of ``write.path`` (relative to the cwd when under
    it): ``apply_patch: delete notes.txt``, ``apply_patch: move a file onto b.txt``."""
    path = write.path
    if path.startswith(event.cwd_text.rstrip("/") + "/"):
        path = path[len(event.cwd_text.rstrip("/")) + 1:]
    verb = "delete" if write.action == E.DELETE else "move a file onto"
    return f"{event.tool_name or 'a file tool'}: {verb} {path}"


def write_verdict(event: E.HookEvent) -> HookVerdict | None:
    """The verdict on a file tool's ``event.writes``: a path it deletes or moves a file onto is
    judged exactly as ``rm`` of it (``R-RM-WORK-AT-RISK``,
    :func:`branchkeeper.policy.deletion.decide_file_removals`; issue 17, section 1), then each
    path naming something protected by :func:`branchkeeper.policy.tamper.decide_write`
    (``R-BRANCHKEEPER-TAMPER``, issue 19). None when nothing is to be said; a tool that deletes
    nothing and writes no path naming anything protected is answered without importing the
    guard."""
    gone = [(_how(event, w), w.path) for w in event.writes if w.action in (E.DELETE, E.REPLACE)]
    if gone:
        from branchkeeper.policy.deletion import decide_file_removals

        removal = decide_file_removals(gone, cwd=event.cwd_text)
        if removal.verdict.value != "allow":
            return _from_decision(removal)
    writes = [w for w in event.writes if _names_protected(w.path)]
    if not writes:
        return None
    from branchkeeper.policy.tamper import decide_write

    for w in writes:
        d = decide_write(w.path, cwd=event.cwd_text,
                         content=w.content if w.action == E.WRITE else None,
                         tool=event.tool_name or "a file write",
                         home=os.environ.get("HOME") or None, env=os.environ)
        if d.verdict.value != "allow":
            return _from_decision(d)
    return None
