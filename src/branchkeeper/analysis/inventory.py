"""The inventory: one record per branch name, classified (first document, sections 2, 4, 5).

Git processes per inventory, whatever the number of branches: ``for-each-ref`` (all refs),
``worktree list``, ``for-each-ref --merged`` (remote default), one ``rev-list`` subgraph walk,
one base-window ``rev-list`` per base, two patch-id pipelines, one ``diff-tree --numstat``, one
``log -g`` for creation dates. Per-branch work left (a merge base where the frontier is not a
single commit, ``behind`` counts) is cached and bounded by the deadline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.analysis.graph import read_grafts, walk_subgraph
from branchkeeper.analysis.patchids import range_line_counts
from branchkeeper.analysis.proofs import Base, Deadline, TipVerdict, Window, prove_tips
from branchkeeper.analysis.refs import (
    DefaultBranch,
    RefInfo,
    matches_any,
    read_refs,
    resolve_default_branch,
)
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.records import (
    BranchRecord,
    BranchState,
    Containment,
    Park,
    Stage,
)
from branchkeeper.state.inventory_cache import InventoryCache
from branchkeeper.state.last_sweep import write_last_sweep

if TYPE_CHECKING:
    from branchkeeper.model.config import Config

_DAY = 86400.0

_NUMBER = re.compile(r"(?:^|[^0-9a-z])(?:(?:issue|gh)[-_]?)?(\d{2,5})(?=$|[^0-9])", re.I)
_SUBJECT_NUMBER = re.compile(r"(?:#|\bPlan\s+)(\d{1,6})\b")


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

    def summary(self) -> dict[str, int]:
        """Count per state (every state listed) plus ``lost_work_risk``."""
        counts = {s.value: 0 for s in BranchState}
        for r in self.records:
            counts[r.state.value] += 1
        counts["lost_work_risk"] = sum(1 for r in self.records if r.lost_work_risk)
        return counts

    def by_name(self) -> dict[str, BranchRecord]:
        return {r.name: r for r in self.records}


def number_token(name: str, subject: str) -> str | None:
    """The linked issue or plan number: a 2-5 digit token of the name, else ``#N`` in the subject."""
    m = _NUMBER.search(name)
    if m:
        return m.group(1)
    m = _SUBJECT_NUMBER.search(subject)
    return m.group(1) if m else None


def _creation_dates(facts: RepoFacts, names: list[str], tips: dict[str, Oid],
                    cache: InventoryCache) -> dict[str, int]:
    """Oldest ``branch: Created`` reflog entry per local branch (field case C07).

    Cached per (name, tip). With the files ref backend the reflogs are read directly (one file
    per branch, no process); otherwise (reftable) one ``git log -g --stdin`` for all names.
    """
    created: dict[str, int] = {}
    todo: list[str] = []
    for n in names:
        key = f"created:{n}:{tips[n]}"
        if key in cache.counts:
            cache.used_counts.add(key)
            if cache.counts[key] > 0:
                created[n] = cache.counts[key]
        else:
            todo.append(n)
    if not todo:
        return created
    logs = facts.common_dir / "logs" / "refs" / "heads"
    found: dict[str, int] = {}
    if (facts.common_dir / "reftable").exists() or not logs.is_dir():
        found = _creation_dates_git(facts.root, todo)
    else:
        for n in todo:
            try:
                with open(logs / n, "rb") as fh:
                    first = fh.readline()
            except (OSError, ValueError):
                continue
            meta, _, message = first.partition(b"\t")
            if not message.startswith(b"branch: Created"):
                continue
            fields = meta.rsplit(b" ", 2)
            if len(fields) == 3 and fields[1].isdigit():
                found[n] = int(fields[1])
    for n in todo:
        key = f"created:{n}:{tips[n]}"
        cache.counts[key] = found.get(n, 0)
        cache.used_counts.add(key)
        if n in found:
            created[n] = found[n]
    return created


