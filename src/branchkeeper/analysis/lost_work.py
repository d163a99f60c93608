"""LOST WORK RISK: every piece of work that exists only in this clone, and the one command that
secures each (issue 12, section 4; first document, section 4, "Contained nowhere").

Kinds, in the order they are listed (most at risk first):

- ``unpushed_branch``: a branch with commits no remote-tracking ref holds (the inventory's
  ``nowhere`` containment, the default branch and lines included): ``git push -u``;
- ``detached_commit``: a worktree's detached HEAD that no ref holds: push it to a new branch;
- ``worktree_ref``: a linked worktree's own ref (``refs/worktree/*``, ``refs/bisect/*``,
  ``refs/rewritten/*``) holding commits no branch, tag or remote holds: push its tip to a new
  branch (or create one, without a remote);
- ``submodule_store``: a submodule store (``<admin dir>/modules/<name>``) of a worktree whose
  directory is gone: ``git worktree prune`` would delete it: push its branches and HEAD;
- ``dirty_worktree``: uncommitted changes or untracked files in a worktree (the main one
  included): commit the named paths and push the commit. On a work branch the commit goes onto
  it and the branch is pushed; on the default branch, an integration line, an exempt or a
  protected branch, or a detached HEAD, the worktree first switches to a branch of its own
  (``rescue/wip-<dir>-<sha>``), so a WIP commit never lands on a shared branch;
- ``stash``: a stash entry (``refs/stash``'s reflog is never pushed): push it to a branch;
- ``kept_ref``: a ref under ``refs/branchkeeper/`` (pinned, reaped, kept, undo keepers) whose
  commits no remote holds: push it to a branch;
- ``ignored_files``: a linked worktree holding ignored files the ignored-content rule keeps (a
  removal would lose them; the main worktree is never removed): archive them before a removal,
  or commit what belongs in git.

Bounded: the worktree facts come from the one worktree record per worktree (one ``status``
each, inside the caller's budget); stashes from one ``git stash list``; our refs from one
``for-each-ref`` and, when there are any, one ``rev-list``. Nothing here prints.

Every command secures its piece on its own and none undoes another's: run top to bottom, the
whole list leaves nothing only local (a branch pushed before its worktree's WIP commit is
pushed again with it).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from branchkeeper.analysis.hidden_edits import unflag_command
from branchkeeper.analysis.worktree_store import HeldRef, unique_counts
from branchkeeper.git.parse import records
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid, push_argv
from branchkeeper.model.hook_command import INSTALL_FILES
from branchkeeper.model.records import BranchRecord

if TYPE_CHECKING:
    from branchkeeper.analysis.inventory import Inventory
    from branchkeeper.analysis.worktree_record import WorktreeRecord

#: Most paths a suggested ``git add`` names; more are added with ``git add -A`` minus the
#: untracked files ``branchkeeper install`` writes (``INSTALL_FILES``).
MAX_NAMED_PATHS = 10

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class LostKind(StrEnum):
    """The kinds of local-only work, in listing order."""

    UNPUSHED_BRANCH = "unpushed_branch"
    DETACHED_COMMIT = "detached_commit"
    WORKTREE_REF = "worktree_ref"
    SUBMODULE_STORE = "submodule_store"
    DIRTY_WORKTREE = "dirty_worktree"
    STASH = "stash"
    KEPT_REF = "kept_ref"
    IGNORED_FILES = "ignored_files"


_ORDER = {k: i for i, k in enumerate(LostKind)}


@dataclass(frozen=True, slots=True)
class LostWork:
    """One piece of work that exists only in this clone.

    ``subject``: the branch name, worktree path, ``stash@{N}`` or ref; ``detail``: one line of
    what is at risk; ``secure``: the one shell-quoted command that secures it; ``count``: commits
    or files at risk (``None``: unknown); ``age_days``: how old it is, where known.
    """

    kind: LostKind
    subject: str
    detail: str
    secure: str
    count: int | None = None
    age_days: float | None = None
    worktree: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind.value, "subject": self.subject, "detail": self.detail,
                "secure": self.secure, "count": self.count, "age_days": self.age_days,
                "worktree": self.worktree}


def lost_parts(i: LostWork) -> tuple[str, str, str]:
    """How the sweep's LOST WORK RISK section words one piece of work: (what it is, shown
    bold: ``feat``, ``worktree /path``, ``stash@{0}``, ``ref refs/...``; what is at risk;
    ``secure it: <command>``, or ``keep them: ...`` for ignored files)."""
    if i.kind is LostKind.UNPUSHED_BRANCH:
        age = "?" if i.age_days is None else f"{i.age_days:.0f}d"
        rest = (f"{'?' if i.count is None else i.count} commit(s) no remote holds, {age} old"
                + (f", worktree {i.worktree}" if i.worktree else ""))
        head = i.subject
    else:
        label = {LostKind.STASH: "", LostKind.KEPT_REF: "ref "}.get(i.kind, "worktree ")
        head, rest = f"{label}{i.subject}", i.detail
    verb = "keep them" if i.kind is LostKind.IGNORED_FILES else "secure it"
    return head, rest, f"{verb}: {i.secure}"


def risk_line(i: LostWork) -> str:
    """One piece of work as one line, in the sweep's words (:func:`lost_parts`):
    ``LOST WORK RISK: worktree /path  1 uncommitted or untracked file(s): a; secure it: ...``,
    what the creation denials print for a listed branch's worktree."""
    head, rest, action = lost_parts(i)
    return f"LOST WORK RISK: {head}  {rest}; {action}"


