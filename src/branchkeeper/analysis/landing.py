"""Tiers 2 and 3 of the proof ladder: where a branch's work landed on a base.

:func:`gather` reads the diff facts every tier needs, in a few batched streams: the changed-path
hash of each of the branches' own commits, of each integration line's own commits and of every
default-branch commit a branch does not hold; each pending tip's whole diff; patch-ids only of
commits whose path hash occurs on the other side (path sets are cheap, patch-ids are not) and
the whole-diff patch-id of the tips whose path hash matches a base commit, in the same patch-id
streams.

- :func:`patch_equivalent` (tier 2): every commit of the branch has the patch-id of a base
  commit it does not hold (a rebase merge, cherry-picks).
- :func:`squash_by_patch_id` (tier 3): the whole diff from the merge base has the patch-id of one
  such base commit (``verified: patch-id``; field cases C08, C09).
- :func:`squash_by_merge` (tier 3): for each base commit ``S`` changing exactly the whole diff's
  paths, ``merge-tree S^1 T``: when the merge is clean and its tree is ``S``'s tree, the branch
  landed as ``S`` even though the base had moved under it (``verified: merge``; C12). Merge
  commits and root commits are never candidates (a squash lands as one ordinary commit); a
  candidate whose first parent is older than the branch's fork is still sound: the merge then
  has to reproduce ``S`` from that parent, which it does only when ``S`` holds the branch's
  whole content.
"""

from __future__ import annotations

import functools
import operator
from collections import defaultdict
from collections.abc import Iterable, Sequence

from branchkeeper.analysis.commitfacts import Listing
from branchkeeper.analysis.proofrun import Base, ProofRun
from branchkeeper.git.isolate import STOPPED_MARK, Failure
from branchkeeper.git.mergetree import STOPPED, MergeOutcome, merge_pairs
from branchkeeper.git.objects import commit_trees, tree_listing
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof, ProofKind

#: Base commits tried per branch by the merge check, nearest in date to the branch's tip first.
MAX_MERGE_CANDIDATES = 8
_ZERO = frozenset({"0" * 40, "0" * 64})
#: A merge check candidate: ``(S, S's first parent, the integration line or None)``.
Candidate = tuple[Oid, Oid, Base | None]

#: Candidates per tip in each round of the merge check (they add up to the maximum): two
#: rounds, so the git process count stays flat and low: the likeliest candidate first, then
#: all the others of the tips still unproven (on real histories most of those prove nothing
#: and try every candidate anyway).
MERGE_ROUNDS = (1, 7)


def _diffable(run: ProofRun, commit: Oid) -> bool:
    node = run.subgraph.commits.get(commit)
    return node is not None and len(node.parents) == 1


def gather(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Read the path hashes, whole diffs, patch-ids and whole-diff patch-ids the tiers need
    (see the module docstring). A fact a tip needs that git could not give is a gap."""
    history = run.history
    assert history is not None
    # in history order (each branch's commits together, newest first): git reads
    # neighbouring commits far faster than scattered ones
    own = dict.fromkeys(c for t in pending for c in run.own[t] if _diffable(run, c))
    line_only = {b.ref: [c for c in run.walks_of(b) if _diffable(run, c)]
                 for b in run.line_bases}
    line_commits = dict.fromkeys(c for cs in line_only.values() for c in cs)
    base_commits = history.landing_candidates(min(run.cutoff[t] for t in pending))
    phash, failed = run.facts.path_sets([*own, *line_commits, *base_commits])
    run.phash = phash
    halted = _stop(failed, [*line_commits, *base_commits])
    for t in pending:
        if halted is not None:  # the candidates are not known: no tip is judged
            run.gap(t, halted)
        for c in run.own[t]:
            if c in own and c not in phash:
                run.gap(t, failed.get(c))
    pairs = [(run.diff_base[t], t) for t in pending if t in run.diff_base]
    whole, wfailed = run.facts.whole_diffs(pairs, _base_trees(run))
    run.whole = whole
    for _, t in pairs:
        if t not in whole:
            run.gap(t, wfailed.get(t))
    own_hashes = {phash[c] for c in own if c in phash} - {0}
    wanted = own_hashes | ({w.paths_hash for w in whole.values()} - {0})
    by_hash: defaultdict[int, list[Oid]] = defaultdict(list)
    for b in base_commits:
        h = phash.get(b)
        if h in wanted:
            by_hash[h].append(b)  # base_commits run newest first: reversed below
    run.base_by_hash = {h: sorted(bs, key=history.join_of) for h, bs in by_hash.items()}
    for ref, commits in line_only.items():
        table: defaultdict[int, list[Oid]] = defaultdict(list)
        for c in commits:
            if phash.get(c) in wanted:
                table[phash[c]].append(c)
        run.line_by_hash[ref] = dict(table)
    _patch_ids(run, pending, own)


def _stop(failed: dict[Oid, Failure], commits: Iterable[Oid]) -> Failure | None:
    """The failure of the first of ``commits`` that a stream which stopped answering left
    unanswered (``failed``: the failures of that step), or None."""
    return next((f for c in commits if (f := failed.get(c)) is not None
                 and STOPPED_MARK in f.message), None)


def _base_trees(run: ProofRun) -> dict[str, Listing]:
    """The listing of each default ref's tip tree, for the content tier (one ``ls-tree`` per
    distinct tip); on a git error none, and the error is kept for the tier's note."""
    trees: dict[str, Listing] = {}
    for base in run.default_bases:
        if base.oid in trees:
            continue
        try:
            trees[base.oid] = tree_listing(run.root, base.oid)
        except (GitError, ParseError) as exc:
            run.content_error = str(exc).splitlines()[0]
            return {}
    return trees


