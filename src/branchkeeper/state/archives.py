"""The record of an archive of a removed worktree's ignored files, under
``<state dir>/archives/`` (issue 12, section 1; DESIGN.md guarantee 3).

:func:`branchkeeper.actions.archive.archive_files` writes and verifies the file and returns
this record; the journal keeps it (its ``archives`` field) so ``undo`` can put the files back.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchkeeper.git.types import Oid


@dataclass(frozen=True, slots=True)
class ArchiveInfo:
    """A written and verified tar archive of ignored files.

    ``worktree``: the root the ``members`` (POSIX paths) are relative to; ``branch`` (full ref)
    and ``head``: what that worktree had checked out, so the checkout can be re-created before
    the files go back; ``size_bytes`` and ``sha256``: of the archive file.
    """

    path: Path
    worktree: str
    branch: str | None
    head: Oid | None
    members: tuple[str, ...]
    size_bytes: int
    sha256: str

    def restore_command(self) -> str:
        """The shell-quoted command that puts the files back into the worktree, never over an
        existing file (``tar --keep-old-files``); the worktree must exist again first."""
        return shlex.join(["tar", "-x", "--keep-old-files", "-f", str(self.path), "-C",
                           self.worktree])

    def checkout_command(self) -> str:
        """The shell-quoted ``git worktree add`` that re-creates the checkout."""
        if self.branch is not None:
            return shlex.join(["git", "worktree", "add", self.worktree,
                               self.branch.removeprefix("refs/heads/")])
        return shlex.join(["git", "worktree", "add", "--detach", self.worktree, str(self.head)])

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one entry of the journal's ``archives`` field)."""
        return {"path": str(self.path), "worktree": self.worktree, "branch": self.branch,
                "head": self.head, "members": list(self.members),
                "size_bytes": self.size_bytes, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArchiveInfo:
        """Inverse of :meth:`to_json`; raises ``KeyError``/``ValueError`` on a malformed dict."""
        head = data.get("head")
        branch = data.get("branch")
        return cls(path=Path(str(data["path"])), worktree=str(data["worktree"]),
                   branch=None if branch is None else str(branch),
                   head=None if head is None else Oid.parse(str(head)),
                   members=tuple(str(m) for m in data["members"]),
                   size_bytes=int(data["size_bytes"]), sha256=str(data["sha256"]))