def _creation_dates_git(root: Path, names: list[str]) -> dict[str, int]:
    """The same through ``git log -g`` (reftable or no reflog directory)."""
    stdin = "".join(f"refs/heads/{n}\n" for n in names).encode("utf-8", "surrogateescape")
    result = run_git(["log", "-g", "--stdin", "--date=unix", "--format=%gD%x00%gs"],
                     cwd=root, stdin=stdin, check=False)
    if result.returncode != 0:
        return {}
    created: dict[str, int] = {}
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        selector, _, message = line.partition("\0")
        ref, sep, stamp = selector.rpartition("@{")
        if not sep or not stamp.endswith("}") or not ref.startswith("refs/heads/"):
            continue
        if not message.startswith("branch: Created"):
            continue
        try:
            when = int(stamp[:-1])
        except ValueError:
            continue
        name = ref[len("refs/heads/"):]
        created[name] = min(when, created.get(name, when))
    return created


def _had_work(facts: RepoFacts, name: str | None) -> bool:
    """Whether local branch ``name``'s reflog records more than its creation (a commit, a
    merge, a reset): read from the reflog file (files backend); False when unknown."""
    if name is None:
        return False
    try:
        with open(facts.common_dir / "logs" / "refs" / "heads" / name, "rb") as fh:
            return sum(1 for _ in fh) > 1
    except (OSError, ValueError):
        return False


def _stage(age: float, config: Config) -> Stage | None:
    return _stager(config)(age)


def _stager(config: Config) -> Callable[[float], Stage | None]:
    """The dormancy stage of an age in days, thresholds read once (a loop over thousands)."""
    d = config.branches.dormancy
    mode = d.mode
    advisory, noisy, block = (d.effective_advisory_days, d.effective_noisy_days,
                              d.effective_block_days)

    def stage(age: float) -> Stage | None:
        if mode == "off" or age < advisory:
            return None
        if age >= block and mode == "block":
            return Stage.BLOCK
        if age >= noisy:
            return Stage.NOISY
        return Stage.ADVISORY

    return stage


