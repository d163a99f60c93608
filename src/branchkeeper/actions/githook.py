"""The ``reference-transaction`` hook's work in each state: keep (or refuse) every branch
deletion or rewind that would lose commits, whoever runs it (issue 15; docs/git-hook.md).

- ``prepared`` (git still holds the refs locked): read the tip of each branch the transaction
  deletes or moves. ``mode: block`` refuses a losing update here (:func:`on_prepared` returns
  it; the caller exits non-zero, which aborts the whole transaction). ``mode: keep`` leaves the
  tips for ``committed`` (:mod:`branchkeeper.state.githook_pending`).
- ``committed`` (the locks are released): once every branch of the transaction has moved, the
  old tips that no other ref holds are kept under ``refs/branchkeeper/kept/<branch>/<unix
  time>`` in ONE ``update-ref --stdin`` transaction and journaled as one ``git-hook-keep``
  operation (``branchkeeper log`` lists it, ``branchkeeper undo`` puts the branches back).
  Writing those refs runs this hook again; the shim skips their lines without a process.
- ``aborted``: tips read for a transaction that did not happen are forgotten.

Our own proven deletes (``branchkeeper delete``, ``sweep --clean``, ``prune``: bundled and
journaled first) pass without being kept twice: their ``update-ref`` runs with
``OWN_DELETE_ENV`` (:mod:`branchkeeper.actions.refupdate`) naming the open journal operation,
and a deletion passes only when that operation is still open and records the ref at that tip
in its bundle. An agent that sets the
variable itself gains nothing (and the command guard denies it: ``R-GIT-HOOKS-BYPASS``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from branchkeeper.actions.refupdate import RefOutcome, create_refs
from branchkeeper.analysis.kept import kept_ref_name, kept_refs
from branchkeeper.analysis.losing import Candidate, Losing, losing_updates, read_tips
from branchkeeper.git.reftx import RefUpdate, renaming_tip
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid, push_argv
from branchkeeper.shell.quoting import git_cmd, shell_quote
from branchkeeper.state import githook_pending as pending
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

#: The journal's name for a keep.
OP_NAME = "git-hook-keep"


class HookContext(NamedTuple):
    """Where and how the hook runs: ``root`` is where git runs (a work tree or git dir),
    ``git_pid`` the git process that runs the hook, ``mode`` keep|block|off, ``remote`` the
    configured remote (for the way out), ``own_op`` the value of ``OWN_DELETE_ENV``,
    ``git_argv`` that git process's command line (for the journal; may be empty), ``now``
    unix seconds."""

    root: Path
    common_dir: Path
    git_pid: int
    mode: str
    remote: str
    own_op: str | None
    git_argv: tuple[str, ...]
    now: int


class KeepReport(NamedTuple):
    """One keep: the journal ``op_id``, and per losing update the kept ref (``""`` when it
    could not be written) and why not."""

    op_id: str
    kept: tuple[tuple[Losing, str, str], ...]


# -- our own deletes -----------------------------------------------------------------------------
def _own_deletes(common_dir: Path, op_id: str | None) -> set[tuple[str, Oid]]:
    """(ref, tip) pairs an open, bundled operation ``op_id`` of ours is deleting."""
    if not op_id:
        return set()
    op = Journal(common_dir).get(op_id)
    if op is None or op.status is not OpStatus.INTERRUPTED or op.bundle is None:
        return set()  # only a begun, not yet ended operation with a bundle counts
    heads = op.bundle.heads
    return {(i.ref, i.old) for i in op.items if i.remote is None and heads.get(i.ref) == i.old}


def _not_ours(ctx: HookContext, losing: list[Losing]) -> list[Losing]:
    """``losing`` without our own bundled deletes and without a ``git branch -m`` rename in
    progress (the new name gets the tip right after the hook returns)."""
    if not any(x.new is None for x in losing):
        return losing
    ours = _own_deletes(ctx.common_dir, ctx.own_op) if ctx.own_op else set()
    renamed = renaming_tip(ctx.common_dir)
    return [x for x in losing if x.new is not None or
            ((x.ref, x.old) not in ours and x.old != renamed)]


# -- prepared ------------------------------------------------------------------------------------
def _candidates(updates: Sequence[RefUpdate], tips: dict[str, Oid],
                known: dict[str, pending.Pending]) -> list[Candidate]:
    """Each update's old tip: the line's old value, else the tip read now, else one read by an
    earlier transaction of the same git process; creations and no-ops are dropped."""
    out: list[Candidate] = []
    for u in updates:
        old = u.old or tips.get(u.ref) or (known[u.ref].old if u.ref in known else None)
        if old is not None and old != u.new:
            out.append(Candidate(u.ref, old, u.new))
    return out


def on_prepared(ctx: HookContext, updates: Sequence[RefUpdate]) -> list[Losing]:
    """``prepared``: the losing updates to refuse (``mode: block``; empty otherwise). In
    ``mode: keep`` the tips are left for ``committed``. Raises :class:`GitError` or
    ``OSError`` (the caller lets the update through and logs)."""
    if ctx.mode == "off" or not updates:
        return []
    path = pending.pending_path(ctx.common_dir, ctx.git_pid)
    known = pending.load(path)
    tips = read_tips(ctx.root, (u.ref for u in updates))
    candidates = _candidates(updates, tips, known)
    if ctx.mode == "block":
        found = losing_updates(ctx.root, candidates, excluded=[u.ref for u in updates])
        return _not_ours(ctx, found)
    if candidates:
        known.update({c.ref: pending.Pending(c.ref, c.old, c.new) for c in candidates})
        pending.save(path, ctx.git_pid, known)
    return []


def refusal_line(losing: Losing, remote: str) -> str:
    """The one line ``mode: block`` prints for a refused update: the branch, how many commits
    would be lost, and the way out."""
    name = losing.branch
    what = (f"delete branch {shell_quote(name)}" if losing.new is None
            else f"move branch {shell_quote(name)} to {losing.new.short}")
    count = f"{losing.lost} commit{'s' if losing.lost != 1 else ''}"
    return (f"branchkeeper: refusing to {what}: {count} would be lost (in no other branch, tag, "
            f"remote-tracking or refs/branchkeeper ref); keep them first: "
            f"{git_cmd(*push_argv(remote, name)[1:])}, or "
            f"branchkeeper park --reason '<why>' -- {shell_quote(name)}, or "
            f"branchkeeper delete --allow-unproven --reason '<why>' -- {shell_quote(name)} "
            f"(saved in a bundle)")


# -- committed -----------------------------------------------------------------------------------
def _restore(x: Losing) -> str:
    return git_cmd("update-ref", x.ref, x.old, x.new or "")


def keep(ctx: HookContext, losing: Sequence[Losing], *, why: str = "") -> KeepReport:
    """Keep each losing update's old tip under ``refs/branchkeeper/kept/`` (one transaction)
    and journal it as one ``git-hook-keep`` operation. Raises :class:`GitError` when git cannot
    list refs, ``BranchkeeperError`` when the journal cannot be written."""
    taken = set(kept_refs(ctx.root))
    names: dict[str, str] = {}
    for x in losing:
        names[x.ref] = kept_ref_name(x.branch, ctx.now, taken)
        taken.add(names[x.ref])
    journal = Journal(ctx.common_dir)
    command = " ".join(shell_quote(a) for a in ctx.git_argv) or "a git command"
    note = f"kept by the reference-transaction hook after `{command}`" + (f"; {why}" if why else "")
    items = [JournalItem(x.ref, x.old, None, _restore(x), new=x.new) for x in losing]
    op_id = journal.begin(OP_NAME, items, bundle=None, note=note, argv=ctx.git_argv or ["git"])
    # git may still hold packed-refs.lock here (a packed ref's deletion commits its packed-refs
    # part first): no stale-lock pre-check, git's own locking applies
    results = create_refs(ctx.root, {names[x.ref]: x.old for x in losing}, must_not_exist=True,
                          check_locks=False)
    kept: list[tuple[Losing, str, str]] = []
    outcomes: list[ItemResult] = []
    for x in losing:
        res = results[names[x.ref]]
        ok = res.outcome in (RefOutcome.CREATED, RefOutcome.PRESENT)
        word = ItemOutcome.DELETED if x.new is None else ItemOutcome.MOVED
        reason = f"kept as {names[x.ref]}" if ok else f"could not keep: {res.reason}"
        outcomes.append(ItemResult(x.ref, word if ok else ItemOutcome.FAILED, reason))
        kept.append((x, names[x.ref] if ok else "", "" if ok else res.reason))
    journal.record(op_id, *outcomes)
    done = sum(1 for _x, name, _r in kept if name)
    journal.end(op_id, OpStatus.DONE if done == len(kept) else
                OpStatus.PARTIAL if done else OpStatus.FAILED)
    return KeepReport(op_id, tuple(kept))


def _settle(ctx: HookContext, entries: Sequence[pending.Pending],
            excluded: Iterable[str]) -> KeepReport | None:
    """Keep what ``entries`` (all of them done) lose; on a git error keep every one of them."""
    candidates = [Candidate(e.ref, e.old, e.new) for e in entries]
    why = ""
    try:
        losing = losing_updates(ctx.root, candidates, excluded=excluded)
    except GitError as exc:
        why = f"holders not checked ({str(exc).splitlines()[0]}); kept to be safe"
        losing = [Losing(c.ref, c.old, c.new, 0) for c in candidates]
    losing = _not_ours(ctx, losing)
    return keep(ctx, losing, why=why) if losing else None


def on_committed(ctx: HookContext, updates: Sequence[RefUpdate]) -> KeepReport | None:
    """``committed``: keep what the transaction lost, once every branch it changes has moved
    (a packed-refs sub-transaction commits before its loose refs are deleted; the outer
    transaction's ``committed`` then settles both). Returns the keep, or ``None``."""
    if ctx.mode != "keep" or not updates:
        return None
    path = pending.pending_path(ctx.common_dir, ctx.git_pid)
    known = pending.load(path)
    entries = {u.ref: known[u.ref] for u in updates if u.ref in known}
    for u in updates:  # a line that carries its old value needs no hand-off
        if u.ref not in entries and u.old is not None and u.old != u.new:
            entries[u.ref] = pending.Pending(u.ref, u.old, u.new)
    if not entries:
        return None
    tips = read_tips(ctx.root, entries)
    if any(tips.get(ref) == e.old for ref, e in entries.items()):
        return None  # part of the transaction is still to come
    report = _settle(ctx, list(entries.values()), [*entries, *(u.ref for u in updates)])
    for ref in entries:
        known.pop(ref, None)
    pending.save(path, ctx.git_pid, known)
    return report


def on_aborted(ctx: HookContext, updates: Sequence[RefUpdate]) -> None:
    """``aborted``: forget the tips read for branches that did not move."""
    path = pending.pending_path(ctx.common_dir, ctx.git_pid)
    known = pending.load(path)
    if not known:
        return
    mine = [u.ref for u in updates if u.ref in known]
    tips = read_tips(ctx.root, mine)
    for ref in mine:
        if tips.get(ref) == known[ref].old:
            del known[ref]
    pending.save(path, ctx.git_pid, known)


def recover_stale(ctx: HookContext) -> list[KeepReport]:
    """Hand-offs left by git processes that died between ``prepared`` and ``committed``: keep
    what they lost (a branch no longer at its old tip), forget the rest, remove the files."""
    if ctx.mode != "keep":
        return []
    out: list[KeepReport] = []
    for _pid, path in pending.stale_files(ctx.common_dir, current=ctx.git_pid):
        entries = pending.load(path)
        tips = read_tips(ctx.root, entries)
        done = [e for ref, e in entries.items() if tips.get(ref) != e.old]
        report = _settle(ctx, done, entries) if done else None
        if report is not None:
            out.append(report)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return out


#: Above this many kept tips, one summary line is printed instead of one line each.
MAX_LINES = 3


def _commits(n: int) -> str:
    return f"{n} commit{'s' if n != 1 else ''} in no other ref" if n else "holders not checked"


def keep_lines(report: KeepReport) -> list[str]:
    """What ``mode: keep`` prints on git's stderr: one line per kept tip (a summary past
    :data:`MAX_LINES`), one per tip that could not be kept."""
    undo = f"undo: branchkeeper undo {report.op_id}"
    done = [(x, ref) for x, ref, _why in report.kept if ref]
    out = [f"branchkeeper: could not keep the old tip {x.old.short} of branch "
           f"{shell_quote(x.branch)}: {why}" for x, ref, why in report.kept if not ref]
    if len(done) > MAX_LINES:
        lost = sum(x.lost for x, _ref in done)
        return [*out, f"branchkeeper: {len(done)} branches deleted or moved; their old tips "
                      f"({_commits(lost)}) are kept under refs/branchkeeper/kept/ ({undo})"]
    for x, ref in done:
        what = "deleted" if x.new is None else f"moved to {x.new.short}"
        out.append(f"branchkeeper: branch {shell_quote(x.branch)} {what}; its old tip "
                   f"{x.old.short} ({_commits(x.lost)}) is kept as {ref} ({undo})")
    return out
