"""The record of a recovery bundle under ``<state dir>/bundles/``: its file, what it holds, and
the command that restores a ref from it (DESIGN.md guarantees 3 and 5).

:func:`branchkeeper.actions.bundle.create_bundle` writes and verifies the file and returns this
record; the journal keeps it (its ``bundle`` field) so ``undo`` can restore from it later.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from branchkeeper.git.types import Oid


@dataclass(frozen=True, slots=True)
class BundleInfo:
    """A written and verified bundle.

    ``heads`` maps full ref name -> tip oid as the bundle lists them; ``prerequisites`` are the
    commits the bundle needs present to restore (empty for a full bundle); ``size_bytes`` is the
    file's size.
    """

    path: Path
    compact: bool
    prerequisites: tuple[Oid, ...]
    heads: dict[str, Oid] = field(hash=False)
    note: str
    size_bytes: int

    def restore_command(self, ref: str) -> str:
        """The shell-quoted command that restores ``ref`` from this bundle (guarantee 5)."""
        return restore_command(self.path, ref)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the journal's ``bundle`` field)."""
        return {
            "path": str(self.path),
            "compact": self.compact,
            "prerequisites": list(self.prerequisites),
            "heads": dict(self.heads),
            "note": self.note,
            "size_bytes": self.size_bytes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BundleInfo:
        """Inverse of :meth:`to_json`; raises ``KeyError``/``ValueError`` on a malformed dict."""
        return cls(
            path=Path(str(data["path"])),
            compact=bool(data["compact"]),
            prerequisites=tuple(Oid.parse(str(p)) for p in data["prerequisites"]),
            heads={str(k): Oid.parse(str(v)) for k, v in dict(data["heads"]).items()},
            note=str(data["note"]),
            size_bytes=int(data["size_bytes"]),
        )


def restore_command(path: Path, ref: str) -> str:
    """``git fetch <bundle> <ref>:<ref>``, every word quoted with ``shlex.quote``."""
    return shlex.join(["git", "fetch", str(path), f"{ref}:{ref}"])


def remove_debris(common_dir: Path) -> list[Path]:
    """Remove what an interrupted bundle or archive write left: ``.verify-*`` scratch
    repositories and ``*.bundle.lock`` files in ``<state dir>/bundles/``, ``.*.tmp`` files in
    ``<state dir>/archives/``. Only ever called under the mutation lock (no write of ours is
    running then). Returns what was removed; a failure to remove is left for the next run."""
    import shutil

    removed: list[Path] = []
    state = common_dir / "branchkeeper"
    candidates = [*(state / "bundles").glob(".verify-*"), *(state / "bundles").glob("*.bundle.lock"),
                  *(state / "archives").glob(".*.tmp")]
    for path in candidates:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def orphans(common_dir: Path, listed: set[Path]) -> list[Path]:
    """Bundles and archives under ``<state dir>/`` that no journal operation lists (``listed``:
    every path the journal names), oldest name first. They are kept: a bundle written just
    before a crash is the only copy of what it holds."""
    state = common_dir / "branchkeeper"
    found = [*(state / "bundles").glob("*.bundle"), *(state / "archives").glob("*.tar")]
    return sorted((p for p in found if p not in listed and not p.name.startswith(".")),
                  key=lambda p: p.name)
