"""The inventory: one record per branch name, classified (first document, sections 2, 4, 5).

Git processes per inventory, whatever the number of branches: ``for-each-ref`` (all refs, and
every remote's ``HEAD``, ``main`` and ``master`` for the refusals),
``worktree list``, one ``config --get-regexp`` (remotes, partial clone), ``for-each-ref
--merged`` (remote default), one ``rev-list`` subgraph walk, one ``rev-list`` of the default
branch's history, a few ``diff-tree``/``patch-id`` streams, one ``merge-tree --stdin`` per
merge tier, one ``ls-tree`` per default ref, one ``diff-tree --numstat``, one ``log -g`` for
creation dates (reftable only); more only where an object is missing (about two per object).

:func:`build_inventory` runs named steps: read the refs, choose the proof targets, walk the
unmerged history and prove (:mod:`~branchkeeper.analysis.proofs`), count (containment,
creation dates, lines changed, commits behind), then build the records
(:mod:`~branchkeeper.analysis.classify`) and apply the refusals to them
(:mod:`~branchkeeper.analysis.refusals`; a bare repository adds one ``symbolic-ref``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from branchkeeper import clock
from branchkeeper.analysis.basehistory import BaseHistory
from branchkeeper.analysis.bundle_check import keep_unbundlable, missing_notes
from branchkeeper.analysis.classify import Evidence, build_records
from branchkeeper.analysis.diffstreams import range_line_counts
from branchkeeper.analysis.graph import Subgraph, read_grafts, walk_subgraph
from branchkeeper.analysis.proofs import Base, Deadline, ProofResult, TipVerdict, prove_tips
from branchkeeper.analysis.reflog_dates import creation_dates
from branchkeeper.analysis.refs import DefaultBranch, RefTable, matches_any, read_refs, resolve_default_branch
from branchkeeper.analysis.refusal_facts import (
    REMOTE_DEFAULT_PATTERNS,
    RefusalContext,
    current_branch,
    refusal_context,
)
from branchkeeper.analysis.refusals import with_refusals
from branchkeeper.analysis.suggest import cleanup_suggestion, needs_worktree_record, unread_worktree_text
from branchkeeper.analysis.sweep_reuse import Listings, lookup, read_listings, store
from branchkeeper.git.repo import (
    RemoteConfig,
    RepoFacts,
    Worktree,
    list_worktrees,
    patch_id_mode,
    read_remote_config,
)
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model import progress
from branchkeeper.model.records import BranchRecord, BranchState
from branchkeeper.state.commit_cache import CommitCache
from branchkeeper.state.config_cache import config_key
from branchkeeper.state.inventory_cache import InventoryCache, TipFacts
from branchkeeper.state.last_sweep import (
    previous_cleanup,
    previous_lost,
    refs_key,
    write_last_sweep,
)

if TYPE_CHECKING:
    from pathlib import Path

    from branchkeeper.analysis.suggest import RetireView
    from branchkeeper.model.config import Config

_DAY = 86400.0
#: A branch whose diff since its merge base changes more paths than this has no line count
#: (``lines`` null): counting diffs every blob of it. Measured on a 39,000-branch real
#: repository: the 15% of unmerged branches over 100 paths (forked long ago) cost 93% of the
#: count, about 135 s CPU, more than every proof together.
MAX_COUNTED_PATHS = 100


@dataclass
class Inventory:
    """The result of one inventory pass.

    ``records`` are sorted by name. ``default`` says how the default branch resolved. ``bases``
    are the proof targets used. ``notes`` are repository-level remarks (shallow clone, budget).
    ``elapsed_s`` is wall time in seconds.
    """

    facts: RepoFacts
    config: Config
    remote: str
    default: DefaultBranch
    records: list[BranchRecord]
    worktrees: list[Worktree]
    bases: list[Base]
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    verdicts: dict[Oid, TipVerdict] = field(default_factory=dict)
    #: False when ``branches.remote`` names no remote of this repository
    remote_configured: bool = True
    #: the ``<remote>/HEAD`` target the refs were read with (``""``: none)
    remote_head: str = ""
    #: the facts the refusals were computed from (each record already carries its refusals)
    refusals: RefusalContext = field(default_factory=lambda: RefusalContext(None, frozenset(),
                                                                            (), ()))
    #: unix seconds the inventory was taken at, and :func:`refs_key` of the refs it read (what
    #: :func:`record_sweep` writes down)
    now: float = 0.0
    refs: str = ""
    #: True when the records are a stored result's (then ``verdicts`` and ``refusals`` are
    #: empty: see :mod:`~branchkeeper.analysis.sweep_reuse`)
    reused: bool = False

    def summary(self) -> dict[str, int]:
        """Count per state (every state listed) plus ``lost_work_risk``."""
        counts = {s.value: 0 for s in BranchState}
        for r in self.records:
            counts[r.state.value] += 1
        counts["lost_work_risk"] = sum(1 for r in self.records if r.lost_work_risk)
        return counts

    def by_name(self) -> dict[str, BranchRecord]:
        return {r.name: r for r in self.records}


def build_inventory(
    facts: RepoFacts,
    config: Config,
    *,
    budget_ms: int | None = None,
    now: float | None = None,
    use_cache: bool = True,
    budget_checks: int | None = None,
    record: bool = True,
    reuse: bool = False,
) -> Inventory:
    """Classify every branch of the repository described by ``facts``.

    ``budget_ms``: wall-clock budget in milliseconds for the proof steps (``None`` = unbounded);
    what the budget does not reach is ``unknown`` with reason ``budget`` and the next run
    continues from the cache. ``budget_checks``: a budget in units of work instead (see
    :class:`~branchkeeper.analysis.proofrun.Deadline`: the same cut on every run, for tests
    and reproducible measurements). ``now`` is unix seconds (for tests). With ``use_cache``
    and ``record``, the last-sweep file is written (:func:`record_sweep`, without worktree
    records); a caller that reads the worktrees next passes ``record=False`` and calls
    :func:`record_sweep` with their records. ``reuse`` (with ``use_cache``): take the stored
    result of an earlier inventory of the same inputs when there is one that holds
    (:mod:`~branchkeeper.analysis.sweep_reuse`; read-only commands only: the result has no
    verdicts). Raises :class:`GitError` only when the ref or worktree listing itself fails;
    later git failures become ``unknown`` verdicts.
    """
    started = time.monotonic()
    now = clock.now() if now is None else now
    meter = progress.current()
    meter.phase("reading refs", unit="refs")
    listings = read_listings(facts, config.branches.remote)
    if reuse and use_cache:
        found = lookup(facts, config, listings, now=now)
        if found is not None:
            meter.count("branches", len(found.records))
            meter.count("stored result")
            inv = Inventory(
                facts=facts, config=config, remote=config.branches.remote,
                default=found.default, records=found.records,
                worktrees=list_worktrees(facts, output=listings.worktrees),
                bases=found.bases, notes=found.notes, elapsed_s=time.monotonic() - started,
                remote_configured=found.remote_configured, remote_head=found.remote_head,
                now=now, refs=found.refs, reused=True)
            if record:
                record_sweep(inv)  # rewritten only if it says something else
            return inv
    deadline = Deadline(None if budget_ms is None else budget_ms / 1000.0,
                        checks=budget_checks)
    notes: list[str] = []
    cache = InventoryCache.load(facts.common_dir if use_cache else None)
    table, default, worktrees, remotes = _read_refs(
        facts, config, notes, cache.tip_facts() if cache.path is not None else None, listings)
    remote_configured = remotes.configured
    commits = CommitCache.load(facts.common_dir if use_cache else None, pid_mode=patch_id_mode())
    names = table.names()
    meter.count("branches", len(names))
    roles = _roles(names, config, default.name)
    default_bases, line_bases = _bases(table, default, names, roles, config.branches.remote)
    proved, subgraph = _prove(facts, table, names, roles, default_bases, line_bases, cache,
                              commits, deadline, config.branches.remote, default,
                              partial=remotes.partial_clone)
    verdicts = proved.verdicts
    notes.extend(proved.notes)
    default_tips = {b.oid for b in default_bases}
    # three batched counts, each one step of the phase: the count moves as each is done
    meter.phase("counting (dates, lines, commits behind)", 3, unit="counts")
    created = _old_branch_dates(facts, config, table, roles, verdicts, default_tips, now, cache)
    meter.advance()
    lines = _lines_changed(facts.root, verdicts, proved.changed_paths, cache,
                           partial=remotes.partial_clone, missing=proved.missing_objects)
    meter.advance()
    behind_of = _behind_default(facts.root, proved.history, verdicts, default, default_bases,
                                cache, shallow=facts.shallow)
    meter.advance()
    evidence = Evidence(
        facts=facts, config=config, now=now, table=table, names=names, default=default,
        roles=roles, worktrees=worktrees, remote_configured=remote_configured,
        subgraph=subgraph, verdicts=verdicts, default_tips=default_tips,
        held_by=_remote_holders(table, subgraph), created=created, lines=lines,
        behind_of=behind_of)
    meter.phase("building records", len(names))
    refusals = refusal_context(
        ((i.ref, i.upstream, i.symref) for i in table.by_ref.values()), config,
        default_name=default.name, worktrees=worktrees,
        current=current_branch(facts, worktrees))
    records = with_refusals(build_records(evidence), refusals,
                            here=facts.toplevel.resolve() if facts.toplevel else None)
    records, unbundlable = keep_unbundlable(
        facts.root, records, promisors=remotes.promisors, cache=cache,
        base=default_bases[0].oid if default_bases and default.resolved and not facts.shallow
        else None)
    notes.extend(missing_notes(proved.verdicts.values(), proved.missing_objects,
                               remotes.promisors, unbundlable))
    meter.complete()
    meter.phase("saving the cache", unit="files")
    cache.save()
    commits.save()
    refs = refs_key(table.remote_head, {n: i.oid for n, i in table.local.items()},
                    {n: i.oid for n, i in table.remote.items()})
    if use_cache:
        store(facts, config, listings, now=now, records=records, default=default,
              bases=[*default_bases, *line_bases], notes=notes,
              remote_configured=remote_configured, remote_head=table.remote_head,
              missing=proved.missing_objects, partial=remotes.partial_clone, refs=refs)
    inv = Inventory(
        facts=facts, config=config, remote=config.branches.remote, default=default,
        records=records, worktrees=worktrees, bases=[*default_bases, *line_bases], notes=notes,
        elapsed_s=time.monotonic() - started, verdicts=verdicts,
        remote_configured=remote_configured, remote_head=table.remote_head, refusals=refusals,
        now=now, refs=refs)
    if use_cache and record:
        record_sweep(inv)
    return inv


def record_sweep(inv: Inventory, worktrees: Sequence[RetireView] | None = None,
                 lost: Mapping[str, Sequence[str]] | None = None) -> None:
    """Write the last-sweep file of ``inv`` (``state.last_sweep``): its records and, for each
    proven branch, the ``cleanup`` text the sweep prints for it
    (:func:`~branchkeeper.analysis.suggest.cleanup_suggestion`), read with the record of the
    linked worktree it is checked out in from ``worktrees`` (``WorktreeRecord`` values; None: a
    pass that read no worktrees, whose text for a branch that depends on its worktree is the
    previous file's where the branch is at the same tip, else what it knows: ``suggest.
    unread_worktree_text``): what the creation denials print, with ``lost``, the LOST WORK RISK
    lines of each worktree (``analysis.lost_work.worktree_risks``; None from a pass that read
    no worktrees: the previous file's). Errors writing are ignored (a small state file)."""
    by_path = {str(w.worktree.path): w for w in worktrees or ()}
    carried = previous_cleanup(inv.facts.common_dir) if worktrees is None else {}
    if worktrees is None and lost is None:
        lost = previous_lost(inv.facts.common_dir)  # what the last pass that read them said

    def text(r: BranchRecord) -> str:
        if worktrees is None and needs_worktree_record(r):
            return carried.get((r.name, str(r.tip))) or unread_worktree_text(r)
        return cleanup_suggestion(r, by_path.get(r.worktree) if r.worktree else None).text

    write_last_sweep(
        inv.facts.common_dir, inv.records, inv.now, refs=inv.refs, config=config_key(inv.config),
        complete=not any(r.state is BranchState.UNKNOWN and "budget" in r.reason
                         for r in inv.records),
        cleanup={r.name: text(r) for r in inv.records if r.state.preserved}, lost=lost)


# -- read the refs ------------------------------------------------------------------------------
def _read_refs(facts: RepoFacts, config: Config, notes: list[str],
               tip_facts: TipFacts | None, listings: Listings
               ) -> tuple[RefTable, DefaultBranch, list[Worktree], RemoteConfig]:
    """Every ref, the default branch resolved from them, every worktree and what the
    configuration says of remotes (whether the configured remote exists, whether this is a
    partial clone), from ``listings`` (the three calls already made). Repository-level
    remarks are appended to ``notes``; ``tip_facts``: the cache of tip commits' facts (see
    :func:`~branchkeeper.analysis.refs.read_refs`; None: the full listing is read again)."""
    root = facts.root
    remote = config.branches.remote
    table = read_refs(root, remote, extra_patterns=REMOTE_DEFAULT_PATTERNS, tip_facts=tip_facts,
                      listing=listings.refs if tip_facts is not None else None)
    default = resolve_default_branch(config.branches.default, table)
    worktrees = list_worktrees(facts, output=listings.worktrees)
    if not default.resolved:
        notes.append(f"default branch unresolved: {default.reason}; nothing is classified "
                     "as merged")
    if facts.shallow:
        notes.append("shallow clone: verdicts that rest on history below the graft are unknown")
    if config.branches.sweep.squash_window is not None:
        notes.append("branches.sweep.squash_window is deprecated and ignored: the proofs read "
                     "the whole history")
    # A repository with no such remote (a bare server, a local-only repository): where
    # unmerged work lives cannot be judged, so nothing is called LOST WORK RISK.
    remotes = read_remote_config(root, remote, result=listings.config)
    if table.remote and not remotes.configured:
        remotes = RemoteConfig(True, remotes.promisors)
    if not remotes.configured:
        notes.append(f"no remote {remote!r} is configured: where unmerged work lives is not "
                     "judged (set branches.remote)")
    return table, default, worktrees, remotes


def _roles(names: list[str], config: Config, default_name: str | None
           ) -> dict[str, BranchState | None]:
    """The state of each name that is not work (exempt, the default branch, an integration
    line, in that order), None for work."""
    exempt_globs = list(config.branches.exempt)
    line_globs = list(config.branches.integration_lines)

    def role(name: str) -> BranchState | None:
        if exempt_globs and matches_any(name, exempt_globs):
            return BranchState.EXEMPT
        if default_name is not None and name == default_name:
            return BranchState.DEFAULT
        if line_globs and matches_any(name, line_globs):
            return BranchState.INTEGRATION_LINE
        return None

    return {n: role(n) for n in names}


def _bases(table: RefTable, default: DefaultBranch, names: list[str],
           roles: dict[str, BranchState | None], remote: str) -> tuple[list[Base], list[Base]]:
    """The proof targets: the default branch's refs (remote-tracking first), then each
    integration line's remote and local refs; only refs at a commit."""
    default_bases: list[Base] = []
    for ref in default.refs:
        oid = table.by_ref[ref].oid
        if oid is not None and table.by_ref[ref].objecttype == "commit":
            default_bases.append(Base(ref, oid, "default", default.name or ""))
    line_bases: list[Base] = []
    for n in names:
        if roles[n] is BranchState.INTEGRATION_LINE:
            for info, ref in ((table.remote.get(n), f"refs/remotes/{remote}/{n}"),
                              (table.local.get(n), f"refs/heads/{n}")):
                if info is not None and info.oid is not None and info.objecttype == "commit":
                    line_bases.append(Base(ref, info.oid, "line", n))
    return default_bases, line_bases


# -- walk and prove -----------------------------------------------------------------------------
def _prove(facts: RepoFacts, table: RefTable, names: list[str],
           roles: dict[str, BranchState | None], default_bases: list[Base],
           line_bases: list[Base], cache: InventoryCache, commits: CommitCache,
           deadline: Deadline, remote: str, default: DefaultBranch, *, partial: bool
           ) -> tuple[ProofResult, Subgraph | None]:
    """The proof ladder's verdict for the local and remote tip of every work branch, and the
    unmerged subgraph it walked (one ``for-each-ref --merged`` when the remote and local
    default differ, one subgraph walk, then the ladder). Without a default branch every tip is
    unknown; a git error in the walk makes every tip unknown and adds a note."""
    root = facts.root
    judged: set[Oid] = set()
    for n in names:
        if roles[n] is None:
            for info in (table.local.get(n), table.remote.get(n)):
                if info is not None and info.oid is not None and info.objecttype == "commit":
                    judged.add(info.oid)
    remote_tips = {info.oid for info in table.remote.values()
                   if info.oid is not None and info.objecttype == "commit"}
    if not default_bases:
        why = f"default branch unresolved: {default.reason}" if default.reason else \
            "default branch unresolved"
        return ProofResult({t: TipVerdict(unknown=why) for t in judged}), None
    progress.current().phase("walking unmerged history", len(judged), unit="tips")
    try:
        merged_remote: set[Oid] = set()
        if default_bases[0].ref.startswith("refs/remotes/") and \
                default_bases[0].oid != default_bases[-1].oid:
            out = run_git(["for-each-ref", f"--merged={default_bases[0].ref}",
                           "--format=%(objectname)", "refs/heads", f"refs/remotes/{remote}"],
                          cwd=root).text
            merged_remote = {Oid(x) for x in out.split()}
        subgraph = walk_subgraph(
            root, judged | remote_tips | {b.oid for b in line_bases},
            [b.oid for b in default_bases], grafts=read_grafts(facts.common_dir),
            common_dir=facts.common_dir if cache.path is not None else None,
        )
    except GitError as exc:
        first = str(exc).splitlines()[0]
        return ProofResult({t: TipVerdict(unknown=f"git error: {first}") for t in judged},
                           notes=[f"git error during classification: {exc}"]), None
    progress.current().complete()
    version = facts.version
    proved = prove_tips(
        root, sorted(judged), subgraph=subgraph, default_bases=default_bases,
        line_bases=line_bases, merged_into_remote_default=merged_remote, cache=cache,
        commits=commits, common_dir=facts.common_dir, merges=version.has_merge_tree_stdin,
        shallow=facts.shallow, deadline=deadline,
        git_label=f"git {version.major}.{version.minor}", partial=partial)
    return proved, subgraph


# -- count --------------------------------------------------------------------------------------
def _remote_holders(table: RefTable, subgraph: Subgraph | None) -> dict[Oid, list[str]]:
    """Containment: commit -> the remote-tracking branches that reach it (reachability in the
    subgraph; none without one)."""
    held_by: dict[Oid, list[str]] = {}
    if subgraph is not None:
        for rname, info in sorted(table.remote.items()):
            if info.oid is None or info.oid not in subgraph.commits:
                continue
            reach = subgraph.reachable_set(info.oid)
            for c in reach or ():
                held_by.setdefault(c, []).append(rname)
    return held_by


def _old_branch_dates(facts: RepoFacts, config: Config, table: RefTable,
                      roles: dict[str, BranchState | None], verdicts: dict[Oid, TipVerdict],
                      default_tips: set[Oid], now: float, cache: InventoryCache
                      ) -> dict[str, int]:
    """Creation dates (C07) of the local work branches whose tip is old enough to be dormant
    and not proven preserved (or still at the default branch's tip): a branch created
    recently from an old commit is not idle."""
    advisory = config.branches.dormancy.effective_advisory_days
    old_local = [n for n, info in table.local.items()
                 if roles[n] is None and info.date is not None and info.oid is not None
                 and (now - info.date) / _DAY >= advisory
                 and (verdicts.get(info.oid, TipVerdict()).proof is None
                      or info.oid in default_tips)]
    return creation_dates(facts, old_local,
                          {n: table.local[n].oid for n in old_local},  # type: ignore[misc]
                          cache)


def _lines_changed(root: Path, verdicts: dict[Oid, TipVerdict], changed_paths: dict[Oid, int],
                   cache: InventoryCache, *, partial: bool, missing: set[str]
                   ) -> dict[Oid, int]:
    """Lines changed per unmerged tip since its merge base (cached; one ``diff-tree
    --numstat`` stream for all the others; a tip whose blobs are missing is left out, and so
    is a tip whose diff changes more than :data:`MAX_COUNTED_PATHS` paths (``changed_paths``:
    from the proof run), whose count would cost more than the whole sweep; ``missing``: the
    blobs the proof run found missing, whose tips are set aside before counting)."""
    lines: dict[Oid, int] = {}
    line_pairs: list[tuple[Oid, Oid]] = []
    for t, v in verdicts.items():
        if v.merge_base is None or v.proof is not None or v.unknown is not None:
            continue
        key = f"lines:{v.merge_base}:{t}"
        if key in cache.counts:
            cache.used_counts.add(key)
            if cache.counts[key] >= 0:
                lines[t] = cache.counts[key]
        elif changed_paths.get(t, 0) > MAX_COUNTED_PATHS:
            cache.counts[key] = -1
            cache.used_counts.add(key)
        else:
            line_pairs.append((v.merge_base, t))
    try:
        counted, _ = range_line_counts(root, line_pairs, partial=partial,
                                       known_missing=missing) \
            if line_pairs else ({}, {})
    except GitError:
        counted = {}
    for mb, t in line_pairs:
        if t in counted:
            lines[t] = counted[t]
            cache.counts[f"lines:{mb}:{t}"] = counted[t]
            cache.used_counts.add(f"lines:{mb}:{t}")
    return lines


def _behind_default(root: Path, history: BaseHistory | None, verdicts: dict[Oid, TipVerdict],
                    default: DefaultBranch, default_bases: list[Base], cache: InventoryCache,
                    *, shallow: bool) -> dict[Oid, int]:
    """Commits behind the default branch per tip, exact, from the default branch's history:
    from the merge base (or the tip itself when it is proven an ancestor of the default
    branch) when that commit is on its first-parent chain. Cached per (default tip, commit),
    so a warm sweep, which reads no history, still has them; the history is read (one
    ``rev-list``) only when some count is missing. None in a shallow clone."""
    if shallow or not default_bases:
        return {}
    head = "+".join(b.oid for b in default_bases)
    points: dict[Oid, Oid] = {}
    for t, v in verdicts.items():
        point = v.merge_base if v.merge_base is not None else (
            t if v.proof is not None and v.proof.base in default.refs else None)
        if point is not None:
            points[t] = point
    out: dict[Oid, int] = {}
    todo: dict[Oid, Oid] = {}
    for t, point in points.items():
        key = f"behind:{head}:{point}"
        if key in cache.counts:
            cache.used_counts.add(key)
            if cache.counts[key] >= 0:
                out[t] = cache.counts[key]
        else:
            todo[t] = point
    if todo and history is None:
        try:
            history = BaseHistory.read(root, [b.oid for b in default_bases])
        except GitError:
            return out
    for t, point in todo.items():
        n = history.behind(point) if history is not None else None
        cache.counts[f"behind:{head}:{point}"] = -1 if n is None else n
        cache.used_counts.add(f"behind:{head}:{point}")
        cache.changed = True
        if n is not None:
            out[t] = n
    return out
