"""Fault points: kill the process at a named step of a destructive operation (issue 7, section 1).

``BRANCHKEEPER_FAULT=<point>`` in the environment makes :func:`fault` with that name kill its own
process with SIGKILL, exactly as a power cut or an OOM killer would: no ``finally``, no flush,
no lock release. With ``BRANCHKEEPER_FAULT_SIGNAL=INT`` or ``TERM`` the point sends that signal
to the process group instead (a Ctrl-C, a stop), which the process must survive cleanly. The
variables are read once, at import; when unset :func:`fault` is a single string comparison
against ``None``. The reliability suite (``tests/test_reliability_crash.py``)
runs every destructive command once per point on its path and checks that nothing was lost.

Names are ``<op>.<step>``; :data:`FAULT_POINTS` lists every one, and the crash suite fails when a
point is not reached on the path it is registered for, so points cannot silently rot.
"""

from __future__ import annotations

import os
import signal

#: The fault point selected for this process (``None``: faults off).
ACTIVE: str | None = os.environ.get("BRANCHKEEPER_FAULT") or None

#: What reaches the process at the point: ``KILL`` (the default: SIGKILL to itself, a crash),
#: or ``INT`` / ``TERM``: that signal to its whole process group, as a terminal's Ctrl-C or a
#: service manager's stop sends it (run it as a group leader, e.g. ``setsid``).
SIGNAL: str = os.environ.get("BRANCHKEEPER_FAULT_SIGNAL", "KILL").upper()

_CLEANUP_OPS = ("delete", "sweep-clean", "prune")
_CLEANUP_STEPS = ("before_bundle", "after_bundle", "after_begin", "after_cas", "after_records")

#: Every fault point, by name (``<op>.<step>``).
FAULT_POINTS: tuple[str, ...] = (
    *(f"{op}.{step}" for op in _CLEANUP_OPS for step in _CLEANUP_STEPS),
    # sweep --clean removing a proven branch's linked worktree first
    "sweep-clean.before_worktree_remove", "sweep-clean.after_worktree_remove",
    # delete --remote: between the local transaction and the remote push
    "delete.before_remote", "delete.after_remote",
    # park / park --clear: the marker commit written, the ref moved, the push
    *(f"{op}.{step}" for op in ("park", "unpark")
      for step in ("after_commit_tree", "after_begin", "after_update_ref", "before_push")),
    # worktree retire (no journal: the branch is never touched)
    "retire.before_remove", "retire.after_remove",
    # worktree reap / --archive-unproven
    "reap.after_begin", "reap.after_remove",
    "archive.after_bundle", "archive.after_begin", "archive.after_remove",
    # undo
    "undo.after_fetch", "undo.after_create",
    # the Claude Code WorktreeRemove hook
    "hook-worktree-remove.before_remove", "hook-worktree-remove.after_remove",
    # a torn journal line: half of the event written and flushed, then killed
    "journal.torn_begin", "journal.torn_item", "journal.torn_end", "journal.torn_undo",
)


def fault(name: str) -> None:
    """At the point ``name``, when ``BRANCHKEEPER_FAULT`` (read at import) names it: SIGKILL
    this process (never returns), or with ``BRANCHKEEPER_FAULT_SIGNAL=INT|TERM`` send that
    signal to the process group and return (the process then handles it as it would a real one).

    Costs one comparison when faults are off.
    """
    if name == ACTIVE:
        if SIGNAL in ("INT", "TERM"):
            os.killpg(os.getpgrp(), signal.SIGINT if SIGNAL == "INT" else signal.SIGTERM)
            return
        kill()


def kill() -> None:
    """SIGKILL this process now (no cleanup runs)."""
    os.kill(os.getpid(), signal.SIGKILL)
