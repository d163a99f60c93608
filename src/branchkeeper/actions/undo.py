"""``branchkeeper undo``: replay the restore of a journaled operation (issue 3, section 6;
DESIGN.md guarantee 3).

For each local ref the operation deleted (or, for an ``interrupted`` operation, may have deleted)
the ref is recreated at its recorded old tip: from the object store when the commit is still
there, else fetched from the operation's bundle first. Restoration is one compare-and-create
transaction (:func:`create_refs` with ``must_not_exist``), so a ref that exists again at another
tip is never overwritten: it is a conflict, with the command that restores it under another name.
Remote items are never pushed: the push command is printed. Every operation that removed a
worktree gets it back at its path, on its branch (:mod:`branchkeeper.actions.undo_checkouts`),
then the ignored files it archived (an existing file is never overwritten). An operation of
several steps (``worktree reap``) is undone as a whole. A bare ``undo`` takes the newest
operation not undone yet. Every undo that acts is journaled.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from branchkeeper.actions.interrupt import deferred_signals
from branchkeeper.actions.refupdate import (
    RefOutcome,
    RefResult,
    check_ref_locks,
    create_refs,
    missing_commits,
)
from branchkeeper.actions.undo_checkouts import (
    REF_BACK,
    ArchiveUndo,
    UndoOutcome,
    WorktreeUndo,
    restore_worktrees,
    undo_archive,
    worktree_add_argv,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid, RefName
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import ItemOutcome, Journal, JournalItem, Operation, UndoRecord, result_key
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock

_FETCH_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class UndoItem:
    """One ref of an undo: ``command`` is a shell-quoted command to run by hand, or empty."""

    ref: str
    old: Oid
    remote: str | None
    outcome: UndoOutcome
    reason: str = ""
    command: str = ""


@dataclass(frozen=True, slots=True)
class UndoReport:
    """The result of :func:`undo_operation`. ``already_undone`` is set (and nothing was done)
    when the named operation had been undone before. ``worktrees``: one entry per worktree the
    operation removed; ``archives``: one per archive of ignored files it wrote. ``passed``:
    the newer operations a bare ``undo`` passed over because they were undone already (with
    ``already_undone`` set: every operation of the journal, newest first: none is left)."""

    operation: Operation
    dry_run: bool
    items: tuple[UndoItem, ...]
    already_undone: UndoRecord | None = None
    archives: tuple[ArchiveUndo, ...] = ()
    worktrees: tuple[WorktreeUndo, ...] = ()
    passed: tuple[Operation, ...] = ()

    @property
    def status(self) -> str:
        """``done`` (nothing failed or conflicted), ``partial``, or ``failed`` (nothing restored
        and something failed or conflicted)."""
        outcomes = [i.outcome for i in self.items] + [a.outcome for a in self.archives] + \
            [w.outcome for w in self.worktrees]
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


def _select(journal: Journal, op_id: str | None) -> tuple[Operation, tuple[Operation, ...]]:
    """The operation to undo and the newer ones passed over (bare ``undo`` only: the newest
    operation not undone yet; when every one is undone, the newest, and all of them)."""
    operations = journal.operations()
    if not operations:
        raise BranchkeeperError("the journal has no operations to undo")
    if op_id is None:
        for n in range(len(operations) - 1, -1, -1):
            if operations[n].undone is None:
                return operations[n], tuple(reversed(operations[n + 1:]))
        return operations[-1], tuple(reversed(operations))
    for operation in operations:
        if operation.id == op_id:
            return operation, ()
    raise BranchkeeperError(f"no operation {op_id!r} in the journal (see: branchkeeper log)")


def undo_operation(repo: Path, common_dir: Path, op_id: str | None, *, dry_run: bool,
                   lock_wait_s: float = 30.0) -> UndoReport:
    """Undo operation ``op_id`` (``None``: the newest one not undone yet) and report.

    Restores its local refs, adds back the worktrees it removed, then puts back the ignored
    files it archived; an operation of several steps is undone whole. ``repo`` is a work tree
    or git dir of the repository, ``common_dir`` its common git dir. With ``dry_run`` nothing
    is fetched, written or journaled; outcomes say what would happen (``RESTORED`` means
    "would restore"). Holds the mutation lock while acting. Raises :class:`BranchkeeperError`
    for an empty journal or an unknown id, ``LockBusyError`` when another command holds the lock past
    ``lock_wait_s`` seconds.
    """
    journal = Journal(common_dir)
    operation, passed = _select(journal, op_id)
    if operation.undone is not None:
        return UndoReport(operation, dry_run, (), already_undone=operation.undone,
                          passed=passed)
    if dry_run:
        return replace(_undo(repo, operation, act=False), passed=passed)
    with repo_lock(common_dir, MUTATION_LOCK, wait_s=lock_wait_s), \
            deferred_signals("the undo"):
        report = replace(_undo(repo, operation, act=True), passed=passed)
        fault("undo.after_create")
        results = {i.ref: (i.outcome.value, i.reason) for i in report.items}
        results.update({w.key: (w.outcome.value, w.reason) for w in report.worktrees})
        results.update({a.key: (a.outcome.value, a.reason) for a in report.archives})
        journal.record_undo(operation.id, report.status, results)
    return report


#: The operations that removed worktrees and never deleted a ref: a ref of theirs found at
#: another tip has moved on since (it is kept as it is; the worktree goes back on it).
#: ``worktree-reap`` is one reap; ``worktree-remove`` and ``archive`` are a reap's removals in
#: older journals (and the WorktreeRemove hook's); ``worktree-retire``.
WORKTREE_OPS = frozenset({"worktree-reap", "worktree-remove", "archive", "worktree-retire"})


def _undo(repo: Path, operation: Operation, *, act: bool) -> UndoReport:
    """Refs (step by step, each from its own bundle), then worktrees, then archives."""
    items = tuple(i for step in operation.parts
                  for i in _plan(repo, replace(operation, items=step.items, bundle=step.bundle,
                                               archives=step.archives, steps=()),
                                 act=act).items)
    if operation.op in WORKTREE_OPS:
        items = tuple(_kept_as_is(i) for i in items)
    worktrees = restore_worktrees(repo, operation.items, _checkout_refs(repo, operation, items),
                                  act=act)
    not_back = frozenset(w.path for w in worktrees if w.outcome not in REF_BACK)
    archives = tuple(undo_archive(repo, a, act=act, not_back=not_back)
                     for a in operation.archives)
    return UndoReport(operation, not act, items, archives=archives, worktrees=worktrees)


def _checkout_refs(repo: Path, operation: Operation, items: tuple[UndoItem, ...]
                   ) -> list[UndoOutcome]:
    """What each item's ref is for its worktree: what undo did with it, except that a local
    ref the operation never deleted (undo ``SKIPPED`` it) counts as ``PRESENT`` when it exists
    now: a cleanup stopped after removing the worktree and before deleting the branch leaves
    the branch to check the worktree out on again (one ``for-each-ref`` when there are
    such refs)."""
    kept = [i.ref for i, u in zip(operation.items, items, strict=True)
            if u.outcome is UndoOutcome.SKIPPED and i.remote is None
            and worktree_add_argv(i) is not None]
    now = _current(repo, kept) if kept else {}
    return [UndoOutcome.PRESENT if u.outcome is UndoOutcome.SKIPPED and i.remote is None
            and i.ref in now else u.outcome for i, u in zip(operation.items, items, strict=True)]


def _kept_as_is(item: UndoItem) -> UndoItem:
    """A worktree removal never deleted its ref: one at another tip now moved on since."""
    if item.outcome is not UndoOutcome.CONFLICT or item.remote is not None:
        return item
    return replace(item, outcome=UndoOutcome.PRESENT, command="",
                   reason="moved on since the removal; kept as it is")


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
    return UndoReport(operation, not act,
                      tuple(outcomes[result_key(i.ref, i.remote)] for i in operation.items))


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
