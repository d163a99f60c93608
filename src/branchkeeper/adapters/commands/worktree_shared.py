"""Pieces the ``worktree`` commands share: safe display of paths, hold notes, a verdict as
JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from branchkeeper.analysis.worktree_model import WorktreeVerdict
from branchkeeper.state import holds as hold_store


def _shown(ch: str) -> str:
    if ch.isprintable() or "\udc80" <= ch <= "\udcff":
        return ch
    return ch.encode("unicode_escape").decode()


def show(path: Path | str) -> str:
    """A path for a terminal: control characters escaped, nothing else changed. A byte that is
    not UTF-8 (held as a surrogate escape, as git's names are read) stays that byte on output,
    as the sweep prints it (the CLI writes with ``surrogateescape``), so a printed path is the
    real one."""
    return "".join(_shown(ch) for ch in str(path))


def emit_notes() -> None:
    for note in hold_store.take_notes():
        print(f"branchkeeper: warning: {note}", file=sys.stderr)


def verdict_json(v: WorktreeVerdict | None) -> dict[str, Any] | None:
    """One disposition as JSON: ``disposition``, ``reason``, ``triage``, every gate."""
    if v is None:
        return None
    return {"disposition": v.disposition.value, "reason": v.reason, "triage": v.triage,
            "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in v.gates]}
