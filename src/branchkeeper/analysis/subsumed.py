"""Tier 4 of the proof ladder: a tip inside a landed branch, and the ``superseded`` state.

Issue 11, section 1. A tip ``T`` that is an ancestor of a tip ``H`` proven landed (tier 2 or
3) is preserved only when merging ``T`` into the commit ``H`` landed as changes nothing: the
three-way merge (``merge-tree``, git's own merge base) is clean and its tree is that commit's
tree. For ``H`` proven commit by commit (tier 2) there is no single landing commit, so ``T`` is
merged into the base tip instead. A merge that conflicts only where that commit already holds
``T``'s side (an add/add of a file ``H`` extended: every line ``T`` changed is on it, markers
aside) loses nothing by content either: ``T`` is preserved, ``verified: "content"``. When no
holder passes, ``T`` is ``superseded``: its commits
are inside ``H``, which landed, but some of its changes did not (a review edit, a follow-up
that dropped a line ``T`` added: field case C11). What is missing comes from one ``diff-tree
--numstat`` stream of ``<landing tree> <merge result tree>`` pairs, in the scratch object store
the merges wrote to; where the merge conflicts, one ``diff-tree -p`` stream counts the branch's
side of each conflict instead of the markers (:mod:`.conflict_lines`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from branchkeeper.analysis.conflict_lines import branch_side_counts
from branchkeeper.analysis.diffstreams import Counts, tree_numstat
from branchkeeper.analysis.proofcache import decode_pair, encode_pair, pair_key
from branchkeeper.analysis.proofrun import ProofRun, TipVerdict
from branchkeeper.git.isolate import Failure
from branchkeeper.git.mergetree import merge_pairs
from branchkeeper.git.objects import commit_trees
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.records import MissingChange, Proof, ProofKind, Supersession

#: Holders tried per tip.
MAX_HOLDERS = 4

_LANDED = (ProofKind.PATCH_EQUIVALENT, ProofKind.SQUASH_MERGED)


def holders_of(run: ProofRun, pending: Sequence[Oid]) -> dict[Oid, list[Oid]]:
    """Unproven tip -> the tips proven landed (tiers 2, 3) whose commits include it."""
    open_tips = set(run.unproven(list(pending)))
    held: defaultdict[Oid, list[Oid]] = defaultdict(list)
    for p in pending:
        verdict = run.verdicts.get(p)
        if verdict is None or verdict.proof is None or verdict.proof.kind not in _LANDED:
            continue
        for c in run.walks[p].unique:
            if c in open_tips and c != p and len(held[c]) < MAX_HOLDERS:
                held[c].append(p)
    return dict(held)


def _target(run: ProofRun, proof: Proof) -> Oid:
    """The commit a tip inside a branch landed by ``proof`` is merged into."""
    if proof.kind is ProofKind.SQUASH_MERGED and proof.landed_as is not None:
        return proof.landed_as
    return next(b.oid for b in [*run.default_bases, *run.line_bases] if b.ref == proof.base)


def without_merges(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 4 on a git without ``merge-tree --stdin``: a tip inside a landed branch cannot be
    checked, so it stays work and is counted in the notes."""
    for t, hs in holders_of(run, pending).items():
        run.not_merged.add(t)
        old = run.verdicts.get(t)
        run.verdicts[t] = TipVerdict(
            note=f"inside {hs[0].short}, which landed; whether all of its changes landed cannot "
                 "be checked without merge-tree --stdin",
            merge_base=old.merge_base if old is not None else run.merge_base.get(t))


Outcome = tuple[bool, bool, tuple[MissingChange, ...]]


def _holder(h: Oid, proof: Proof) -> str:
    """Which landed tip holds a preserved tip: the note beside the proof's words, which
    already say what merging it there does (:func:`.dispositions.describe`)."""
    return f"an ancestor of {h.short}, proven {proof.kind.value}"


