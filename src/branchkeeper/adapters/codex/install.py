"""Merge branchkeeper's hook entries into a Codex ``hooks.json``, and take them out again.

Codex reads ``<repo>/.codex/hooks.json`` (when the project's ``.codex/`` layer is trusted) and
``~/.codex/hooks.json``, both ``{"hooks": {EVENT: [matcher groups]}}`` with timeouts in seconds;
a plugin ships the same shape (``.codex-plugin/plugin.json`` names the file). A file we create
holds the single key ``hooks`` (some releases reject any other top-level key). Codex records
trust against each hook's hash, so after an install (or a changed ``--command``) it asks the
person to review the hooks once (``/hooks``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from branchkeeper.adapters.hooks.install import (
    Change,
    Spec,
    merge_nested,
    nested_groups,
    no_project_root,
    unmerge_nested,
)
from branchkeeper.errors import ConfigError

HOST = "codex"
#: (event, matcher or None, timeout in seconds). Matchers made of letters, digits, ``_`` and
#: ``|`` are exact names (``apply_patch`` is the file-edit tool).
HOOK_SPECS: tuple[Spec, ...] = (
    ("SessionStart", None, 15),
    ("PreToolUse", "Bash|apply_patch", 10),
    ("PostToolUse", "Bash|apply_patch", 30),
    ("UserPromptSubmit", None, 5),
    ("Stop", None, 15),
    ("SubagentStop", None, 15),
)


def desired_groups(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the matcher group we install for it."""
    return nested_groups(program, HOST, HOOK_SPECS)


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """``hooks.json`` content with our entries in place (a new dict); idempotent."""
    return merge_nested(settings, desired_groups(program), HOST)


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """``hooks.json`` content without our entries (a new dict)."""
    return unmerge_nested(settings, HOST)


def config_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """``project`` -> ``<repo>/.codex/hooks.json``, ``user`` -> ``~/.codex/hooks.json``.
    Raises ConfigError for another scope, or a project scope without a repository."""
    if scope == "user":
        return home / ".codex" / "hooks.json"
    if scope != "project":
        raise ConfigError(f"Codex has no --scope {scope} (project or user)")
    if project_root is None:
        raise no_project_root("project")
    return project_root / ".codex" / "hooks.json"


def config_files(*, project_root: Path | None, home: Path) -> list[Path]:
    """Every ``hooks.json`` Codex may load for this project."""
    files = [home / ".codex" / "hooks.json"]
    if project_root is not None:
        files.insert(0, project_root / ".codex" / "hooks.json")
    return files
