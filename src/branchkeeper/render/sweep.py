"""Rendering of an inventory: the terminal report and the JSON document (docs/sweep-json.md).

Reads records only; decides nothing. Every command shown is shell-quoted (DESIGN.md,
guarantee 5) and puts names where git cannot take them for options.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from branchkeeper.analysis.inventory import Inventory
from branchkeeper.analysis.kept import KeptTip
from branchkeeper.analysis.line_hints import line_hint
from branchkeeper.analysis.lost_work import LostKind, LostWork, lost_parts
from branchkeeper.analysis.suggest import cleanup_suggestion
from branchkeeper.git.types import push_argv
from branchkeeper.model.records import BranchAction, BranchRecord, BranchState, CommandVerdict, Stage
from branchkeeper.model.words import state_word

if TYPE_CHECKING:
    from rich.console import Console

    from branchkeeper.analysis.worktree_record import WorktreeRecord

JSON_VERSION = 1


def push_command(remote: str, name: str) -> str:
    """The one command that secures an unpushed branch (:func:`push_argv`), shell-quoted."""
    return shlex.join(push_argv(remote, name))




def park_command(name: str) -> str:
    return f"branchkeeper park --reason '...' -- {shlex.quote(name)}"


def unproven_delete_command(name: str) -> str:
    """Deleting a branch no proof covers, deliberately (a person at a terminal; bundle kept)."""
    return f"branchkeeper delete --allow-unproven --reason '...' -- {shlex.quote(name)}"


def _action_json(cv: CommandVerdict | None) -> dict[str, Any] | None:
    if cv is None:
        return None
    return {"action": cv.action.value, "reason": cv.reason,
            "refusal": cv.refusal.kind.value if cv.refusal is not None else None}


def superseded_json(r: BranchRecord) -> dict[str, Any] | None:
    """The ``superseded`` object of a record (docs/sweep-json.md)."""
    sup = r.superseded
    if sup is None:
        return None
    return {"by": list(sup.holder_names), "holder_tip": sup.holder, "base": sup.base,
            "landed_as": sup.landed_as, "lines": sup.lines, "conflicted": sup.conflicted,
            "changes": [{"path": c.path, "added": c.added, "deleted": c.deleted}
                        for c in sup.changes]}


def record_json(r: BranchRecord) -> dict[str, Any]:
    """One branch as the JSON document lists it (field order as documented)."""
    return {
        "name": r.name,
        "state": r.state.value,
        "proof": None if r.proof is None else {
            "kind": r.proof.kind.value,
            "base": r.proof.base,
            "landed_as": r.proof.landed_as,
            "verified": r.proof.check,
        },
        "containment": r.containment.value if r.containment else None,
        "containing_ref": r.containing_ref,
        "stage": r.stage.value if r.stage else None,
        "ahead": r.ahead,
        "behind": r.behind,
        "unpushed": r.unpushed,
        "lines": r.lines,
        "age_days": r.age_days,
        "local_tip": r.local_tip,
        "remote_tip": r.remote_tip,
        "worktree": r.worktree,
        "upstream": r.upstream,
        "upstream_gone": r.upstream_gone,
        "parked": None if r.parked is None else {
            "reason": r.parked.reason, "by": r.parked.by, "since": r.parked.since,
        },
        "number": r.number_token,
        "same_tip_as": list(r.same_tip_as),
        "superseded": superseded_json(r),
        "refusal": None if r.refusal is None else {"kind": r.refusal.kind.value,
                                                   "reason": r.refusal.reason},
        "actions": None if r.actions is None else {
            "sweep_clean": _action_json(r.actions.sweep_clean),
            "prune": _action_json(r.actions.prune),
            "delete": _action_json(r.actions.delete),
            "delete_remote": _action_json(r.actions.delete_remote),
        },
        "reason": r.reason,
    }


def kept_restore_command(tip: KeptTip) -> str:
    """The command that brings a kept branch back (refusing to overwrite one that exists)."""
    return shlex.join(["git", "update-ref", f"refs/heads/{tip.branch}", tip.ref, ""])


def kept_json(tip: KeptTip) -> dict[str, Any]:
    """One kept tip as the JSON document lists it."""
    return {"branch": tip.branch, "ref": tip.ref, "tip": tip.oid, "kept_at": tip.time,
            "unique_commits": tip.unique, "restore": kept_restore_command(tip)}


#: How each kind of local-only work is counted in a heading.
KIND_LABELS = {
    LostKind.UNPUSHED_BRANCH: "branch(es)",
    LostKind.DETACHED_COMMIT: "detached commit(s)",
    LostKind.WORKTREE_REF: "worktree ref(s)",
    LostKind.SUBMODULE_STORE: "submodule store(s)",
    LostKind.DIRTY_WORKTREE: "dirty worktree(s)",
    LostKind.STASH: "stash(es)",
    LostKind.KEPT_REF: "ref(s) of ours",
    LostKind.IGNORED_FILES: "worktree(s) holding ignored files",
}


def lost_counts(lost: Sequence[LostWork]) -> dict[str, int]:
    """Items per kind (every kind listed, in listing order)."""
    return {k.value: sum(1 for i in lost if i.kind is k) for k in LostKind}


def lost_phrase(lost: Sequence[LostWork]) -> str:
    """``2 branch(es), 1 dirty worktree(s)``: the non-empty kinds, in listing order."""
    counts = lost_counts(lost)
    return ", ".join(f"{n} {KIND_LABELS[LostKind(k)]}" for k, n in counts.items() if n)


def inventory_json(inv: Inventory, *, show_all: bool = True,
                   lost: Sequence[LostWork] | None = None,
                   lost_notes: Sequence[str] = (),
                   kept: Sequence[KeptTip] = (),
                   worktrees: Sequence[WorktreeRecord] = ()) -> dict[str, Any]:
    """The whole ``sweep --json`` document (docs/sweep-json.md). ``lost``: every piece of
    local-only work (``None``: branches only, as the inventory knows them); ``kept``: the git
    hook's kept tips; ``worktrees``: the worktree records (what the ``cleanup`` suggestion of a
    checked-out branch reads)."""
    records = [r for r in inv.records if show_all or r.state is not BranchState.EXEMPT]
    by_path = {str(w.worktree.path): w for w in worktrees}
    d = inv.config.branches.dormancy
    summary = inv.summary()
    if lost is not None:
        summary["lost_work_risk"] = len(lost)
    return {
        "version": JSON_VERSION,
        "repository": str(inv.facts.main_root),
        "default_branch": inv.default.name,
        "default_branch_refs": list(inv.default.refs),
        "default_branch_reason": inv.default.reason or None,
        "remote": inv.remote,
        "remote_configured": inv.remote_configured,
        "git_version": inv.facts.version.text.removeprefix("git version "),
        "shallow": inv.facts.shallow,
        "dormancy_days": {"advisory": d.effective_advisory_days, "noisy": d.effective_noisy_days,
                          "block": d.effective_block_days},
        "notes": [*inv.notes, *lost_notes],
        "lost_work": None if lost is None else [i.to_json() for i in lost],
        "suggestions": _suggestions(inv),
        "branches": [{**record_json(r), "cleanup": _cleanup_json(r, by_path)} for r in records],
        "kept_tips": [kept_json(t) for t in kept],
        "summary": {**summary, **({"lost_work_by_kind": lost_counts(lost)}
                                  if lost is not None else {})},
        "wip": {"open": wip_count(inv), "cap": inv.config.branches.wip.cap,
                "mode": inv.config.branches.wip.mode, "counted": _counted()},
    }


def _counted() -> str:
    from branchkeeper.policy.creation import COUNTED

    return COUNTED


def wip_count(inv: Inventory) -> int:
    """The WIP cap's count of ``inv``'s branches, by the guard's own function
    (``policy.creation.open_branches``) over the same names, tips and states: the number the
    creation denial prints (first document, section 3)."""
    from branchkeeper.analysis.guard_facts import LeanRefs
    from branchkeeper.policy.creation import CreationView, open_branches
    from branchkeeper.state.last_sweep import LastSweep, last_sweep_summary

    local = {r.name: str(r.local_tip) for r in inv.records if r.local_tip is not None}
    remote = {r.name: str(r.remote_tip) for r in inv.records if r.remote_tip is not None}
    rows = last_sweep_summary(inv.records, inv.now)["branches"]
    assert isinstance(rows, dict)
    view = CreationView(LeanRefs(inv.remote, local, remote, "", ()), inv.default.name,
                        LastSweep(rows, 0.0), inv.config, inv.now)
    return open_branches(view)[1]


def _wip_line(inv: Inventory) -> str:
    """At or past the WIP cap (mode not off): the count the creation guard reads, what it
    counts, and what it does to a new branch; else empty."""
    wip = inv.config.branches.wip
    if wip.mode == "off":
        return ""
    n = wip_count(inv)
    if n < wip.cap:
        return ""
    does = "refused" if wip.mode == "block" else "warned about"
    return (f"WIP cap reached: {n} open work branches, cap {wip.cap} (branches.wip.cap; "
            f"{_counted()}); a new branch is {does} until one is finished or cleared")


def _cleanup_json(r: BranchRecord, by_path: dict[str, WorktreeRecord]) -> dict[str, Any] | None:
    """The ``cleanup`` object of a proven branch (null for the others): the command the text
    report suggests (null where none succeeds) and, then, why."""
    if not r.state.preserved:
        return None
    hint = cleanup_suggestion(r, by_path.get(r.worktree) if r.worktree else None)
    return {"command": hint.command or None, "why": hint.why or None}


_STAGE_ORDER = {Stage.BLOCK: 0, Stage.NOISY: 1, Stage.ADVISORY: 2}


def _age(r: BranchRecord) -> str:
    return "?" if r.age_days is None else f"{r.age_days:.0f}d"


def _render_kept(kept: Sequence[KeptTip], console: Console) -> None:
    """The git hook's kept tips: recoverable work of deleted or rewound branches."""
    from rich.text import Text

    console.print()
    console.print(Text(f"Kept by the git hook ({len(kept)}): recoverable tips of deleted or "
                       "rewound branches", style="bold"))
    for tip in kept:
        line = Text("  ")
        line.append(tip.branch, style="bold")
        only = (f"{tip.unique} commit(s) in no other ref" if tip.unique else
                "also on another ref")
        line.append(f"  {tip.oid.short}, kept {_date(tip.time)}, {only}")
        console.print(line, soft_wrap=True)
        console.print(Text(f"    restore: {kept_restore_command(tip)}", style="cyan"),
                      soft_wrap=True)


