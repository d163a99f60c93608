"""``branchkeeper undo``: replay the restore of a journaled operation (issue 3, section 6;
DESIGN.md guarantee 3).

For each local ref the operation deleted (or, for an ``interrupted`` operation, may have deleted)
the ref is recreated at its recorded old tip: from the object store when the commit is still
there, else fetched from the operation's bundle first. Restoration is one compare-and-create
transaction (:func:`create_refs` with ``must_not_exist``), so a ref that exists again at another
tip is never overwritten: it is a conflict, with the command that restores it under another name.
Remote items are never pushed: the push command is printed. An operation that archived a
worktree's ignored files before removing it gets them back: the checkout is re-created when its
directory is gone (``git worktree add``), then every archived file that is not there yet is
written (an existing file is never overwritten). Every undo that acts is journaled.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from branchkeeper.actions.archive import ArchiveError, restore_archive
from branchkeeper.actions.interrupt import deferred_signals
from branchkeeper.actions.refupdate import (
    RefOutcome,
    RefResult,
    check_ref_locks,
    create_refs,
    missing_commits,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid, RefName
from branchkeeper.state.archives import ArchiveInfo
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import ItemOutcome, Journal, JournalItem, Operation, UndoRecord, result_key
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock

_FETCH_TIMEOUT_S = 600.0


class UndoOutcome(Enum):
    """What undo did (or, in a dry run, would do) for one item."""

    RESTORED = "restored"
    #: the ref already points at the recorded tip.
    PRESENT = "present"
    #: the ref exists at another tip; not overwritten (``command`` restores under another name).
    CONFLICT = "conflict"
    FAILED = "failed"
    #: a remote branch: ``command`` is the push that restores it (never run by branchkeeper).
    PUSH = "push"
    #: the operation did not delete this ref (raced, kept or failed); nothing to restore.
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class UndoItem:
    """One item of an undo: ``command`` is a shell-quoted command to run by hand, or empty;
    ``worktree_not_restored``: the path of the branch's worktree the operation removed and
    undo does not re-create (``command`` re-creates it), or empty."""

    ref: str
    old: Oid
    remote: str | None
    outcome: UndoOutcome
    reason: str = ""
    command: str = ""
    worktree_not_restored: str = ""


@dataclass(frozen=True, slots=True)
class ArchiveUndo:
    """The files of one archive put back (or, in a dry run, that would be): ``outcome`` is
    ``RESTORED`` (every member written, or already there with the same path), ``CONFLICT``
    (some paths were taken by other files, which were left alone: ``kept``), or ``FAILED``
    (``reason`` says why; ``command`` restores by hand). ``recreated``: the checkout was
    re-created first."""

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


@dataclass(frozen=True, slots=True)
class UndoReport:
    """The result of :func:`undo_operation`. ``already_undone`` is set (and nothing was done)
    when the operation had been undone before. ``archives``: one entry per archive of ignored
    files the operation wrote."""

    operation: Operation
    dry_run: bool
    items: tuple[UndoItem, ...]
    already_undone: UndoRecord | None = None
    archives: tuple[ArchiveUndo, ...] = ()

    @property
    def status(self) -> str:
        """``done`` (nothing failed or conflicted), ``partial``, or ``failed`` (nothing restored
        and something failed or conflicted)."""
        outcomes = [i.outcome for i in self.items] + [a.outcome for a in self.archives]
        bad = sum(o in (UndoOutcome.CONFLICT, UndoOutcome.FAILED) for o in outcomes)
        if not bad:
            return "done"
        good = sum(o in (UndoOutcome.RESTORED, UndoOutcome.PRESENT) for o in outcomes)
        return "partial" if good else "failed"


def _possibly_deleted(operation: Operation, item: JournalItem) -> bool:
    result = operation.results.get(result_key(item.ref, item.remote))
    if result is None:
        return True  # interrupted before its result was written: it may be gone
    return result.outcome is ItemOutcome.DELETED


def _restored_name(ref: str) -> str:
    return f"{ref}-restored"


def _conflict_command(item: JournalItem, operation: Operation, *, have_object: bool) -> str:
    other = _restored_name(item.ref)
    if not have_object and operation.bundle is not None:
        return shlex.join(["git", "fetch", str(operation.bundle.path), f"{item.ref}:{other}"])
    if other.startswith(RefName.HEADS):
        return shlex.join(["git", "branch", other[len(RefName.HEADS):], item.old])
    return shlex.join(["git", "update-ref", other, item.old, ""])


def _keeper_ref(operation: Operation, item: JournalItem) -> str:
    """The local ref that holds a remote item's commit after undo: the push source."""
    assert item.remote is not None
    return f"refs/branchkeeper/undo/{operation.id}/{item.remote}/{item.ref.removeprefix('refs/heads/')}"