def worktree_risks(lost: Sequence[LostWork]) -> dict[str, list[str]]:
    """Worktree path -> the :func:`risk_line` of each piece of work in it that is not a
    branch's commits (its uncommitted files, a detached commit, ignored files): what the
    last-sweep file keeps for the creation denials."""
    out: dict[str, list[str]] = {}
    for i in lost:
        if i.kind is not LostKind.UNPUSHED_BRANCH and i.worktree:
            out.setdefault(i.worktree, []).append(risk_line(i))
    return out


@dataclass(frozen=True, slots=True)
class Stash:
    """One stash entry: its commit, ``stash@{N}``, commit time (unix s), subject."""

    oid: Oid
    name: str
    time: int
    subject: str


def commit_command(worktree: str, paths: Sequence[str], *, message: str = "WIP: save work") \
        -> str | None:
    """``git -C <worktree> add -- <paths> && git -C <worktree> commit -m <message>``, naming
    each path (at most :data:`MAX_NAMED_PATHS`; past that ``add -A`` with the files
    ``branchkeeper install`` writes excluded, unless ``paths`` names one: a tracked one changed
    is work). ``paths`` come from the one reading of the worktree
    (:func:`branchkeeper.analysis.hidden_edits.read_work`), the install's untracked files
    already left out. ``None`` when ``paths`` is empty."""
    work = list(dict.fromkeys(paths))
    if not work:
        return None
    if len(work) <= MAX_NAMED_PATHS:
        add = shlex.join(["git", "-C", worktree, "add", "--", *work])
    else:
        add = shlex.join(["git", "-C", worktree, "add", "-A", "--", ".",
                          *(f":(exclude,literal){f}" for f in INSTALL_FILES if f not in work)])
    return add + " && " + shlex.join(["git", "-C", worktree, "commit", "-m", message])


def _rescue_name(prefix: str, label: str, oid: Oid) -> str:
    base = _SAFE.sub("-", label).strip(".-")[:40] or "work"
    return f"rescue/{prefix}{base}-{oid.short}"


def read_stashes(root: Path) -> list[Stash]:
    """Every stash entry, newest first (one ``git stash list``; none: ``[]``). A git error
    reads as no stash rather than failing a sweep."""
    res = run_git(["stash", "list", "--format=%H%x00%gd%x00%ct%x00%gs"], cwd=root, check=False)
    if res.returncode != 0:
        return []
    out: list[Stash] = []
    for oid, name, stamp, subject in records(res.stdout, fields=4):
        out.append(Stash(Oid.parse(oid), name, int(stamp or 0), subject))
    return out


