"""The proof ladder for named branches on the delete path (issue 3, section 1).

Tiers 1-4 come from the inventory's batched :func:`~branchkeeper.analysis.proofs.prove_tips`
verdicts (``Inventory.verdicts``); tier 5 (:func:`~branchkeeper.analysis.proofs.content_on_base`)
runs here, only for the tips tiers 1-4 left unproven and only when asked, bounded by a deadline.
Nothing here decides what to delete: it says, per branch and per remote-tracking tip, which proof
holds or why none does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from branchkeeper.analysis.inventory import Inventory
from branchkeeper.analysis.proofs import Deadline, TipVerdict, content_on_base
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof


@dataclass(frozen=True, slots=True)
class TipProof:
    """The ladder's answer for one tip.

    ``proof``: the proof that holds, or ``None``. ``unknown``: why the ladder could not decide
    (git error, shallow clone, unresolved base, budget); never deletes. ``reason``: one line for
    reports (the proof, or why no proof holds).
    """

    tip: Oid
    proof: Proof | None
    unknown: str | None
    reason: str

    @property
    def proven(self) -> bool:
        return self.proof is not None


#: Each proof in plain words; ``{base}`` is the short name of the ref it was proven against.
_PLAIN = {
    "ancestor": "merged into {base}: every commit is on it",
    "patch_equivalent": "rebase-merged into {base}: every commit is on it as a copy",
    "squash_merged": "squash-merged into {base}",
    "tip_subsumed": "landed on {base} inside a later branch",
    "content_on_base": "every file it changed is identical on {base}",
}


def describe(proof: Proof) -> str:
    """One proof in plain words: ``merged into origin/main: every commit is on it``,
    ``squash-merged into origin/main as 1a2b3c4d5e`` (the commit it landed as, where one is
    known)."""
    base = proof.base.removeprefix("refs/remotes/").removeprefix("refs/heads/")
    text = _PLAIN.get(proof.kind.value, proof.kind.value + " into {base}").format(base=base)
    if proof.landed_as is not None:
        text += f" as {proof.landed_as.short}"
    return text


def prove_tip(inv: Inventory, tip: Oid, *, content_tier: bool, deadline: Deadline,
              require_remote_base: str | None = None) -> TipProof:
    """Run the ladder for ``tip`` (tiers 1-4 from ``inv.verdicts``, tier 5 when
    ``content_tier``). ``require_remote_base``: accept only proofs against a ref under
    ``refs/remotes/<that remote>/`` (remote deletes, first document section 7). A spent
    ``deadline`` before tier 5 gives ``unknown``. A git error in tier 5 gives ``unknown``.
    """
    if not inv.default.resolved:
        why = f"default branch unresolved: {inv.default.reason}"
        return TipProof(tip, None, why, f"unknown: {why}")
    verdict = inv.verdicts.get(tip)
    if verdict is None:
        verdict = TipVerdict(unknown="not judged by the inventory")
    prefix = f"refs/remotes/{require_remote_base}/" if require_remote_base else ""

    def accept(proof: Proof | None) -> bool:
        return proof is not None and (not prefix or proof.base.startswith(prefix))

    if accept(verdict.proof):
        assert verdict.proof is not None
        return TipProof(tip, verdict.proof, None, describe(verdict.proof))
    if verdict.unknown is not None:
        return TipProof(tip, None, verdict.unknown, f"unknown: {verdict.unknown}")
    if verdict.proof is not None:
        return TipProof(tip, None, None, f"proven only against {verdict.proof.base}, not a "
                        f"ref of remote {require_remote_base}")
    why = verdict.note or "no proof holds: the branch has commits that are not on the base"
    if content_tier and verdict.merge_base is not None:
        if deadline.spent():
            return TipProof(tip, None, "budget spent before the content check",
                            "unknown: budget spent before the content check")
        for base in inv.bases:
            if base.kind != "default" or (prefix and not base.ref.startswith(prefix)):
                continue
            try:
                proof = content_on_base(inv.facts.root, tip=tip, merge_base=verdict.merge_base,
                                        base=base)
            except GitError as exc:
                first = str(exc).splitlines()[0]
                return TipProof(tip, None, f"git error: {first}", f"unknown: git error: {first}")
            if proof is not None:
                return TipProof(tip, proof, None, describe(proof))
        why += "; changed files differ from the base"
    return TipProof(tip, None, None, why)


def prove_tips_for(inv: Inventory, tips: Iterable[Oid], *, content_tier: bool,
                   deadline: Deadline, require_remote_base: str | None = None
                   ) -> dict[Oid, TipProof]:
    """:func:`prove_tip` for each distinct tip: ``{tip: TipProof}``."""
    return {t: prove_tip(inv, t, content_tier=content_tier, deadline=deadline,
                         require_remote_base=require_remote_base)
            for t in dict.fromkeys(tips)}
