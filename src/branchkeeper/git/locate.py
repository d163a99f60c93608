"""Where a git command's repository lives, read from the filesystem alone (no git process).

The nearest ``.git`` directory or gitfile above a directory (or a bare repository), its
``commondir``, and where ``.branchkeeper.yaml`` is read. The hook and the command guard run on
every agent tool call, so they find the repository this way instead of asking git
(``rev-parse`` is the fallback of :func:`branchkeeper.state.statedir.find_common_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

#: the directory under the common git dir where branchkeeper keeps its state (state/statedir.py)
STATE_DIRNAME = "branchkeeper"


class Repo(NamedTuple):
    """Where a command's repository lives: ``toplevel`` (None when bare or unknown),
    ``common_dir`` (shared by every worktree) and ``main_root`` (where ``.branchkeeper.yaml``
    is read)."""

    toplevel: str | None
    common_dir: str
    main_root: str

    @property
    def root(self) -> str:
        """The directory git runs in."""
        return self.toplevel or self.common_dir


def _read_gitfile(path: Path) -> Path | None:
    try:
        text = path.read_text("utf-8", "surrogateescape")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else (path.parent / target)


def _common_of(git_dir: Path) -> Path:
    try:
        rel = (git_dir / "commondir").read_text("utf-8", "surrogateescape").strip()
    except OSError:
        return git_dir
    target = Path(rel)
    return target if target.is_absolute() else git_dir / target


def locate(cwd: str, *, git_dir: str | None = None, work_tree: str | None = None) -> Repo | None:
    """The repository a git command run in ``cwd`` acts on, found on the filesystem (no git
    process): the nearest ``.git`` directory or gitfile above ``cwd``, or the explicit
    ``git_dir``/``work_tree``; a bare repository is recognised by its ``HEAD``, ``objects`` and
    ``refs``. ``None`` when there is none (git itself would then refuse the command)."""
    found: Path | None = None
    top: Path | None = None
    if git_dir is not None:
        found = Path(git_dir)
        top = Path(work_tree) if work_tree else None
        if found.is_file():  # a linked worktree's gitfile: git follows its `gitdir:` line
            found = _read_gitfile(found)
        if found is None or not found.is_dir():
            return None
    else:
        here = Path(cwd)
        for d in (here, *here.parents):
            dotgit = d / ".git"
            if dotgit.is_dir():
                found, top = dotgit, d
                break
            if dotgit.is_file():
                found, top = _read_gitfile(dotgit), d
                break
            if (d / "HEAD").is_file() and (d / "objects").is_dir() and (d / "refs").is_dir():
                found, top = d, None
                break
        if work_tree is not None:
            top = Path(work_tree)
    if found is None:
        return None
    common = Path(os.path.realpath(_common_of(found)))
    main = common.parent if common.name == ".git" else (top or common)
    return Repo(str(top) if top else None, str(common), str(main))


def resolve_git_dir(git_dir: str) -> str:
    """``git_dir`` itself, or the directory its ``gitdir:`` line names when it is a gitfile
    (a linked worktree's ``.git`` file); no git process."""
    path = Path(git_dir)
    if path.is_file():
        target = _read_gitfile(path)
        if target is not None:
            return str(target)
    return git_dir


def loose_symref_target(common_dir: str | Path, ref: str) -> str | None:
    """The target of the symbolic ref ``ref`` (for example ``refs/remotes/origin/HEAD`` ->
    ``"refs/remotes/origin/main"``) read from the files backend alone (no git process): ``""``
    when ``ref`` is not a symbolic ref there (no loose file, or a file holding an object id;
    git never packs a symbolic ref into ``packed-refs``); ``None`` when the filesystem cannot
    tell (a reftable repository, an unreadable or malformed file). ``for-each-ref``'s
    ``%(symref)`` of the same ref gives the same answer."""
    common = Path(common_dir)
    if (common / "reftable").exists():
        return None
    try:
        text = (common / ref).read_text("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""
    except OSError:  # a directory of that name (refs under it), no permission
        return "" if (common / ref).is_dir() else None
    if text.startswith("ref:"):
        target = text[len("ref:"):].strip()
        return target if target.startswith("refs/") and "\n" not in target else None
    return "" if len(text.strip()) in (40, 64) else None


def checked_common_dir(common_dir: Path) -> Path:
    """``common_dir`` itself, after one ``lstat`` that its :data:`STATE_DIRNAME` entry is a
    directory or absent. Raises :class:`~branchkeeper.errors.StateDirError` (saying what to do)
    when it is a file, a dangling symlink or anything else, instead of the ``OSError`` the first
    write under it would raise (DESIGN.md "Where state lives")."""
    state = os.path.join(common_dir, STATE_DIRNAME)
    if os.path.lexists(state) and not os.path.isdir(state):
        from branchkeeper.errors import StateDirError

        raise StateDirError(
            f"{state} exists but is not a directory: branchkeeper keeps its journal, bundles "
            "and caches there; move it aside (`mv`) and run again")
    return common_dir


def head_on_a_ref(cwd: str, *, git_dir: str | None = None) -> bool | None:
    """Whether ``HEAD`` where a git command run in ``cwd`` acts names a ref (a branch,
    checked out or unborn: True) or holds a commit id (detached: False), read from the
    ``HEAD`` file of the nearest ``.git`` directory or gitfile above ``cwd`` (or of
    ``git_dir``); no git process. None when that cannot be told from the filesystem (no
    repository, ``GIT_DIR`` set, a reftable store, an unreadable file)."""
    if "GIT_DIR" in os.environ:
        return None
    found: Path | None = Path(resolve_git_dir(git_dir)) if git_dir is not None else None
    here = Path(cwd)
    for d in () if found is not None else (here, *here.parents):
        dotgit = d / ".git"
        if dotgit.is_dir() or dotgit.is_file():
            found = dotgit if dotgit.is_dir() else _read_gitfile(dotgit)
            break
    if found is None:
        return None
    try:
        text = (found / "HEAD").read_text("ascii", "replace").strip()
    except OSError:
        return None
    if text.startswith("ref: refs/heads/.invalid"):
        return None  # a reftable store keeps HEAD elsewhere
    return True if text.startswith("ref:") else (False if len(text) in (40, 64) else None)