def _lost_section(console: Console, lost: Sequence[LostWork]) -> None:
    """LOST WORK RISK: each piece of local-only work with the command that secures it."""
    from rich.text import Text

    only_branches = all(i.kind is LostKind.UNPUSHED_BRANCH for i in lost)
    console.print(Text(f"\nLOST WORK RISK: {lost_phrase(lost)} exist "
                       + ("nowhere but this clone" if only_branches else "only in this clone"),
                       style="bold red"))
    for i in lost:
        head, rest, action = lost_parts(i)
        line = Text("  ")
        line.append(head, style="bold")
        line.append(f"  {rest}")
        console.print(line, soft_wrap=True)
        # Commands are never wrapped: a folded command is a paste hazard.
        console.print(Text(f"    {action}", style="cyan"), soft_wrap=True)


def render_text(inv: Inventory, console: Console, *, show_all: bool = False,
                lost: Sequence[LostWork] | None = None,
                lost_notes: Sequence[str] = (), kept: Sequence[KeptTip] = (),
                worktrees: Sequence[WorktreeRecord] = ()) -> None:
    """The terminal report: LOST WORK RISK first (every kind of local-only work when ``lost``
    is given, else the branches the inventory found contained nowhere), then merged (with what
    deletes each: ``worktrees``, the worktree records, say what retiring a checkout takes),
    dormant by stage, live, parked, unstarted, then ``kept`` (the git hook's kept tips)."""
    from rich.table import Table
    from rich.text import Text

    records = [r for r in inv.records if show_all or r.state is not BranchState.EXEMPT]
    d = inv.config.branches.dormancy
    head = Text()
    head.append(f"{inv.facts.main_root}", style="bold")
    remote = inv.remote if inv.remote_configured else f"none ({inv.remote!r} is not configured)"
    head.append(f"  default: {inv.default.name or 'UNRESOLVED'}  remote: {remote}  "
                f"dormancy: {d.effective_advisory_days}/{d.effective_noisy_days}/"
                f"{d.effective_block_days} days ({d.preset})")
    console.print(head)
    for note in [*inv.notes, *lost_notes]:
        console.print(Text(f"note: {note}", style="yellow"))

    if lost is None:
        lost = _branch_lost(inv, records)
    if lost:
        _lost_section(console, lost)
    _line_section(inv, console)

    done = [r for r in records if r.state.preserved]
    by_path = {str(w.worktree.path): w for w in worktrees}
    if done:
        console.print()
        console.print(Text(f"Merged, not deleted ({len(done)}): cleanup candidates",
                           style="bold"))
        for r in done:
            line = Text("  ")
            line.append(r.name, style="bold")
            line.append(f"  {r.reason}, {_age(r)} old")
            console.print(line, soft_wrap=True)
            hint = cleanup_suggestion(r, by_path.get(r.worktree) if r.worktree else None)
            if hint.why:
                console.print(Text(f"    {hint.why}", style="yellow"), soft_wrap=True)
            if hint.command:  # never wrapped: a folded command is a paste hazard
                console.print(Text(f"    {hint.command}", style="cyan"), soft_wrap=True)

    _render_superseded(records, console)

    dormant = sorted((r for r in records if r.state is BranchState.DORMANT),
                     key=lambda r: (_STAGE_ORDER.get(r.stage, 3) if r.stage else 3,
                                    -(r.age_days or 0)))
    if dormant:
        table = Table(title=f"Dormant ({len(dormant)})", title_justify="left", show_edge=False,
                      pad_edge=False)
        for col in ("branch", "stage", "age", "containment", "ahead", "worktree"):
            table.add_column(col, overflow="fold")
        for r in dormant:
            cont = r.containment.value if r.containment else "?"
            if r.containing_ref:
                cont += f" ({r.containing_ref})"
            table.add_row(r.name, r.stage.value if r.stage else "", _age(r), cont,
                          "?" if r.ahead is None else str(r.ahead), r.worktree or "")
        console.print()
        console.print(table)

    for state, title in ((BranchState.LIVE, "Live"), (BranchState.PARKED, "Parked"),
                         (BranchState.UNSTARTED, "Unstarted: no commits of their own, no "
                          "dormancy stage"),
                         (BranchState.UNKNOWN, "Unknown (never deleted)")):
        rows = [r for r in records if r.state is state]
        if not rows:
            continue
        table = Table(title=f"{title} ({len(rows)})", title_justify="left", show_edge=False,
                      pad_edge=False)
        for col in ("branch", "age", "containment", "ahead", "detail"):
            table.add_column(col, overflow="fold")
        for r in rows:
            cont = r.containment.value if r.containment else ""
            if r.containing_ref:
                cont += f" ({r.containing_ref})"
            detail = r.reason
            if r.parked is not None:
                detail = f"waiting since {_date(r.parked.since)}: {r.parked.reason}"
                if r.parked.by:
                    detail += f" (by {r.parked.by})"
            elif r.worktree:
                detail = (detail + "; " if detail else "") + f"worktree {r.worktree}"
            table.add_row(r.name, _age(r), cont, "?" if r.ahead is None else str(r.ahead),
                          detail)
        console.print()
        console.print(table)

    if kept:
        _render_kept(kept, console)

    if show_all:
        fixed = [r for r in records if r.state in (BranchState.DEFAULT,
                 BranchState.INTEGRATION_LINE, BranchState.EXEMPT)]
        if fixed:
            console.print()
            console.print(Text("Not judged: " + ", ".join(f"{r.name} ({state_word(r.state.value)})"
                                                          for r in fixed)))
    s = inv.summary()
    parts = [f"{s[k]} {state_word(k)}" for k in ("merged", "merged_into_line", "patch_equivalent",
                                      "superseded", "dormant", "live", "parked", "unstarted",
                                      "unknown")
             if s[k]]
    console.print()
    console.print(Text(f"{len(records)} branches: " + (", ".join(parts) or "nothing to report")
                       + f"; LOST WORK RISK: {len(lost)}",
                       style="bold red" if lost else "bold"))
    wip_line = _wip_line(inv)
    if wip_line:
        console.print(Text(wip_line, style="yellow"), soft_wrap=True)
    if any(r.local_tip is not None and r.actions is not None
           and r.actions.sweep_clean.action is BranchAction.DELETE for r in done):
        console.print(Text("clean up every proven local branch at once: branchkeeper sweep "
                           "--clean (add --dry-run to see the plan)", style="cyan"),
                      soft_wrap=True)
    remote_only = [r.name for r in done if r.local_tip is None and cleanup_suggestion(r).command]
    if remote_only:
        console.print(Text(f"{len(remote_only)} proven branch(es) exist only on {inv.remote}: "
                           "delete them with branchkeeper delete --remote -- NAME...",
                           style="cyan"), soft_wrap=True)


