"""Tier 5 of the proof ladder: ``content_on_base``, batched for every command.

Every path a branch's whole diff changes has, on the default branch's tip, exactly the branch's
version (same mode and blob, or equally absent). The whole diffs are the ones tier 3 reads
(``diff-tree --raw``: trees only); the base side is one ``ls-tree`` per default ref. A branch
whose whole diff is empty proves nothing here. The whole diff may be taken from a frontier
commit rather than the merge base (a branch with several merge-base candidates): every
version the branch has is then that base commit's or the tip's, both on the default branch,
so the proof stays sound.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.proofrun import ProofRun
from branchkeeper.git.objects import tree_entries
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof, ProofKind


def _open(run: ProofRun, tip: Oid) -> bool:
    verdict = run.verdicts.get(tip)
    return verdict is None or (verdict.proof is None and verdict.unknown is None)


def content_on_base(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 5 over every tip still unproven (superseded ones too: a later base commit may
    carry what the landing dropped)."""
    todo = [t for t in pending if _open(run, t) and (w := run.whole.get(t)) and w.entries]
    if not todo:
        return
    if run.deadline.spent():
        for t in todo:
            if t not in run.verdicts:
                run.gap(t, None)
        return
    paths = sorted({p for t in todo for p in run.whole[t].entries})
    seen: set[Oid] = set()
    for base in run.default_bases:
        if base.oid in seen:
            continue
        seen.add(base.oid)
        try:
            table = tree_entries(run.root, base.oid, paths)
        except GitError as exc:
            first = str(exc).splitlines()[0]
            for t in todo:
                run.notes.setdefault(t, f"the content check failed: {first}")
            return
        for t in todo:
            if not _open(run, t):
                continue
            if all(table.get(p) == entry for p, entry in run.whole[t].entries.items()):
                run.prove(t, Proof(ProofKind.CONTENT_ON_BASE, base.ref, None, "content"))
