"""Merge branchkeeper's hook entries into a Claude Code settings file, and take them out again.

Settings live under ``hooks`` -> EVENT -> list of matcher groups
``{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": SECONDS}]}``.
An entry is ours when its command is ``<branchkeeper program> hook <EVENT>`` (see
:func:`is_ours`); nothing else is ever changed or removed. The schema gives no room for a marker
field, so the command itself is the marker.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchkeeper.errors import ConfigError

#: (event, matcher or None, timeout in seconds), in the order entries are written.
HOOK_SPECS: tuple[tuple[str, str | None, int], ...] = (
    ("PreToolUse", "Bash|Agent|Task", 10),
    ("PostToolUse", "Bash|Write|Edit|MultiEdit|NotebookEdit", 30),
    ("UserPromptSubmit", None, 5),
    ("SessionStart", None, 15),
    ("Stop", None, 15),
    ("SubagentStop", None, 15),
    ("WorktreeCreate", None, 60),
    ("WorktreeRemove", None, 60),
)
DEFAULT_PROGRAM = "branchkeeper"


@dataclass(frozen=True, slots=True)
class Change:
    """One line of the summary: ``+`` added, ``~`` replaced, ``-`` removed."""

    sign: str
    event: str
    matcher: str | None
    command: str
    timeout: int | None

    def render(self) -> str:
        where = f"{self.event} [{self.matcher}]" if self.matcher else self.event
        timeout = f" (timeout {self.timeout} s)" if self.timeout is not None else ""
        return f"{self.sign} {where}: {self.command}{timeout}"


def is_ours(command: Any, event: str) -> bool:
    """Whether ``command`` is a branchkeeper hook command for ``event``.

    True for ``branchkeeper hook EVENT``, ``/abs/path/branchkeeper hook EVENT`` and
    ``/abs/python -m branchkeeper hook EVENT``.
    """
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 3 or words[-2:] != ["hook", event]:
        return False
    head = words[:-2]
    if len(head) == 1:
        return os.path.basename(head[0]) == DEFAULT_PROGRAM
    if len(head) == 3 and head[1:] == ["-m", DEFAULT_PROGRAM]:
        return True
    # An unquoted path with spaces written by an older install: still ours, so uninstall
    # can remove it.
    return os.path.basename(" ".join(head)) == DEFAULT_PROGRAM and "/" in head[0]


def hook_command(program: str, event: str) -> str:
    """The command line written for ``event``: ``<program> hook <event>``.

    ``program`` is a shell-quoted prefix (``branchkeeper`` or ``'/abs/python' -m branchkeeper``).
    """
    return f"{program} hook {event}"


def desired_groups(program: str) -> dict[str, dict[str, Any]]:
    """Event -> the matcher group we install for it."""
    out: dict[str, dict[str, Any]] = {}
    for event, matcher, timeout in HOOK_SPECS:
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": hook_command(program, event),
                           "timeout": timeout}]
        out[event] = group
    return out


def load_settings(path: Path) -> dict[str, Any]:
    """Read a settings file; ``{}`` when missing. Raises :class:`ConfigError` for a file that is
    not a JSON object or whose ``hooks`` block has the wrong shape (it is then never written)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path}: not valid JSON ({exc}); fix it first, it was not changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object; it was not changed")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(
        isinstance(groups, list) and all(isinstance(g, dict) for g in groups)
        for groups in hooks.values()
    ):
        raise ConfigError(f"{path}: 'hooks' must map each event to a list of matcher groups; "
                          "it was not changed")
    return data


def _remove_ours(groups: list[dict[str, Any]], event: str) -> tuple[list[dict[str, Any]],
                                                                    list[dict[str, Any]]]:
    """(groups without our entries, our removed entries); groups we emptied are dropped."""
    kept: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    for group in groups:
        entries = group.get("hooks")
        if not isinstance(entries, list):
            kept.append(group)
            continue
        mine = [e for e in entries if isinstance(e, dict) and is_ours(e.get("command"), event)]
        if not mine:
            kept.append(group)
            continue
        removed.extend({**e, "_matcher": group.get("matcher")} for e in mine)
        rest = [e for e in entries if e not in mine]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def merge(settings: dict[str, Any], program: str) -> tuple[dict[str, Any], list[Change]]:
    """Settings with our entries in place (a new dict) and the changes made; idempotent."""
    out = dict(settings)
    hooks = dict(out.get("hooks", {}))
    changes: list[Change] = []
    for event, group in desired_groups(program).items():
        groups = list(hooks.get(event, []))
        if groups.count(group) == 1 and not _remove_ours([g for g in groups if g != group],
                                                         event)[1]:
            continue  # exactly our entry, once: nothing to do
        kept, removed = _remove_ours(groups, event)
        entry = group["hooks"][0]
        sign = "~" if removed else "+"
        changes.append(Change(sign, event, group.get("matcher"), entry["command"],
                              entry["timeout"]))
        hooks[event] = [*kept, group]
    out["hooks"] = hooks
    return out, changes


def unmerge(settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """Settings without our entries (a new dict), dropping groups and events we emptied."""
    out = dict(settings)
    if "hooks" not in out:
        return out, []
    hooks = dict(out["hooks"])
    changes: list[Change] = []
    for event in list(hooks):
        kept, removed = _remove_ours(list(hooks[event]), event)
        if not removed:
            continue
        for entry in removed:
            timeout = entry.get("timeout")
            changes.append(Change("-", event, entry.get("_matcher"), str(entry.get("command")),
                                  timeout if isinstance(timeout, int) else None))
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if hooks:
        out["hooks"] = hooks
    else:
        del out["hooks"]
    return out, changes


def write_settings(path: Path, settings: dict[str, Any]) -> None:
    """Write ``settings`` atomically (temporary file, then rename), two-space indented."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.branchkeeper.tmp")
    tmp.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def settings_path(scope: str, *, project_root: Path | None, home: Path) -> Path:
    """The settings file of ``scope``: ``project`` -> ``.claude/settings.json``, ``local`` ->
    ``.claude/settings.local.json`` (both under ``project_root``), ``user`` ->
    ``~/.claude/settings.json``. Raises ConfigError when a project scope has no root."""
    if scope == "user":
        return home / ".claude" / "settings.json"
    if project_root is None:
        raise ConfigError(f"--scope {scope} needs a git repository (or use --scope user)")
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project_root / ".claude" / name