def unsecured_stashes(root: Path, stashes: list[Stash]) -> list[Stash]:
    """The ``stashes`` whose commit no remote-tracking ref contains (a stash pushed the way
    the sweep says, and fetched back, is no longer at risk). One ``rev-list`` when there are
    stashes; a git error keeps them all (at risk is the safe answer)."""
    if not stashes:
        return stashes
    res = run_git(["rev-list", *dict.fromkeys(str(s.oid) for s in stashes), "--not",
                   "--remotes", "--"], cwd=root, check=False)
    if res.returncode != 0:
        return stashes
    local = set(res.stdout.decode("ascii", "replace").split())
    return [s for s in stashes if str(s.oid) in local]


def read_kept_refs(root: Path) -> dict[str, tuple[Oid, int]]:
    """Our refs (``refs/branchkeeper/*``) holding commits that neither a remote-tracking ref
    nor a local branch holds: ref -> (tip, commits reachable from it and from neither). A
    commit a local branch holds is listed with that branch (pushed, or unpushed work of its
    own), not twice: a kept tip whose branch ``undo`` brought back is that branch's. One
    ``for-each-ref`` and, when there are such refs, one ``rev-list``."""
    listed = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(objecttype)",
                      "refs/branchkeeper"], cwd=root).stdout
    tips = {ref: Oid.parse(oid) for ref, oid, kind in records(listed, fields=3)
            if kind == "commit"}
    return unique_counts(root, tips, ("--remotes", "--branches"))


def _branch_items(branches: Sequence[BranchRecord], remote: str) -> list[LostWork]:
    items: list[LostWork] = []
    for r in branches:
        if not r.lost_work_risk:
            continue
        n = r.unpushed
        detail = f"{'?' if n is None else n} commit(s) no remote holds"
        if r.worktree:
            detail += f", worktree {r.worktree}"
        secure = shlex.join(push_argv(remote, r.name))
        items.append(LostWork(LostKind.UNPUSHED_BRANCH, r.name, detail, secure, n, r.age_days,
                              r.worktree))
    return items


@dataclass(frozen=True, slots=True)
class WorktreeWork:
    """What one worktree holds that a lost-work list reads (from its worktree record)."""

    path: str
    head: Oid | None
    detached_unreferenced: bool
    dirty: tuple[str, ...]
    kept_ignored: tuple[str, ...]
    age_days: float | None
    prunable: bool = False
    #: the checked-out branch's short name (None: detached) and whether it is shared (the
    #: default branch, an integration line, exempt or protected: no WIP commit goes onto it)
    branch: str | None = None
    shared: bool = True
    #: the edits among ``dirty`` that ``git status`` and ``git add`` do not see (a
    #: skip-worktree or assume-unchanged flag: :mod:`branchkeeper.analysis.hidden_edits`)
    hidden: tuple[str, ...] = ()
    #: its own refs holding commits nothing else holds; its submodule stores (prunable only)
    held: tuple[HeldRef, ...] = ()
    stores: tuple[Path, ...] = ()


def _prunable_item(w: WorktreeWork, head: Oid, remote: str | None) -> LostWork:
    """The detached HEAD of a worktree whose directory is gone: only its admin entry names
    the commit, and ``git worktree prune`` drops it (the commands run from the repository:
    the worktree's directory is not there to run them in)."""
    secure = rescue_command(Path(w.path).name, head, remote)
    return LostWork(LostKind.DETACHED_COMMIT, w.path,
                    f"detached HEAD {head.short} of a worktree whose directory is gone (prunable)"
                    " is held by no ref: git worktree prune would lose it", secure, None,
                    w.age_days, w.path)


def rescue_name(label: str, commit: Oid) -> str:
    """The branch ``rescue/<label>-<short sha>`` that keeps ``commit`` for the sweep's secure-it
    commands; ``label`` (a worktree's directory name) made safe for a ref, at most 40
    characters."""
    return _rescue_name("", label, commit)