def _push_command(item: JournalItem) -> str:
    assert item.remote is not None
    return shlex.join(["git", "push", item.remote, f"{item.old}:{item.ref}"])


def _fetch_from_bundle(repo: Path, operation: Operation, refs: list[str]) -> str | None:
    """Fetch the objects of ``refs`` from the bundle (no ref is written); error text or None."""
    bundle = operation.bundle
    if bundle is None:
        return "commit missing and the operation wrote no bundle"
    if not bundle.path.is_file():
        return f"commit missing and the bundle is gone: {bundle.path}"
    result = run_git(["fetch", "--no-tags", "--no-write-fetch-head", "--quiet", str(bundle.path),
                      *refs], cwd=repo, check=False, timeout=_FETCH_TIMEOUT_S)
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip()
        hint = " (a compact bundle needs its prerequisite commits)" if bundle.compact else ""
        return f"fetch from bundle failed{hint}: {detail}"
    return None


def _select(journal: Journal, op_id: str | None) -> Operation:
    operations = journal.operations()
    if not operations:
        raise BranchkeeperError("the journal has no operations to undo")
    if op_id is None:
        return operations[-1]
    for operation in operations:
        if operation.id == op_id:
            return operation
    raise BranchkeeperError(f"no operation {op_id!r} in the journal (see: branchkeeper log)")


def undo_operation(repo: Path, common_dir: Path, op_id: str | None, *, dry_run: bool,
                   lock_wait_s: float = 30.0) -> UndoReport:
    """Restore the local refs of operation ``op_id`` (``None``: the newest) and report.

    ``repo`` is a work tree or git dir of the repository, ``common_dir`` its common git dir. With
    ``dry_run`` nothing is fetched, written or journaled; outcomes say what would happen
    (``RESTORED`` means "would restore"). Holds the mutation lock while acting. Raises
    :class:`BranchkeeperError` for an empty journal or an unknown id, ``LockBusyError`` when
    another command holds the lock past ``lock_wait_s`` seconds.
    """
    journal = Journal(common_dir)
    operation = _select(journal, op_id)
    if operation.undone is not None:
        return UndoReport(operation, dry_run, (), already_undone=operation.undone)
    if dry_run:
        report = _plan(repo, operation, act=False)
        return report if operation.op in WORKTREE_OPS else \
            _worktrees_not_restored(repo, operation, report)
    with repo_lock(common_dir, MUTATION_LOCK, wait_s=lock_wait_s), \
            deferred_signals("the undo"):
        report = _plan(repo, operation, act=True)
        if operation.op in WORKTREE_OPS:
            report = _readd_worktrees(repo, operation, report)
        else:
            report = _worktrees_not_restored(repo, operation, report)
        fault("undo.after_create")
        results = {i.ref: (i.outcome.value, i.reason) for i in report.items}
        results.update({a.key: (a.outcome.value, a.reason) for a in report.archives})
        journal.record_undo(operation.id, report.status, results)
    return report


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


