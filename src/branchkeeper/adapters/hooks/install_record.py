"""What ``install`` found in a host file before it wrote there, so ``uninstall`` gives the file
back as it was (trial finding F9): a file ``install`` created is removed once it holds nothing
else, a file the user had stays, with the ``hooks`` object, the ``version`` key and the empty
event lists it held.

The record is ``$XDG_CONFIG_HOME/branchkeeper/installed-hooks.json`` (default
``~/.config/branchkeeper/``, the user-level directory the tamper rule protects): absolute file
path -> ``{"sha256": of the bytes install last wrote, "created": bool, "keys": top-level keys
the user had, "events": hook events the user had}``. An entry counts only while the file still
holds exactly those bytes (a file changed, copied or cloned since is the user's): without one,
``uninstall`` never removes the file and keeps its ``hooks`` object. Writing the record is best
effort: a record that cannot be written only makes ``uninstall`` keep more.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from branchkeeper.state.jsonfile import read_json, write_json_atomic

RECORD_NAME = "installed-hooks.json"


#: Largest file text kept in the record (bytes of UTF-8), to put back exactly.
MAX_TEXT = 64 * 1024


class Shape(NamedTuple):
    """A host file before install: ``created`` (there was no file), the top-level ``keys`` and
    the hook ``events`` the user had, and its ``text`` then (None when there was none or it
    was larger than :data:`MAX_TEXT`)."""

    created: bool
    keys: tuple[str, ...]
    events: tuple[str, ...]
    text: str | None = None


def record_path() -> Path:
    """``$XDG_CONFIG_HOME/branchkeeper/installed-hooks.json`` (``~/.config`` by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "branchkeeper" / RECORD_NAME


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entries() -> dict[str, Any]:
    data = read_json(record_path())
    return data if isinstance(data, dict) else {}


def recorded(path: Path, current: bytes | None) -> Shape | None:
    """The shape recorded for ``path`` when the file still holds the bytes install wrote
    (``current``: its bytes now, None when missing); else None."""
    entry = _entries().get(str(path))
    if current is None or not isinstance(entry, dict) or entry.get("sha256") != _digest(current):
        return None
    keys, events = entry.get("keys"), entry.get("events")
    if not isinstance(keys, list) or not isinstance(events, list):
        return None
    text = entry.get("text")
    return Shape(entry.get("created") is True, tuple(str(k) for k in keys),
                 tuple(str(e) for e in events), text if isinstance(text, str) else None)


def found(current: dict[str, Any], unmerged: dict[str, Any], *, before: bytes | None,
          had_ours: bool) -> Shape:
    """The user's shape of a file install is about to change: ``current`` its content,
    ``unmerged`` that content without our entries (events and a ``hooks`` object only ours
    filled are gone there), ``before`` its bytes (None: no file), ``had_ours`` whether it held
    entries of ours already."""
    keys = set(unmerged)
    if "hooks" in current and not had_ours:
        keys.add("hooks")  # an empty hooks object the user wrote
    hooks = unmerged.get("hooks")
    events = tuple(hooks) if isinstance(hooks, dict) else ()
    text = None
    if before is not None and len(before) <= MAX_TEXT and not had_ours:
        try:
            text = before.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    return Shape(before is None, tuple(sorted(keys)), events, text)


def remember(path: Path, shape: Shape, written: bytes) -> None:
    """Record ``shape`` for ``path``, which install has just written as ``written``."""
    entries = _entries()
    entries[str(path)] = {"sha256": _digest(written), "created": shape.created,
                          "keys": list(shape.keys), "events": list(shape.events),
                          "text": shape.text}
    write_json_atomic(record_path(), entries)


def forget(path: Path) -> None:
    """Drop the record of ``path`` (after uninstall wrote or removed it)."""
    entries = _entries()
    if entries.pop(str(path), None) is not None:
        write_json_atomic(record_path(), entries)


def original_text(settings: dict[str, Any], shape: Shape | None) -> str | None:
    """The user's own text of the file when ``settings`` (what uninstall leaves) is the content
    it held before install; else None (the file is written from ``settings``)."""
    if shape is None or shape.text is None:
        return None
    try:
        before = json.loads(shape.text) if shape.text.strip() else {}
    except ValueError:
        return None
    return shape.text if before == settings else None


def restore(settings: dict[str, Any], current: dict[str, Any], shape: Shape | None
            ) -> dict[str, Any]:
    """``settings`` (the file without our entries) given back the shape the user had: the
    ``hooks`` object and empty event lists the record names, without the ``hooks`` object or
    ``version`` install added. Without a record, a ``hooks`` object ``current`` had stays."""
    out = dict(settings)
    if shape is None:
        if "hooks" in current and "hooks" not in out:
            out["hooks"] = {}
        return out
    for key in ("hooks", "version"):
        if key not in shape.keys and (key == "version" or out.get(key) == {}):
            out.pop(key, None)
    if "hooks" in shape.keys or shape.events:
        hooks = dict(out.get("hooks") or {})
        for event in shape.events:
            hooks.setdefault(event, [])
        out["hooks"] = hooks
    return out
