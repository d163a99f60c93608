"""``branchkeeper worktree list`` and ``branchkeeper worktree retire`` (issue 4, sections 1-2).

``retire`` removes a linked worktree's checkout only when every retire gate passes
(:mod:`branchkeeper.analysis.worktree_model`), re-checking status immediately before
``git worktree remove`` (never ``--force``); otherwise it records a hold and exits 3. It never
forces, unlocks, prunes, pushes or deletes a branch.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from branchkeeper import clock
from branchkeeper.adapters.common import stdout_console
from branchkeeper.analysis.worktree_model import (
    RETIRE_GATES,
    Disposition,
    RetireInputs,
    WorktreeVerdict,
    evaluate,
    gather_retire_inputs,
)
from branchkeeper.analysis.worktree_status import IgnoredRules, commit_times
from branchkeeper.errors import BranchkeeperError, ExitCode, UsageError
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees, repo_facts
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config_file import load_config
from branchkeeper.state import holds as hold_store
from branchkeeper.state.faults import fault
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock


def register(subparsers: Any) -> None:
    """Add ``worktree list`` and ``worktree retire``."""
    parser = subparsers.add_parser("worktree", help="list and retire worktrees")
    sub = parser.add_subparsers(dest="worktree_command", metavar="SUBCOMMAND", required=True)
    lst = sub.add_parser("list", help="every worktree with its contents and disposition")
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.add_argument("--strict-ignored", action="store_true",
                     help="every ignored file is protected unless listed disposable")
    lst.set_defaults(func=run_list)
    ret = sub.add_parser("retire", help="remove a finished worktree's checkout, or hold it")
    ret.add_argument("path", nargs="?", metavar="PATH")
    ret.add_argument("--pin", action="store_true",
                     help="keep a detached HEAD under refs/branchkeeper/pinned/ first")
    ret.add_argument("--json", action="store_true", help="print JSON")
    ret.add_argument("--strict-ignored", action="store_true",
                     help="every ignored file is protected unless listed disposable")
    ret.add_argument("--hold", action="store_true", help="record an explicit hold on PATH")
    ret.add_argument("--reason", help="why it is held (with --hold)")
    ret.add_argument("--revisit", help="the event at which to revisit it (with --hold)")
    ret.add_argument("--owner", help="who owns the hold (default: $USER or git user.name)")
    ret.add_argument("--release", action="store_true", help="end the hold on PATH")
    ret.add_argument("--list-holds", action="store_true", help="list open holds")
    ret.set_defaults(func=run_retire)
    from branchkeeper.adapters.commands.worktree_reap import register_reap

    register_reap(sub)


# -- shared ------------------------------------------------------------------------------------
def _where(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "directory", None) or os.getcwd())


def _show(path: Path | str) -> str:
    """A path for a terminal: control characters escaped, nothing else changed."""
    text = str(path)
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def _emit_notes() -> None:
    for note in hold_store.take_notes():
        print(f"branchkeeper: warning: {note}", file=sys.stderr)


def _rules(facts: RepoFacts, *, strict: bool) -> IgnoredRules:
    return IgnoredRules.from_config(load_config(facts.main_root).config, strict=strict)


def _self_path(facts: RepoFacts) -> Path | None:
    return facts.toplevel.resolve() if facts.toplevel is not None else None


def _held_by(hold: hold_store.Hold | None) -> str | None:
    if hold is None or hold.auto:
        return None
    return f"held by {hold.owner}: {hold.reason} (revisit: {hold.revisit})"


def branch_inventory_for_worktrees(facts: RepoFacts,
                                   worktrees: list[Worktree]) -> dict[str, dict[str, Any]]:
    """Per worktree path, the branch's ``state``, ``containment`` (with ``containing_ref``),
    ``proof`` (kind and base, or ``None``), ``ahead`` and ``reason`` from ONE batched inventory
    (bounded by ``branches.sweep.budget_ms``). Detached and bare entries are absent; so is
    everything when the inventory fails (the list still prints)."""
    from branchkeeper.analysis.inventory import build_inventory

    wanted = {w.branch.removeprefix("refs/heads/"): str(w.path) for w in worktrees
              if w.branch is not None and not w.bare}
    if not wanted:
        return {}
    config = load_config(facts.main_root).config
    try:
        inv = build_inventory(facts, config, budget_ms=config.branches.sweep.budget_ms)
    except GitError:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for rec in inv.records:
        path = wanted.get(rec.name)
        if path is None or rec.local_tip is None:
            continue
        out[path] = {
            "state": rec.state.value,
            "containment": rec.containment.value if rec.containment else None,
            "containing_ref": rec.containing_ref,
            "proof": ({"kind": rec.proof.kind.value, "base": rec.proof.base}
                      if rec.proof else None),
            "ahead": rec.ahead, "reason": rec.reason,
        }
    return out


# -- list --------------------------------------------------------------------------------------
def _record(inputs: RetireInputs, v: WorktreeVerdict, hold: hold_store.Hold | None, now: float,
            extra: dict[str, Any] | None) -> dict[str, Any]:
    wt = v.worktree
    record: dict[str, Any] = {
        "path": str(wt.path),
        "branch": wt.branch.removeprefix("refs/heads/") if wt.branch else None,
        "head": str(wt.head) if wt.head else None,
        "detached": wt.detached, "main": wt.is_main, "bare": wt.bare,
        "locked": wt.locked, "lock_reason": wt.lock_reason or None,
        "prunable": wt.prunable, "prunable_reason": wt.prunable_reason or None,
        "dirty": None, "ignored": None, "nested": [], "last_activity": None,
        "age_hours": None, "activity_capped": False,
        "hold": hold.to_json() if hold is not None else None,
        "disposition": v.disposition.value, "reason": v.reason, "triage": v.triage,
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in v.gates],
        "branch_state": extra,
    }
    st, ig = inputs.status, inputs.ignored
    if st is not None and ig is not None:
        record["dirty"] = {"tracked": len(st.tracked), "untracked": len(st.untracked)}
        record["ignored"] = {"count": len(st.ignored),
                             "protected": [b.path for b in ig.blocking]}
        record["nested"] = [str(n.path) for n in st.nested]
        latest = st.activity.latest
        record["last_activity"] = latest
        record["age_hours"] = None if latest is None else round((now - latest) / 3600, 2)
        record["activity_capped"] = st.activity.files_capped
    return record


def _age(hours: float | None) -> str:
    if hours is None:
        return "-"
    if hours < 1:
        return f"{int(hours * 60)}m"
    if hours < 48:
        return f"{hours:.0f}h"
    return f"{hours / 24:.0f}d"


def run_list(args: argparse.Namespace) -> int:
    """``worktree list [--json]``: every worktree, its contents, hold and disposition."""
    facts = repo_facts(_where(args))
    worktrees = list_worktrees(facts)
    rules = _rules(facts, strict=args.strict_ignored)
    holds = {h.path: h for h in hold_store.list_holds(facts.common_dir)}
    _emit_notes()
    heads = [w.head for w in worktrees if w.head is not None]
    try:
        times = commit_times(facts.root, heads)
    except GitError:
        times = {}
    extra = branch_inventory_for_worktrees(facts, worktrees)
    now = clock.now()
    records = []
    for wt in worktrees:
        inputs = gather_retire_inputs(
            facts.root, wt, worktrees=worktrees, rules=rules, self_path=_self_path(facts),
            held_by=_held_by(holds.get(str(wt.path))),
            head_time=times.get(wt.head) if wt.head is not None else None)
        verdict = evaluate(inputs, RETIRE_GATES)
        records.append(_record(inputs, verdict, holds.get(str(wt.path)), now,
                               extra.get(str(wt.path))))
    if args.json:
        json.dump({"worktrees": records}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return int(ExitCode.OK)
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    for col in ("path", "branch (state)", "dirty", "ignored", "age", "hold"):
        table.add_column(col)
    # the disposition word must never be cut: it is what a reader (or a grep) looks for
    table.add_column("disposition", min_width=len("SKIP_UNREFERENCED_COMMIT:"))
    for r in records:
        branch = r["branch"] or (f"(detached {r['head'][:10]})" if r["head"] else "(bare)")
        if r["locked"]:
            branch += f" [locked{': ' + r['lock_reason'] if r['lock_reason'] else ''}]"
        d = r["dirty"]
        dirty = "-" if d is None else f"{d['tracked']}M {d['untracked']}?"
        ign = "-" if r["ignored"] is None else (
            ", ".join(r["ignored"]["protected"]) or str(r["ignored"]["count"]))
        hold = r["hold"]["reason"] if r["hold"] else ""
        bs = r["branch_state"]
        if bs:  # the inventory's state, and where unmerged work lives
            branch += f" ({bs['state']}{', ' + bs['containment'] if bs['containment'] else ''})"
        table.add_row(_show(r["path"]), _show(branch), dirty, _show(ign), _age(r["age_hours"]),
                      _show(hold), f"{r['disposition']}: {_show(r['reason'])}")
    stdout_console().print(table)
    return int(ExitCode.OK)


# -- retire ------------------------------------------------------------------------------------
def _find(worktrees: list[Worktree], arg: str, base: Path) -> Worktree:
    target = Path(os.path.realpath(base / arg))
    for wt in worktrees:
        if Path(os.path.realpath(wt.path)) == target:
            return wt
    raise BranchkeeperError(f"{_show(arg)} is not a worktree of this repository "
                            f"(see: branchkeeper worktree list)")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def pin_ref_name(path: Path, head: Oid) -> str:
    """``refs/branchkeeper/pinned/<basename>-<short sha>`` with the basename made ref-safe."""
    base = _UNSAFE.sub("-", path.name).strip(".-").replace("..", ".") or "worktree"
    base = base.removesuffix(".lock")
    return f"refs/branchkeeper/pinned/{base}-{head.short}"


def _pin(facts: RepoFacts, wt: Worktree) -> str | None:
    from branchkeeper.actions.refupdate import RefOutcome, create_refs

    if wt.head is None or wt.branch is not None:
        return None
    ref = pin_ref_name(wt.path, wt.head)
    result = create_refs(facts.root, {ref: wt.head}, must_not_exist=True)[ref]
    if result.outcome not in (RefOutcome.CREATED, RefOutcome.PRESENT):
        raise BranchkeeperError(f"could not pin {wt.head} as {ref}: {result.reason}")
    return ref


def _out(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(text)


def run_retire(args: argparse.Namespace) -> int:
    """``worktree retire``: remove a checkout (exit 0), record a hold (exit 3), or a hold verb."""
    base = _where(args)
    facts = repo_facts(base)
    if args.list_holds:
        return _list_holds(args, facts)
    if not args.path:
        raise UsageError("worktree retire needs PATH (or --list-holds)")
    if args.release:
        return _release(args, facts, base)
    worktrees = list_worktrees(facts)
    wt = _find(worktrees, args.path, base)
    owner = args.owner or hold_store.default_owner(facts.root)
    if args.hold:
        if not args.reason or not args.revisit:
            raise UsageError("--hold needs --reason TEXT and --revisit EVENT")
        hold = hold_store.record_hold(facts.common_dir, str(wt.path), reason=args.reason,
                                      revisit=args.revisit, owner=owner, auto=False)
        _emit_notes()
        _out(args, {"held": hold.to_json()},
             f"hold recorded on {_show(wt.path)}: {hold.reason} (revisit: {hold.revisit}, "
             f"owner {hold.owner})")
        return int(ExitCode.OK)
    return _retire(args, facts, worktrees, wt, owner)


def _retire(args: argparse.Namespace, facts: RepoFacts, worktrees: list[Worktree], wt: Worktree,
            owner: str) -> int:
    rules = _rules(facts, strict=args.strict_ignored)
    with repo_lock(facts.common_dir, MUTATION_LOCK, wait_s=10.0):
        pinned = _pin(facts, wt) if args.pin else None
        existing = hold_store.hold_for(facts.common_dir, str(wt.path))
        _emit_notes()

        def judge() -> WorktreeVerdict:
            return evaluate(gather_retire_inputs(
                facts.root, wt, worktrees=worktrees, rules=rules, self_path=_self_path(facts),
                held_by=_held_by(existing)), RETIRE_GATES)

        verdict = judge()
        if verdict.disposition is Disposition.REMOVABLE:
            # Re-check immediately before removing: the tree may have changed since.
            current = run_git(["rev-parse", "--verify", "-q", "HEAD"], cwd=wt.path,
                              check=False).text.strip()
            verdict = judge()
            if wt.head is not None and current != wt.head:
                return _hold(args, facts, wt, owner, verdict,
                             [f"HEAD moved from {wt.head.short} to {current[:10]}"], pinned)
        if verdict.disposition is not Disposition.REMOVABLE:
            return _hold(args, facts, wt, owner, verdict,
                         [f"{g.fails_as.value}: {g.detail}" for g in verdict.blockers], pinned)
        fault("retire.before_remove")
        removed = run_git(["worktree", "remove", str(wt.path)], cwd=facts.root, check=False)
        fault("retire.after_remove")
        if removed.returncode != 0:
            msg = removed.stderr.decode("utf-8", "replace").strip().splitlines()
            return _hold(args, facts, wt, owner, verdict,
                         [f"git refused: {msg[-1] if msg else 'exit ' + str(removed.returncode)}"],
                         pinned)
        hold_store.release_hold(facts.common_dir, str(wt.path), auto_only=True)
    kept = next(g.detail for g in verdict.gates if g.name == "commit_kept")
    data = {"removed": str(wt.path),
            "branch": wt.branch.removeprefix("refs/heads/") if wt.branch else None,
            "head": str(wt.head) if wt.head else None, "kept": kept, "pinned": pinned}
    lines = [f"removed worktree {_show(wt.path)}"]
    if wt.branch and wt.head:
        lines.append(f"branch {wt.branch.removeprefix('refs/heads/')} kept at {wt.head}")
    else:
        lines.append(f"kept: {kept}")
    if pinned:
        lines.append(f"pinned as {pinned}")
    _out(args, data, "\n".join(lines))
    return int(ExitCode.OK)


def _hold(args: argparse.Namespace, facts: RepoFacts, wt: Worktree, owner: str,
          verdict: WorktreeVerdict, blockers: list[str], pinned: str | None) -> int:
    reason = f"retire blocked: {verdict.disposition.value}"
    hold = hold_store.record_hold(facts.common_dir, str(wt.path), reason=reason,
                                  revisit="the blockers are resolved", owner=owner, auto=True,
                                  blockers=blockers)
    _emit_notes()
    release = shlex.join(["branchkeeper", "worktree", "retire", "--release", str(wt.path)])
    data = {"held": hold.to_json(), "disposition": verdict.disposition.value,
            "blockers": blockers, "triage": verdict.triage, "pinned": pinned}
    lines = [f"kept worktree {_show(wt.path)}: {verdict.disposition.value}"]
    lines += [f"  blocker: {_show(b)}" for b in blockers]
    if verdict.triage:
        lines.append(f"  triage: {verdict.triage}")
    if pinned:
        lines.append(f"  pinned as {pinned}")
    if hold.auto:
        lines.append(f"hold recorded (owner {hold.owner}); it is re-checked on the next retire")
    else:
        lines.append(f"held by {hold.owner} since {_when(hold.since)}; end it with: {release}")
    _out(args, data, "\n".join(lines))
    return int(ExitCode.HELD)


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _release(args: argparse.Namespace, facts: RepoFacts, base: Path) -> int:
    worktrees = list_worktrees(facts)
    try:
        key = str(_find(worktrees, args.path, base).path)
    except BranchkeeperError:
        key = os.path.abspath(base / args.path)  # the worktree may be gone already
    hold = hold_store.release_hold(facts.common_dir, key)
    _emit_notes()
    if hold is None:
        raise BranchkeeperError(f"no hold recorded for {_show(args.path)}")
    _out(args, {"released": hold.to_json()}, f"hold released on {_show(hold.path)}")
    return int(ExitCode.OK)


def _list_holds(args: argparse.Namespace, facts: RepoFacts) -> int:
    holds = hold_store.list_holds(facts.common_dir)
    _emit_notes()
    if args.json:
        _out(args, {"holds": [h.to_json() for h in holds]}, "")
        return int(ExitCode.OK)
    if not holds:
        print("no open holds")
        return int(ExitCode.OK)
    for h in holds:
        kind = "auto" if h.auto else "explicit"
        print(f"{_show(h.path)}\n  owner: {h.owner}  since: {_when(h.since)}  ({kind})\n"
              f"  reason: {_show(h.reason)}\n  revisit: {_show(h.revisit)}")
        for b in h.blockers:
            print(f"  blocker: {_show(b)}")
    return int(ExitCode.OK)
