"""Compare-and-swap ref deletion and creation in one transaction (DESIGN.md guarantee 2).

Every deletion goes through ONE ``git update-ref --no-deref --stdin -z`` transaction of
``delete <ref> NUL <old> NUL`` lines: git deletes a ref only while it still points at the tip the
proof was made for, and the whole batch applies or none of it does. When the transaction fails
because some ref moved (a commit landed between the proof and the delete), one ``for-each-ref``
finds which refs no longer match; those are reported ``raced`` and kept, and the rest are tried
once more. Symbolic refs are never touched (deleting one through ``update-ref`` without
``--no-deref`` would delete its target).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from branchkeeper import clock
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locks import STALE_AFTER_S, git_running_in, ref_lock_files, repository_places
from branchkeeper.git.locks import describe as describe_locks
from branchkeeper.git.parse import records
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.statedir import find_common_dir

#: Set, to the id of the journal operation that bundled them, on our own deletes only: the
#: ``reference-transaction`` hook then lets them pass without keeping their tips a second time
#: (:mod:`branchkeeper.actions.githook` checks the operation in the journal).
OWN_DELETE_ENV = "BRANCHKEEPER_OWN_DELETE"


class RefOutcome(Enum):
    """What happened to one ref in a transaction."""

    DELETED = "deleted"
    #: the ref no longer pointed at the expected tip (or was already gone); it was kept.
    RACED = "raced"
    CREATED = "created"
    #: create: the ref already existed at the requested tip; nothing to do.
    PRESENT = "present"
    #: create: the ref exists at another tip; it was not overwritten.
    CONFLICT = "conflict"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class RefResult:
    """One ref's outcome: ``expected`` is the tip asked for, ``found`` the tip seen when it
    differed (``None``: no such ref), ``reason`` a one-line explanation (git's stderr on a
    failure)."""

    ref: str
    outcome: RefOutcome
    expected: Oid
    found: Oid | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _RefState:
    oid: Oid
    symref: str


def _snapshot(repo: Path) -> dict[str, _RefState]:
    """Every ref with its oid and symbolic target (one ``for-each-ref``)."""
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"],
                  cwd=repo).stdout
    snap: dict[str, _RefState] = {}
    for name, oid, symref in records(out, fields=3):
        if oid:  # a dangling symbolic ref prints an empty objectname
            snap[name] = _RefState(Oid.parse(oid), symref)
    return snap


def _check_names(refs: Mapping[str, Oid]) -> None:
    for ref in refs:
        if not ref.startswith("refs/") or "\0" in ref:
            raise ValueError(f"not a full ref name: {ref!r}")


class RefLockError(BranchkeeperError):
    """A lock file sits under a ref the transaction would update (left by a killed git, or
    held by one running now); nothing was changed. The message names the files and, for
    stale ones, the command that clears them: branchkeeper never deletes a lock itself."""


def check_ref_locks(repo: Path, refs: Iterable[str]) -> None:
    """Refuse, before any ref transaction, when a ``*.lock`` file sits under one of ``refs``
    (full names) or ``packed-refs``: :class:`RefLockError` with one line (stale: older than
    :data:`~branchkeeper.git.locks.STALE_AFTER_S` and no git running in the repository; else
    busy). Costs one ``lstat`` per ref and no git process; ``/proc`` is read only when a lock
    exists."""
    common = find_common_dir(Path(repo))
    locks = ref_lock_files(common, refs, now=clock.now())
    if not locks:
        return
    stale = min(lock.age_s for lock in locks) >= STALE_AFTER_S and \
        not git_running_in(repository_places(common))
    raise RefLockError(describe_locks(locks, common, stale=stale))


def _transaction(repo: Path, lines: list[str], *, own_op: str | None = None) -> str | None:
    """Run one ``update-ref --stdin -z`` transaction; git's stderr on failure, None on success.
    ``own_op``: the journal operation whose bundle holds the refs deleted (see
    :data:`OWN_DELETE_ENV`)."""
    data = "".join(lines).encode("utf-8", "surrogateescape")
    result = run_git(["update-ref", "--no-deref", "--stdin", "-z"], cwd=repo, stdin=data,
                     check=False, env={OWN_DELETE_ENV: own_op} if own_op else None)
    if result.returncode == 0:
        return None
    return result.stderr.decode("utf-8", "replace").strip() or f"exit {result.returncode}"


def delete_refs_cas(repo: Path, expected: Mapping[str, Oid], *,
                    own_op: str | None = None) -> dict[str, RefResult]:
    """Delete each ref of ``expected`` (full name -> proven tip) only at exactly that tip.

    ``own_op`` names the open journal operation whose verified bundle holds every ref of
    ``expected``: the ``reference-transaction`` hook then lets the deletes pass without keeping
    their tips again. Leave it ``None`` for deletes no bundle covers.

    Returns ref -> :class:`RefResult` with outcome ``DELETED``, ``RACED`` (moved or gone; kept) or
    ``FAILED`` (a symbolic ref, or git refused the transaction for another reason; ``reason``
    holds git's stderr). One transaction in the normal case, at most two. Raises ``GitError`` only
    when git cannot list refs at all, ``ValueError`` for a name that is not a full ref name,
    :class:`RefLockError` when a lock file sits under one of the refs (nothing is changed).
    Implements DESIGN.md guarantee 2 and issue 3 section 3.
    """
    _check_names(expected)
    check_ref_locks(repo, expected)
    results: dict[str, RefResult] = {}
    todo = dict(expected)
    for attempt in range(2):
        snap = _snapshot(repo)
        for ref, old in list(todo.items()):
            state = snap.get(ref)
            if state is not None and state.symref:
                results[ref] = RefResult(ref, RefOutcome.FAILED, old, state.oid,
                                         f"symbolic ref to {state.symref}; not deleted")
            elif state is None or state.oid != old:
                found = None if state is None else state.oid
                why = "no longer exists" if state is None else f"moved to {found}"
                results[ref] = RefResult(ref, RefOutcome.RACED, old, found, f"{why}; kept")
            else:
                continue
            del todo[ref]
        if not todo:
            break
        error = _transaction(repo, [f"delete {ref}\0{old}\0" for ref, old in todo.items()],
                             own_op=own_op)
        if error is None:
            for ref, old in todo.items():
                results[ref] = RefResult(ref, RefOutcome.DELETED, old)
            todo = {}
            break
        if attempt == 1:
            for ref, old in todo.items():
                results[ref] = RefResult(ref, RefOutcome.FAILED, old, reason=error)
    return {ref: results[ref] for ref in expected}


def missing_commits(repo: Path, oids: list[Oid]) -> set[Oid]:
    """The oids of ``oids`` that are not commits in the object store (one ``cat-file``)."""
    if not oids:
        return set()
    data = "".join(f"{o}\n" for o in oids).encode()
    out = run_git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=repo,
                  stdin=data).text
    missing: set[Oid] = set()
    for oid, line in zip(oids, out.splitlines(), strict=True):
        if not line.endswith(" commit"):  # "<oid> missing", or not a commit
            missing.add(oid)
    return missing


def create_refs(
    repo: Path, refs: Mapping[str, Oid], *, must_not_exist: bool, check_locks: bool = True
) -> dict[str, RefResult]:
    """Create each ref of ``refs`` (full name -> tip) in one transaction (the restore path).

    With ``must_not_exist`` a ref that exists at another tip is never overwritten: it is
    ``CONFLICT``; one already at the requested tip is ``PRESENT``. Without it, existing refs are
    moved to the requested tip (``CREATED``). A tip whose commit is not in the object store is
    ``FAILED`` ("object missing") and nothing is written for it. Returns ref -> RefResult.
    Raises ``ValueError`` for a name that is not a full ref name, :class:`RefLockError` when
    a lock file sits under one of the refs (nothing is changed). ``check_locks=False`` skips
    that pre-check: the git hook keeps tips while git itself still holds ``packed-refs.lock``
    (its nested transaction), and git's own locking still guards the update.
    """
    _check_names(refs)
    if check_locks:
        check_ref_locks(repo, refs)
    results: dict[str, RefResult] = {}
    missing = missing_commits(repo, list(dict.fromkeys(refs.values())))
    todo: dict[str, Oid] = {}
    for ref, new in refs.items():
        if new in missing:
            results[ref] = RefResult(ref, RefOutcome.FAILED, new, reason="object missing")
        else:
            todo[ref] = new
    for attempt in range(2):
        if not todo:
            break
        snap = _snapshot(repo)
        for ref, new in list(todo.items()):
            state = snap.get(ref)
            if state is None:
                continue
            if state.symref:
                results[ref] = RefResult(ref, RefOutcome.CONFLICT, new, state.oid,
                                         f"exists as a symbolic ref to {state.symref}")
            elif state.oid == new:
                results[ref] = RefResult(ref, RefOutcome.PRESENT, new)
            elif must_not_exist:
                results[ref] = RefResult(ref, RefOutcome.CONFLICT, new, state.oid,
                                         f"exists at {state.oid}")
            else:
                continue
            del todo[ref]
        if not todo:
            break
        if must_not_exist:
            lines = [f"create {ref}\0{new}\0" for ref, new in todo.items()]
        else:
            lines = [f"update {ref}\0{new}\0\0" for ref, new in todo.items()]
        error = _transaction(repo, lines)
        if error is None:
            for ref, new in todo.items():
                results[ref] = RefResult(ref, RefOutcome.CREATED, new)
            todo = {}
        elif attempt == 1:
            for ref, new in todo.items():
                results[ref] = RefResult(ref, RefOutcome.FAILED, new, reason=error)
    return {ref: results[ref] for ref in refs}
