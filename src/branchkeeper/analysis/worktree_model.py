"""Worktree dispositions, the gates that decide them, and the RETIRE gate set.

Second document: "Cleanup: isolation worktrees" (retire: unlocked, clean, free of protected ignored
content and nested worktrees, every commit it pins keeps a ref), "SKIP_UNREFERENCED_COMMIT" (the
triage command), and the reaper's dispositions (DESIGN.md vocabulary); first document, sections 7
and 8 (the checkout of the default branch, an integration line or an exempt branch is never
removed). The reaper's extra gates (activity window, proof, PR state) are composed with these in
:mod:`branchkeeper.analysis.reap_gates`.

The gate functions are pure: every fact they read is gathered first, once per worktree, by
:mod:`branchkeeper.analysis.worktree_record`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from branchkeeper.analysis.worktree_status import IgnoredVerdict, WorktreeStatus
from branchkeeper.analysis.worktree_store import WorktreeStore
from branchkeeper.git.repo import Worktree
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid


class Disposition(StrEnum):
    """What may be done with a worktree; every value but REMOVABLE keeps it."""

    REMOVABLE = "REMOVABLE"
    SKIP_DIRTY = "SKIP_DIRTY"
    SKIP_LOCKED = "SKIP_LOCKED"
    SKIP_SELF = "SKIP_SELF"
    SKIP_ACTIVE = "SKIP_ACTIVE"
    SKIP_PROTECTED_IGNORED = "SKIP_PROTECTED_IGNORED"
    SKIP_UNPROVEN = "SKIP_UNPROVEN"
    SKIP_NOT_PUSHED = "SKIP_NOT_PUSHED"
    SKIP_AMBIGUOUS_NO_PR = "SKIP_AMBIGUOUS_NO_PR"
    SKIP_PR_OPEN = "SKIP_PR_OPEN"
    SKIP_LS_REMOTE_ERROR = "SKIP_LS_REMOTE_ERROR"
    SKIP_UNREFERENCED_COMMIT = "SKIP_UNREFERENCED_COMMIT"
    HELD = "HELD"
    SKIP_NESTED = "SKIP_NESTED"
    SKIP_PRUNABLE = "SKIP_PRUNABLE"
    SKIP_PROTECTED_BRANCH = "SKIP_PROTECTED_BRANCH"
    SKIP_WORKTREE_REF = "SKIP_WORKTREE_REF"
    SKIP_SUBMODULE = "SKIP_SUBMODULE"

    @property
    def reason(self) -> str:
        """The one-line meaning of this disposition."""
        return _REASONS[self]


_REASONS: dict[Disposition, str] = {
    Disposition.REMOVABLE: "every gate passed: removing the checkout loses nothing",
    Disposition.SKIP_DIRTY: "tracked changes or untracked files would be lost",
    Disposition.SKIP_LOCKED: "the worktree is locked",
    Disposition.SKIP_SELF: "the main worktree, or the worktree this command runs in",
    Disposition.SKIP_ACTIVE: "changed within the activity window",
    Disposition.SKIP_PROTECTED_IGNORED: "it holds protected ignored files",
    Disposition.SKIP_UNPROVEN: "no proof that the branch's work is preserved",
    Disposition.SKIP_NOT_PUSHED: "the branch has unique commits that were never pushed",
    Disposition.SKIP_AMBIGUOUS_NO_PR: "pushed but unproven, and no PR says what became of it",
    Disposition.SKIP_PR_OPEN: "an open PR has this branch as its head",
    Disposition.SKIP_LS_REMOTE_ERROR: "the remote could not be asked; try again later",
    Disposition.SKIP_UNREFERENCED_COMMIT: "its detached HEAD is held by no ref: the only copy",
    Disposition.HELD: "a hold is recorded for it",
    Disposition.SKIP_NESTED: "another checkout lives inside it",
    Disposition.SKIP_PRUNABLE: "its directory is gone (git worktree prune would drop the entry)",
    Disposition.SKIP_PROTECTED_BRANCH: "the checkout of the default branch, an integration line, "
                                       "an exempt or a protected branch is never removed",
    Disposition.SKIP_WORKTREE_REF: "a ref of its own (refs/worktree, refs/bisect, "
                                   "refs/rewritten) holds commits no branch, tag or remote holds",
    Disposition.SKIP_SUBMODULE: "it has initialised submodules: git refuses to remove it",
}

#: Dispositions that no later change to the worktree resolves: a retire refused for one of
#: them records no hold (there is nothing to revisit).
PERMANENT = frozenset({Disposition.SKIP_SELF, Disposition.SKIP_PRUNABLE,
                       Disposition.SKIP_PROTECTED_BRANCH})


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate's result: ``name``, ``passed``, a one-line ``detail``, and the disposition it
    gives the worktree when it fails."""

    name: str
    passed: bool
    detail: str
    fails_as: Disposition