def rescue_command(label: str, commit: Oid, remote: str | None) -> str:
    """The one command, run from the repository, that keeps ``commit`` (held by no ref) on
    the branch ``rescue/<label>-<short sha>``: pushed to ``remote`` (``git push REMOTE
    SHA:refs/heads/NAME``), or, with no remote configured (``None``), ``git branch NAME
    SHA``. ``label``: a worktree's directory name, made safe for a ref."""
    name = _rescue_name("", label, commit)
    return (shlex.join(["git", "push", remote, f"{commit}:refs/heads/{name}"]) if remote
            else shlex.join(["git", "branch", name, str(commit)]))


def store_rescue_command(worktree: str, store: str) -> str:
    """The one command that secures the submodule store ``store`` (a path) of the worktree
    at ``worktree``: push its branches and its HEAD (a detached submodule commit) to
    ``origin``, the HEAD as ``rescue/<dir>-<store name>``."""
    name = "rescue/" + (_SAFE.sub("-", f"{Path(worktree).name}-{Path(store).name}")
                        .strip(".-")[:40] or "submodule")
    return shlex.join(["git", "--git-dir", store, "push", "origin",
                       "refs/heads/*:refs/heads/*", f"HEAD:refs/heads/{name}"])


def save_command(w: WorktreeWork, remote: str | None) -> str | None:
    """The command that secures the dirty worktree ``w``: :func:`secure_command` for its
    checkout."""
    return secure_command(w.path, w.dirty, branch=w.branch, shared=w.shared, head=w.head,
                          remote=remote, hidden=w.hidden)


def secure_command(path: str, dirty: Sequence[str], *, branch: str | None, shared: bool,
                   head: Oid | None, remote: str | None, message: str = "WIP: save work",
                   hidden: Sequence[str] = ()) -> str | None:
    """The one command that secures a worktree's uncommitted ``dirty`` paths
    (:func:`commit_command`), then pushes the commit to ``remote`` (:func:`push_argv`): onto
    its work ``branch``, or, for a ``shared`` branch or a detached HEAD (``branch`` None), onto
    a branch of its own the worktree switches to first (``switch -c rescue/wip-<dir>-<sha>``
    from ``head``: a WIP commit never goes onto a shared branch). ``remote`` None (none is
    configured): the commit stays local, and nothing is said of pushing. ``None`` when ``dirty``
    is empty. ``hidden``: the edits among ``dirty`` a flag hides from
    ``git add``; the command clears the flag first (:func:`unflag_command`). Used by the
    lost-work list and the Stop guard."""
    command = commit_command(path, dirty, message=message)
    if command is None:
        return None
    unflag = unflag_command(path, hidden)
    command = command if unflag is None else unflag + " && " + command
    if (shared or branch is None) and head is not None:
        branch = _rescue_name("wip-", Path(path).name, head)
        command = shlex.join(["git", "-C", path, "switch", "-c", branch]) + " && " + command
    if remote is None or branch is None:
        return command
    return command + " && " + shlex.join(["git", "-C", path, *push_argv(remote, branch)[1:]])


def _store_items(w: WorktreeWork, remote: str | None) -> list[LostWork]:
    """The per-worktree refs and (of a prunable worktree) the submodule stores of ``w``."""
    items: list[LostWork] = []
    for h in w.held:
        name = _rescue_name("", f"{Path(w.path).name}-{h.ref.rsplit('/', 1)[-1]}", h.tip)
        secure = (shlex.join(["git", "push", remote, f"{h.tip}:refs/heads/{name}"]) if remote
                  else shlex.join(["git", "branch", name, str(h.tip)]))
        items.append(LostWork(LostKind.WORKTREE_REF, w.path,
                              f"its own ref {h.ref} holds {h.count} commit(s) no branch, tag or "
                              "remote holds", secure, h.count, w.age_days, w.path))
    for store in w.stores:
        items.append(LostWork(
            LostKind.SUBMODULE_STORE, w.path,
            f"submodule store {store} of a worktree whose directory is gone (prunable): "
            "git worktree prune would delete it and the submodule commits only it holds",
            store_rescue_command(w.path, str(store)),
            None, w.age_days, w.path))
    return items


