"""The last sweep's per-branch summary: written by the inventory, read by the guards.

Kept apart from the inventory so that the hook path can read it without importing it.
"""

from __future__ import annotations

from pathlib import Path

from branchkeeper.state.jsonfile import read_json

#: File name under ``<common git dir>/branchkeeper/``.
LAST_SWEEP = "last-sweep.json"


def read_last_sweep(common_dir: Path) -> dict[str, list[object]]:
    """``{name: [tip, state, stage, containment, age_days, worktree]}`` from the last sweep.

    Empty when there is none or it is unreadable. No git process. A reader trusts an entry
    only while the branch is still at the recorded tip.
    """
    return {k: v for k, v in read_last_sweep_rows(common_dir).items()
            if isinstance(v, list) and len(v) == 6}


def read_last_sweep_rows(common_dir: Path) -> dict[str, object]:
    """The ``branches`` mapping of the last sweep as written, rows not checked (the hook's
    creation decision checks only the rows it reads); empty when there is none or it is
    unreadable. No git process."""
    data = read_json(common_dir / "branchkeeper" / LAST_SWEEP)
    rows = data.get("branches") if isinstance(data, dict) else None
    return rows if isinstance(rows, dict) else {}
