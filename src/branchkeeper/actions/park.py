"""The park marker: an empty commit with trailers at the branch tip (first document, section 5).

``park`` writes a commit whose tree equals the tip's, carrying ``Parked-Reason:`` and
``Parked-By:`` trailers, with ``git commit-tree`` and a compare-and-swap ``update-ref`` (no
checkout, so it works on a branch checked out in any worktree), journals it, then pushes it as
a plain fast-forward when the branch has a remote copy. ``clear`` writes the ``Unparked:``
commit the same way. The inventory reads the marker from its single ``for-each-ref``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.actions.interrupt import deferred_signals
from branchkeeper.actions.refupdate import check_ref_locks
from branchkeeper.errors import BranchkeeperError, RefusedError
from branchkeeper.git.repo import RepoFacts
from branchkeeper.git.run import GitExit, run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.faults import fault
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock

#: Longest reason accepted, in characters.
MAX_REASON = 500


@dataclass(frozen=True, slots=True)
class ParkResult:
    """What ``park``/``clear`` did: the branch, old and new tips, the journal id, push outcome."""

    name: str
    old: Oid
    new: Oid
    op_id: str
    pushed: bool | None  # None: no remote copy or --no-push
    push_message: str
    restore: str
    #: the branch exists only on the remote: the marker went there, no local branch was made
    remote_only: bool = False


def _check_text(label: str, text: str) -> str:
    value = text.strip()
    if not value:
        raise BranchkeeperError(f"{label} must not be empty")
    if len(value) > MAX_REASON:
        raise BranchkeeperError(f"{label} is longer than {MAX_REASON} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise BranchkeeperError(f"{label} must be one line without control characters")
    return value


def _user_name(root: Path) -> str:
    res = run_git(["config", "--get", "user.name"], cwd=root, check=False)
    # exit 1 = unset
    return res.text.strip() if res.returncode == GitExit.OK else ""


def write_marker(facts: RepoFacts, name: str, *, trailers: list[tuple[str, str]], subject: str,
                 op: str, remote: str, push: bool, push_timeout: float = 60) -> ParkResult:
    """Write an empty marker commit on ``refs/heads/<name>`` and journal it.

    ``trailers`` are ``(key, value)`` pairs. Raises :class:`BranchkeeperError` when the branch
    does not exist locally or git cannot write the commit (no identity configured), and
    :class:`RefusedError` when the tip moved between read and update (nothing changed).
    """
    root = facts.root
    ref = f"refs/heads/{name}"
    local = _tip(root, ref)
    if local is None:
        remote_tip = _tip(root, f"refs/remotes/{remote}/{name}")
        if remote_tip is None:
            raise BranchkeeperError(f"no branch {name!r} here or on {remote}")
        if not push:
            raise RefusedError(
                f"{name} exists only on {remote}: its park marker is a commit on the remote "
                "branch, so it has to be pushed; with --no-push it would be on no branch at "
                "all. Nothing changed.")
        return _remote_marker(facts, name, remote_tip, trailers=trailers, subject=subject,
                              op=op, remote=remote, push_timeout=push_timeout)
    old = local
    new = _marker_commit(root, old, subject, trailers)
    fault(f"{op}.after_commit_tree")
    restore = f"git update-ref {shlex.quote(ref)} {old} {new}"
    items = [JournalItem(ref, old, None, restore, new=new)]
    tracking = run_git(["rev-parse", "--verify", "-q", f"refs/remotes/{remote}/{name}"],
                       cwd=root, check=False)
    remote_tip = Oid.parse(tracking.text) if tracking.returncode == 0 else None
    if push and remote_tip is not None:
        # Undo of a pushed marker rewinds the remote only if nobody pushed since (a lease).
        items.append(JournalItem(
            ref, remote_tip, remote,
            f"git push --force-with-lease={shlex.quote(f'{ref}:{new}')} {shlex.quote(remote)} "
            f"{shlex.quote(f'{remote_tip}:{ref}')}", new=new))
    pushed: bool | None = None
    push_message = ""
    with repo_lock(facts.common_dir, MUTATION_LOCK, wait_s=30), \
            deferred_signals(f"the {op}") as signals:
        check_ref_locks(root, [ref])
        journal = Journal(facts.common_dir)
        op_id = journal.begin(op, items, bundle=None, note=f"{subject}")
        fault(f"{op}.after_begin")
        if signals.stop:  # nothing changed yet: start no new step
            journal.record(op_id, ItemResult(ref, ItemOutcome.KEPT, "interrupted before the "
                                             "marker was set; unchanged"))
            journal.end(op_id, OpStatus.FAILED)
            return ParkResult(name, old, old, op_id, None, "interrupted", "")
        upd = run_git(["update-ref", "-m", f"branchkeeper {op}", ref, new, old], cwd=root,
                      check=False)
        fault(f"{op}.after_update_ref")
        if upd.returncode != 0:
            journal.record(op_id, ItemResult(ref, ItemOutcome.RACED, "tip moved"))
            journal.end(op_id, OpStatus.FAILED)
            raise RefusedError(f"{name}: the tip moved while the marker was written; nothing "
                               "changed, try again")
        journal.record(op_id, ItemResult(ref, ItemOutcome.KEPT, f"moved to {new}"))
        if len(items) > 1 and signals.stop:
            pushed, push_message = False, "interrupted before the push"
            journal.record(op_id, ItemResult(ref, ItemOutcome.FAILED, push_message, remote))
        elif len(items) > 1:
            fault(f"{op}.before_push")
            # A plain fast-forward push of the branch: never forced.
            out = run_git(["push", "--quiet", remote, f"{ref}:{ref}"], cwd=root, check=False,
                          timeout=push_timeout)
            pushed = out.returncode == 0
            push_message = out.stderr.decode("utf-8", "replace").strip()
            journal.record(op_id, ItemResult(ref, ItemOutcome.KEPT if pushed else
                                             ItemOutcome.FAILED,
                                             "pushed" if pushed else push_message, remote))
        journal.end(op_id, OpStatus.DONE if pushed is not False else OpStatus.PARTIAL)
    return ParkResult(name, old, new, op_id, pushed, push_message, restore)


def _tip(root: Path, ref: str) -> Oid | None:
    res = run_git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], cwd=root, check=False)
    return Oid.parse(res.text) if res.returncode == 0 else None  # 1: no such ref


def _marker_commit(root: Path, parent: Oid, subject: str,
                   trailers: list[tuple[str, str]]) -> Oid:
    """An empty commit on ``parent`` (same tree) carrying ``trailers``. Raises
    :class:`BranchkeeperError` when git cannot write it (no identity configured)."""
    message = subject + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers)
    made = run_git(["commit-tree", f"{parent}^{{tree}}", "-p", parent, "-F", "-"], cwd=root,
                   stdin=message.encode("utf-8"), check=False)
    if made.returncode != 0:
        detail = made.stderr.decode("utf-8", "replace").strip()
        raise BranchkeeperError(f"git could not write the marker commit: {detail}")
    return Oid.parse(made.text)


def _remote_marker(facts: RepoFacts, name: str, remote_tip: Oid, *,
                   trailers: list[tuple[str, str]], subject: str, op: str, remote: str,
                   push_timeout: float) -> ParkResult:
    """The marker of a branch that exists only on ``remote`` (issue 12, section 5): an empty
    commit on the remote tip, pushed as a plain fast-forward (never forced: a branch that moved
    on the server refuses it and nothing changes); no local branch is created. Journaled with
    the lease push that rewinds it."""
    root = facts.root
    ref = f"refs/heads/{name}"
    new = _marker_commit(root, remote_tip, subject, trailers)
    fault(f"{op}.after_commit_tree")
    restore = (f"git push --force-with-lease={shlex.quote(f'{ref}:{new}')} {shlex.quote(remote)} "
               f"{shlex.quote(f'{remote_tip}:{ref}')}")
    items = [JournalItem(ref, remote_tip, remote, restore, new=new)]
    with repo_lock(facts.common_dir, MUTATION_LOCK, wait_s=30), \
            deferred_signals(f"the {op}") as signals:
        check_ref_locks(root, [f"refs/remotes/{remote}/{name}"])
        journal = Journal(facts.common_dir)
        op_id = journal.begin(op, items, bundle=None, note=f"{subject} (only on {remote})")
        fault(f"{op}.after_begin")
        if signals.stop:
            journal.end(op_id, OpStatus.FAILED)
            return ParkResult(name, remote_tip, remote_tip, op_id, None, "interrupted", "")
        out = run_git(["push", "--quiet", remote, f"{new}:{ref}"], cwd=root, check=False,
                      timeout=push_timeout)
        pushed = out.returncode == 0
        message = out.stderr.decode("utf-8", "replace").strip()
        journal.record(op_id, ItemResult(ref, ItemOutcome.KEPT if pushed else ItemOutcome.FAILED,
                                         "pushed" if pushed else message, remote))
        journal.end(op_id, OpStatus.DONE if pushed else OpStatus.FAILED)
    return ParkResult(name, remote_tip, new if pushed else remote_tip, op_id, pushed, message,
                      restore, remote_only=True)


def tip_marker(facts: RepoFacts, name: str, *, remote: str | None = None) -> str | None:
    """``"parked"`` or ``"unparked"`` when the tip of branch ``name`` (the local one, else the
    ``remote``'s copy) is a marker commit with that trailer, else ``None`` (one ``git log``)."""
    ref = f"refs/heads/{name}"
    if remote is not None and _tip(facts.root, ref) is None:
        ref = f"refs/remotes/{remote}/{name}"
    res = run_git(["log", "-1", "--format=%(trailers:only=true,unfold=true)", ref, "--"],
                  cwd=facts.root, check=False)
    keys = {line.partition(":")[0].strip().lower() for line in res.text.splitlines()}
    if res.returncode != 0:
        return None
    if "parked-reason" in keys:
        return "parked"
    return "unparked" if "unparked" in keys else None


def _push_only(facts: RepoFacts, name: str, *, remote: str, push: bool) -> ParkResult:
    """Finish an ``unpark`` whose marker is already written: push it if the remote lags."""
    root = facts.root
    ref = f"refs/heads/{name}"
    tip = Oid.parse(run_git(["rev-parse", "--verify", ref], cwd=root).text)
    tracking = run_git(["rev-parse", "--verify", "-q", f"refs/remotes/{remote}/{name}"],
                       cwd=root, check=False)
    pushed: bool | None = None
    message = "already unparked"
    if push and tracking.returncode == 0 and tracking.text.strip() != tip:
        out = run_git(["push", "--quiet", remote, f"{ref}:{ref}"], cwd=root, check=False)
        pushed = out.returncode == 0
        message = out.stderr.decode("utf-8", "replace").strip() or message
    return ParkResult(name, tip, tip, "", pushed, message, "")


def park(facts: RepoFacts, name: str, *, reason: str, by: str | None, remote: str,
         push: bool) -> ParkResult:
    """Park ``name`` with ``reason`` (section 5). ``by`` defaults to ``user.name``."""
    why = _check_text("--reason", reason)
    who = _check_text("--by", by) if by else (_user_name(facts.root) or "unknown")
    return write_marker(facts, name, trailers=[("Parked-Reason", why), ("Parked-By", who)],
                        subject=f"Park {name}", op="park", remote=remote, push=push)


def clear(facts: RepoFacts, name: str, *, by: str | None, remote: str, push: bool) -> ParkResult:
    """Write the ``Unparked:`` commit: the branch's dormancy clock restarts (section 5).

    Raises :class:`RefusedError` when the branch is not parked (its tip has no marker)."""
    marker = tip_marker(facts, name, remote=remote)
    # a rerun after the marker was written: finish the push only
    if marker == "unparked" and _tip(facts.root, f"refs/heads/{name}") is not None:
        return _push_only(facts, name, remote=remote, push=push)
    if marker is None:
        raise RefusedError(f"{name} is not parked (its tip carries no Parked-Reason trailer); "
                           "nothing to clear")
    who = _check_text("--by", by) if by else (_user_name(facts.root) or "unknown")
    return write_marker(facts, name, trailers=[("Unparked", who)], subject=f"Unpark {name}",
                        op="unpark", remote=remote, push=push)
