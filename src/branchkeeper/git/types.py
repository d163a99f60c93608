"""Small types for object ids and ref names, so the two are never confused."""

from __future__ import annotations

import re

_HEX = re.compile(r"\A[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


class Oid(str):
    """A full object id (40 hex digits for SHA-1, 64 for SHA-256), lower case."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> Oid:
        """Return ``text`` as an :class:`Oid`; raise ``ValueError`` unless it is a full id."""
        value = text.strip()
        if not _HEX.match(value):
            raise ValueError(f"not a full object id: {text!r}")
        return cls(value)

    @property
    def short(self) -> str:
        """The first 10 hex digits, for display only."""
        return self[:10]


class RefName(str):
    """A full ref name such as ``refs/heads/main`` or ``refs/remotes/origin/x``."""

    __slots__ = ()

    HEADS = "refs/heads/"
    REMOTES = "refs/remotes/"

    @classmethod
    def branch(cls, name: str) -> RefName:
        """``refs/heads/<name>``."""
        return cls(cls.HEADS + name)

    @classmethod
    def remote_branch(cls, remote: str, name: str) -> RefName:
        """``refs/remotes/<remote>/<name>``."""
        return cls(f"{cls.REMOTES}{remote}/{name}")

    @property
    def is_local_branch(self) -> bool:
        return self.startswith(self.HEADS)

    @property
    def is_remote_branch(self) -> bool:
        return self.startswith(self.REMOTES)

    def short_name(self, remote: str | None = None) -> str:
        """The branch name without ``refs/heads/`` or ``refs/remotes/<remote>/``."""
        if self.startswith(self.HEADS):
            return self[len(self.HEADS):]
        if remote is not None and self.startswith(f"{self.REMOTES}{remote}/"):
            return self[len(self.REMOTES) + len(remote) + 1:]
        if self.startswith(self.REMOTES):
            return self[len(self.REMOTES):]
        return str(self)


def push_argv(remote: str, branch: str) -> list[str]:
    """``git push -u REMOTE BRANCH`` as an argument vector (``git`` first), the one command
    every report and decision prints to secure an unpushed local branch. A branch name that
    git would read as an option (a leading ``-``) is pushed by its full ref names,
    ``refs/heads/B:refs/heads/B``, which reads the same in every git version and shell."""
    spec = f"refs/heads/{branch}:refs/heads/{branch}" if branch.startswith("-") else branch
    return ["git", "push", "-u", remote, spec]
