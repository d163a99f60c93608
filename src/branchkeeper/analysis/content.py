"""Tier 5 of the proof ladder: ``content_on_base``, batched for every command.

Every path a branch's whole diff changes has, on the default branch's tip, exactly the branch's
version (same mode and blob, or equally absent). The whole diffs are the ones tier 3 reads
(``diff-tree --raw``: trees only), checked as they stream in against one ``ls-tree -r`` of
each default ref's tip, so no diff's entries are kept. A branch
whose whole diff is empty proves nothing here. The whole diff may be taken from a frontier
commit rather than the merge base (a branch with several merge-base candidates): every
version the branch has is then that base commit's or the tip's, both on the default branch,
so the proof stays sound.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.proofrun import ProofRun
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof, ProofKind


def _open(run: ProofRun, tip: Oid) -> bool:
    verdict = run.verdicts.get(tip)
    return verdict is None or (verdict.proof is None and verdict.unknown is None)


def content_on_base(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 5 over every tip still unproven (superseded ones too: a later base commit may
    carry what the landing dropped). No git process: each whole diff was checked against the
    default tips' trees as it was read (:meth:`~.commitfacts.DiffFacts.whole_diffs`)."""
    todo = [t for t in pending if _open(run, t) and (w := run.whole.get(t)) and w.paths]
    if not todo:
        return
    if run.deadline.spent():
        for t in todo:
            if t not in run.verdicts:
                run.gap(t, None)
        return
    if run.content_error is not None:
        for t in todo:
            run.notes.setdefault(t, f"the content check failed: {run.content_error}")
        return
    for t in todo:
        holders = run.whole[t].holders
        base = next((b for b in run.default_bases if b.oid in holders), None)
        if base is not None:
            run.prove(t, Proof(ProofKind.CONTENT_ON_BASE, base.ref, None, "content"))
