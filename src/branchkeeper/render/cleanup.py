"""Rendering of a cleanup outcome (``delete``, ``sweep --clean``, ``prune``): text and JSON.

Reads the outcome only; decides nothing. Every command shown is shell-quoted (DESIGN.md,
guarantee 5): restore commands come quoted from the actions layer, undo commands are built here
with ``shlex``.
"""

from __future__ import annotations

import shlex
from typing import Any

from branchkeeper.actions.cleanup import Action, BranchItem
from branchkeeper.actions.cleanup_exec import Outcome

JSON_VERSION = 1

_DRY_WORDS = {Action.DELETE: "would delete"}


def item_json(item: BranchItem) -> dict[str, Any]:
    """One branch (or remote branch) of the outcome as the JSON document lists it."""
    proof = item.proof
    return {
        "name": item.name,
        "remote": item.remote,
        "tip": item.tip,
        "action": item.action.value,
        "reason": item.reason,
        "proof": None if proof is None else {
            "kind": proof.kind.value, "base": proof.base, "landed_as": proof.landed_as,
            "verified": proof.check},
        "worktree": item.worktree,
        "blocking": list(item.blocking),
        "restore": item.restore or None,
        "archive_ignored": list(item.archive),
    }


def outcome_json(outcome: Outcome, *, exit_code: int) -> dict[str, Any]:
    """The whole JSON document: command, dry_run, refused, operation, bundle, branches, remote,
    notes, exit."""
    bundle = outcome.bundle
    return {
        "version": JSON_VERSION,
        "command": outcome.plan.command,
        "dry_run": outcome.dry_run,
        "default": outcome.plan.inventory.default.name,
        "refused": outcome.plan.refused or None,
        "operation": outcome.op_id,
        "undo": shlex.join(["branchkeeper", "undo", outcome.op_id]) if outcome.op_id else None,
        "bundle": None if bundle is None else bundle.to_json(),
        "archives": {name: a.to_json() for name, a in outcome.archives.items()},
        "branches": [item_json(i) for i in outcome.items],
        "remote": [item_json(i) for i in outcome.remote_items],
        "notes": list(outcome.notes),
        "exit": exit_code,
    }


def _line(item: BranchItem, *, dry: bool, outcome: Outcome | None = None,
          refused: bool = False) -> list[str]:
    word = _DRY_WORDS.get(item.action, item.action.value) if dry else item.action.value
    # a refused batch deletes nothing: the dry run says what the real run says
    if item.action is Action.DELETE and (refused or not dry):
        word = "not deleted"
    tip = item.tip.short if item.tip else "-"
    where = f"{item.remote}/{item.name}" if item.remote else item.name
    lines = [f"  {word:<14} {where}  {tip}  {item.reason}"]
    if item.worktree and item.action in (Action.DELETE, Action.DELETED):
        lines.append(f"      {'removes' if dry else 'removed'} worktree {item.worktree}")
    if item.archive and item.action in (Action.DELETE, Action.DELETED):
        lines.append(f"      {'archives' if dry else 'archived'} {len(item.archive)} ignored "
                     f"file(s) first: {', '.join(item.archive[:3])}"
                     + (" ..." if len(item.archive) > 3 else ""))
    archive = outcome.archives.get(item.name) if outcome is not None and not item.remote \
        else None
    if archive is not None and item.action is Action.DELETED:
        lines.append(f"      archive: {archive.path}; files back: {archive.checkout_command()} "
                     f"&& {archive.restore_command()}")
    for block in item.blocking:
        lines.append(f"      blocks removal: {block}")
    if item.action is Action.BLOCKED and item.worktree and item.blocking and all(
            b.startswith("SKIP_PROTECTED_IGNORED: ") for b in item.blocking):
        lines.append("      to keep those files and remove it: branchkeeper sweep --clean "
                     "--archive-ignored")
    if item.restore:
        lines.append(f"      restore: {item.restore}")
    return lines


def render_text(outcome: Outcome) -> str:
    """The report: a header, one line per branch (deleted or to delete first, then refused,
    blocked, skipped, kept), remote branches, the bundle, the journal operation and notes."""
    plan = outcome.plan
    dry = outcome.dry_run
    order = [Action.DELETED, Action.DELETE, Action.RACED, Action.FAILED, Action.REFUSED,
             Action.BLOCKED, Action.SKIP_UNPROVEN, Action.KEPT]
    items = sorted(outcome.items, key=lambda i: (order.index(i.action), i.name))
    n = len(items)
    head = f"{'dry run: ' if dry else ''}{plan.command}: {n} branch{'es' if n != 1 else ''}"
    if plan.inventory.default.name:
        head += f" (default branch {plan.inventory.default.name})"
    lines = [head]
    refused = bool(plan.refused)
    for item in items:
        lines += _line(item, dry=dry, outcome=outcome, refused=refused)
    if outcome.remote_items:
        lines.append(f"remote {plan.inventory.remote}:")
        for item in sorted(outcome.remote_items, key=lambda i: (order.index(i.action), i.name)):
            lines += _line(item, dry=dry, refused=refused)
    if outcome.bundle is not None:
        kind = "compact" if outcome.bundle.compact else "full"
        lines.append(f"bundle: {outcome.bundle.path} ({kind}, {outcome.bundle.size_bytes} "
                     "bytes, verified)")
        if not outcome.bundle.compact and outcome.bundle.note:
            lines.append(f"note: {outcome.bundle.note}")
    if outcome.op_id:
        lines.append(f"journal: operation {outcome.op_id}; undo: "
                     f"{shlex.join(['branchkeeper', 'undo', outcome.op_id])}")
    for note in outcome.notes:
        lines.append(f"note: {note}")
    if plan.refused:
        lines.append(f"refused: {plan.refused}")
    elif not dry and not outcome.op_id:
        lines.append("nothing to delete")
    return "\n".join(lines) + "\n"
