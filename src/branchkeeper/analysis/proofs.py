"""The proof ladder: the one place that decides whether a tip's work is preserved.

Cheapest first, first that holds wins (issue 3, section 1; first document, sections 2 and 11):

1. ``ancestor``: the tip is reachable from the default branch or an integration line.
2. ``patch_equivalent``: every commit of the branch since the merge base is upstream by patch-id.
3. ``squash_merged``: the branch's whole diff from its merge base has the patch-id of one base
   commit after that merge base (field cases C08, C09).
4. ``tip_subsumed``: the tip is an ancestor of another tip proven by 2 or 3.
5. ``content_on_base``: every path the branch changed is byte-identical on the base (delete path
   only: :func:`content_on_base`).

Everything is batched over all tips at once: one subgraph walk, one patch-id pipeline per side,
one window walk per base. Git errors, a shallow graft, an unresolved base or a spent budget give
``unknown`` (a reason), which never deletes (DESIGN.md, guarantee 1).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from branchkeeper.analysis.graph import Subgraph, TipWalk
from branchkeeper.analysis.patchids import _PINNED, commit_patch_ids, range_patch_ids
from branchkeeper.git.run import GitError, GitExit, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof, ProofKind
from branchkeeper.state.inventory_cache import InventoryCache


@dataclass(frozen=True, slots=True)
class Base:
    """A proof target: the default branch or an integration line, by one of its refs."""

    ref: str
    oid: Oid
    kind: str  # "default" | "line"
    name: str


@dataclass(frozen=True, slots=True)
class TipVerdict:
    """The ladder's answer for one tip: a proof, or ``unknown`` (a reason), or neither (work).

    ``merge_base``: the single merge base with the default branch where one was found.
    ``note``: why a tier did not hold, for reports (e.g. the squash window was too short).
    """

    proof: Proof | None = None
    unknown: str | None = None
    note: str = ""
    merge_base: Oid | None = None


@dataclass
class Deadline:
    """A wall-clock budget in seconds from creation; ``None`` = unbounded."""

    seconds: float | None
    start: float = field(default_factory=time.monotonic)

    def spent(self) -> bool:
        return self.seconds is not None and time.monotonic() - self.start > self.seconds


@dataclass
class Window:
    """The newest commits of a base, in topological order (descendants first).

    ``order``: commit -> index; ``parents``: commit -> parents (ids, possibly outside the
    window); ``complete``: the window holds the base's whole history.
    """

    base: Base
    order: dict[Oid, int]
    parents: dict[Oid, tuple[Oid, ...]]
    complete: bool
    pid_to_commit: dict[str, Oid] = field(default_factory=dict)

    def behind_counts(self, commits: Iterable[Oid]) -> dict[Oid, int]:
        """Exact ``rev-list --count <commit>..<base>`` for each commit inside the window.

        Ancestor sets are bitsets (Python ints) built once, oldest first. A count is exact when
        every parent outside the window is an ancestor of the commit (then nothing beyond the
        window is missing from the count); other commits are left out (unknown).
        """
        wanted = [c for c in set(commits) if c in self.order]
        if not wanted:
            return {}
        outside: dict[Oid, int] = {}
        for ps in self.parents.values():
            for p in ps:
                if p not in self.order and p not in outside:
                    outside[p] = len(outside)
        anc: dict[Oid, int] = {}
        out_anc: dict[Oid, int] = {}
        for c in sorted(self.order, key=self.order.__getitem__, reverse=True):  # oldest first
            bits = 1 << self.order[c]
            obits = 0
            for p in self.parents.get(c, ()):
                if p in self.order:
                    bits |= anc[p]
                    obits |= out_anc[p]
                else:
                    obits |= 1 << outside[p]
            anc[c] = bits
            out_anc[c] = obits
        every_outside = (1 << len(outside)) - 1
        total = len(self.order)
        return {c: total - anc[c].bit_count() for c in wanted
                if out_anc[c] == every_outside}


def _base_window(root: Path, base: Base, limit: int) -> Window:
    out = run_git(["rev-list", "--topo-order", "--parents", f"--max-count={limit + 1}",
                   base.oid], cwd=root).stdout
    rows = [line.split() for line in out.decode("ascii").splitlines() if line]
    complete = len(rows) <= limit
    rows = rows[:limit]
    order = {Oid(r[0]): i for i, r in enumerate(rows)}
    parents = {Oid(r[0]): tuple(Oid(p) for p in r[1:]) for r in rows}
    return Window(base, order, parents, complete)


def _commit_pids(root: Path, cache: InventoryCache, commits: Iterable[Oid],
                 deadline: Deadline, chunk: int = 3000) -> set[Oid]:
    """Fill ``cache.commit_pid`` for ``commits``; return the commits whose pid is known.

    Uncached commits are split in chunks run two at a time (git's diff work is CPU-bound and
    the pipelines are separate processes); the deadline is checked before each chunk.
    """
    wanted = set(commits)
    todo = sorted(c for c in wanted if c not in cache.commit_pid)
    done: set[Oid] = {c for c in wanted if c in cache.commit_pid}
    parts = [todo[i:i + chunk] for i in range(0, len(todo), chunk)]

    def one(part: list[Oid]) -> tuple[list[Oid], dict[Oid, str]] | None:
        if deadline.spent():
            return None
        return part, commit_patch_ids(root, part)

    with ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(one, parts):
            if result is None:
                continue
            part, found = result
            for c in part:
                cache.commit_pid[c] = found.get(c, "")  # "" = no patch (empty or merge)
                done.add(c)
    cache.used_commit.update(done)
    return done


def prove_tips(
    root: Path,
    tips: Sequence[Oid],
    *,
    subgraph: Subgraph,
    default_bases: Sequence[Base],
    line_bases: Sequence[Base],
    merged_into_remote_default: set[Oid],
    cache: InventoryCache,
    squash_window: int,
    shallow: bool,
    deadline: Deadline,
    windows_out: list[Window] | None = None,
) -> dict[Oid, TipVerdict]:
    """Run tiers 1 to 4 of the ladder over every tip at once.

    ``subgraph`` must have been walked from ``tips`` (and the line tips) excluding every ref in
    ``default_bases``; a tip absent from it (or on its boundary) is an ancestor of the default
    branch. ``merged_into_remote_default`` is the set of tips ancestor of the remote-tracking
    default (from one ``for-each-ref --merged``), used to name the base ref.
    Returns ``{tip: TipVerdict}`` for every tip. Raises nothing for git failures of the
    patch-id tiers: those tips become ``unknown``.
    """
    if not default_bases:
        return {t: TipVerdict(unknown="default branch unresolved") for t in tips}
    run = _Ladder(root, subgraph, cache, deadline)
    pending = run.ancestors(tips, default_bases, line_bases, merged_into_remote_default,
                            shallow=shallow)
    if not pending:
        return run.verdicts
    run.find_merge_bases(pending, default_bases[0])
    bases: list[Base] = []
    for b in [*default_bases, *line_bases]:
        if all(b.oid != seen.oid for seen in bases):
            bases.append(b)
    own_of: dict[Oid, list[Oid]] = {
        t: [c for c in run.walks[t].unique if not subgraph.is_park_commit(c)] for t in pending}
    try:
        windows, known, complete = run.base_windows(pending, own_of, bases, squash_window,
                                                    windows_out)
    except GitError as exc:
        for tip in pending:
            run.verdicts[tip] = TipVerdict(unknown=f"git error in the patch-id step: {exc}")
        return run.verdicts
    squash_candidates, proven_tips = run.patch_equivalent(pending, own_of, windows, known,
                                                          line_bases, complete=complete)
    proven_tips += run.squash_merged(squash_candidates, windows, squash_window)
    run.tip_subsumed(pending, proven_tips)
    return run.verdicts


_BUDGET_MSG = "budget spent before the proof steps reached this branch; the next run continues"


@dataclass
class _Ladder:
    """One run of tiers 1 to 4 over many tips (:func:`prove_tips`): what every tier reads, and
    what the tiers found so far (``verdicts``, each pending tip's ``walks``, merge bases
    ``mbs`` with the default branch, and ``notes`` on why a tier did not hold)."""

    root: Path
    subgraph: Subgraph
    cache: InventoryCache
    deadline: Deadline
    verdicts: dict[Oid, TipVerdict] = field(default_factory=dict)
    walks: dict[Oid, TipWalk] = field(default_factory=dict)
    mbs: dict[Oid, Oid] = field(default_factory=dict)
    notes: dict[Oid, str] = field(default_factory=dict)

    def ancestors(self, tips: Sequence[Oid], default_bases: Sequence[Base],
                  line_bases: Sequence[Base], merged_into_remote_default: set[Oid], *,
                  shallow: bool) -> list[Oid]:
        """Tier 1: ancestor of the default branch (absent from the unmerged subgraph), then of
        an integration line (reachable from a line tip in the subgraph). Returns the tips left
        to prove, each with its walk; a tip whose walk is too large, or reaches a shallow
        graft, is unknown."""
        remote_default = default_bases[0]
        local_default = default_bases[-1]
        pending: list[Oid] = []
        for tip in dict.fromkeys(tips):
            node = self.subgraph.commits.get(tip)
            if node is None or node.boundary:
                same = remote_default.oid == local_default.oid
                base = remote_default if same or tip in merged_into_remote_default \
                    else local_default
                self.verdicts[tip] = TipVerdict(Proof(ProofKind.ANCESTOR, base.ref, None))
                continue
            pending.append(tip)
        line_sets: list[tuple[Base, set[Oid]]] = []
        for base in line_bases:
            reach = self.subgraph.reachable_set(base.oid)
            if reach is not None:
                line_sets.append((base, reach))
        still: list[Oid] = []
        for tip in pending:
            hit = next((b for b, reach in line_sets if tip in reach and tip != b.oid), None)
            if hit is not None:
                self.verdicts[tip] = TipVerdict(Proof(ProofKind.ANCESTOR, hit.ref, None))
                continue
            walk = self.subgraph.walk(tip)
            if walk is None:
                self.verdicts[tip] = TipVerdict(
                    unknown="history too large to walk within the limits")
                continue
            if shallow and (walk.touches_root or walk.touches_graft):
                self.verdicts[tip] = TipVerdict(
                    unknown="shallow clone: the branch's history reaches the graft, so ancestry "
                            "there is not trusted (run: git fetch --unshallow)")
                continue
            self.walks[tip] = walk
            still.append(tip)
        return still

    def find_merge_bases(self, pending: Sequence[Oid], remote_default: Base) -> None:
        """The merge base of each pending tip with the default branch: the walk's frontier
        when it is one commit, else one cached ``merge-base --all``; a note where none is
        single."""
        for tip in pending:
            frontier = self.walks[tip].frontier
            if len(frontier) == 1:
                self.mbs[tip] = next(iter(frontier))
            elif not frontier:
                self.notes[tip] = "no common history with the default branch"
            else:
                mb = _merge_base(self.root, tip, remote_default.oid, self.cache, self.deadline)
                if mb:
                    self.mbs[tip] = mb
                else:
                    self.notes[tip] = "no single merge base with the default branch"

    def base_windows(self, pending: Sequence[Oid], own_of: dict[Oid, list[Oid]],
                     bases: Sequence[Base], squash_window: int,
                     windows_out: list[Window] | None) -> tuple[list[Window], set[Oid], bool]:
        """The base windows (one ``rev-list`` per base, handed to ``windows_out`` at once)
        with each window's patch-ids, the commits whose patch-id is known, and whether every
        window commit that needs one has it (the budget may stop first). Raises
        :class:`GitError`."""
        windows = [_base_window(self.root, b, squash_window) for b in bases]
        if windows_out is not None:
            windows_out.extend(windows)
        # A landed copy is never an ancestor of the merge base, so in topological order it
        # comes before it: only the default window's commits newer than the deepest merge base
        # of a pending branch need a patch-id (all of them when one merge base is outside).
        dw = windows[0]
        depths = [dw.order.get(self.mbs[t]) if t in self.mbs else None for t in pending]
        depth = len(dw.order) if any(d is None for d in depths) else max(
            (d for d in depths if d is not None), default=0)
        all_window = {c for c, i in dw.order.items() if i < depth}
        all_window |= {c for w in windows[1:] for c in w.order}
        branch_commits = {c for t in pending for c in own_of[t]}
        known = _commit_pids(self.root, self.cache, all_window | branch_commits, self.deadline)
        for w in windows:
            for c in sorted(w.order, key=w.order.__getitem__, reverse=True):
                if c in known:
                    pid = self.cache.commit_pid.get(c, "")
                    if pid:
                        w.pid_to_commit[pid] = c  # the newest commit with this pid wins
        return windows, known, all_window <= known

    def patch_equivalent(self, pending: Sequence[Oid], own_of: dict[Oid, list[Oid]],
                         windows: Sequence[Window], known: set[Oid],
                         line_bases: Sequence[Base], *, complete: bool
                         ) -> tuple[list[Oid], list[Oid]]:
        """Tier 2: every commit of the branch is on a base by patch-id, against each base in
        turn (against a line, only the commits the line does not hold). Returns the tips
        left for tier 3 and the tips proven."""
        line_reach = {b.oid: (self.subgraph.reachable_set(b.oid) or set()) for b in line_bases}
        squash_candidates: list[Oid] = []
        proven_tips: list[Oid] = []
        for tip in pending:
            own = own_of[tip]
            if not complete or any(c not in known for c in own):
                self.verdicts[tip] = TipVerdict(unknown=_BUDGET_MSG, merge_base=self.mbs.get(tip))
                continue
            match = None
            for w in windows:
                mine = own if w.base.kind == "default" else [
                    c for c in own if c not in line_reach.get(w.base.oid, set())]
                if not mine or any(len(self.subgraph.commits[c].parents) > 1 for c in mine):
                    continue
                pids = [self.cache.commit_pid.get(c, "") for c in mine]
                if all(pids) and all(p in w.pid_to_commit for p in pids):
                    match = Proof(ProofKind.PATCH_EQUIVALENT, w.base.ref,
                                  w.pid_to_commit[pids[0]])
                    break
            if match is not None:
                self.verdicts[tip] = TipVerdict(match, merge_base=self.mbs.get(tip))
                proven_tips.append(tip)
            else:
                squash_candidates.append(tip)
        return squash_candidates, proven_tips

    def squash_merged(self, candidates: Sequence[Oid], windows: Sequence[Window],
                      squash_window: int) -> list[Oid]:
        """Tier 3: the whole range merge base..tip has the patch-id of one base commit newer
        than the merge base (one range patch-id pipeline for the uncached ranges). Every
        candidate gets its verdict; returns the tips proven."""
        cache = self.cache
        need = [(self.mbs[t], t) for t in candidates
                if t in self.mbs and f"{self.mbs[t]}:{t}" not in cache.range_pid]
        if need and not self.deadline.spent():
            try:
                found = range_patch_ids(self.root, need)
                for start, tip in need:
                    cache.range_pid[f"{start}:{tip}"] = found.get(tip, "")
            except GitError as exc:
                for _, tip in need:
                    self.notes[tip] = f"git error in the squash step: {exc}"
        default_window = windows[0]
        proven_tips: list[Oid] = []
        for tip in candidates:
            mb = self.mbs.get(tip)
            key = f"{mb}:{tip}"
            if mb is not None and key not in cache.range_pid and tip not in self.notes:
                self.verdicts[tip] = TipVerdict(unknown=_BUDGET_MSG, merge_base=mb)
                continue
            proof = None
            if mb is not None and key in cache.range_pid:
                cache.used_range.add(key)
                pid = cache.range_pid[key]
                for w in windows:
                    landed = w.pid_to_commit.get(pid) if pid else None
                    if landed is not None and (mb not in w.order or w.order[landed] < w.order[mb]):
                        proof = Proof(ProofKind.SQUASH_MERGED, w.base.ref, landed)
                        break
            if proof is not None:
                self.verdicts[tip] = TipVerdict(proof, merge_base=mb)
                proven_tips.append(tip)
            elif mb is not None and mb not in default_window.order and not default_window.complete:
                self.verdicts[tip] = TipVerdict(
                    unknown=f"merge base is older than the newest {squash_window} commits of "
                            f"{default_window.base.name} that the patch-id proofs examine "
                            "(branches.sweep.squash_window)", merge_base=mb)
            else:
                self.verdicts[tip] = TipVerdict(note=self.notes.get(tip, ""), merge_base=mb)
        return proven_tips

    def tip_subsumed(self, pending: Sequence[Oid], proven_tips: Sequence[Oid]) -> None:
        """Tier 4: an unproven tip that is an ancestor of a tip proven by tier 2 or 3 takes
        that proof's base and landing commit."""
        unproven = [t for t in pending
                    if self.verdicts[t].proof is None and self.verdicts[t].unknown is None]
        if not unproven or not proven_tips:
            return
        holders: dict[Oid, Oid] = {}
        for p in proven_tips:
            for c in self.walks[p].unique:
                holders.setdefault(c, p)
        for tip in unproven:
            holder = holders.get(tip)
            if holder is not None and holder != tip:
                held = self.verdicts[holder].proof
                assert held is not None
                self.verdicts[tip] = TipVerdict(
                    Proof(ProofKind.TIP_SUBSUMED, held.base, held.landed_as),
                    note=f"an ancestor of {holder.short}, proven {held.kind.value}",
                    merge_base=self.verdicts[tip].merge_base,
                )


