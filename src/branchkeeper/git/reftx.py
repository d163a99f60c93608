"""What git's ``reference-transaction`` hook receives, parsed (githooks(5); git 2.28+).

Git runs the hook once per state of every ref transaction, with the state as its argument
(``prepared``, ``committed``, ``aborted``; ``preparing`` too from git 2.54) and one line per
updated ref on stdin: ``<old-value> SP <new-value> SP <ref-name> LF``. A zero object id as the
new value is a deletion; as the old value it means "no old value was given" (a creation, but
also ``git branch -D``, ``git branch -f`` and ``update-ref -d REF`` without an old value, as
measured on git 2.39: see docs/git-hook.md). Newer git reports symbolic-ref updates as
``ref:<target>`` values; those never lose a commit and are skipped here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from branchkeeper.git.types import Oid

#: The states git passes as the hook's argument.
STATES = ("preparing", "prepared", "committed", "aborted")


class RefUpdate(NamedTuple):
    """One line of the hook's stdin: ``old`` and ``new`` are ``None`` for git's zero id (no old
    value given; a deletion as the new value)."""

    ref: str
    old: Oid | None
    new: Oid | None

    @property
    def is_branch(self) -> bool:
        return self.ref.startswith("refs/heads/")

    @property
    def branch(self) -> str:
        """The branch name (``refs/heads/`` removed)."""
        return self.ref[len("refs/heads/"):]


def _oid(text: str) -> Oid | None:
    """The id, ``None`` for the zero id; raises ``ValueError`` for anything else."""
    if text.strip("0") == "":
        return None
    return Oid.parse(text)


def parse_updates(data: bytes) -> list[RefUpdate]:
    """The branch (``refs/heads/*``) updates among the hook's stdin lines, in order.

    Lines for other refs, symbolic-ref values (``ref:...``) and blank lines are dropped; a line
    of another shape raises ``ValueError`` (git never writes one).
    """
    out: list[RefUpdate] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        parts = raw.decode("utf-8", "surrogateescape").split(" ", 2)
        if len(parts) != 3:
            raise ValueError(f"not a reference-transaction line: {raw[:200]!r}")
        old, new, ref = parts
        if not ref.startswith("refs/heads/") or old.startswith("ref:") or new.startswith("ref:"):
            continue
        out.append(RefUpdate(ref, _oid(old), _oid(new)))
    return out


#: Where git (files backend) parks a branch's reflog while ``git branch -m`` renames it.
RENAMED_LOG = ("logs", "refs", ".tmp-renamed-log")


def renaming_tip(common_dir: Path) -> Oid | None:
    """The tip of the branch ``git branch -m/-M`` is renaming right now, or ``None``.

    Git 2.39 renames a branch by deleting the old name in a ref transaction (which runs the
    hook) and writing the new name outside any transaction (which does not), so the hook sees
    a plain deletion. While it does, the old name's reflog sits in ``logs/refs/.tmp-renamed-log``
    and its last entry's new value is the tip being renamed. Read from the filesystem (the
    last 4 KiB); a branch without a reflog leaves no trace (docs/git-hook.md).
    """
    path = common_dir.joinpath(*RENAMED_LOG)
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 4096))
            tail = fh.read()
    except OSError:
        return None
    lines = [ln for ln in tail.split(b"\n") if ln.strip()]
    if not lines:
        return None
    fields = lines[-1].split(b" ", 2)
    try:
        return Oid.parse(fields[1].decode("ascii")) if len(fields) == 3 else None
    except (ValueError, UnicodeDecodeError):
        return None
