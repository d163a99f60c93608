"""The checkouts ``branchkeeper undo`` puts back: the worktrees an operation removed, then the
ignored files it archived (issue 11, "undo is one thing for every operation"; issue 12,
section 1; DESIGN.md guarantee 3).

Every operation that removed a worktree journaled, in the restore command of the ref it kept
or deleted, the ``git worktree add PATH BRANCH`` (``--detach PATH COMMIT`` for a detached
HEAD) that re-creates it: ``worktree reap``, ``worktree retire``, the WorktreeRemove hook,
``sweep --clean`` and ``prune``. Once undo has the ref back (restored, or still there), it runs
that command, unless the path is taken by something else or the branch is checked out in
another worktree: then it says so plainly and prints the command (outcome ``conflict``).
Worktrees go back before archives, so an archive's files land in the re-created checkout.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from branchkeeper.actions.archive import ArchiveError, restore_archive
from branchkeeper.git.repo import parse_worktree_porcelain
from branchkeeper.git.run import run_git
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.journal import JournalItem


class UndoOutcome(Enum):
    """What undo did (or, in a dry run, would do) for one item."""

    RESTORED = "restored"
    #: the ref already points at the recorded tip (a worktree: it is there already).
    PRESENT = "present"
    #: the ref exists at another tip, or the worktree's path or branch is taken; not
    #: overwritten (``command`` restores by hand).
    CONFLICT = "conflict"
    FAILED = "failed"
    #: a remote branch: ``command`` is the push that restores it (never run by branchkeeper).
    PUSH = "push"
    #: nothing to restore (the operation did not delete this ref; a worktree whose branch is
    #: not back).
    SKIPPED = "skipped"


#: Ref outcomes after which a worktree on that ref can be added back.
REF_BACK = frozenset({UndoOutcome.RESTORED, UndoOutcome.PRESENT})


@dataclass(frozen=True, slots=True)
class WorktreeUndo:
    """One removed worktree: its ``path``, ``branch`` (short name, or ``None`` for a detached
    HEAD at ``commit``), the ``outcome`` (``RESTORED``: added back, or would be in a dry run),
    ``reason``, and ``command``: the ``git worktree add`` that re-creates it by hand, set when
    undo did not."""

    path: str
    branch: str | None
    commit: str | None
    outcome: UndoOutcome
    reason: str = ""
    command: str = ""

    @property
    def key(self) -> str:
        """Its key in the journal's undo results."""
        return f"worktree:{self.path}"


@dataclass(frozen=True, slots=True)
class ArchiveUndo:
    """The files of one archive put back (or, in a dry run, that would be): ``outcome`` is
    ``RESTORED`` (every member written, or already there with the same path), ``CONFLICT``
    (some paths were taken by other files, which were left alone: ``kept``), ``FAILED``
    (``reason`` says why; ``command`` restores by hand) or ``SKIPPED`` (its worktree was not
    added back). ``recreated``: the checkout was re-created first."""

    archive: ArchiveInfo
    outcome: UndoOutcome
    restored: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    reason: str = ""
    command: str = ""
    recreated: bool = False

    @property
    def key(self) -> str:
        """Its key in the journal's undo results."""
        return f"archive:{self.archive.path}"


def worktree_add_argv(item: JournalItem) -> list[str] | None:
    """The ``worktree add ...`` arguments (without ``git``) of ``item``'s journaled restore
    command (steps joined by `` && ``, each written with ``shlex.join``); ``None`` when the
    operation removed no worktree for it."""
    for step in item.restore.split(" && "):
        try:
            words = shlex.split(step)
        except ValueError:
            continue
        if words[:3] == ["git", "worktree", "add"]:
            return words[1:]
    return None


def _checkouts(repo: Path) -> dict[str, str | None]:
    """Worktree path -> its branch ref (``None`` when detached), one ``worktree list``."""
    out = run_git(["worktree", "list", "--porcelain", "-z"], cwd=repo, check=False)
    if out.returncode != 0:
        return {}
    return {str(w.path): w.branch for w in parse_worktree_porcelain(out.stdout, nul=True)}


def _target(argv: list[str]) -> tuple[str, str | None, str | None]:
    """(path, branch, commit) of ``worktree add [--detach] PATH REV``."""
    words = [a for a in argv[2:] if not a.startswith("-")]
    path, rev = words[0], (words[1] if len(words) > 1 else None)
    if "--detach" in argv:
        return path, None, rev
    return path, rev, None


def _blocked(path: str, branch: str | None, checkouts: dict[str, str | None]) -> str:
    """Why the worktree cannot be added back as journaled, or ``""``."""
    if Path(path).exists() or Path(path).is_symlink():
        return f"{path} is taken by something that is not this worktree"
    holder = next((p for p, b in checkouts.items()
                   if branch is not None and b == f"refs/heads/{branch}"), None)
    if holder is not None:
        return f"branch {branch} is checked out at {holder} (one checkout per branch)"
    return ""