def _worktree_items(w: WorktreeWork, remote: str | None) -> list[LostWork]:
    items: list[LostWork] = _store_items(w, remote)
    if w.detached_unreferenced and w.head is not None and w.prunable:
        items.append(_prunable_item(w, w.head, remote))
    elif w.detached_unreferenced and w.head is not None:
        name = _rescue_name("", Path(w.path).name, w.head)
        secure = (shlex.join(["git", "-C", w.path, "push", remote, f"HEAD:refs/heads/{name}"])
                  if remote else shlex.join(["git", "-C", w.path, "switch", "-c", name]))
        items.append(LostWork(LostKind.DETACHED_COMMIT, w.path,
                              f"detached HEAD {w.head.short} is held by no ref", secure, None,
                              w.age_days, w.path))
    command = save_command(w, remote)
    if command is not None:
        work = list(w.dirty)
        shown = ", ".join(work[:3]) + (f" and {len(work) - 3} more" if len(work) > 3 else "")
        items.append(LostWork(LostKind.DIRTY_WORKTREE, w.path,
                              f"{len(work)} uncommitted or untracked file(s): {shown}", command,
                              len(work), w.age_days, w.path))
    if w.kept_ignored:
        shown = ", ".join(w.kept_ignored[:3]) + (
            f" and {len(w.kept_ignored) - 3} more" if len(w.kept_ignored) > 3 else "")
        items.append(LostWork(
            LostKind.IGNORED_FILES, w.path,
            f"{len(w.kept_ignored)} ignored file(s) a removal would lose: {shown}",
            shlex.join(["branchkeeper", "worktree", "retire", "--archive-ignored", w.path]),
            len(w.kept_ignored), w.age_days, w.path))
    return items


def lost_work(branches: Sequence[BranchRecord], worktrees: Sequence[WorktreeWork],
              stashes: Sequence[Stash], kept_refs: dict[str, tuple[Oid, int]], *,
              remote: str | None, now: float) -> list[LostWork]:
    """Every piece of local-only work, most at risk first (kind order, then oldest first).
    ``remote``: the configured remote, or ``None`` when there is none (then the commands keep
    the work on a local branch instead of pushing it)."""
    items = _branch_items(branches, remote or "origin") if remote else []
    for w in worktrees:
        items += _worktree_items(w, remote)
    for s in stashes:
        index = s.name.removeprefix("stash@{").removesuffix("}")
        name = f"stash/{index}-{s.oid.short}"
        secure = (shlex.join(["git", "push", remote, f"{s.oid}:refs/heads/{name}"]) if remote
                  else shlex.join(["git", "branch", name, s.name]))
        items.append(LostWork(LostKind.STASH, s.name, s.subject or "a stash entry", secure, None,
                              round(max(now - s.time, 0.0) / 86400.0, 2) if s.time else None))
    if remote:  # without a remote there is nothing to compare our refs with
        for ref, (tip, count) in sorted(kept_refs.items()):
            name = _rescue_name("", ref.rsplit("/", 1)[-1], tip)
            items.append(LostWork(LostKind.KEPT_REF, ref, f"{count} commit(s) no remote holds",
                                  shlex.join(["git", "push", remote, f"{ref}:refs/heads/{name}"]),
                                  count))
    return sorted(items, key=lambda i: (_ORDER[i.kind], -(i.age_days or 0.0), i.subject))


