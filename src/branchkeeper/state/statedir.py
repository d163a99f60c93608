"""Where branchkeeper keeps its own state: ``<common git dir>/branchkeeper/``.

DESIGN.md "Where state lives": the journal, the recovery bundles and the lock files live under the
repository's common git directory, so every worktree of one repository shares them and nothing
lands in a work tree. Layout::

    <common dir>/branchkeeper/          (mode 0700)
        journal.jsonl                   append-only operation journal (state.journal)
        bundles/                        verified recovery bundles (written by actions.bundle)
        archives/                       verified archives of ignored files (actions.archive)
        locks/                          lock files (state.lock)
"""

from __future__ import annotations

import os
from pathlib import Path

from branchkeeper.errors import NotARepositoryError
from branchkeeper.git.locate import STATE_DIRNAME, checked_common_dir
from branchkeeper.git.run import GitError, run_git

JOURNAL_NAME = "journal.jsonl"
BUNDLES_DIRNAME = "bundles"
ARCHIVES_DIRNAME = "archives"
LOCKS_DIRNAME = "locks"


def common_dir_of(path: Path) -> Path:
    """The absolute common git directory of the repository containing ``path``.

    Uses ``git rev-parse --git-common-dir``, whose output may be relative to ``path``; it is
    resolved against ``path``. Raises :class:`NotARepositoryError` when ``path`` is not inside a
    git repository (or does not exist).
    """
    if not path.is_dir():
        raise NotARepositoryError(f"not a directory: {path}")
    try:
        result = run_git(["rev-parse", "--git-common-dir"], cwd=path)
    except GitError as exc:
        raise NotARepositoryError.from_git(path, exc.stderr) from exc
    text = result.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    if not text:
        raise NotARepositoryError(f"git did not report a git directory for {path}")
    return checked_common_dir((path / text).resolve())



def find_common_dir(path: Path) -> Path:
    """:func:`common_dir_of` without a git process where the filesystem answers: the nearest
    ``.git`` directory or gitfile (or bare repository) above ``path`` and its ``commondir``, as
    :func:`branchkeeper.git.locate.locate` finds them; git is asked only when that
    finds nothing. For the hook path, which runs on every agent tool call. Raises
    :class:`NotARepositoryError` like :func:`common_dir_of`."""
    from branchkeeper.git.locate import locate

    if path.is_dir():
        repo = locate(str(path))
        if repo is not None:
            return checked_common_dir(Path(repo.common_dir))
    return common_dir_of(path)


def _ensure_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def state_dir(common_dir: Path) -> Path:
    """``<common_dir>/branchkeeper/``, created with mode 0700 when missing."""
    path = common_dir / STATE_DIRNAME
    if not path.is_dir():
        _ensure_dir(path)
        # mkdir's mode is masked by the umask; make the intent exact.
        os.chmod(path, 0o700)
    return path


def journal_path(common_dir: Path) -> Path:
    """``<state dir>/journal.jsonl`` (the file itself is created by the first append)."""
    return state_dir(common_dir) / JOURNAL_NAME


def bundles_dir(common_dir: Path) -> Path:
    """``<state dir>/bundles/``, created on demand."""
    return _ensure_dir(state_dir(common_dir) / BUNDLES_DIRNAME)


def archives_dir(common_dir: Path) -> Path:
    """``<state dir>/archives/`` (verified archives of a removed worktree's ignored files),
    created on demand."""
    return _ensure_dir(state_dir(common_dir) / ARCHIVES_DIRNAME)


def locks_dir(common_dir: Path) -> Path:
    """``<state dir>/locks/``, created on demand."""
    return _ensure_dir(state_dir(common_dir) / LOCKS_DIRNAME)