def restore_worktrees(repo: Path, journaled: Sequence[JournalItem],
                      refs: Sequence[UndoOutcome], *, act: bool) -> tuple[WorktreeUndo, ...]:
    """Add back each worktree the operation removed, in journal order: ``journaled`` are its
    items and ``refs`` what undo did with each item's ref. With ``act`` false nothing is run
    (``RESTORED`` means "would add back"). Never overwrites: a path that exists (and is not
    that worktree) or a branch checked out elsewhere is a ``CONFLICT`` with the command."""
    checkouts = _checkouts(repo)
    out: list[WorktreeUndo] = []
    for item, ref in zip(journaled, refs, strict=True):
        argv = worktree_add_argv(item)
        if argv is None:
            continue
        path, branch, commit = _target(argv)
        command = shlex.join(["git", *argv])
        done = _one(repo, argv, path, branch, checkouts, ref=ref, act=act)
        outcome, reason = done
        out.append(WorktreeUndo(path, branch, commit, outcome, reason,
                                "" if outcome in REF_BACK else command))
        if act and outcome is UndoOutcome.RESTORED:
            checkouts[path] = None if branch is None else f"refs/heads/{branch}"
    return tuple(out)


def _one(repo: Path, argv: list[str], path: str, branch: str | None,
         checkouts: dict[str, str | None], *, ref: UndoOutcome, act: bool
         ) -> tuple[UndoOutcome, str]:
    here = checkouts.get(path, "absent")
    if here != "absent" and Path(path).is_dir():
        return UndoOutcome.PRESENT, "it is there already"
    if ref not in REF_BACK:
        return UndoOutcome.SKIPPED, "not added back: its ref was not restored (see above)"
    why = _blocked(path, branch, checkouts)
    if why:
        return UndoOutcome.CONFLICT, f"not added back: {why}; free it, then run the command below"
    if not act:
        return UndoOutcome.RESTORED, "would be added back"
    res = run_git(argv, cwd=repo, check=False)
    if res.returncode == 0:
        return UndoOutcome.RESTORED, "added back"
    lines = res.stderr.decode("utf-8", "replace").strip().splitlines()
    return UndoOutcome.FAILED, f"not added back: {lines[-1] if lines else 'git failed'}"


def _checkout_missing(repo: Path, info: ArchiveInfo) -> str | None:
    """Re-create the checkout the archive came from (``git worktree add``, the branch when it
    exists, else the recorded commit detached); git's error, or ``None``."""
    branch = info.branch.removeprefix("refs/heads/") if info.branch else None
    if branch is not None and run_git(["rev-parse", "--verify", "-q", f"{info.branch}^{{commit}}"],
                                      cwd=repo, check=False).returncode == 0:
        args = ["worktree", "add", "-q", info.worktree, branch]
    elif info.head is not None:
        args = ["worktree", "add", "-q", "--detach", info.worktree, str(info.head)]
    else:
        return "the archive records no branch or commit to check out"
    res = run_git(args, cwd=repo, check=False)
    if res.returncode == 0:
        return None
    lines = res.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit {res.returncode}"


def undo_archive(repo: Path, info: ArchiveInfo, *, act: bool,
                 not_back: frozenset[str] = frozenset()) -> ArchiveUndo:
    """Put one archive's files back: re-create the checkout when its directory is gone, then
    write every member that is not there yet (never over an existing file). ``not_back``: the
    worktree paths undo could not add back (their archives are skipped, with the command)."""
    by_hand = f"{info.checkout_command()} && {info.restore_command()}"
    if info.worktree in not_back:
        return ArchiveUndo(info, UndoOutcome.SKIPPED, reason="its worktree was not added back "
                           "(see above); files not restored", command=by_hand)
    exists = Path(info.worktree).exists()
    if exists and info.worktree not in _checkouts(repo):
        return ArchiveUndo(info, UndoOutcome.FAILED, reason=f"{info.worktree} exists and is not "
                           "a worktree of this repository; files not restored",
                           command=info.restore_command())
    if not act:
        why = (f"{len(info.members)} file(s)" + ("" if exists else
               "; the checkout is re-created first"))
        return ArchiveUndo(info, UndoOutcome.RESTORED, reason=why)
    recreated = False
    if not exists:
        error = _checkout_missing(repo, info)
        if error is not None:
            return ArchiveUndo(info, UndoOutcome.FAILED, reason=f"could not re-create the "
                               f"checkout: {error}", command=by_hand)
        recreated = True
    try:
        done = restore_archive(info)
    except ArchiveError as exc:
        return ArchiveUndo(info, UndoOutcome.FAILED, reason=str(exc), command=by_hand,
                           recreated=recreated)
    if done.failed:
        shown = "; ".join(f"{m}: {why}" for m, why in done.failed[:3])
        return ArchiveUndo(info, UndoOutcome.FAILED, done.restored, done.kept,
                           f"{len(done.failed)} file(s) not restored ({shown})",
                           info.restore_command(), recreated)
    if done.kept:
        return ArchiveUndo(info, UndoOutcome.CONFLICT, done.restored, done.kept,
                           f"{len(done.kept)} path(s) already taken, left alone: "
                           + ", ".join(done.kept[:3]) + "; the archived copies stay in the "
                           "archive (print one to compare)",
                           shlex.join(["tar", "-x", "-O", "-f", str(info.path), "--",
                                       done.kept[0]]), recreated)
    return ArchiveUndo(info, UndoOutcome.RESTORED, done.restored, (),
                       f"{len(done.restored)} file(s) restored", "", recreated)
