"""Pieces the ``worktree`` commands share: safe display of paths, hold notes, a verdict as
JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from branchkeeper.analysis.worktree_model import WorktreeVerdict
from branchkeeper.state import holds as hold_store


def show(path: Path | str) -> str:
    """A path for a terminal: control characters escaped, nothing else changed."""
    text = str(path)
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def emit_notes() -> None:
    for note in hold_store.take_notes():
        print(f"branchkeeper: warning: {note}", file=sys.stderr)


def verdict_json(v: WorktreeVerdict | None) -> dict[str, Any] | None:
    """One disposition as JSON: ``disposition``, ``reason``, ``triage``, every gate."""
    if v is None:
        return None
    return {"disposition": v.disposition.value, "reason": v.reason, "triage": v.triage,
            "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in v.gates]}