def _matched(run: ProofRun, h: int | None) -> bool:
    return h is not None and h != 0 and (
        h in run.base_by_hash or any(h in t for t in run.line_by_hash.values()))


def _patch_ids(run: ProofRun, pending: Sequence[Oid], own: dict[Oid, None]) -> None:
    """Patch-ids of the own commits whose path hash occurs on a base, of the base commits
    whose path hash occurs among own commits or whole diffs, and the whole-diff patch-ids
    (:func:`_range_needs`), all from the same streams."""
    phash = run.phash
    mine = [c for c in own if _matched(run, phash.get(c))]
    history = run.history
    assert history is not None
    theirs = sorted((b for bs in run.base_by_hash.values() for b in bs),
                    key=history.index.__getitem__)
    theirs += [c for table in run.line_by_hash.values() for cs in table.values() for c in cs]
    wanted = set(mine)
    need, singles = _range_needs(run, pending, wanted)
    found, failures = run.facts.patch_ids_with_ranges([*mine, *theirs], need)
    pids = {c: v for (kind, c), v in found.items() if kind == "c"}
    failed = {c: f for (kind, c), f in failures.items() if kind == "c"}
    run.pids = pids
    # a candidate a stopped stream left without its patch-id proves nothing, and its absence
    # proves nothing either: the tips whose paths match it are not judged
    halted = {phash[c]: f for c in theirs if (f := _stop(failed, [c])) is not None}
    for t in pending:
        w = run.whole.get(t)
        hit = halted.get(w.paths_hash) if w is not None else None
        hit = hit or next((halted[phash[c]] for c in run.own[t] if phash.get(c) in halted),
                          None)
        if hit is not None:
            run.gap(t, hit)
        for c in run.own[t]:
            if c in wanted and c not in pids:
                run.gap(t, failed.get(c))
    by_pid: defaultdict[str, list[Oid]] = defaultdict(list)
    for bs in run.base_by_hash.values():
        for b in bs:
            if pids.get(b):
                by_pid[pids[b]].append(b)
    run.base_by_pid = {p: sorted(bs, key=history.join_of) for p, bs in by_pid.items()}
    for ref, table in run.line_by_hash.items():
        line_pids: defaultdict[str, list[Oid]] = defaultdict(list)
        for cs in table.values():
            for c in cs:
                if pids.get(c):
                    line_pids[pids[c]].append(c)
        run.line_by_pid[ref] = dict(line_pids)
    for mb, t, asked in [*((mb, t, True) for mb, t in need),
                         *((mb, t, False) for mb, t in singles)]:
        value = found.get(("r", t)) if asked else pids.get(t)
        if value is not None:
            run.range_pid[t] = run.cache.range_pid[f"{mb}:{t}"] = value
            run.cache.used_range.add(f"{mb}:{t}")
        elif asked:
            run.gap(t, failures.get(("r", t)))


