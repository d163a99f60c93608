"""How branchkeeper's hook entries in a host's configuration are recognised (issue 6 section 3,
issue 14 point 3, issue 19): the command is the marker, as no host's schema has room for a
marker field.

The installers write these commands (``branchkeeper.adapters.hooks.install.hook_command``) and
take out exactly what :func:`is_ours` recognises; the tamper rule
(``branchkeeper.policy.tamper``) reads the same entries through :func:`our_entries`, so what
``install`` writes and what the guard protects cannot drift apart. Pure text: no I/O.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import Any

#: The hook entry point installed next to ``branchkeeper`` (``bin/branchkeeper-hook``): it
#: runs ``branchkeeper.adapters.hookrun`` without the console-script wrapper.
ENTRY = "branchkeeper-hook"
#: The command-line program; ``branchkeeper hook [--host HOST] EVENT`` answers too.
CLI = "branchkeeper"
#: The keys a hook entry's command sits under, over every host (Copilot's ``bash`` and
#: ``powershell``, everyone else's ``command``).
COMMAND_KEYS = ("command", "bash", "powershell")
#: The files ``branchkeeper install`` writes inside a worktree (every host's project and local
#: scopes, relative to the worktree's root; the user scope lives in the home directory). An
#: UNTRACKED one is the install's own output, not work: no lost-work list, dirty count, removal
#: gate or guard counts it (:func:`install_written`). Anything else under a host's directory
#: (``.claude/agents/``, ``.codex/config.toml``, ...) is work like any other file.
INSTALL_FILES = (".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json",
                 ".cursor/hooks.json", ".gemini/settings.json", ".github/hooks/branchkeeper.json")


def install_written(path: str) -> bool:
    """True when ``path`` (relative to a worktree's root, POSIX separators) is one of the files
    ``branchkeeper install`` writes there (:data:`INSTALL_FILES`): THE exclusion every reader of
    a worktree's untracked files applies."""
    return path in INSTALL_FILES


def _program_is(head: list[str], name: str) -> bool:
    if len(head) == 1:
        return os.path.basename(head[0]) == name
    if len(head) == 3 and head[1] == "-m":
        return head[2] == name
    # An unquoted path with spaces written by an older install: still ours, so uninstall can
    # remove it.
    return os.path.basename(" ".join(head)) == name and "/" in head[0]


def is_ours(command: Any, host: str, event: str) -> bool:
    """Whether ``command`` is a branchkeeper hook command for ``host``'s ``event``: the entry
    point (``branchkeeper-hook HOST EVENT``, by name or absolute path) or the command-line
    program (``branchkeeper hook [--host HOST] EVENT``, ``<python> -m branchkeeper hook ...``;
    without ``--host`` only for Claude Code)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 3 and words[-2:] == [host, event] and _program_is(words[:-2], ENTRY):
        return True
    if len(words) >= 5 and words[-4:] == ["hook", "--host", host, event]:
        return _program_is(words[:-4], CLI)
    if host == "claude" and len(words) >= 3 and words[-2:] == ["hook", event]:
        return _program_is(words[:-2], CLI)
    return False


def mentions_us(command: Any) -> bool:
    """Whether ``command`` runs a branchkeeper hook for any host or event: the entry point
    (by name or path) with two arguments, or the command-line program's ``hook`` verb
    (``branchkeeper hook ...``, ``<python> -m branchkeeper hook ...``)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words):
        rest = words[i + 1:]
        name = os.path.basename(word)
        if (name == ENTRY and len(rest) == 2) or (name == CLI and rest[:1] == ["hook"]):
            return True
    return False


def hook_entries(data: Any) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(event, group matcher or None, entry) of every hook entry in a host's parsed JSON
    configuration ``data``: nested matcher groups (``hooks`` -> EVENT -> ``[{"matcher": ...,
    "hooks": [entry, ...]}]``) and flat entries (``hooks`` -> EVENT -> ``[entry, ...]``).
    Anything not shaped so is skipped."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out: list[tuple[str, str | None, dict[str, Any]]] = []
    for event, items in (hooks.items() if isinstance(hooks, dict) else ()):
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            inner = item.get("hooks")
            if isinstance(inner, list):
                matcher = item.get("matcher")
                out += [(str(event), matcher if isinstance(matcher, str) else None, e)
                        for e in inner if isinstance(e, dict)]
            else:
                out.append((str(event), None, item))
    return out


def our_entries(data: Any, command_keys: tuple[str, ...] = COMMAND_KEYS) -> set[str]:
    """Each branchkeeper hook entry of ``data`` (:func:`hook_entries` whose command under one
    of ``command_keys`` :func:`mentions_us`), as a canonical JSON text of its event, group
    matcher and whole entry: two configurations hold the same entries exactly when these sets
    are equal, and any change of one (its command, matcher, timeout) is a different text."""
    return {json.dumps([event, matcher, entry], sort_keys=True, ensure_ascii=False)
            for event, matcher, entry in hook_entries(data)
            if any(mentions_us(entry.get(k)) for k in command_keys)}
