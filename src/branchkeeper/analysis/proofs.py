"""The proof ladder: the one place that decides whether a tip's work is preserved.

Cheapest first, first that holds wins (issues 3 and 11; first document, sections 2 and 11):

1. ``ancestor``: the tip is reachable from the default branch or an integration line.
2. ``patch_equivalent``: every commit of the branch is on a base by patch-id (rebase merge).
3. ``squash_merged``: the branch's whole diff has the patch-id of one base commit made after
   it forked (``verified: patch-id``), or merging the branch into such a commit's first
   parent reproduces that commit's tree exactly (``verified: merge``; field cases C08, C12).
4. ``tip_subsumed``: the tip is an ancestor of a tip proven by 2 or 3 AND merging it into the
   commit that branch landed as changes nothing. Otherwise the tip is ``superseded``: its
   commits are inside a branch that landed, but some of its changes did not (C11).
5. ``content_on_base``: every path the branch changed is identical on the base.

Tiers 2, 3 and 5 read only the tip and the bases and are cached per tip (:mod:`.proofcache`);
tier 4 depends on which other branches landed, so it runs last, over every tip still unproven.

Nothing is limited to a window of recent base commits (issue 11, section 3): the default
branch's whole history is read once (:class:`~.basehistory.BaseHistory`); per-commit changed
paths and patch-ids are cached by commit id, and patch-ids are computed only for commits whose
changed-path set matches one on the other side. Everything is batched: one subgraph walk, one
history read, a few ``diff-tree``/``patch-id`` streams, one ``merge-tree --stdin`` per tier,
whatever the number of tips. A missing object makes only the tips that need it ``unknown:
object missing (<oid>)`` (section 4); a git error, a shallow graft, an unresolved base or a
spent budget give ``unknown`` too, which never deletes (DESIGN.md, guarantee 1).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from branchkeeper.analysis import content, landing, subsumed
from branchkeeper.analysis.basehistory import BaseHistory
from branchkeeper.analysis.commitfacts import DiffFacts
from branchkeeper.analysis.graph import Subgraph
from branchkeeper.analysis.proofcache import cacheable, decode, encode, verdict_stamp
from branchkeeper.analysis.proofrun import BUDGET_MSG, Base, Deadline, ProofRun, TipVerdict
from branchkeeper.git.mergetree import ScratchObjects
from branchkeeper.git.objects import missing_objects
from branchkeeper.git.repo import patch_id_mode
from branchkeeper.git.run import GitError
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.model.records import Proof, ProofKind
from branchkeeper.state.commit_cache import CommitCache
from branchkeeper.state.inventory_cache import InventoryCache

__all__ = ["BUDGET_MSG", "Base", "Deadline", "ProofResult", "TipVerdict", "prove_tips"]


@dataclass
class ProofResult:
    """The ladder's answers: ``verdicts`` per tip, the default branch's ``history`` (None when
    no tip needed it) and repository-level ``notes`` (tiers git could not run, objects
    missing); ``missing_objects`` are the object ids git could not read."""

    verdicts: dict[Oid, TipVerdict]
    history: BaseHistory | None = None
    notes: list[str] = field(default_factory=list)
    missing_objects: set[str] = field(default_factory=set)
    unjudged: set[Oid] = field(default_factory=set)
    #: paths changed since the whole-diff base, per tip whose whole diff this run read
    changed_paths: dict[Oid, int] = field(default_factory=dict)


def prove_tips(
    root: Path,
    tips: Sequence[Oid],
    *,
    subgraph: Subgraph,
    default_bases: Sequence[Base],
    line_bases: Sequence[Base],
    merged_into_remote_default: set[Oid],
    cache: InventoryCache,
    commits: CommitCache,
    common_dir: Path,
    merges: bool,
    shallow: bool,
    deadline: Deadline,
    git_label: str = "this git",
    partial: bool = False,
) -> ProofResult:
    """Run the ladder over every tip at once.

    ``subgraph`` must have been walked from ``tips`` (and the line tips) excluding every ref in
    ``default_bases``; a tip absent from it (or on its boundary) is an ancestor of the default
    branch. ``merged_into_remote_default`` is the set of tips ancestor of the remote-tracking
    default (from one ``for-each-ref --merged``), used to name the base ref. ``merges``: git
    can run ``merge-tree --write-tree --stdin`` (2.39); without it the merge-based checks are
    skipped and said so in the notes (``git_label`` names the git). ``partial``: a partial
    clone (missing objects are found without fetching them). A tip whose tier 2, 3 and
    5 verdict is cached under the same bases (:mod:`.proofcache`) is not judged again. Raises
    nothing for git failures of the proof tiers: those tips become ``unknown``.
    """
    if not default_bases:
        return ProofResult({t: TipVerdict(unknown="default branch unresolved") for t in tips})
    facts = DiffFacts(root, commits, budgeted=deadline.bounded, spent=deadline.spent,
                      partial=partial)
    run = ProofRun(root, common_dir, subgraph, list(default_bases), list(line_bases), cache,
                   deadline, facts, merges)
    meter = progress.current()
    meter.phase("proving: ancestry", len(tips), unit="tips")
    pending = _ancestors(run, tips, merged_into_remote_default, shallow=shallow)
    meter.complete()
    result = ProofResult(run.verdicts)
    if not pending:
        return result
    stamp = verdict_stamp(default_bases, line_bases, merges=merges, pid_mode=patch_id_mode(),
                          shallow=shallow)
    todo = _cached(run, pending, stamp)
    meter.count("verdicts", len(pending) - len(todo))
    if todo:
        meter.phase("reading the default branch's history", unit="commits")
        try:
            run.history = BaseHistory.read(root, [b.oid for b in default_bases])
        except GitError as exc:
            first = str(exc).splitlines()[0]
            for tip in todo:
                run.verdicts[tip] = TipVerdict(unknown=f"git error: {first}")
            result.notes.append(f"git error while reading the default branch's history: "
                                f"{first}")
            todo = []
    result.history = run.history
    with contextlib.ExitStack() as stack:
        if merges:
            run.scratch = stack.enter_context(ScratchObjects(common_dir))
        if todo:
            _own_tiers(run, todo, stamp)
        _tier(run, pending, "proving: inside a landed branch",
              subsumed.tip_subsumed if merges else subsumed.without_merges)
        run.scratch = None
    _finish(run, pending)
    result.changed_paths = {t: w.paths for t, w in run.whole.items()}
    result.missing_objects = run.missing_objects
    result.unjudged = set(run.not_merged)
    if run.pid_blind:
        version = git_label.removeprefix("git ").split(" ")[0]
        result.notes.append(f"git {'.'.join(version.split('.')[:2])}: patch-id ignores "
                            f"whitespace; {len(run.pid_blind)} branches not proven by "
                            "patch-id")
    if run.not_merged:
        result.notes.append(
            f"{git_label} cannot verify merges in one process (git 2.39 can): "
            f"{len(run.not_merged)} branch(es) not judged by merge")
    return result


def _cached(run: ProofRun, pending: Sequence[Oid], stamp: str) -> list[Oid]:
    """Fill the verdicts of the tips cached under ``stamp``; return the others. A cached
    ``object missing`` verdict is dropped when that object is present again."""
    todo: list[Oid] = []
    missing: dict[Oid, str] = {}
    for tip in pending:
        raw = run.cache.get_verdict(tip, stamp)
        verdict = decode(raw)
        if verdict is None:
            todo.append(tip)
            continue
        run.verdicts[tip] = verdict
        if isinstance(raw, list) and raw[4:] == [True]:  # a patch-id proof refused: noted
            run.pid_blind.add(tip)
        if verdict.merge_base is not None:  # keep the range's patch-id with the verdict
            key = f"{verdict.merge_base}:{tip}"
            if key in run.cache.range_pid:
                run.cache.used_range.add(key)
        oid = _missing_oid(verdict)
        if oid is not None:
            missing[tip] = oid
    if missing:
        try:
            lacking = missing_objects(run.root, set(missing.values()), partial=run.facts.partial)
        except GitError:
            lacking = set(missing.values())
        present = set(missing.values()) - lacking
        for tip, oid in missing.items():
            if oid in present:
                del run.verdicts[tip]
                run.cache.drop_verdict(tip)
                todo.append(tip)
            else:
                run.missing_objects.add(oid)
    return todo


def _missing_oid(verdict: TipVerdict) -> str | None:
    text = verdict.unknown or ""
    if text.startswith("object missing (") and text.endswith(")"):
        return text[len("object missing ("):-1]
    return None


def _own_tiers(run: ProofRun, todo: list[Oid], stamp: str) -> None:
    """Tiers 2, 3 and 5 for the tips not cached; each finished verdict is cached."""
    _frontiers(run, todo)
    _tier(run, todo, "proving: changed paths", landing.gather)
    _tier(run, todo, "proving: rebase merges by patch-id", landing.patch_equivalent)
    _tier(run, todo, "proving: squash merges by patch-id", landing.squash_by_patch_id)
    if patch_id_mode() != "verbatim":
        blind = {t for t in todo if (v := run.verdicts.get(t)) is not None
                 and v.proof is not None and v.proof.verified == "patch-id"}
        landing.confirm_blind_patch_ids(run, todo)
        if not run.merges:  # with merges the content check judged them: nothing to note
            run.pid_blind |= {t for t in blind if t not in run.verdicts}
    if run.merges:
        _tier(run, todo, "proving: squash merges by merge", landing.squash_by_merge)
    _tier(run, todo, "proving: content on the base", content.content_on_base)
    _finish(run, todo)
    for tip in todo:
        verdict = run.verdicts[tip]
        if cacheable(verdict):  # with whether a patch-id proof was refused: the note
            run.cache.put_verdict(tip, stamp, [*encode(verdict), tip in run.pid_blind])


def _tier(run: ProofRun, tips: Sequence[Oid], name: str,
          step: Callable[[ProofRun, Sequence[Oid]], None]) -> None:
    """Run one tier over ``tips`` as a phase of the pass's meter (its total: the tips still
    open when it starts; :mod:`branchkeeper.model.progress`)."""
    meter = progress.current()
    total = len(run.unproven(list(tips)))
    meter.phase(name, total, unit="tips")
    step(run, tips)
    meter.complete()  # tops up what the step counted as it went (or all of it at once)


def _ancestors(run: ProofRun, tips: Sequence[Oid], merged_into_remote_default: set[Oid], *,
               shallow: bool) -> list[Oid]:
    """Tier 1: ancestor of the default branch (absent from the unmerged subgraph), then of an
    integration line (reachable from a line tip in the subgraph). Returns the tips left to
    prove, each with its walk; a tip whose walk is too large, or reaches a shallow graft, is
    unknown."""
    remote_default = run.default_bases[0]
    local_default = run.default_bases[-1]
    subgraph = run.subgraph
    pending: list[Oid] = []
    for tip in dict.fromkeys(tips):
        node = subgraph.commits.get(tip)
        if node is None or node.boundary:
            same = remote_default.oid == local_default.oid
            base = remote_default if same or tip in merged_into_remote_default else local_default
            run.verdicts[tip] = TipVerdict(Proof(ProofKind.ANCESTOR, base.ref, None))
            continue
        pending.append(tip)
    line_sets = [(b, reach) for b in run.line_bases
                 if (reach := subgraph.reachable_set(b.oid)) is not None]
    still: list[Oid] = []
    for tip in pending:
        hit = next((b for b, reach in line_sets if tip in reach and tip != b.oid), None)
        if hit is not None:
            run.verdicts[tip] = TipVerdict(Proof(ProofKind.ANCESTOR, hit.ref, None))
            continue
        walk = subgraph.walk(tip)
        if walk is None:
            run.verdicts[tip] = TipVerdict(unknown="history too large to walk within the limits")
            continue
        if shallow and (walk.touches_root or walk.touches_graft):
            run.verdicts[tip] = TipVerdict(
                unknown="shallow clone: the branch's history reaches the graft, so ancestry "
                        "there is not trusted (run: git fetch --unshallow)")
            continue
        run.walks[tip] = walk
        run.own[tip] = subgraph.own(walk)
        still.append(tip)
    return still


def _frontiers(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Each pending tip's cutoff, certain merge base and whole-diff base (the merge base, or the
    frontier commit that joins the default branch last: a base commit the tip reaches, which
    is all a content comparison needs), from its walk's frontier."""
    history = run.history
    assert history is not None
    for tip in pending:
        frontier = run.walks[tip].frontier
        run.cutoff[tip] = history.cutoff(frontier)
        if not frontier:
            run.notes[tip] = "no common history with the default branch"
            continue
        mb = history.merge_base(frontier)
        if mb is not None:
            run.merge_base[tip] = mb
            run.diff_base[tip] = mb
            continue
        known = [f for f in frontier if f in history]
        if known:
            run.diff_base[tip] = max(known, key=lambda f: (history.join_of(f), f))
        run.notes[tip] = "no single merge base with the default branch"


def _finish(run: ProofRun, pending: Sequence[Oid]) -> None:
    """Every pending tip still open: unknown where a fact it needed is missing, else no
    proof (work), with the note of why."""
    for tip in pending:
        if not run.is_open(tip):
            continue
        verdict = run.verdicts.get(tip)
        mb = verdict.merge_base if verdict is not None else run.merge_base.get(tip)
        if tip in run.gaps:
            run.verdicts[tip] = TipVerdict(unknown=run.gaps[tip], merge_base=mb)
        elif verdict is None:
            run.verdicts[tip] = TipVerdict(note=run.notes.get(tip, ""), merge_base=mb)
