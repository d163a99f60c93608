"""Merge branchkeeper's hook entries into a Cursor ``hooks.json``, and take them out again.

Cursor reads ``<project>/.cursor/hooks.json`` (in a trusted workspace), ``~/.cursor/hooks.json``
and an enterprise file (``/etc/cursor/hooks.json`` on Linux): ``{"version": 1, "hooks": {EVENT:
[{"command": ..., "matcher": ..., "timeout": SECONDS}]}}``, one flat entry per hook
(:func:`~branchkeeper.adapters.hooks.install.merge_flat`). It watches the file and reloads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from branchkeeper.adapters.hooks.install import (
    Change,
    Spec,
    hook_command,
    merge_flat,
    no_project_root,
    unmerge_flat,
)
from branchkeeper.errors import ConfigError

HOST = "cursor"
#: (event, matcher or None, timeout in seconds). ``preToolUse`` and ``postToolUse`` match the
#: tool type (``preToolUse`` on ``Write``: the tamper rule judges a file write before it runs).
HOOK_SPECS: tuple[Spec, ...] = (
    ("sessionStart", None, 15),
    ("beforeShellExecution", None, 10),
    ("preToolUse", "Write", 10),
    ("postToolUse", "Shell", 30),
    ("postToolUseFailure", "Shell", 30),
    ("afterFileEdit", None, 30),
    ("beforeSubmitPrompt", None, 5),
    ("stop", None, 15),
    ("subagentStart", None, 10),
    ("sessionEnd", None, 5),
)
ENTERPRISE = Path("/etc/cursor/hooks.json")


def desired_entries(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the entry we install for it."""
    out: dict[str, dict[str, Any]] = {}
    for event, matcher, timeout in HOOK_SPECS:
        entry: dict[str, Any] = {"command": hook_command(program, HOST, event)}
        if matcher is not None:
            entry["matcher"] = matcher
        entry["timeout"] = timeout
        out[event] = entry
    return out


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """``hooks.json`` content with our entries in place (a new dict); idempotent."""
    return merge_flat(settings, desired_entries(program), HOST, key="command")


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """``hooks.json`` content without our entries (a new dict)."""
    return unmerge_flat(settings, HOST, key="command")


def config_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """``project`` -> ``<repo>/.cursor/hooks.json``, ``user`` -> ``~/.cursor/hooks.json``.
    Raises ConfigError for another scope, or a project scope without a repository."""
    if scope == "user":
        return home / ".cursor" / "hooks.json"
    if scope != "project":
        raise ConfigError(f"Cursor has no --scope {scope} (project or user)")
    if project_root is None:
        raise no_project_root("project")
    return project_root / ".cursor" / "hooks.json"


def config_files(*, project_root: Path | None, home: Path) -> list[Path]:
    """Every ``hooks.json`` Cursor may load for this project."""
    files = [home / ".cursor" / "hooks.json", ENTERPRISE]
    if project_root is not None:
        files.insert(0, project_root / ".cursor" / "hooks.json")
    return files