def _single(run: ProofRun, tip: Oid, merge_base: Oid, mine: set[Oid]) -> bool:
    """The branch is one commit on its merge base whose own patch-id is asked (``mine``):
    its whole diff is that commit's diff, so the whole-diff patch-id is that patch-id."""
    node = run.subgraph.commits.get(tip)
    return node is not None and node.parents == (merge_base,) and tip in mine \
        and run.walks[tip].unique == [tip]


def _range_needs(run: ProofRun, pending: Sequence[Oid], mine: set[Oid]
                 ) -> tuple[list[tuple[Oid, Oid]], list[tuple[Oid, Oid]]]:
    """The whole-diff patch-id (cached per merge base and tip) of each tip with a certain
    merge base whose whole diff's path hash occurs on a base: the cached ones are set; returns
    the ``(merge base, tip)`` pairs to compute, and those whose answer is their one commit's
    patch-id (:func:`_single`: no second diff)."""
    need: list[tuple[Oid, Oid]] = []
    singles: list[tuple[Oid, Oid]] = []
    for t in pending:
        mb = run.merge_base.get(t)
        w = run.whole.get(t)
        if mb is None or w is None or not _matched(run, w.paths_hash):
            continue
        key = f"{mb}:{t}"
        cached = run.cache.range_pid.get(key)
        if cached is not None:
            run.cache.used_range.add(key)
            run.range_pid[t] = cached
        elif _single(run, t, mb, mine):
            singles.append((mb, t))
        else:
            need.append((mb, t))
    return need, singles


def _proof(run: ProofRun, kind: ProofKind, landed: Oid, base: Base | None, verified: str
           ) -> Proof:
    ref = run.base_ref(landed) if base is None else base.ref
    return Proof(kind, ref, landed, verified)


def _on_default(run: ProofRun, tip: Oid, own: Sequence[Oid]) -> Oid | None:
    """The default-branch copy of ``own[0]`` when every own commit has one (a base commit
    with its patch-id the tip does not hold), else None; stops at the first commit without
    one (a branch forked long ago has thousands of commits)."""
    history = run.history
    assert history is not None
    cut = run.cutoff.get(tip, -1)
    first: Oid | None = None
    for c in own:
        p = run.pids.get(c)
        copy = next((b for b in run.base_by_pid.get(p, []) if history.join_of(b) > cut),
                    None) if p and _diffable(run, c) else None
        if copy is None:
            return None
        first = first or copy
    return first


