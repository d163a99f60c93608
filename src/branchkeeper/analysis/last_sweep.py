"""The last sweep's per-branch summary: written by the inventory, read by the guards.

Kept apart from the inventory so that the hook path can read it without importing it.
"""

from __future__ import annotations

from pathlib import Path

from branchkeeper.analysis.jsonfile import read_json

#: File name under ``<common git dir>/branchkeeper/``.
LAST_SWEEP = "last-sweep.json"


def read_last_sweep(common_dir: Path) -> dict[str, list[object]]:
    """``{name: [tip, state, stage, containment, age_days, worktree]}`` from the last sweep.

    Empty when there is none or it is unreadable. No git process. A reader trusts an entry
    only while the branch is still at the recorded tip.
    """
    data = read_json(common_dir / "branchkeeper" / LAST_SWEEP)
    if isinstance(data, dict) and isinstance(data.get("branches"), dict):
        return {k: v for k, v in data["branches"].items() if isinstance(v, list) and len(v) == 6}
    return {}
