"""Which proven branches no command can delete because their recovery bundle cannot be
written (issue 11, section 4; section 5: one verdict).

A branch is deleted only behind a verified bundle (DESIGN.md guarantee 3). In a partial clone,
or where an object was deleted or a pack damaged, the bundle of a proven branch may need an
object the repository lacks; ``actions.bundle.create_bundle`` then refuses it. The inventory
asks the same question once, before any command runs (``git.objects.bundle_lacking``: the same
compact range, one ``rev-list --objects --missing=print`` for every candidate when nothing is
missing, never a fetch), and :func:`keep_unbundlable` turns each such branch's deletions into
``kept`` with the object and what to do, so ``sweep``, its ``cleanup`` field, the last-sweep
file, ``--dry-run`` and the real run say the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.git.objects import bundle_lacking
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.records import BranchAction, BranchRecord, CommandVerdict
from branchkeeper.state.inventory_cache import InventoryCache

if TYPE_CHECKING:
    from branchkeeper.analysis.proofrun import TipVerdict


def bundle_missing_reason(oid: str, promisors: Sequence[str]) -> str:
    """Why a proven branch stays: its bundle needs ``oid``; ``promisors``, the promisor remotes
    of a partial clone (empty: a full repository, whose object store is damaged), say what to
    do about it."""
    if promisors:
        return (f"its bundle needs object {oid}, missing from this clone (a partial clone of "
                f"{', '.join(promisors)}: branchkeeper never fetches); fetch it first (git "
                f"cat-file -e {oid} fetches it from the promisor remote), then delete the branch")
    return (f"its bundle needs object {oid}, missing from this repository (a damaged object "
            "store: run git fsck); nothing is deleted without its bundle")


def _deletes(r: BranchRecord) -> bool:
    acts = r.actions
    return r.local_tip is not None and acts is not None and BranchAction.DELETE in (
        acts.sweep_clean.action, acts.prune.action, acts.delete.action)


def _complete_key(base: Oid | None, tip: Oid, *, partial: bool) -> str:
    """The cache key of "``tip``'s bundle needs no missing object": against ``base`` in a
    ``partial`` clone (a base that moves can bring history whose blobs were never fetched into
    the range); in a full repository against any base, since every object a present commit
    reaches is present there unless the store is damaged (object id prefixes: the cache is a
    hint, and the bundle's own check decides)."""
    against = (str(base)[:20] if base is not None else "-") if partial else "any"
    return f"bundle-ok:{against}:{str(tip)[:20]}"


def keep_unbundlable(root: Path, records: list[BranchRecord], *, base: Oid | None,
                     promisors: Sequence[str], cache: InventoryCache
                     ) -> tuple[list[BranchRecord], int]:
    """``records`` with every deletion of a branch whose bundle (compact against ``base``, the
    default branch's trusted tip, or full history when None) needs a missing object made
    ``kept`` with :func:`bundle_missing_reason`; and how many branches that kept. A git error
    keeps the records as they are (the command that writes the bundle still checks). ``cache``
    remembers each tip found complete (:func:`_complete_key`), so a warm pass checks only new
    tips (one batch for all of them) and runs no git when there are none."""
    tips = sorted({r.local_tip for r in records if _deletes(r) and r.local_tip is not None})
    if not tips:
        return records, 0
    # A tip found complete stays so unless an object is deleted behind git's back, which the
    # bundle's own check still finds: a warm pass checks only the tips it has not seen (a new
    # or moved branch; in a partial clone, every tip once the base moved), a pass with none
    # runs no git
    keys = {t: _complete_key(base, t, partial=bool(promisors)) for t in tips}
    todo = [t for t in tips if keys[t] not in cache.counts]
    cache.used_counts.update(keys[t] for t in tips if keys[t] in cache.counts)
    if not todo:
        return records, 0
    try:
        lacking = bundle_lacking(root, todo, base)
    except GitError:
        return records, 0
    for t in todo:
        if str(t) not in lacking:
            cache.counts[keys[t]] = 0
            cache.used_counts.add(keys[t])
            cache.changed = True
    if not lacking:
        return records, 0
    out: list[BranchRecord] = []
    kept = 0
    for r in records:
        oid = lacking.get(str(r.local_tip)) if _deletes(r) else None
        if oid is None or r.actions is None:
            out.append(r)
            continue
        kept += 1
        why = bundle_missing_reason(oid, promisors)
        # the batch commands keep it and go on; ``delete NAME`` refuses its batch, as for
        # any name it cannot delete
        verdicts = {"sweep_clean": CommandVerdict(BranchAction.KEEP, why),
                    "prune": CommandVerdict(BranchAction.KEEP, why),
                    "delete": CommandVerdict(BranchAction.REFUSED, why)}
        acts = r.actions
        out.append(replace(r, actions=replace(
            acts, **{field: cv for field, cv in verdicts.items()
                     if getattr(acts, field).action is BranchAction.DELETE})))
    return out, kept


def missing_notes(verdicts: Iterable[TipVerdict], missing_objects: set[str],
                  promisors: Sequence[str], unbundlable: int) -> list[str]:
    """The inventory's note when objects are missing: how many branches were not judged
    (``verdicts`` unknown for a missing object; ``missing_objects``: the ids the proofs found
    missing), how many proven ones no command deletes (``unbundlable``: their bundle needs a
    missing object), and why (a partial clone's promisor remote, ``promisors``, is never
    fetched from); no count that is 0, and no note when nothing is missing."""
    unjudged = sum(1 for v in verdicts
                   if v.unknown is not None and v.unknown.startswith("object missing"))
    kept = (f"; {unbundlable} proven branch(es) kept: their recovery bundle needs objects "
            "missing here" if unbundlable else "")
    if promisors:
        said = (f"{unjudged} branch(es) not judged: objects they need are not in this clone, "
                "and branchkeeper never fetches them" if unjudged
                else "branchkeeper never fetches the objects it lacks")
        return [f"partial clone (promisor remote {', '.join(promisors)}): {said}{kept}"]
    if not (unjudged or missing_objects):
        return [f"{kept[2:]}; run: git fsck"] if unbundlable else []
    some = sorted(missing_objects)[:3]
    return [f"{unjudged} branch(es) not judged: {len(missing_objects)} object(s) missing from "
            f"the repository ({', '.join(some)}{', ...' if len(missing_objects) > 3 else ''})"
            f"{kept}; run: git fsck"]
