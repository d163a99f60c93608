"""What every host's installer shares (issue 6 section 3, issue 14 point 3): the hook command
and how to recognise it, reading and writing a JSON configuration file without losing what
others put there, and merging our entries into the two shapes hosts use.

- **Nested** (Claude Code, Codex, Gemini CLI): ``hooks`` -> EVENT -> list of matcher groups
  ``{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": N}]}``.
- **Flat** (Cursor, GitHub Copilot): ``{"version": 1, "hooks": {EVENT: [{<command key>: ...,
  ...}]}}``, one entry per hook.

An entry is ours when its command is one of ours for that host and event (:func:`is_ours`, from
:mod:`branchkeeper.model.hook_command`, which the tamper rule reads too); no host's schema has
room for a marker field, so the command itself is the marker. Nothing else is
ever changed or removed, and running an install twice changes nothing.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchkeeper.errors import ConfigError

# Recognising our entries lives in the model layer, where the tamper rule reads it too.
from branchkeeper.model.hook_command import CLI as CLI
from branchkeeper.model.hook_command import ENTRY as ENTRY
from branchkeeper.model.hook_command import hook_entries
from branchkeeper.model.hook_command import is_ours as is_ours
from branchkeeper.model.hook_command import mentions_us as mentions_us


@dataclass(frozen=True, slots=True)
class Change:
    """One line of the summary: ``+`` added, ``~`` replaced, ``-`` removed; ``timeout`` in
    ``unit`` (``s`` or ``ms``)."""

    sign: str
    event: str
    matcher: str | None
    command: str
    timeout: int | None
    unit: str = "s"

    def render(self) -> str:
        where = f"{self.event} [{self.matcher}]" if self.matcher else self.event
        timeout = f" (timeout {self.timeout} {self.unit})" if self.timeout is not None else ""
        return f"{self.sign} {where}: {self.command}{timeout}"


# -- the command -----------------------------------------------------------------------------------
def _is_cli(program: str) -> bool:
    try:
        words = shlex.split(program)
    except ValueError:
        return False
    return bool(words) and (os.path.basename(words[-1]) == CLI or words[-2:] == ["-m", CLI])


def hook_command(program: str, host: str, event: str) -> str:
    """The command line written for ``host``'s ``event``.

    ``program`` is a shell-quoted prefix: the entry point (``branchkeeper-hook``, or its
    absolute path) gives ``<program> <host> <event>``; the command-line program
    (``branchkeeper``, ``<python> -m branchkeeper``) gives ``<program> hook <event>`` for Claude
    Code (the form earlier versions wrote) and ``<program> hook --host <host> <event>`` for the
    others.
    """
    if _is_cli(program):
        return f"{program} hook {event}" if host == "claude" else \
            f"{program} hook --host {host} {event}"
    return f"{program} {host} {event}"


def resolve_program(value: str, *, executable: str) -> str:
    """The shell-quoted program prefix for ``install --command VALUE``.

    ``absolute``: this installation's entry point by absolute path (``branchkeeper-hook`` next to
    ``executable``, the running interpreter), else ``<executable> -m branchkeeper``. A path to an
    existing program is quoted; a path with spaces written without quotes is one path; anything
    else is taken as the shell-quoted prefix it is documented to be.
    """
    if value == "absolute":
        script = Path(executable).parent / ENTRY
        if script.is_file():
            return shlex.quote(str(script))
        return f"{shlex.quote(executable)} -m {CLI}"
    if os.path.isfile(value):
        return shlex.quote(value)
    try:
        words = shlex.split(value)
    except ValueError:
        words = []
    if len(words) > 1 and value.startswith(("/", "~", "./", "../")) and \
            not os.path.exists(os.path.expanduser(words[0])) and \
            not any(q in value for q in "'\"\\"):
        return shlex.quote(value)
    return value


# -- the files -------------------------------------------------------------------------------------
def load_json(path: Path) -> dict[str, Any]:
    """Read a JSON configuration file; ``{}`` when missing or empty. Raises
    :class:`ConfigError` for a file that is unreadable or not a JSON object (it is then never
    written)."""
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
    return data


def _key(event: str) -> str:
    """``hooks.EVENT`` as an error names it (JSON-quoted when not a plain word)."""
    plain = event.replace("_", "").replace("-", "").isalnum()
    return f"hooks.{event}" if plain else f"hooks[{json.dumps(event, ensure_ascii=False)}]"


def check_hooks(data: dict[str, Any], path: Path) -> None:
    """THE shape check of a host file's ``hooks`` block, before ``install`` or ``uninstall``
    touches the file (every host, nested or flat): absent, or an object mapping each event to
    a list of objects; in a nested host's matcher group, a ``hooks`` key holds a list of
    objects. Raises :class:`ConfigError` naming ``path`` and the key ("FILE: hooks.PreToolUse
    must be a list of objects; it was not changed"); nothing is written then."""
    if "hooks" not in data:
        return
    hooks = data["hooks"]
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: hooks must be an object mapping each event to a list of "
                          "objects; it was not changed")
    for event, items in hooks.items():
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ConfigError(f"{path}: {_key(event)} must be a list of objects; it was not "
                              "changed")
        for n, item in enumerate(items):
            inner = item.get("hooks", [])
            if not isinstance(inner, list) or not all(isinstance(e, dict) for e in inner):
                raise ConfigError(f"{path}: {_key(event)}[{n}].hooks must be a list of "
                                  "objects; it was not changed")


