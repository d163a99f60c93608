"""Write branchkeeper's hook entries into a GitHub Copilot hooks file, and take them out again.

Copilot CLI combines every ``.github/hooks/*.json`` of the repository (the cloud agent reads
only these, from the default branch) and every ``~/.copilot/hooks/*.json``
(``$COPILOT_HOME/hooks/`` when set): ``{"version": 1, "hooks": {EVENT: [{"type": "command",
"bash": ..., "timeoutSec": SECONDS, "matcher": REGEX}]}}``, where a matcher is anchored
(``^(?:bash)$``). branchkeeper keeps its entries in a file of its own, ``branchkeeper.json``,
merged like any other (entries someone else added there are kept).
"""

from __future__ import annotations

import os
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

HOST = "copilot"
FILE_NAME = "branchkeeper.json"
#: (event, matcher or None, timeout in seconds); only preToolUse takes a tool matcher: the
#: shell tool (the command guard) and the file-write tools ``create``/``edit`` (the tamper rule).
HOOK_SPECS: tuple[Spec, ...] = (
    ("sessionStart", None, 15),
    ("userPromptSubmitted", None, 5),
    ("preToolUse", "bash|create|edit", 10),
    ("postToolUse", None, 30),
    ("postToolUseFailure", None, 30),
    ("agentStop", None, 15),
    ("errorOccurred", None, 15),
    ("sessionEnd", None, 5),
)


def desired_entries(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the entry we install for it."""
    out: dict[str, dict[str, Any]] = {}
    for event, matcher, timeout in HOOK_SPECS:
        entry: dict[str, Any] = {"type": "command", "bash": hook_command(program, HOST, event)}
        if matcher is not None:
            entry["matcher"] = matcher
        entry["timeoutSec"] = timeout
        out[event] = entry
    return out


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """Hooks-file content with our entries in place (a new dict); idempotent."""
    return merge_flat(settings, desired_entries(program), HOST, key="bash")


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """Hooks-file content without our entries (a new dict)."""
    return unmerge_flat(settings, HOST, key="bash")


def user_dir(home: Path) -> Path:
    """``$COPILOT_HOME/hooks`` when set, else ``~/.copilot/hooks``."""
    base = os.environ.get("COPILOT_HOME")
    return (Path(base) if base else home / ".copilot") / "hooks"


def config_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """``project`` -> ``<repo>/.github/hooks/branchkeeper.json``, ``user`` ->
    ``~/.copilot/hooks/branchkeeper.json``. Raises ConfigError for another scope, or a project
    scope without a repository."""
    if scope == "user":
        return user_dir(home) / FILE_NAME
    if scope != "project":
        raise ConfigError(f"GitHub Copilot has no --scope {scope} (project or user)")
    if project_root is None:
        raise no_project_root("project")
    return project_root / ".github" / "hooks" / FILE_NAME


def config_files(*, project_root: Path | None, home: Path) -> list[Path]:
    """Every hooks file Copilot CLI may load for this project (inline settings included)."""
    dirs = [user_dir(home)]
    files = [home / ".copilot" / "settings.json"]
    if project_root is not None:
        dirs.insert(0, project_root / ".github" / "hooks")
        files += [project_root / ".github" / "copilot" / n for n in ("settings.json",
                                                                    "settings.local.json")]
    for d in dirs:
        try:
            files += sorted(d.glob("*.json"))
        except OSError:
            continue
    return files
