"""Merge branchkeeper's hook entries into a Claude Code settings file, and take them out again.

Settings live under ``hooks`` -> EVENT -> list of matcher groups
``{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": SECONDS}]}``
(:func:`~branchkeeper.adapters.hooks.install.merge_nested`). An entry is ours when its command
is ``branchkeeper-hook claude <EVENT>`` or the older ``branchkeeper hook <EVENT>`` (see
:func:`~branchkeeper.adapters.hooks.install.is_ours`); nothing else is ever changed or removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from branchkeeper.adapters.hooks.install import (
    ENTRY,
    Change,
    Spec,
    merge_nested,
    nested_groups,
    no_project_root,
    unmerge_nested,
)

HOST = "claude"
#: (event, matcher or None, timeout in seconds), in the order entries are written.
#: SessionEnd shares a 1.5 s budget that a longer per-hook timeout raises: ours stays short.
HOOK_SPECS: tuple[Spec, ...] = (
    ("PreToolUse", "Bash|Agent|Task|Write|Edit|MultiEdit|NotebookEdit", 10),
    ("PostToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit", 30),
    ("PostToolUseFailure", "Bash|Write|Edit|MultiEdit|NotebookEdit", 30),
    ("UserPromptSubmit", None, 5),
    ("SessionStart", None, 15),
    ("SessionEnd", None, 3),
    ("Stop", None, 15),
    ("SubagentStart", None, 10),
    ("SubagentStop", None, 15),
    ("StopFailure", None, 15),
    ("WorktreeCreate", None, 60),
    ("WorktreeRemove", None, 60),
)
DEFAULT_PROGRAM = ENTRY
SCOPES = ("project", "local", "user")


def desired_groups(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the matcher group we install for it."""
    return nested_groups(program, HOST, HOOK_SPECS)


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """Settings with our entries in place (a new dict) and the changes made; idempotent."""
    return merge_nested(settings, desired_groups(program), HOST)


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """Settings without our entries (a new dict), dropping groups and events we emptied."""
    return unmerge_nested(settings, HOST)


def config_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """The settings file of ``scope``: ``project`` -> ``.claude/settings.json``, ``local`` ->
    ``.claude/settings.local.json`` (both under ``project_root``), ``user`` ->
    ``~/.claude/settings.json``. Raises ConfigError when a project scope has no root."""
    if scope == "user":
        return home / ".claude" / "settings.json"
    if project_root is None:
        raise no_project_root(scope)
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project_root / ".claude" / name


def config_files(*, project_root: Path | None, home: Path) -> list[Path]:
    """Every settings file Claude Code (and the hosts that read its hooks) may load."""
    files = [home / ".claude" / "settings.json"]
    if project_root is not None:
        files[:0] = [project_root / ".claude" / "settings.local.json",
                     project_root / ".claude" / "settings.json"]
    return files