@dataclass(frozen=True, slots=True)
class WorktreeVerdict:
    """A worktree's disposition (from the first failing gate), its reason, every gate evaluated
    and, where relevant, the shell-quoted command to triage it by hand."""

    worktree: Worktree
    disposition: Disposition
    reason: str
    gates: tuple[Gate, ...]
    triage: str | None = None

    @property
    def blockers(self) -> tuple[Gate, ...]:
        """The failing gates, in gate order."""
        return tuple(g for g in self.gates if not g.passed)


@dataclass(frozen=True, slots=True)
class RetireInputs:
    """Everything the retire gates read, gathered beforehand.

    ``self_path``: the worktree the command runs in (resolved). ``status`` and ``ignored`` are
    ``None`` when the directory is gone. ``held_by``: one line describing an explicit hold, or
    ``None``. ``contained_in``: for a detached HEAD, a ref that contains it (``None``: no ref);
    ``containment_error``: why that could not be checked. ``status_error``: why ``git status``
    failed on a present directory (the clean gate then fails closed). ``protected``: why the
    worktree's branch is never removed (:func:`~branchkeeper.analysis.refs.protected_role`),
    or ``None``. ``store``: what its admin directory holds (per-worktree refs, submodule
    stores; ``None``: not read, or the main worktree); ``submodules``: what makes git refuse
    its removal (:func:`~branchkeeper.analysis.worktree_store.initialised_submodules`).
    """

    worktree: Worktree
    self_path: Path | None
    status: WorktreeStatus | None
    ignored: IgnoredVerdict | None
    held_by: str | None = None
    contained_in: str | None = None
    containment_error: str | None = None
    status_error: str | None = None
    protected: str | None = None
    store: WorktreeStore | None = None
    submodules: tuple[str, ...] = ()


GateFn = Callable[[RetireInputs], Gate | None]


def _present(i: RetireInputs) -> Gate:
    wt = i.worktree
    if wt.bare:
        return Gate("present", True, "the bare repository", Disposition.SKIP_PRUNABLE)
    if wt.prunable or (i.status is None and i.status_error is None):
        why = wt.prunable_reason or "directory missing"
        return Gate("present", False, f"prunable: {why}", Disposition.SKIP_PRUNABLE)
    return Gate("present", True, "directory present", Disposition.SKIP_PRUNABLE)


def _not_main(i: RetireInputs) -> Gate:
    if i.worktree.bare:
        return Gate("not_main", False, "the bare repository itself is never removed",
                    Disposition.SKIP_SELF)
    if i.worktree.is_main:
        return Gate("not_main", False, "the main worktree is never removed", Disposition.SKIP_SELF)
    return Gate("not_main", True, "a linked worktree", Disposition.SKIP_SELF)


def _not_self(i: RetireInputs) -> Gate:
    here = i.self_path
    mine = i.worktree.path.resolve() if i.worktree.path.exists() else i.worktree.path
    if here is not None and (here == mine or here.is_relative_to(mine)):
        return Gate("not_self", False, "this command runs inside it", Disposition.SKIP_SELF)
    return Gate("not_self", True, "the command runs elsewhere", Disposition.SKIP_SELF)


def _not_protected(i: RetireInputs) -> Gate | None:
    wt = i.worktree
    if wt.bare or wt.branch is None:
        return None
    name = wt.branch.removeprefix("refs/heads/")
    fails = Disposition.SKIP_PROTECTED_BRANCH
    if i.protected is not None:
        return Gate("not_protected", False, f"{name} is {i.protected}: its checkout is never "
                    "removed", fails)
    return Gate("not_protected", True, f"{name} is a work branch", fails)


def _no_hold(i: RetireInputs) -> Gate:
    if i.held_by is not None:
        return Gate("no_hold", False, i.held_by, Disposition.HELD)
    return Gate("no_hold", True, "no explicit hold", Disposition.HELD)


def _unlocked(i: RetireInputs) -> Gate:
    if i.worktree.locked:
        why = f": {i.worktree.lock_reason}" if i.worktree.lock_reason else ""
        return Gate("unlocked", False, f"locked{why}", Disposition.SKIP_LOCKED)
    return Gate("unlocked", True, "not locked", Disposition.SKIP_LOCKED)


