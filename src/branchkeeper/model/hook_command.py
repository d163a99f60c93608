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
#: UNTRACKED one holding nothing but our hook entries is the install's own output, not work
#: (:func:`install_output`); one with anything of the user's in it is work, as is anything else
#: under a host's directory (``.claude/agents/``, ``.codex/config.toml``, ...).
INSTALL_FILES = (".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json",
                 ".cursor/hooks.json", ".gemini/settings.json", ".github/hooks/branchkeeper.json")
#: Most bytes of an install file read to judge it: a longer one is work.
INSTALL_READ_MAX = 1 << 20


def install_output(path: str, data: bytes) -> bool:
    """True when ``path`` (relative to a worktree's root, POSIX separators) is one of the
    :data:`INSTALL_FILES` and ``data`` (its content, at most :data:`INSTALL_READ_MAX` bytes)
    is what ``branchkeeper install`` writes there: a JSON object whose hook entries are all
    ours (their command :func:`mentions_us`, under any of :data:`COMMAND_KEYS`), in the hosts'
    nested groups (``matcher`` and ``hooks`` keys only) or flat lists, with at most a
    ``version: 1`` beside the ``hooks`` object; ``{}`` and an empty ``hooks`` object too.
    Anything else (another key, a user's entry, a longer, non-UTF-8 or unparsable text) is
    the user's: False. THE content half of the exclusion every reader of a worktree's
    untracked files applies (``branchkeeper.analysis.hidden_edits.install_written``)."""
    if path not in INSTALL_FILES or len(data) > INSTALL_READ_MAX:
        return False
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    if not isinstance(parsed, dict) or set(parsed) - {"hooks", "version"}:
        return False
    version, hooks = parsed.get("version", 1), parsed.get("hooks", {})
    if type(version) is not int or version != 1 or not isinstance(hooks, dict):
        return False
    for items in hooks.values():
        if not isinstance(items, list):
            return False
        for item in items:
            inner = item.get("hooks") if isinstance(item, dict) else None
            if isinstance(inner, list):
                if set(item) - {"matcher", "hooks"} or not all(map(_entry_ours, inner)):
                    return False
            elif not _entry_ours(item):
                return False
    return True


def _entry_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and any(mentions_us(entry.get(k)) for k in COMMAND_KEYS)


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