def patch_equivalent(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 2: every own commit (no merge among them) has the patch-id of a base commit the
    branch does not hold: on the default branch, or, for the commits an integration line does
    not already hold, on that line."""
    for t in run.unproven(list(pending)):
        own = run.own[t]
        if not own:
            continue
        first = _on_default(run, t, own)
        if first is not None:
            run.prove(t, _proof(run, ProofKind.PATCH_EQUIVALENT, first, None, "patch-id"))
            continue
        if not run.line_bases:
            continue
        hits = {c: run.landed(t, pid=p) if (p := run.pids.get(c)) and _diffable(run, c) else []
                for c in own}
        for line in run.line_bases:
            held = run.line_reach(line)
            rest = [c for c in own if c not in held]
            if rest and all(any(base in (None, line) for _, base in hits[c]) for c in rest):
                first = next(b for b, base in hits[rest[0]] if base in (None, line))
                run.prove(t, Proof(ProofKind.PATCH_EQUIVALENT, line.ref, first, "patch-id"))
                break


def squash_by_patch_id(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 3 by patch-id: the whole diff from the certain merge base has the patch-id of one
    base commit the branch does not hold."""
    for t in run.unproven(list(pending)):
        pid = run.range_pid.get(t)
        if not pid:
            continue
        hits = run.landed(t, pid=pid)
        if hits:
            landed, base = hits[0]
            run.prove(t, _proof(run, ProofKind.SQUASH_MERGED, landed, base, "patch-id"))


def _candidates(run: ProofRun, tip: Oid) -> list[Candidate]:
    """``(S, S's first parent, line or None)`` for the merge check, nearest in date first."""
    w = run.whole.get(tip)
    if w is None or w.paths_hash == 0:
        return []
    history = run.history
    assert history is not None
    tip_date = run.subgraph.commits[tip].date
    frontier = run.walks[tip].frontier
    roots = 0 if any(f not in history for f in frontier) else \
        functools.reduce(operator.or_, (history.roots(f) for f in frontier), 0)
    out: list[tuple[int, Oid, Oid, Base | None]] = []
    for s, base in run.landed(tip, paths=w.paths_hash):
        if base is None:
            parent = history.first_parent(s)
            date = history.date(s)
            if parent is not None and roots and not history.roots(parent) & roots:
                continue  # no history in common with the branch: git refuses the merge
        else:
            node = run.subgraph.commits[s]
            parent, date = node.parents[0], node.date
        if parent is not None:
            out.append((date if date >= tip_date else 2 * tip_date - date, s, parent, base))
    out.sort(key=lambda x: (x[0], x[1]))
    return [(s, p, b) for _, s, p, b in out[:MAX_MERGE_CANDIDATES]]


def squash_by_merge(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Tier 3 by merge: ``merge-tree S^1 T`` reproduces ``S`` for a candidate ``S``.

    In rounds (:data:`MERGE_ROUNDS`): the first merges each tip with its likeliest candidate,
    each later one only the tips still unproven with their next candidates, so a tip stops at
    its first verified candidate. Each round is one :func:`merge_pairs` batch (two streams when
    large); one ``cat-file`` reads every candidate's tree. A tip whose merge failed on a missing
    object, or whose stream stopped answering, is ``unknown`` with that reason, never proven.
    """
    assert run.scratch is not None
    todo = {t: c for t in run.unproven(list(pending))
            if not run.lacks_objects(t) and (c := _candidates(run, t))}
    if not todo:
        return
    if run.deadline.spent():
        for t in todo:
            run.gap(t, None)
        return
    todo = {t: kept for t, cands in _screen(run, todo).items() if (kept := cands)}
    try:
        trees = commit_trees(run.root, {s for cands in todo.values() for s, _, _ in cands})
    except (GitError, ParseError) as exc:
        failure = Failure(None, f"the merge check failed: {str(exc).splitlines()[0]}")
        for t in todo:
            run.gap(t, failure)
        return
    start = 0
    for width in MERGE_ROUNDS:
        if not todo:
            return
        if start and run.deadline.spent():
            for t in todo:
                run.gap(t, None)
            return
        batch = {t: cands[start:start + width] for t, cands in todo.items()}
        outcomes, failed = merge_pairs(run.root, [(p, t) for t, cands in batch.items()
                                                  for _, p, _ in cands], scratch=run.scratch)
        for t, cands in batch.items():
            _verify(run, t, cands, trees, outcomes, failed)
        start += width
        todo = {t: cands for t, cands in todo.items()
                if len(cands) > start and run.is_open(t) and t not in run.gaps}


def _screen(run: ProofRun, todo: dict[Oid, list[Candidate]]) -> dict[Oid, list[Candidate]]:
    """Leave out the candidates no merge can verify, told from blob ids alone (one
    ``diff-tree --raw`` stream of the candidates, two for many; :func:`may_reproduce`).

    Only where git's merge base of ``S^1`` and the tip is known to be the tip's merge base
    ``M``: ``S`` is on the default branch's first-parent chain after ``M`` (so ``S^1``
    descends from ``M``), and the tip's whole diff, from ``M``, kept its entries."""
    history = run.history
    assert history is not None

    def screened(t: Oid) -> list[Oid]:
        mb = run.merge_base.get(t)
        w = run.whole.get(t)
        if mb is None or run.diff_base.get(t) != mb or w is None or w.entries is None:
            return []
        at = history.chain_pos.get(history.index[mb]) if mb in history else None
        if at is None:
            return []
        return [s for s, _, base in todo[t] if base is None
                and history.chain_pos.get(history.index[s], -1) > at]

    checks = {t: found for t in todo if (found := screened(t))}
    commits = sorted({s for ss in checks.values() for s in ss}, key=history.index.__getitem__)
    if not commits:
        return todo
    raws = run.facts.raw_entries(commits)
    out: dict[Oid, list[Candidate]] = {}
    for t, cands in todo.items():
        entries = run.whole[t].entries if t in checks else None
        drop = {s for s in checks.get(t, []) if s in raws and entries is not None
                and not may_reproduce(raws[s], entries)}
        out[t] = [c for c in cands if c[0] not in drop]
    return out


def may_reproduce(landing: dict[bytes, bytes], branch: Sequence[tuple[bytes, bytes]]) -> bool:
    """Whether merging a branch into ``S^1`` can reproduce ``S``, from raw entries: ``landing``
    is ``S``'s diff against ``S^1`` (path -> meta), ``branch`` the branch's whole diff from
    the merge base ``M`` of ``S^1`` and the branch (meta, path). False only when certain,
    at a path ``p`` that ``M`` has: if ``S^1`` still has ``M``'s version, the merge takes the
    branch's, so ``S`` must have exactly that; if ``S^1`` already has the branch's version,
    the merge keeps it, which ``S`` changes. Everything else (a path ``M`` lacks, such as a
    rename's target; both sides changed) only a merge decides."""
    for meta, path in branch:
        theirs = landing.get(path)
        if theirs is None:
            return True  # not the same paths after all: decide nothing
        m_mode, t_mode, m_oid, t_oid = meta[1:].split(b" ", 4)[:4]
        p_mode, s_mode, p_oid, s_oid = theirs[1:].split(b" ", 4)[:4]
        if m_oid.decode("ascii") in _ZERO:
            continue
        if (p_mode, p_oid) == (m_mode, m_oid) and (s_mode, s_oid) != (t_mode, t_oid):
            return False
        if (p_mode, p_oid) == (t_mode, t_oid):
            return False
    return True


def _verify(run: ProofRun, tip: Oid, cands: Sequence[tuple[Oid, Oid, Base | None]],
            trees: dict[str, Oid], outcomes: dict[tuple[str, str], MergeOutcome],
            failed: dict[tuple[str, str], Failure]) -> None:
    """Prove ``tip`` by the first of ``cands`` whose merge reproduced its tree; else record
    the gap a failed merge left (a missing object, a stream that stopped answering; a pair
    git refused, such as unrelated histories, only rules that candidate out)."""
    for s, parent, base in cands:
        outcome = outcomes.get((parent, tip))
        if outcome is not None and outcome.clean and outcome.tree == trees.get(s):
            run.prove(tip, _proof(run, ProofKind.SQUASH_MERGED, s, base, "merge"))
            return
    for _, parent, _ in cands:
        failure = failed.get((parent, tip))
        if failure is not None and (failure.oid is not None
                                    or failure.message.startswith(STOPPED)):
            run.gap(tip, failure)
            return


def _merge_target(run: ProofRun, proof: Proof) -> Oid:
    """The commit a whitespace-blind patch-id proof must leave unchanged when the tip is merged
    into it: the base tip for ``patch_equivalent``, the landing commit for a squash."""
    if proof.kind is ProofKind.SQUASH_MERGED and proof.landed_as is not None:
        return proof.landed_as
    for base in (*run.default_bases, *run.line_bases):
        if base.ref == proof.base:
            return base.oid
    return run.default_bases[0].oid


def confirm_blind_patch_ids(run: ProofRun, pending: Sequence[Oid]) -> int:
    """Without ``patch-id --verbatim`` (git < 2.39) a patch-id ignores whitespace, so an
    indentation-only change would pass tiers 2 and 3. Each ``verified: patch-id`` proof is
    kept only when merging the tip into its target (:func:`_merge_target`) is clean and leaves
    that commit's tree unchanged (one batched ``merge-tree --stdin``); without merges no such
    proof counts. Returns how many tips lost their proof (they fall to the next tiers)."""
    blind = {t: v.proof for t in pending if (v := run.verdicts.get(t)) is not None
             and v.proof is not None and v.proof.verified == "patch-id"}
    if not blind:
        return 0
    kept: set[Oid] = set()
    if run.merges and run.scratch is not None and not run.deadline.spent():
        pairs = {t: (_merge_target(run, p), t) for t, p in blind.items()}
        try:
            outcomes, _ = merge_pairs(run.root, list(pairs.values()), scratch=run.scratch)
            trees = commit_trees(run.root, {a for a, _ in pairs.values()})
        except GitError:
            outcomes, trees = {}, {}
        for t, pair in pairs.items():
            outcome = outcomes.get(pair)
            if outcome is not None and outcome.clean and outcome.tree == trees.get(pair[0]):
                kept.add(t)
    for t in blind:
        if t not in kept:
            del run.verdicts[t]
    return len(blind) - len(kept)