def _is_worktree(repo: Path, path: str) -> bool:
    from branchkeeper.git.repo import parse_worktree_porcelain

    out = run_git(["worktree", "list", "--porcelain", "-z"], cwd=repo, check=False)
    if out.returncode != 0:
        return False
    return any(str(w.path) == path for w in parse_worktree_porcelain(out.stdout, nul=True))


def _undo_archive(repo: Path, info: ArchiveInfo, *, act: bool) -> ArchiveUndo:
    """Put one archive's files back: re-create the checkout when its directory is gone, then
    write every member that is not there yet (never over an existing file)."""
    by_hand = f"{info.checkout_command()} && {info.restore_command()}"
    exists = Path(info.worktree).exists()
    if exists and not _is_worktree(repo, info.worktree):
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


#: The operations that removed a worktree (``worktree reap``, also from ``prune``'s background
#: reap): their undo adds the worktree back once its branch (or pinned commit) is there.
WORKTREE_OPS = frozenset({"worktree-remove", "archive"})


def _worktree_add_argv(item: JournalItem) -> list[str] | None:
    """The ``git worktree add ...`` arguments the reap journaled for ``item`` (a step of its
    restore command, written with ``shlex.join``), without ``git``; ``None`` when there is
    none."""
    for step in item.restore.split(" && "):
        try:
            words = shlex.split(step)
        except ValueError:
            continue
        if words[:3] == ["git", "worktree", "add"]:
            return words[1:]
    return None


def _readd_worktrees(repo: Path, operation: Operation, report: UndoReport) -> UndoReport:
    """Add back each removed worktree whose ref is restored or present and whose directory
    does not exist again (an undone archive of its ignored files re-creates it first); the
    outcome's reason says what happened."""
    items = list(report.items)
    for n, (journaled, done) in enumerate(zip(operation.items, report.items, strict=True)):
        argv = _worktree_add_argv(journaled)
        if argv is None or done.outcome not in (UndoOutcome.RESTORED, UndoOutcome.PRESENT):
            continue
        path = Path(next(a for a in argv[2:] if not a.startswith("-")))
        if path.exists():
            continue
        res = run_git(argv, cwd=repo, check=False)
        if res.returncode == 0:
            items[n] = replace(done, reason=f"worktree {path} added back")
        else:
            why = res.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
            items[n] = replace(done, reason=f"worktree {path} not added back "
                                            f"({why[0] if why else 'git failed'})",
                               command=shlex.join(["git", *argv]))
    return replace(report, items=tuple(items))


def _worktrees_not_restored(repo: Path, operation: Operation, report: UndoReport
                            ) -> UndoReport:
    """For a cleanup that removed a branch's worktree before deleting the branch
    (``sweep --clean``, ``prune``): undo brings the branch back, not the checkout. Each such
    item whose worktree is not there again says so, and its ``command`` is the journaled
    ``git worktree add PATH BRANCH`` that re-creates it."""
    items = list(report.items)
    for n, (journaled, done) in enumerate(zip(operation.items, report.items, strict=True)):
        argv = _worktree_add_argv(journaled)
        if argv is None or done.outcome not in (UndoOutcome.RESTORED, UndoOutcome.PRESENT):
            continue
        path = next(a for a in argv[2:] if not a.startswith("-"))
        if Path(path).exists() and _is_worktree(repo, path):
            continue
        items[n] = replace(done, reason=f"worktree {path} not restored (undo brings back the "
                                        "branch only); recreate it with the command below",
                           command=shlex.join(["git", *argv]), worktree_not_restored=path)
    return replace(report, items=tuple(items))