def _sample(paths: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _clean(i: RetireInputs) -> Gate | None:
    st = i.status
    if st is None:
        if i.status_error is not None:
            return Gate("clean", False, i.status_error, Disposition.SKIP_DIRTY)
        return None
    if st.dirty:
        parts = []
        if st.tracked:
            parts.append(f"{len(st.tracked)} tracked change(s): {_sample(st.tracked)}")
        if st.untracked:
            parts.append(f"{len(st.untracked)} untracked file(s): {_sample(st.untracked)}")
        return Gate("clean", False, "; ".join(parts), Disposition.SKIP_DIRTY)
    return Gate("clean", True, "no tracked changes, no untracked files", Disposition.SKIP_DIRTY)


def nested_entries(i: RetireInputs) -> list[tuple[str, Path]]:
    """(kind, absolute path) of each checkout inside the worktree: those its status names
    (``worktree``, ``repository``), then the repositories the ignored-content scan found inside
    ignored directories, then (``unscanned``) each ignored directory too large to rule one
    out."""
    if i.status is None:
        return []
    root = i.status.path
    found = [(n.kind, n.path) for n in i.status.nested]
    seen = {n.path for n in i.status.nested}
    if i.ignored is not None:
        inside = [root / p.rstrip("/") for p in i.ignored.nested]
        found += [("repository", p) for p in inside if p.resolve() not in seen]
        found += [("unscanned", root / p.rstrip("/")) for p in i.ignored.unscanned]
    return found


def nested_lines(i: RetireInputs) -> list[str]:
    """``<kind> <path>`` for each of :func:`nested_entries`."""
    return [f"{kind} {path}" for kind, path in nested_entries(i)]


def _no_nested(i: RetireInputs) -> Gate | None:
    if i.status is None:
        return None
    found = nested_lines(i)
    if found:
        return Gate("no_nested", False, f"nested: {_sample(found)}", Disposition.SKIP_NESTED)
    return Gate("no_nested", True, "no nested checkout", Disposition.SKIP_NESTED)


def _ignored_ok(i: RetireInputs) -> Gate | None:
    v = i.ignored
    if v is None:
        return None
    if not v.ok:
        shown = _sample([f"{b.path} ({b.reason})" for b in v.blocking])
        return Gate("ignored_disposable", False, f"ignored files it would lose: {shown}",
                    Disposition.SKIP_PROTECTED_IGNORED)
    detail = (f"{len(v.disposable)} ignored path(s), all disposable" if v.disposable
              else "no ignored files")
    return Gate("ignored_disposable", True, detail, Disposition.SKIP_PROTECTED_IGNORED)


def _commit_kept(i: RetireInputs) -> Gate | None:
    wt = i.worktree
    if wt.bare:
        return None
    if wt.branch is not None:
        name = wt.branch.removeprefix("refs/heads/")
        return Gate("commit_kept", True, f"branch {name} keeps it",
                    Disposition.SKIP_UNREFERENCED_COMMIT)
    if wt.head is None:
        return Gate("commit_kept", True, "no commit", Disposition.SKIP_UNREFERENCED_COMMIT)
    if i.containment_error is not None:
        return Gate("commit_kept", False, f"could not check ({i.containment_error})",
                    Disposition.SKIP_UNREFERENCED_COMMIT)
    if i.contained_in is None:
        return Gate("commit_kept", False, f"detached HEAD {wt.head.short} is in no ref",
                    Disposition.SKIP_UNREFERENCED_COMMIT)
    return Gate("commit_kept", True, f"detached HEAD {wt.head.short} is in {i.contained_in}",
                Disposition.SKIP_UNREFERENCED_COMMIT)


def _refs_kept(i: RetireInputs) -> Gate | None:
    st, fails = i.store, Disposition.SKIP_WORKTREE_REF
    if st is None:
        return None
    if st.error is not None:
        return Gate("refs_kept", False, f"could not check its own refs: {st.error}", fails)
    if st.held:
        shown = _sample([f"{h.ref} ({h.count} commit(s))" for h in st.held])
        return Gate("refs_kept", False, f"its own refs hold commits no branch, tag or remote "
                    f"holds: {shown}", fails)
    return Gate("refs_kept", True, "no ref of its own holds a commit only it has", fails)


def _no_submodule(i: RetireInputs) -> Gate | None:
    if i.status is None or i.worktree.is_main:
        return None
    fails = Disposition.SKIP_SUBMODULE
    if i.submodules:
        return Gate("no_submodule", False, f"initialised submodule(s): {_sample(i.submodules)}; "
                    "git refuses to remove it: check that their commits are on their remotes "
                    "(triage), then remove it by hand", fails)
    return Gate("no_submodule", True, "no initialised submodule", fails)


#: The retire gates, in the order a disposition is chosen (first failing gate wins). The
#: submodule gate is last: when it alone fails, removing by hand loses only what the
#: submodules hold.
RETIRE_GATES: tuple[GateFn, ...] = (
    _present, _not_main, _not_self, _not_protected, _no_hold, _unlocked, _clean, _no_nested,
    _ignored_ok, _commit_kept, _refs_kept, _no_submodule,
)

#: What a submodule's checkout holds that no remote has: run in each one by ``triage``.
SUBMODULE_CHECK = "git log --oneline HEAD --branches --not --remotes"


def triage_command(path: Path, head: Oid) -> str:
    """``git -C <path> branch -r --contains <sha>``, shell-quoted (second document)."""
    return shlex.join(["git", "-C", str(path), "branch", "-r", "--contains", str(head)])


def triage_for(disposition: Disposition, wt: Worktree) -> str | None:
    """The shell-quoted command to triage a worktree kept as ``disposition`` by hand:
    :func:`triage_command` for ``SKIP_UNREFERENCED_COMMIT``; for ``SKIP_SUBMODULE``,
    ``git -C <path> submodule foreach --recursive '<SUBMODULE_CHECK>'`` (the commits each
    submodule holds that no remote has); else ``None``."""
    if disposition is Disposition.SKIP_UNREFERENCED_COMMIT and wt.head is not None:
        return triage_command(wt.path, wt.head)
    if disposition is Disposition.SKIP_SUBMODULE:
        return shlex.join(["git", "-C", str(wt.path), "submodule", "foreach", "--recursive",
                           SUBMODULE_CHECK])
    return None


def evaluate(inputs: RetireInputs, gates: Sequence[GateFn] = RETIRE_GATES) -> WorktreeVerdict:
    """Run ``gates`` over ``inputs``; the first failing gate gives the disposition.

    A gate returning ``None`` does not apply (e.g. no status for a missing directory).
    """
    results = tuple(g for g in (fn(inputs) for fn in gates) if g is not None)
    failed = [g for g in results if not g.passed]
    disposition = failed[0].fails_as if failed else Disposition.REMOVABLE
    reason = failed[0].detail if failed else disposition.reason
    return WorktreeVerdict(inputs.worktree, disposition, reason, results,
                           triage_for(disposition, inputs.worktree))


def keeps_text(v: WorktreeVerdict, *, gone: bool) -> str:
    """Why ``retire`` keeps the worktree of verdict ``v``, in the words every command prints
    after "its worktree <path> ": ``is gone (prunable: <why>) and holds nothing`` when ``gone``
    (:attr:`~branchkeeper.analysis.worktree_record.WorktreeRecord.gone`), ``is locked
    (<reason>)`` when a lock is all that keeps it, else ``holds work``."""
    blockers = v.blockers
    if gone:
        why = next((g.detail for g in blockers if g.name == "present"), "prunable")
        return f"is gone ({why}) and holds nothing"
    if [g.name for g in blockers] == ["unlocked"]:
        reason = v.worktree.lock_reason
        return f"is locked ({reason})" if reason else "is locked"
    return "holds work"


#: The ref namespaces whose refs keep a commit (section 11's ``contained_elsewhere`` plus ours).
KEEPING_REFS = ("refs/heads", "refs/remotes", "refs/tags", "refs/branchkeeper")


def ref_containing(root: Path, oid: Oid) -> str | None:
    """One ref (full name) under :data:`KEEPING_REFS` whose history contains ``oid``, or ``None``
    (one ``for-each-ref --contains``). Raises :class:`GitError` when git fails."""
    out = run_git(["for-each-ref", "--contains", str(oid), "--count=1", "--format=%(refname)",
                   *KEEPING_REFS], cwd=root).text.strip()
    return out or None


def containing_refs(root: Path, oid: Oid) -> tuple[str | None, str | None]:
    """(a remote-tracking ref containing ``oid``, else a local ref under :data:`KEEPING_REFS`
    containing it) in one ``for-each-ref --contains``. Raises :class:`GitError` when git
    fails."""
    out = run_git(["for-each-ref", "--contains", str(oid), "--format=%(refname)",
                   "refs/remotes", "refs/heads", "refs/tags", "refs/branchkeeper"],
                  cwd=root).text.split("\n")
    refs = [r for r in out if r]
    remote = next((r for r in refs if r.startswith("refs/remotes/")
                   and not r.endswith("/HEAD")), None)
    local = None if remote is not None else next(iter(refs), None)
    return remote, local