#: Paths listed per superseded branch in the text report.
SUPERSEDED_PATHS = 5


def _render_superseded(records: list[BranchRecord], console: Console) -> None:
    """Superseded branches: what of each did not land, and the two ways out."""
    from rich.text import Text

    rows = [r for r in records if r.state is BranchState.SUPERSEDED and r.superseded]
    if not rows:
        return
    console.print()
    console.print(Text(f"Superseded ({len(rows)}): inside a branch that landed, but changes of "
                       "their own did not land (never deleted by a proof)", style="bold"))
    for r in rows:
        sup = r.superseded
        assert sup is not None
        holder = ", ".join(sup.holder_names) or sup.holder.short
        where = f" as {sup.landed_as.short}" if sup.landed_as is not None else ""
        line = Text("  ")
        line.append(r.name, style="bold")
        conflict = (" (the merge conflicts; counted: the branch's own changed lines the landing "
                    "commit lacks, conflict markers excluded)" if sup.conflicted else "")
        line.append(f"  {sup.lines} changed line(s) did not land with {holder}{where}"
                    f"{conflict}, {_age(r)} old")
        console.print(line, soft_wrap=True)
        for c in sup.changes[:SUPERSEDED_PATHS]:
            counts = "binary" if c.added is None else f"+{c.added} -{c.deleted}"
            console.print(Text(f"    {c.path}  {counts}"), soft_wrap=True)
        if len(sup.changes) > SUPERSEDED_PATHS:
            console.print(Text(f"    and {len(sup.changes) - SUPERSEDED_PATHS} more path(s)"))
        console.print(Text(f"    park it: {park_command(r.name)}", style="cyan"), soft_wrap=True)
        console.print(Text(f"    or delete it deliberately: {unproven_delete_command(r.name)}",
                           style="cyan"), soft_wrap=True)