def worktree_work(records: Sequence[WorktreeRecord]) -> list[WorktreeWork]:
    """What each classified worktree holds that is local-only (bare ones skipped; of one whose
    directory is gone, a prunable entry, only a detached HEAD no ref holds, its own refs'
    commits and its submodule stores: the entry is all that holds them; a worktree whose
    status could not be read is left out: it is not known to be at risk)."""
    out: list[WorktreeWork] = []
    for r in records:
        wt, st, inputs = r.worktree, r.status, r.inputs
        unreferenced = r.unreferenced_head is not None
        store = inputs.base.store
        held = store.held if store is not None else ()
        if wt.prunable and not wt.bare:
            stores = tuple(store.admin / "modules" / m for m in store.modules) \
                if store is not None else ()
            if unreferenced or held or stores:
                out.append(WorktreeWork(str(wt.path), wt.head, unreferenced, (), (), None,
                                        prunable=True, held=held, stores=stores))
            continue
        if wt.bare or st is None:
            continue
        ignored = inputs.base.ignored
        idle = r.idle_hours
        # The main worktree is never removed, so no removal can lose its ignored files; and a
        # checkout nested in an ignored directory is a worktree of its own, judged on its own.
        kept = () if wt.is_main or ignored is None else tuple(
            k for k in ignored.kept if k not in ignored.nested
            and not any(n.path.is_relative_to(wt.path / k) for n in st.nested))
        branch = wt.branch.removeprefix("refs/heads/") if wt.branch is not None else None
        out.append(WorktreeWork(str(wt.path), wt.head, unreferenced, (*st.tracked, *st.untracked),
                                kept, None if idle is None else round(idle / 24.0, 2),
                                branch=branch, shared=inputs.base.protected is not None,
                                hidden=st.hidden, held=held))
    return out


def read_lost_work(root: Path, branches: Sequence[BranchRecord],
                   records: Sequence[WorktreeRecord], *, remote: str | None,
                   now: float) -> list[LostWork]:
    """:func:`lost_work` of a repository: the inventory's ``branches``, the worktree
    ``records``, plus its stashes no remote-tracking ref holds and our refs read here (one
    ``stash list``, one ``rev-list`` when there are stashes, one ``for-each-ref``, one
    ``rev-list`` when there are such refs)."""
    stashes = read_stashes(root)
    if remote:
        stashes = unsecured_stashes(root, stashes)
    return lost_work(branches, worktree_work(records), stashes,
                     read_kept_refs(root) if remote else {}, remote=remote, now=now)


class LocalWork(NamedTuple):
    """What a sweep reads beside its inventory: every piece of local-only work (``lost``), the
    worktree survey's ``notes`` and its ``worktrees`` (one record per worktree, ``worktree
    list`` order: what ``retire`` would do with each, read by the sweep's suggestions)."""

    lost: list[LostWork]
    notes: list[str]
    worktrees: list[WorktreeRecord]


def survey_local_work(inventory: Inventory, *, deadline: float | None = None) -> LocalWork:
    """Every piece of local-only work of the repository ``inventory`` describes, with the
    worktree records it was read from and the survey's notes (worktrees the ``deadline`` left
    uninspected). One worktree record per worktree (no PR evidence: none is needed here), over
    the inventory's own ``worktree list``; a worktree's files are walked only where it holds
    local-only work (``WorktreeSettings.walk_all``)."""
    from branchkeeper import clock
    from branchkeeper.analysis.worktree_record import WorktreeSettings, survey_worktrees

    facts = inventory.facts
    survey = survey_worktrees(facts, inventory.config, settings=WorktreeSettings(walk_all=False),
                              asker=None, inventory=inventory, deadline=deadline,
                              worktrees=list(inventory.worktrees))
    remote = inventory.remote if inventory.remote_configured else None
    lost = read_lost_work(facts.root, inventory.records, survey.records, remote=remote,
                          now=clock.now())
    return LocalWork(lost, survey.notes, survey.records)


def inventory_lost_work(inventory: Inventory, *, deadline: float | None = None
                        ) -> tuple[list[LostWork], list[str]]:
    """:func:`survey_local_work` without the worktree records: (lost work, notes)."""
    work = survey_local_work(inventory, deadline=deadline)
    return work.lost, work.notes