def _plan(repo: Path, operation: Operation, *, act: bool) -> UndoReport:
    moves = tuple(i for i in operation.items if i.new is not None)
    if not moves:
        return _plan_restores(repo, operation, act=act)
    if len(moves) == len(operation.items):
        return _plan_moves(repo, operation, act=act)
    # Both kinds in one operation (the git hook kept a deleted and a moved branch of one
    # transaction): moves go back, deletions are recreated.
    rest = tuple(i for i in operation.items if i.new is None)
    parts = (_plan_moves(repo, replace(operation, items=moves), act=act),
             _plan_restores(repo, replace(operation, items=rest), act=act))
    done = {result_key(i.ref, i.remote): i for part in parts for i in part.items}
    return UndoReport(operation, not act,
                      tuple(done[result_key(i.ref, i.remote)] for i in operation.items))


def _plan_restores(repo: Path, operation: Operation, *, act: bool) -> UndoReport:
    """Undo of an operation that deleted refs: recreate each at its recorded tip."""
    local = [i for i in operation.items if i.remote is None and _possibly_deleted(operation, i)]
    missing = missing_commits(repo, list(dict.fromkeys(i.old for i in operation.items)))
    fetch_error: str | None = None
    need = [i.ref for i in local if i.old in missing]
    # A remote branch's commit may exist only in the bundle now: fetch it too (by whichever
    # bundle head holds that commit), so the printed push can work.
    remote_items = [i for i in operation.items
                    if i.remote is not None and _possibly_deleted(operation, i)]
    if operation.bundle is not None:
        holders = {oid: ref for ref, oid in operation.bundle.heads.items()}
        need += [holders[i.old] for i in remote_items
                 if i.old in missing and i.old in holders and holders[i.old] not in need]
    if need and act:
        fetch_error = _fetch_from_bundle(repo, operation, need)
        missing = missing_commits(repo, list(missing))
    elif need and operation.bundle is None:
        fetch_error = "commit missing and the operation wrote no bundle"
    elif need and operation.bundle is not None and not operation.bundle.path.is_file():
        fetch_error = f"commit missing and the bundle is gone: {operation.bundle.path}"

    outcomes: dict[str, UndoItem] = {}
    existing: dict[str, Oid] = {}
    if act:
        fault("undo.after_fetch")
        results = create_refs(repo, {i.ref: i.old for i in local if i.old not in missing},
                              must_not_exist=True)
        check = _current(repo, [r for r, res in results.items()
                                if res.outcome is RefOutcome.CREATED])
    else:
        results = {}
        check = {}
        existing = _current(repo, [i.ref for i in local])
    for item in operation.items:
        key = result_key(item.ref, item.remote)
        if item.remote is not None:
            if _possibly_deleted(operation, item):
                why = "" if item.old not in missing else (
                    "commit missing locally: restore it from the bundle first")
                if act and item.old not in missing:
                    # Keep the commit reachable until the push is run (gc must not take it).
                    keeper = _keeper_ref(operation, item)
                    kept = create_refs(repo, {keeper: item.old}, must_not_exist=False)[keeper]
                    if kept.outcome in (RefOutcome.CREATED, RefOutcome.PRESENT):
                        why = f"kept locally as {keeper} until you push"
                outcomes[key] = UndoItem(item.ref, item.old, item.remote, UndoOutcome.PUSH,
                                              why, _push_command(item))
            else:
                outcomes[key] = _skipped(operation, item)
            continue
        if item not in local:
            outcomes[key] = _skipped(operation, item)
        elif item.old in missing and (act or fetch_error):
            outcomes[key] = UndoItem(item.ref, item.old, None, UndoOutcome.FAILED,
                                          fetch_error or "commit missing")
        elif act:
            outcomes[key] = _from_result(item, operation, results[item.ref], check)
        else:
            found = existing.get(item.ref)
            if found is None:
                why = "from the bundle" if item.old in missing else "from the recorded tip"
                outcomes[key] = UndoItem(item.ref, item.old, None, UndoOutcome.RESTORED, why)
            elif found == item.old:
                outcomes[key] = UndoItem(item.ref, item.old, None, UndoOutcome.PRESENT)
            else:
                outcomes[key] = UndoItem(
                    item.ref, item.old, None, UndoOutcome.CONFLICT, f"exists at {found}",
                    _conflict_command(item, operation, have_object=item.old not in missing))
    archives = tuple(_undo_archive(repo, a, act=act) for a in operation.archives)
    return UndoReport(operation, not act,
                      tuple(outcomes[result_key(i.ref, i.remote)] for i in operation.items),
                      archives=archives)