def _suggestions(inv: Inventory) -> dict[str, Any]:
    """What the sweep suggests declaring in ``.branchkeeper.yaml`` (``integration_lines``:
    shared branches named like lines, or null)."""
    hint = line_hint(inv.records, inv.config.branches)
    return {"integration_lines": None if hint is None else hint.to_json()}


def _line_section(inv: Inventory, console: Console) -> None:
    from rich.text import Text

    hint = line_hint(inv.records, inv.config.branches)
    if hint is None:
        return
    console.print()
    console.print(Text(f"Declare these as integration lines? {len(hint.branches)} shared "
                       "branch(es) are named like lines and would otherwise count as work "
                       "(and be deleted once merged): " + ", ".join(hint.branches),
                       style="bold"), soft_wrap=True)
    console.print(Text(f"  set in .branchkeeper.yaml (the key under branches:): {hint.declare}",
                       style="cyan"),
                  soft_wrap=True)
    console.print(Text(f"  or, if they are work branches, stop this suggestion: {hint.dismiss}",
                       style="cyan"), soft_wrap=True)


def _branch_lost(inv: Inventory, records: Sequence[BranchRecord]) -> list[LostWork]:
    """The branches contained nowhere, as lost-work items (when no full list was given)."""
    return [LostWork(LostKind.UNPUSHED_BRANCH, r.name,
                     f"{r.unpushed if r.unpushed is not None else '?'} commit(s) no remote holds"
                     + (f", worktree {r.worktree}" if r.worktree else ""),
                     push_command(inv.remote, r.name), r.unpushed, r.age_days, r.worktree)
            for r in sorted((r for r in records if r.lost_work_risk),
                            key=lambda r: -(r.age_days or 0))]


def _date(stamp: int) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(stamp, tz=_dt.UTC).strftime("%Y-%m-%d")