def write_json(path: Path, data: dict[str, Any], *, text: str | None = None) -> None:
    """Write ``data`` atomically (temporary file, then rename), two-space indented; or, given,
    ``text`` exactly (the user's own bytes of the same content, put back by uninstall)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.branchkeeper.tmp")
    if text is None:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def file_has_ours(path: Path, command_keys: tuple[str, ...] = ("command",)) -> bool:
    """Whether the JSON file at ``path`` runs a branchkeeper hook anywhere in its ``hooks``
    block (nested or flat; an unreadable file: False). No validation beyond that."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return any(mentions_us(entry.get(k)) for _, _, entry in hook_entries(data)
               for k in command_keys)


# -- nested matcher groups (Claude Code, Codex, Gemini CLI) ---------------------------------------
#: (event, matcher or None, timeout) as each nested host writes them.
Spec = tuple[str, str | None, int]


def nested_groups(program: str, host: str, specs: tuple[Spec, ...], *,
                  extra: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Event -> the matcher group we install for it (``extra`` keys go into each handler)."""
    out: dict[str, dict[str, Any]] = {}
    for event, matcher, timeout in specs:
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        handler = {**(extra or {}), "type": "command",
                   "command": hook_command(program, host, event), "timeout": timeout}
        group["hooks"] = [handler]
        out[event] = group
    return out


def _remove_nested(groups: list[dict[str, Any]], host: str, event: str
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(groups without our entries, our removed entries); groups we emptied are dropped."""
    kept: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    for group in groups:
        entries = group.get("hooks")
        if not isinstance(entries, list):
            kept.append(group)
            continue
        mine = [e for e in entries if isinstance(e, dict) and is_ours(e.get("command"), host,
                                                                      event)]
        if not mine:
            kept.append(group)
            continue
        removed.extend({**e, "_matcher": group.get("matcher")} for e in mine)
        rest = [e for e in entries if e not in mine]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def merge_nested(settings: dict[str, Any], desired: dict[str, dict[str, Any]], host: str, *,
                 unit: str = "s") -> tuple[dict[str, Any], list[Change]]:
    """Settings with our groups in place (a new dict) and the changes made; idempotent."""
    out = dict(settings)
    hooks = dict(out.get("hooks", {}))
    changes: list[Change] = []
    for event, group in desired.items():
        groups = list(hooks.get(event, []))
        if groups.count(group) == 1 and not _remove_nested(
                [g for g in groups if g != group], host, event)[1]:
            continue  # exactly our entry, once: nothing to do
        kept, removed = _remove_nested(groups, host, event)
        entry = group["hooks"][0]
        changes.append(Change("~" if removed else "+", event, group.get("matcher"),
                              entry["command"], entry["timeout"], unit))
        hooks[event] = [*kept, group]
    out["hooks"] = hooks
    return out, changes


def _unmerge(settings: dict[str, Any], remove: Any, unit: str
             ) -> tuple[dict[str, Any], list[Change]]:
    out = dict(settings)
    if not isinstance(out.get("hooks"), dict):
        return out, []
    hooks = dict(out["hooks"])
    changes: list[Change] = []
    for event in list(hooks):
        items = hooks[event]
        if not isinstance(items, list):
            continue
        kept, removed = remove(list(items), event)
        if not removed:
            continue
        for entry in removed:
            timeout = entry.get("timeout", entry.get("timeoutSec"))
            changes.append(Change("-", event, entry.get("_matcher", entry.get("matcher")),
                                  str(entry.get("_command") or entry.get("command")),
                                  timeout if isinstance(timeout, int) else None, unit))
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if hooks:
        out["hooks"] = hooks
    else:
        del out["hooks"]
    return out, changes


def unmerge_nested(settings: dict[str, Any], host: str, *, unit: str = "s"
                   ) -> tuple[dict[str, Any], list[Change]]:
    """Settings without our entries (a new dict), dropping groups and events we emptied."""
    return _unmerge(settings, lambda items, event: _remove_nested(items, host, event), unit)


# -- flat entries (Cursor, GitHub Copilot) --------------------------------------------------------
def _remove_flat(entries: list[dict[str, Any]], host: str, event: str, key: str
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    mine = [e for e in entries if is_ours(e.get(key), host, event)]
    return [e for e in entries if e not in mine], [{**e, "_command": e.get(key)} for e in mine]


def merge_flat(settings: dict[str, Any], desired: dict[str, dict[str, Any]], host: str, *,
               key: str, version: int | None = 1) -> tuple[dict[str, Any], list[Change]]:
    """Settings (``{"version": 1, "hooks": {EVENT: [entry, ...]}}``) with our entries in place
    (a new dict) and the changes made; idempotent. ``key`` names the entry's command field;
    ``version`` is set when the file has none."""
    out = dict(settings)
    if version is not None:
        out.setdefault("version", version)
    hooks = dict(out.get("hooks", {}))
    changes: list[Change] = []
    for event, entry in desired.items():
        entries = list(hooks.get(event, []))
        if entries.count(entry) == 1 and not _remove_flat(
                [e for e in entries if e != entry], host, event, key)[1]:
            continue
        kept, removed = _remove_flat(entries, host, event, key)
        timeout = entry.get("timeout", entry.get("timeoutSec"))
        changes.append(Change("~" if removed else "+", event, entry.get("matcher"), entry[key],
                              timeout if isinstance(timeout, int) else None))
        hooks[event] = [*kept, entry]
    out["hooks"] = hooks
    return out, changes


def unmerge_flat(settings: dict[str, Any], host: str, *, key: str
                 ) -> tuple[dict[str, Any], list[Change]]:
    """Settings without our entries (a new dict), dropping events we emptied."""
    return _unmerge(settings, lambda items, event: _remove_flat(items, host, event, key), "s")


def no_project_root(scope: str) -> ConfigError:
    """The error for a project-level ``scope`` with no work tree to hold its file: outside any
    repository, or in a bare one (which has a git directory but no work tree)."""
    return ConfigError(f"--scope {scope} needs a git repository with a work tree (a bare "
                       "repository has none); or use --scope user")
