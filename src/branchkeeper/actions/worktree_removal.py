"""The steps every worktree removal shares: salvage, archive the kept ignored files, remove
without ``--force`` (issue 12, section 1; second document, "Salvage"; DESIGN.md guarantees 3
and 4).

``worktree retire``, ``worktree reap``, ``sweep --clean`` and the WorktreeRemove hook decide
with the one worktree record (:mod:`branchkeeper.analysis.worktree_record`) and then call these,
so a file the ignored-content rule keeps is either archived first or the worktree stays:

1. :func:`salvage`: each ``worktrees.salvage`` path of the agent-state directory is copied into
   the main worktree's (never overwriting different content). A failure keeps the worktree.
2. :func:`archive_kept_ignored` (``--archive-ignored`` only): the ignored files the rule keeps
   go into a verified archive (:mod:`branchkeeper.actions.archive`); the caller journals it.
3. :func:`git_worktree_remove`: ``git worktree remove`` without ``--force`` (unless the caller
   proved the force safe), so git itself refuses a tree that became dirty meanwhile. A
   directory is never deleted by hand; the untracked files ``branchkeeper install`` wrote
   there (not work) are set aside first and put back when git keeps the tree.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from branchkeeper.actions.archive import archive_files
from branchkeeper.analysis.hidden_edits import hidden_edits, install_written
from branchkeeper.analysis.ignored import IgnoredVerdict
from branchkeeper.git.parse import ParseError, zsplit
from branchkeeper.git.repo import Worktree
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.hook_command import INSTALL_FILES
from branchkeeper.state.archives import ArchiveInfo


class SalvageError(Exception):
    """A salvage copy failed; the removal is blocked."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def _salvage_file(src: Path, dst: Path, tag: str) -> Path | None:
    if dst.is_file() and dst.read_bytes() == src.read_bytes():
        return None
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists():
        shutil.copy2(src, dst)
        return dst
    if dst.suffix == ".jsonl" and dst.is_file():
        data, have = src.read_bytes(), dst.read_bytes()
        if data in have:
            return None  # salvaged by an earlier run
        with dst.open("ab") as fh:
            fh.write((b"" if not have or have.endswith(b"\n") else b"\n") + data)
        return dst
    other = dst.with_name(f"{dst.name}.{tag}-{_digest(src)}")
    if other.exists():
        return None
    shutil.copy2(src, other)
    return other


def salvage(wt_path: Path, main_root: Path, *, agent_dir: str, paths: list[str]) -> list[Path]:
    """Copy each of ``paths`` (relative to ``agent_dir``) from the worktree at ``wt_path`` into
    ``main_root/agent_dir``: a new file is copied, a ``.jsonl`` file is appended to, any other
    file that differs is copied beside it with a suffix; different content is never overwritten.
    Returns the main-worktree paths written. Raises :class:`SalvageError` on any failure."""
    written: list[Path] = []
    tag = "".join(c if c.isalnum() or c in "-_" else "-" for c in wt_path.name)[:40]
    for rel in paths:
        src = wt_path / agent_dir / rel
        dst = main_root / agent_dir / rel
        try:
            if src.is_symlink() or not src.exists():
                continue
            if src.is_dir():
                target = dst if not dst.exists() else dst.with_name(f"{dst.name}.{tag}")
                if target.exists():
                    raise SalvageError(f"{target} already exists")
                shutil.copytree(src, target, symlinks=True)
                written.append(target)
                continue
            out = _salvage_file(src, dst, tag)
            if out is not None:
                written.append(out)
        except OSError as exc:
            raise SalvageError(f"could not salvage {agent_dir}/{rel}: {exc}") from None
    return written


def kept_ignored(verdict: IgnoredVerdict | None) -> list[str]:
    """The ignored files the rule keeps (what ``--archive-ignored`` archives), in order."""
    return [] if verdict is None else list(verdict.kept)


def archive_kept_ignored(common_dir: Path, wt: Worktree,
                         verdict: IgnoredVerdict | None) -> ArchiveInfo | None:
    """Archive the files :func:`kept_ignored` names (``None`` when there are none). Raises
    :class:`~branchkeeper.actions.archive.ArchiveError` when they cannot be archived and
    verified (the worktree must then stay)."""
    members = kept_ignored(verdict)
    if not members:
        return None
    head: Oid | None = wt.head
    return archive_files(common_dir, wt.path, members, branch=wt.branch, head=head,
                         label=wt.path.name)


def git_worktree_remove(root: Path | str, path: Path, *, force: bool = False,
                        timeout: float = 60.0) -> str:
    """``git worktree remove [--force] <path>``, run in ``root``; git's last error line, or
    ``""`` when it removed the worktree. ``force`` only when the caller proved it loses
    nothing (first document, section 11). The untracked files ``branchkeeper install`` wrote
    there and nothing else did (not work, judged by content:
    :func:`~branchkeeper.analysis.hidden_edits.install_written`) are set aside first, so git,
    which would refuse them, still refuses anything else; they are put back when git keeps the
    worktree. Edits a skip-worktree or assume-unchanged flag hides, which
    git would remove without a word, are read again first (no process when the index flags
    nothing): any keeps the worktree, as git keeps one that became dirty."""
    try:
        hidden = hidden_edits(path, timeout=timeout)
    except (GitError, ParseError) as exc:
        return f"could not read the edits git status does not show ({exc})"
    if hidden:
        return "it holds edits git status does not show (skip-worktree or assume-unchanged): " \
            + ", ".join(hidden[:5]) + (f" and {len(hidden) - 5} more" if len(hidden) > 5 else "")
    aside = _set_aside_install_files(path, timeout=timeout)
    args = ["worktree", "remove", *(["--force"] if force else []), str(path)]
    result = run_git(args, cwd=root, check=False, timeout=timeout)
    if result.returncode == 0:
        return ""
    for file, data, mode in aside:
        if not file.exists():
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(data)
            file.chmod(mode)
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit {result.returncode}"


def _set_aside_install_files(path: Path, *, timeout: float) -> list[tuple[Path, bytes, int]]:
    """Unlink the untracked :data:`~branchkeeper.model.hook_command.INSTALL_FILES` of the
    worktree at ``path`` that hold only what the install writes
    (:func:`~branchkeeper.analysis.hidden_edits.install_written`; one ``ls-files``, only when
    one is present); their content and mode, to put back. Any other file stays (git then
    refuses the removal, or ``--force`` was proved safe by the same reading)."""
    present = [f for f in INSTALL_FILES if install_written(path, f)]
    if not present:
        return []
    listed = run_git(["-c", "core.quotePath=false", "ls-files", "-z", "--",
                      *(f":(literal){f}" for f in present)], cwd=path, check=False,
                     timeout=timeout)
    if listed.returncode != 0:
        return []
    tracked = set(zsplit(listed.stdout))
    aside: list[tuple[Path, bytes, int]] = []
    for name in present:
        if name in tracked:
            continue
        file = path / name
        try:
            data, mode = file.read_bytes(), file.stat().st_mode & 0o7777
            file.unlink()
        except OSError:
            continue
        aside.append((file, data, mode))
    return aside