def _skipped(operation: Operation, item: JournalItem) -> UndoItem:
    result = operation.results.get(result_key(item.ref, item.remote))
    word = result.outcome.value if result is not None else "not deleted"
    return UndoItem(item.ref, item.old, item.remote, UndoOutcome.SKIPPED, f"was {word}")


def _from_result(item: JournalItem, operation: Operation, result: RefResult,
                 check: dict[str, Oid]) -> UndoItem:
    if result.outcome is RefOutcome.CREATED:
        if check.get(item.ref) != item.old:
            return UndoItem(item.ref, item.old, None, UndoOutcome.FAILED,
                            f"restored tip reads back as {check.get(item.ref)}")
        return UndoItem(item.ref, item.old, None, UndoOutcome.RESTORED)
    if result.outcome is RefOutcome.PRESENT:
        return UndoItem(item.ref, item.old, None, UndoOutcome.PRESENT)
    if result.outcome is RefOutcome.CONFLICT:
        return UndoItem(item.ref, item.old, None, UndoOutcome.CONFLICT, result.reason,
                        _conflict_command(item, operation, have_object=True))
    return UndoItem(item.ref, item.old, None, UndoOutcome.FAILED, result.reason)


def _current(repo: Path, refs: list[str]) -> dict[str, Oid]:
    """ref -> oid for those of ``refs`` that exist (one ``for-each-ref``)."""
    if not refs:
        return {}
    wanted = set(refs)
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)"], cwd=repo).text
    current: dict[str, Oid] = {}
    for line in out.splitlines():
        name, _, oid = line.partition("\0")
        if name in wanted and oid:
            current[name] = Oid.parse(oid)
    return current


def _plan_moves(repo: Path, operation: Operation, *, act: bool) -> UndoReport:
    """Undo of an operation that moved refs (``item.new`` set): move each back, CAS at new."""
    if act:
        check_ref_locks(repo, [i.ref for i in operation.items if i.remote is None])
    current = _current(repo, [i.ref for i in operation.items])
    out: list[UndoItem] = []
    for item in operation.items:
        found = current.get(item.ref)
        if item.remote is not None:
            result = operation.results.get(result_key(item.ref, item.remote))
            if result is None or result.outcome is not ItemOutcome.KEPT:
                out.append(UndoItem(item.ref, item.old, item.remote, UndoOutcome.SKIPPED,
                                    "was not pushed"))
            else:  # the remote moved too: its rewind (a lease) is printed, never run
                out.append(UndoItem(item.ref, item.old, item.remote, UndoOutcome.PUSH, "",
                                    item.restore))
        elif found == item.old:
            out.append(UndoItem(item.ref, item.old, None, UndoOutcome.PRESENT))
        elif found != item.new or item.new is None:
            out.append(UndoItem(item.ref, item.old, None, UndoOutcome.CONFLICT,
                                f"moved on since (now {found or 'deleted'}); not rewound",
                                _conflict_command(item, operation, have_object=True)))
        elif not act:
            out.append(UndoItem(item.ref, item.old, None, UndoOutcome.RESTORED,
                                "would move back to the recorded tip"))
        else:
            res = run_git(["update-ref", "-m", "branchkeeper undo", item.ref, item.old, item.new],
                          cwd=repo, check=False)
            if res.returncode == 0:
                out.append(UndoItem(item.ref, item.old, None, UndoOutcome.RESTORED))
            else:
                out.append(UndoItem(item.ref, item.old, None, UndoOutcome.FAILED,
                                    res.stderr.decode("utf-8", "replace").strip()))
    return UndoReport(operation, not act, tuple(out))