def build_inventory(
    facts: RepoFacts,
    config: Config,
    *,
    budget_ms: int | None = None,
    now: float | None = None,
    use_cache: bool = True,
) -> Inventory:
    """Classify every branch of the repository described by ``facts``.

    ``budget_ms``: wall-clock budget in milliseconds for the proof steps (``None`` = unbounded);
    what the budget does not reach is ``unknown`` with reason ``budget`` and the next run
    continues from the cache. ``now`` is unix seconds (for tests). Raises :class:`GitError`
    only when the ref listing itself fails; later git failures become ``unknown`` verdicts.
    """
    started = time.monotonic()
    now = time.time() if now is None else now
    deadline = Deadline(None if budget_ms is None else budget_ms / 1000.0)
    root = facts.root
    remote = config.branches.remote
    table = read_refs(root, remote)
    default = resolve_default_branch(config.branches.default, table)
    worktrees = list_worktrees(facts)
    notes: list[str] = []
    if not default.resolved:
        notes.append(f"default branch unresolved: {default.reason}; nothing is classified "
                     "as merged")
    if facts.shallow:
        notes.append("shallow clone: verdicts that rest on history below the graft are unknown")
    # A repository with no such remote (a bare server, a local-only repository): where
    # unmerged work lives cannot be judged, so nothing is called LOST WORK RISK.
    remote_configured = bool(table.remote) or run_git(
        ["config", "--get", f"remote.{remote}.url"], cwd=root, check=False).returncode == 0
    if not remote_configured:
        notes.append(f"no remote {remote!r} is configured: where unmerged work lives is not "
                     "judged (set branches.remote)")
    cache = InventoryCache.load(facts.common_dir if use_cache else None)

    branches_cfg = config.branches
    default_name = default.name

    exempt_globs = list(branches_cfg.exempt)
    line_globs = list(branches_cfg.integration_lines)

    def role(name: str) -> BranchState | None:
        if exempt_globs and matches_any(name, exempt_globs):
            return BranchState.EXEMPT
        if default_name is not None and name == default_name:
            return BranchState.DEFAULT
        if line_globs and matches_any(name, line_globs):
            return BranchState.INTEGRATION_LINE
        return None

    names = table.names()
    roles = {n: role(n) for n in names}

    def tip_of(name: str) -> RefInfo | None:
        return table.local.get(name) or table.remote.get(name)

    default_bases: list[Base] = []
    for ref in default.refs:
        oid = table.by_ref[ref].oid
        if oid is not None and table.by_ref[ref].objecttype == "commit":
            default_bases.append(Base(ref, oid, "default", default_name or ""))
    line_bases: list[Base] = []
    for n in names:
        if roles[n] is BranchState.INTEGRATION_LINE:
            for info, ref in ((table.remote.get(n), f"refs/remotes/{remote}/{n}"),
                              (table.local.get(n), f"refs/heads/{n}")):
                if info is not None and info.oid is not None and info.objecttype == "commit":
                    line_bases.append(Base(ref, info.oid, "line", n))

    # Tips to judge: the local and remote tip of every branch that is work or done.
    judged: set[Oid] = set()
    for n in names:
        if roles[n] is None:
            for info in (table.local.get(n), table.remote.get(n)):
                if info is not None and info.oid is not None and info.objecttype == "commit":
                    judged.add(info.oid)
    remote_tips = {info.oid for info in table.remote.values()
                   if info.oid is not None and info.objecttype == "commit"}

    verdicts: dict[Oid, TipVerdict] = {}
    windows: list[Window] = []
    subgraph = None
    if default_bases:
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
                [b.ref for b in default_bases], grafts=read_grafts(facts.common_dir),
            )
            verdicts = prove_tips(
                root, sorted(judged), subgraph=subgraph, default_bases=default_bases,
                line_bases=line_bases, merged_into_remote_default=merged_remote, cache=cache,
                squash_window=branches_cfg.sweep.squash_window, shallow=facts.shallow,
                deadline=deadline, windows_out=windows,
            )
        except GitError as exc:
            notes.append(f"git error during classification: {exc}")
            verdicts = {t: TipVerdict(unknown=f"git error: {str(exc).splitlines()[0]}")
                        for t in judged}
    else:
        verdicts = {t: TipVerdict(unknown="default branch unresolved") for t in judged}

    # Containment: which remote-tracking refs hold each tip (reachability in the subgraph).
    held_by: dict[Oid, list[str]] = {}
    if subgraph is not None:
        for rname, info in sorted(table.remote.items()):
            if info.oid is None or info.oid not in subgraph.commits:
                continue
            reach = subgraph.reachable_set(info.oid)
            for c in reach or ():
                held_by.setdefault(c, []).append(rname)

    # Creation dates for old local tips (C07): one log -g for the candidates.
    advisory = branches_cfg.dormancy.effective_advisory_days
    old_local = [n for n, info in table.local.items()
                 if roles[n] is None and info.date is not None and info.oid is not None
                 and (now - info.date) / _DAY >= advisory
                 and (verdicts.get(info.oid, TipVerdict()).proof is None
                      or info.oid in {b.oid for b in default_bases})]
    created = _creation_dates(facts, old_local,
                              {n: table.local[n].oid for n in old_local},  # type: ignore[misc]
                              cache)

    # Lines changed per unmerged tip (one diff-tree --numstat for all).
    lines: dict[Oid, int] = {}
    line_pairs: list[tuple[Oid, Oid]] = []
    for t, v in verdicts.items():
        if v.merge_base is None or v.proof is not None:
            continue
        key = f"lines:{v.merge_base}:{t}"
        if key in cache.counts:
            cache.used_counts.add(key)
            lines[t] = cache.counts[key]
        else:
            line_pairs.append((v.merge_base, t))
    try:
        counted = range_line_counts(root, line_pairs) if line_pairs else {}
    except GitError:
        counted = {}
    for mb, t in line_pairs:
        if t in counted:
            lines[t] = counted[t]
            cache.counts[f"lines:{mb}:{t}"] = counted[t]
            cache.used_counts.add(f"lines:{mb}:{t}")

    # Behind the default branch: exact counts from the default window's ancestor bitsets.
    behind_of: dict[Oid, int] = {}
    if windows and not facts.shallow:
        points = {t: (v.merge_base if v.merge_base is not None else
                      (t if v.proof is not None and v.proof.base in default.refs else None))
                  for t, v in verdicts.items()}
        counts = windows[0].behind_counts(p for p in points.values() if p is not None)
        behind_of = {t: counts[p] for t, p in points.items() if p is not None and p in counts}
    worktree_of = {w.branch[len("refs/heads/"):]: str(w.path) for w in worktrees
                   if w.branch and w.branch.startswith("refs/heads/")}
    default_tips = {b.oid for b in default_bases}
    tip_groups: dict[Oid, list[str]] = {}
    for n in names:
        info = tip_of(n)
        if info is not None and info.oid is not None and roles[n] is not BranchState.EXEMPT:
            tip_groups.setdefault(info.oid, []).append(n)

    records: list[BranchRecord] = []
    stage_of = _stager(config)
    for n in names:
        local = table.local.get(n)
        rem = table.remote.get(n)
        info = local or rem
        assert info is not None
        tip = info.oid
        created_at = created.get(n)
        age = None
        if info.date is not None:
            ref_time = max(info.date, created_at or 0)
            age = max(0.0, (now - ref_time) / _DAY)
        same = tuple(x for x in tip_groups.get(tip, []) if x != n) if tip else ()
        parked = None
        if info.parked_reason and tip is not None and (
            subgraph is None or subgraph.is_park_commit(tip) or tip not in subgraph.commits
        ):
            parked = Park(info.parked_reason, info.parked_by, info.date or 0)
        local_tip = local.oid if local else None
        remote_tip = rem.oid if rem else None
        upstream = (local.upstream or None) if local else None
        upstream_gone = bool(local and local.upstream_gone)
        worktree = worktree_of.get(n)
        age_days = None if age is None else round(age, 2)
        token = number_token(n, info.subject)

        # One construction per record (frozen dataclasses are slow to copy, 5,000 of them).
        make = partial(
            BranchRecord, name=n, local_tip=local_tip, remote_tip=remote_tip,
            upstream=upstream, upstream_gone=upstream_gone, worktree=worktree,
            age_days=age_days, tip_date=info.date, created=created_at, parked=parked,
            number_token=token, same_tip_as=same)

        fixed = roles[n]
        if fixed is not None:
            # The default branch and integration lines are not work, but commits on their
            # local copy that no remote holds are still lost with this clone: say so.
            unpushed_line = None
            if fixed is not BranchState.EXEMPT and local is not None and local.oid is not None \
                    and remote_configured and (rem is None or rem.oid != local.oid):
                res = run_git(["rev-list", "--count", local.oid, "--not",
                               f"--remotes={remote}"], cwd=root, check=False)
                if res.returncode == 0 and res.text.strip().isdigit():
                    unpushed_line = int(res.text.strip())
            if unpushed_line:
                records.append(make(state=fixed, containment=Containment.NOWHERE,
                                    unpushed=unpushed_line,
                                    reason=f"{unpushed_line} commit(s) on the local copy that "
                                    f"no remote holds"))
            else:
                records.append(make(state=fixed))
            continue
        if tip is None or info.objecttype != "commit":
            records.append(make(state=BranchState.UNKNOWN,
                                reason=f"tip is a {info.objecttype or 'missing'} object, "
                                "not a commit"))
            continue
        verdict = verdicts.get(tip, TipVerdict(unknown="not reached"))
        walk = subgraph.walk(tip) if subgraph is not None and tip in subgraph.commits else None
        ahead = None
        if walk is not None and subgraph is not None:
            ahead = sum(1 for c in walk.unique if not subgraph.is_park_commit(c))
        elif verdict.proof is not None and verdict.proof.kind.value == "ancestor":
            ahead = 0
        # At the default branch's tip: unstarted (C07) unless its reflog shows work on it (a
        # fast-forward merge leaves the same tip behind).
        unstarted = tip in default_tips and not _had_work(facts, n if local else None)
        state: BranchState
        reason = verdict.note
        proof = verdict.proof
        if proof is not None and not unstarted:
            if proof.kind.value == "ancestor":
                line = proof.base not in default.refs
                state = BranchState.MERGED_INTO_LINE if line else BranchState.MERGED
                reason = f"tip is an ancestor of {proof.base}"
            else:
                state = BranchState.PATCH_EQUIVALENT
                reason = _proof_reason(proof.kind.value, proof.base, proof.landed_as)
                if verdict.note:
                    reason += f" ({verdict.note})"
        elif verdict.unknown is not None and not unstarted:
            state = BranchState.UNKNOWN
            reason = verdict.unknown
            proof = None
        else:
            proof = None
            if unstarted:
                reason = f"unstarted: at the same tip as {default_name}"
            if parked is not None:
                state = BranchState.PARKED
                reason = f"parked: {parked.reason}"
            else:
                stage = stage_of(age) if age is not None else None
                state = BranchState.DORMANT if stage is not None else BranchState.LIVE
        containment = None
        containing = None
        unpushed = None
        if walk is not None and subgraph is not None and remote_configured:
            unpushed = sum(1 for c in walk.unique
                           if c not in held_by and not subgraph.is_park_commit(c))
        if not state.preserved and not unstarted and remote_configured:
            # Park markers are bookkeeping, not work: judge where the work under them lives.
            work_tip = tip
            while subgraph is not None and subgraph.is_park_commit(work_tip):
                work_tip = subgraph.commits[work_tip].parents[0]
            in_base = subgraph is not None and (
                work_tip not in subgraph.commits or subgraph.commits[work_tip].boundary)
            holders = held_by.get(work_tip, [])
            others = [h for h in holders if h != n]
            if work_tip != tip and in_base:
                containment = Containment.IN_DEFAULT
            elif others:
                lines_first = sorted(others, key=lambda h: (roles.get(h) is not
                                                            BranchState.INTEGRATION_LINE, h))
                containment = Containment.IN_REMOTE_REF
                containing = f"{remote}/{lines_first[0]}"
            elif n in holders or (rem is not None and rem.oid in (tip, work_tip)):
                containment = Containment.OWN_REMOTE_ONLY
            elif subgraph is not None:
                containment = Containment.NOWHERE
        stage = None
        if state is BranchState.DORMANT and age is not None:
            stage = stage_of(age)
        records.append(make(
            state=state, reason=reason, proof=proof, containment=containment,
            containing_ref=containing, stage=stage, ahead=ahead, behind=behind_of.get(tip),
            unpushed=unpushed, lines=lines.get(tip) if proof is None else None))
    cache.save()
    if use_cache:
        write_last_sweep(facts.common_dir, records, now)
    return Inventory(
        facts=facts, config=config, remote=remote, default=default, records=records,
        worktrees=worktrees, bases=[*default_bases, *line_bases], notes=notes,
        elapsed_s=time.monotonic() - started, verdicts=verdicts,
    )


def _proof_reason(kind: str, base: str, landed: Oid | None) -> str:
    short = base.removeprefix("refs/remotes/").removeprefix("refs/heads/")
    if kind == "squash_merged":
        return f"squash-merged into {short} as {landed.short if landed else '?'}"
    if kind == "patch_equivalent":
        return f"every commit is on {short} by patch-id"
    if kind == "tip_subsumed":
        return f"contained in a branch proven merged into {short}"
    if kind == "content_on_base":
        return f"every changed file is identical on {short}"
    return f"preserved on {short}"