def _merge_base(root: Path, tip: Oid, base: Oid, cache: InventoryCache,
                deadline: Deadline) -> Oid | None:
    """The single merge base of ``tip`` and ``base`` (cached); ``None`` when 0 or several."""
    key = f"{tip}:{base}"
    if key in cache.merge_base:
        cache.used_mb.add(key)
        value = cache.merge_base[key]
        return Oid(value) if value else None
    if deadline.spent():
        return None
    result = run_git(["merge-base", "--all", tip, base], cwd=root, check=False)
    # exit 1 = no common ancestor; anything else non-zero is an error (not cached)
    if result.returncode not in (GitExit.OK, GitExit.NO):
        return None
    found = result.text.split()
    value = found[0] if len(found) == 1 else ""
    cache.merge_base[key] = value
    cache.used_mb.add(key)
    return Oid(value) if value else None


def content_on_base(root: Path, *, tip: Oid, merge_base: Oid, base: Base) -> Proof | None:
    """Tier 5: every path changed in ``merge_base..tip`` has the same blob (or absence) on base.

    Three git processes (``diff-tree`` for the changed paths, ``ls-tree`` on each side). Used on
    the delete path only; returns ``None`` when any path differs. Raises :class:`GitError`.
    """
    out = run_git([*_PINNED, "diff-tree", "-r", "-z", "--no-renames", "--name-only",
                   merge_base, tip], cwd=root).stdout
    paths = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    if not paths:
        return None  # nothing changed: an empty range proves nothing by content
    def blobs(commit: str) -> dict[str, str]:
        res = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--",
                       *(f":(literal){p}" for p in paths)], cwd=root).stdout
        table: dict[str, str] = {}
        for entry in res.decode("utf-8", "surrogateescape").split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            mode, _, rest = meta.partition(" ")
            _, _, oid = rest.partition(" ")
            table[path] = f"{mode}:{oid}"
        return table

    on_tip = blobs(tip)
    on_base = blobs(base.oid)
    if all(on_tip.get(p) == on_base.get(p) for p in paths):
        return Proof(ProofKind.CONTENT_ON_BASE, base.ref, None)
    return None
