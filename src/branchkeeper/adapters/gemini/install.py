"""Merge branchkeeper's hook entries into a Gemini CLI ``settings.json``, and take them out
again.

Gemini reads ``hooks`` from ``<project>/.gemini/settings.json`` (in a trusted folder),
``~/.gemini/settings.json`` and ``/etc/gemini-cli/settings.json``: EVENT -> matcher groups
``{"matcher": REGEX, "hooks": [{"name": ..., "type": "command", "command": ...,
"timeout": MILLISECONDS}]}``. **Timeouts are milliseconds** (Claude Code's are seconds; Gemini's
own migration tool copies them unchanged). Project hooks are fingerprinted by name and command,
so Gemini asks to trust them again after a changed ``--command``.
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

HOST = "gemini"
#: (event, matcher regex or None, timeout in milliseconds).
HOOK_SPECS: tuple[Spec, ...] = (
    ("SessionStart", None, 15000),
    ("BeforeTool", "run_shell_command|write_file|replace", 10000),
    ("AfterTool", "run_shell_command|write_file|replace", 30000),
    ("BeforeAgent", None, 5000),
    ("AfterAgent", None, 15000),
    ("SessionEnd", None, 3000),
)
SYSTEM = Path("/etc/gemini-cli/settings.json")


def desired_groups(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the matcher group we install for it (each handler named ``branchkeeper``)."""
    return nested_groups(program, HOST, HOOK_SPECS, extra={"name": "branchkeeper"})


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """``settings.json`` content with our entries in place (a new dict); idempotent."""
    return merge_nested(settings, desired_groups(program), HOST, unit="ms")


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """``settings.json`` content without our entries (a new dict)."""
    return unmerge_nested(settings, HOST, unit="ms")


def config_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """``project`` -> ``<repo>/.gemini/settings.json``, ``user`` -> ``~/.gemini/settings.json``.
    Raises ConfigError for another scope, or a project scope without a repository."""
    if scope == "user":
        return home / ".gemini" / "settings.json"
    if scope != "project":
        raise ConfigError(f"Gemini CLI has no --scope {scope} (project or user)")
    if project_root is None:
        raise no_project_root("project")
    return project_root / ".gemini" / "settings.json"


def config_files(*, project_root: Path | None, home: Path) -> list[Path]:
    """Every settings file Gemini CLI may load for this project."""
    files = [home / ".gemini" / "settings.json", SYSTEM]
    if project_root is not None:
        files.insert(0, project_root / ".gemini" / "settings.json")
    return files
