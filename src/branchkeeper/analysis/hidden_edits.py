"""Edits ``git status`` does not show, and the one reading of a worktree's uncommitted work.

A tracked file flagged skip-worktree (``git update-index --skip-worktree``, ``ls-files -v``
tag ``S``) or assume-unchanged (``--assume-unchanged``, a lowercase tag) is never compared with
its index entry by ``git status``: an edit to it is listed nowhere, and a removal of the
worktree loses it (first document, section 11: a removal may lose nothing that exists only
here). :func:`hidden_edits` finds them: such a file present in the worktree whose content
differs from its index blob, or one deleted (a deletion, as ``git status`` shows any other).
A skip-worktree file ABSENT from a sparse checkout is not work: sparse checkout sets the flag
on the files it leaves out on purpose.

Cost: none for a worktree whose index holds no flagged entry (read from the index file,
:func:`branchkeeper.git.indexfile.may_hold_flags`); otherwise one ``ls-files -v -s`` and, when
a flagged file is present, one ``hash-object --stdin-paths`` for all of them; whether the
worktree is a sparse checkout is read from its git dir (``info/sparse-checkout``).

:func:`read_work` is THE reading of a worktree's uncommitted work every command, hook and
report uses (``git status`` plus these hidden edits, counted with the tracked changes; the
untracked files ``branchkeeper install`` itself writes are not work and are left out, judged by
their content: :func:`install_written`, which reads only a file named as one of those, at most
1 MiB of it).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from branchkeeper.analysis.ignored import read_status
from branchkeeper.git.indexfile import may_hold_flags, worktree_git_dir
from branchkeeper.git.parse import ParseError, zsplit
from branchkeeper.git.run import DEFAULT_TIMEOUT_S, run_git
from branchkeeper.model.hook_command import INSTALL_FILES, INSTALL_READ_MAX, install_output

__all__ = ["Work", "flagged_entries", "hidden_edits", "hidden_edits_selected", "install_written",
           "read_work", "unflag_command"]

_GITLINK = "160000"
_SYMLINK = "120000"


def flagged_entries(path: Path | str, *, timeout: float = DEFAULT_TIMEOUT_S
                    ) -> list[tuple[str, str, str, str]]:
    """(``ls-files -v`` tag, mode, index blob id, path relative to the worktree) of every
    stage-0 entry of the worktree at ``path`` flagged skip-worktree (tag ``S``, or ``s`` with
    assume-unchanged too) or assume-unchanged (a lowercase tag): ONE ``ls-files -v -s -z``, or
    none when the index file shows no flagged entry. Raises GitError, ParseError."""
    git_dir = worktree_git_dir(Path(path))
    if git_dir is not None and not may_hold_flags(git_dir / "index"):
        return []
    out = run_git(["-c", "core.quotePath=false", "ls-files", "-v", "-s", "-z"], cwd=path,
                  timeout=timeout).stdout
    found: list[tuple[str, str, str, str]] = []
    for entry in zsplit(out):
        head, tab, name = entry.partition("\t")
        fields = head.split(" ")
        if not tab or len(fields) != 4 or len(fields[0]) != 1:
            raise ParseError(f"unexpected ls-files entry: {entry[:200]!r}")
        tag, mode, oid, stage = fields
        if (tag == "S" or tag.islower()) and stage == "0" and mode != _GITLINK:
            found.append((tag, mode, oid, name))
    return found


def _symlink_oid(target: bytes, oid_len: int) -> str:
    algo = hashlib.sha1 if oid_len == 40 else hashlib.sha256
    return algo(b"blob %d\0" % len(target) + target).hexdigest()


def hidden_edits(path: Path | str, *, timeout: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """The flagged files (:func:`flagged_entries`) of the worktree at ``path`` that differ from
    their index blob (content, or a file where a link was and the reverse) or are deleted,
    relative to ``path``, in index order. An absent skip-worktree file of a sparse checkout
    (``<git dir>/info/sparse-checkout`` exists) is left out on purpose and not listed; any
    other absent flagged file is a deletion ``git status`` does not show. Raises GitError,
    ParseError."""
    root = Path(path)
    git_dir = worktree_git_dir(root)
    sparse = git_dir is not None and (git_dir / "info" / "sparse-checkout").is_file()
    changed: list[str] = []
    to_hash: list[tuple[str, str]] = []
    entries = flagged_entries(root, timeout=timeout)
    for tag, mode, oid, name in entries:
        try:
            st = os.lstat(root / name)
            target = os.readlink(os.fsencode(root / name)) if stat.S_ISLNK(st.st_mode) else None
        except (FileNotFoundError, NotADirectoryError):
            if not (sparse and tag in ("S", "s")):
                changed.append(name)
            continue
        except OSError:
            changed.append(name)  # unreadable: counted as changed (fail closed)
            continue
        if mode == _SYMLINK:
            changed += [] if target is not None and _symlink_oid(target, len(oid)) == oid \
                else [name]
        elif not stat.S_ISREG(st.st_mode) or "\n" in name or name.startswith('"'):
            changed.append(name)  # a link or directory where a file was; or a name
            # hash-object --stdin-paths cannot take: counted as changed (fail closed)
        else:
            to_hash.append((oid, name))
    if to_hash:
        data = "".join(f"{n}\n" for _o, n in to_hash).encode("utf-8", "surrogateescape")
        oids = run_git(["hash-object", "--stdin-paths"], cwd=root, stdin=data,
                       timeout=timeout).text.split()
        if len(oids) != len(to_hash):
            raise ParseError(f"hash-object printed {len(oids)} ids for {len(to_hash)} paths")
        changed += [n for (o, n), got in zip(to_hash, oids, strict=True) if got != o]
    order = {n: i for i, (_t, _m, _o, n) in enumerate(entries)}
    return sorted(changed, key=order.__getitem__)


def _worktree_root(cwd: Path) -> Path | None:
    """The nearest directory from ``cwd`` up that holds a ``.git`` (no process)."""
    for here in (cwd, *cwd.parents):
        if os.path.lexists(here / ".git"):
            return here
    return None


def hidden_edits_selected(cwd: str, pathspecs: Sequence[str], *, work_tree: str | None = None,
                          timeout: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """The :func:`hidden_edits` of the worktree a git command run in ``cwd`` acts on (the one
    ``work_tree``, relative to ``cwd``, names, else the nearest one holding ``cwd``) that are
    present files (a deleted one holds nothing to overwrite) and that ``pathspecs`` (relative
    to ``cwd``, git's syntax; empty = all) select: what a command discarding tracked changes
    overwrites though ``git status`` does not show it. Paths relative to the worktree's root.
    No process when its index flags nothing; else :func:`hidden_edits`' and, with pathspecs,
    one ``ls-files``. Raises GitError, ParseError."""
    root = Path(cwd, work_tree) if work_tree else _worktree_root(Path(os.path.abspath(cwd)))
    if root is None:
        return []
    found = [p for p in hidden_edits(root, timeout=timeout) if os.path.lexists(root / p)]
    if not found or not pathspecs:
        return found
    pre = ["--work-tree", str(root)] if work_tree else []
    out = run_git([*pre, "-c", "core.quotePath=false", "ls-files", "-z", "--full-name", "--",
                   *pathspecs], cwd=cwd, timeout=timeout).stdout
    selected = set(zsplit(out))
    return [p for p in found if p in selected]


def install_written(root: Path | str, path: str) -> bool:
    """True when the untracked file ``path`` (relative to the worktree at ``root``, POSIX
    separators) is what ``branchkeeper install`` writes there and nothing of the user's: one
    of :data:`~branchkeeper.model.hook_command.INSTALL_FILES`, a regular file (not a link),
    whose first :data:`~branchkeeper.model.hook_command.INSTALL_READ_MAX` bytes hold only our
    hook entries (:func:`~branchkeeper.model.hook_command.install_output`). THE exclusion
    every reader of a worktree's untracked files applies; any other file is not read. An
    unreadable, longer or unparsable file is work (False). Never raises."""
    if path not in INSTALL_FILES:
        return False
    try:
        fd = os.open(Path(root) / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(INSTALL_READ_MAX + 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    return install_output(path, data)


class Work(NamedTuple):
    """A worktree's uncommitted work, paths relative to its root: ``tracked`` changes (the
    ``hidden`` edits among them), ``untracked`` files, ``ignored`` entries (as
    ``status --ignored=matching`` lists them), and the ``hidden`` edits alone (what ``git
    status``, ``git worktree remove`` and ``git add`` do not see until the flag is cleared)."""

    tracked: list[str]
    untracked: list[str]
    ignored: list[str]
    hidden: list[str]


def read_work(path: Path | str, *, timeout: float = DEFAULT_TIMEOUT_S) -> Work:
    """The :class:`Work` in the worktree at ``path``: one ``git status``
    (:func:`branchkeeper.analysis.ignored.read_status`) and the :func:`hidden_edits`, added
    to the tracked changes (each once); the untracked files ``branchkeeper install`` writes
    left out (:func:`install_written`: its own output, judged by content, not work). Raises
    GitError, ParseError."""
    tracked, untracked, ignored = read_status(path, timeout=timeout)
    seen = set(tracked)
    hidden = [p for p in hidden_edits(path, timeout=timeout) if p not in seen]
    return Work([*tracked, *hidden], [p for p in untracked if not install_written(path, p)], ignored,
                hidden)


def unflag_command(worktree: str, hidden: Sequence[str]) -> str | None:
    """``git -C <worktree> update-index --no-skip-worktree -- <hidden> && git -C <worktree>
    update-index --no-assume-unchanged -- <hidden>`` (one flag per run: given both options,
    update-index applies only one of them): what lets ``git add`` (and ``git status``)
    see the ``hidden`` edits; ``None`` when there are none."""
    if not hidden:
        return None
    return " && ".join(shlex.join(["git", "-C", worktree, "update-index", flag, "--", *hidden])
                       for flag in ("--no-skip-worktree", "--no-assume-unchanged"))