def tip_subsumed(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 4 (see the module docstring) for every open tip inside a landed branch: each
    ``(landing commit, tip)`` merge comes from the cache or from one ``merge-tree --stdin``
    (with one ``cat-file`` for the landing trees and one ``numstat`` for what did not land)."""
    plans: dict[Oid, list[tuple[Oid, Oid, Proof]]] = {}
    for t, hs in holders_of(run, pending).items():
        plan = []
        for h in hs:
            proof = run.verdicts[h].proof
            assert proof is not None
            plan.append((h, _target(run, proof), proof))
        plans[t] = plan
    if not plans:
        return
    pairs = list(dict.fromkeys((target, t) for t, plan in plans.items() for _, target, _ in plan))
    outcomes: dict[tuple[str, str], Outcome] = {}
    todo: list[tuple[str, str]] = []
    for pair in pairs:
        cached = decode_pair(run.cache.get_pair(pair_key(*pair)))
        if cached is None:
            todo.append(pair)
        else:
            outcomes[pair] = cached
    failed = _merge(run, todo, outcomes) if todo else {}
    for t, plan in plans.items():
        first: tuple[Oid, Proof, Outcome] | None = None
        for h, target, proof in plan:
            outcome = outcomes.get((target, t))
            if outcome is None:
                continue
            if outcome[1]:
                landed = proof.landed_as if proof.kind is ProofKind.SQUASH_MERGED else None
                run.prove(t, Proof(ProofKind.TIP_SUBSUMED, proof.base, landed, "merge"),
                          note=_holder(h, proof))
                break
            if _all_lines_landed(outcome):
                landed = proof.landed_as if proof.kind is ProofKind.SQUASH_MERGED else None
                run.prove(t, Proof(ProofKind.TIP_SUBSUMED, proof.base, landed, "content"),
                          note=_holder(h, proof))
                break
            if first is None:
                first = (h, proof, outcome)
        else:
            if first is not None:
                _supersede(run, t, *first)
            else:
                failure = next((failed[(target, t)] for _, target, _ in plan
                                if (target, t) in failed), None)
                run.gap(t, failure)


def _all_lines_landed(outcome: Outcome) -> bool:
    """True for a merge that conflicts only where the landing commit already has the branch's
    side: counted without the markers (:mod:`.conflict_lines`), no line and no path of the
    branch is missing (a binary path counts as missing). Nothing is lost by content, so the
    branch is not superseded: "superseded" always names a line that did not land."""
    clean, same, changes = outcome
    return not clean and not same and not changes


def _merge(run: ProofRun, todo: list[tuple[str, str]],
           outcomes: dict[tuple[str, str], Outcome]) -> dict[tuple[str, str], Failure]:
    """Merge the uncached pairs, measure what each non-empty merge still changes, cache both;
    the pairs that failed (a missing object; a spent budget leaves them out entirely)."""
    if run.deadline.spent() or run.scratch is None:
        return {}
    try:
        merged, failed = merge_pairs(run.root, todo, scratch=run.scratch)
        trees = commit_trees(run.root, {target for target, _ in todo})
    except GitError:
        return {}
    stats = {pair: (trees[pair[0]], o.tree) for pair, o in merged.items()
             if pair[0] in trees and not (o.clean and o.tree == trees[pair[0]])}
    try:
        counts, unread = tree_numstat(run.root, list(set(stats.values())),
                                      env=run.scratch.env())
    except GitError:
        counts, unread = {}, {}
    sides = branch_side_counts(run.root, [(*stats[pair], *pair) for pair, o in merged.items()
                                          if pair in stats and not o.clean],
                               env=run.scratch.env())
    for pair, o in merged.items():
        if pair[0] not in trees:
            continue
        same = o.clean and o.tree == trees[pair[0]]
        if not same and stats[pair] in unread:
            # what did not land cannot be counted (a blob this clone lacks): no verdict, or
            # "superseded" would name 0 lines
            failed[pair] = unread[stats[pair]]
            continue
        changes = () if same else _changes(counts.get(stats[pair], []),
                                           None if o.clean else sides.get(stats[pair]))
        outcomes[pair] = (o.clean, same, changes)
        if same or (stats[pair] in counts and (o.clean or stats[pair] in sides)):
            run.cache.put_pair(pair_key(*pair), encode_pair(clean=o.clean, same=same,
                                                            changes=changes))
    return failed


def _changes(numstat: Counts, sides: list[tuple[int, int]] | None
             ) -> tuple[MissingChange, ...]:
    """What a merge still changes, per path. For a conflicted merge (``sides``: the patch's
    per-path counts in the same order) text paths count the branch's side of each conflict
    and the changes outside them, never the markers; a path left with nothing is dropped."""
    if sides is None or len(sides) != len(numstat):
        return tuple(MissingChange(p, a, d) for p, a, d in numstat)
    out = []
    for (path, added, _deleted), (a, d) in zip(numstat, sides, strict=True):
        if added is None:
            out.append(MissingChange(path, None, None))
        elif a or d:
            out.append(MissingChange(path, a, d))
    return tuple(out)


def _supersede(run: ProofRun, t: Oid, h: Oid, proof: Proof, outcome: Outcome) -> None:
    """Mark ``t`` superseded: inside ``h``, which landed by ``proof``, but merging it there
    still changes what ``outcome`` lists."""
    clean, _, changes = outcome
    landed = proof.landed_as if proof.kind is ProofKind.SQUASH_MERGED else None
    old = run.verdicts.get(t)
    lines = sum((c.added or 0) + (c.deleted or 0) for c in changes)
    run.verdicts[t] = TipVerdict(
        superseded=Supersession(h, proof.base, landed, changes, not clean),
        note=f"inside {h.short}, proven {proof.kind.value}, but merging it into "
             f"{(landed or _target(run, proof)).short} still changes {lines} line(s)",
        merge_base=old.merge_base if old is not None else run.merge_base.get(t))
