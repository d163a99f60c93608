"""``prune`` expires kept tips: the git hook's ``refs/branchkeeper/kept/*`` refs older than
``branches.git_hook.keep_days`` are deleted, but only behind a verified bundle of them (issue
15; DESIGN.md guarantee 3). One bundle, one journal operation (``expire-kept``; ``undo``
recreates the refs from it), one compare-and-swap transaction. The caller holds the mutation
lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from branchkeeper.actions.bundle import BundleError, create_bundle
from branchkeeper.actions.refupdate import RefOutcome, delete_refs_cas
from branchkeeper.analysis.kept import KeptTip, read_kept
from branchkeeper.git.types import Oid
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

#: The journal's name for an expiry.
OP_NAME = "expire-kept"
_DAY_S = 86400


class Expiry(NamedTuple):
    """What an expiry did: the ``due`` tips, the journal ``op_id`` (``None`` when nothing was
    written) and one ``note`` line for the prune's report (``""`` when nothing was due)."""

    due: tuple[KeptTip, ...]
    op_id: str | None
    note: str


def due_tips(root: Path, *, keep_days: int, now: int) -> list[KeptTip]:
    """Kept tips kept more than ``keep_days`` days before ``now`` (unix seconds)."""
    limit = now - keep_days * _DAY_S
    return [t for t in read_kept(root) if t.time < limit]


def expire_kept(root: Path, common_dir: Path, *, keep_days: int, now: int, base: Oid | None,
                dry: bool) -> Expiry:
    """Bundle, journal and delete the due kept tips (``dry``: only say which). ``base`` makes
    the bundle compact (the default branch's tip). Raises :class:`GitError` when git cannot
    list the refs; a bundle that cannot be written or verified deletes nothing and says so."""
    due = due_tips(root, keep_days=keep_days, now=now)
    if not due:
        return Expiry((), None, "")
    count = f"{len(due)} kept tip{'s' if len(due) != 1 else ''} older than {keep_days} days"
    if dry:
        return Expiry(tuple(due), None, f"dry run: would expire {count} (behind a bundle)")
    refs = {t.ref: t.oid for t in due}
    try:
        bundle = create_bundle(root, common_dir, refs, base=base, label=OP_NAME)
    except BundleError as exc:
        return Expiry(tuple(due), None, f"{count} kept: the bundle failed ({exc})")
    journal = Journal(common_dir)
    items = [JournalItem(t.ref, t.oid, None, bundle.restore_command(t.ref)) for t in due]
    op_id = journal.begin(OP_NAME, items, bundle=bundle, note=f"expired {count}")
    results = delete_refs_cas(root, refs, own_op=op_id)
    journal.record(op_id, *(ItemResult(ref, ItemOutcome.DELETED if r.outcome is RefOutcome.DELETED
                                       else ItemOutcome.KEPT, r.reason)
                            for ref, r in results.items()))
    gone = sum(r.outcome is RefOutcome.DELETED for r in results.values())
    journal.end(op_id, OpStatus.DONE if gone == len(due) else
                OpStatus.PARTIAL if gone else OpStatus.FAILED)
    done = count if gone == len(due) else f"{gone} of {count}"
    return Expiry(tuple(due), op_id, f"expired {done} behind the bundle {bundle.path} "
                                     f"(undo: branchkeeper undo {op_id})")
