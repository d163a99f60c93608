"""Evacuate-then-destroy (``R-GIT-EVACUATE-DESTROY``; first document, section 13): what a
command destroys, the same-command and same-turn evacuation records it meets, and the deny.

:func:`evacuations_in` also gives the hook the records to keep for the rest of the turn."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from typing import NamedTuple

from branchkeeper.analysis.guard_facts import (
    tracked_paths,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.decision import ALLOW, Decision, EvacuationRecord, Verdict
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import PAIRED_KINDS, Plan, describe, plan_command, rev_branch_names, under
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.gitevac import Evacuation
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.parse import parse_command
from branchkeeper.shell.quoting import shell_quote

R_EVACUATE = "R-GIT-EVACUATE-DESTROY"


def evacuation_decision(evacuated: str, output: str, destroyed: str, *, mode: str,
                        same_turn: bool) -> Decision:
    """Evacuate then destroy (section 13): work saved as a patch under an ignored, untracked or
    outside path, and the worktree or branch it came from destroyed, in one command (or one
    turn when ``same_turn``). ``mode``: ``evacuation.mode`` (block, warn, off)."""
    if mode == "off":
        return ALLOW
    when = "earlier in this turn" if same_turn else "in the same command"
    return Decision(
        Verdict.DENY if mode == "block" else Verdict.WARN, R_EVACUATE,
        f"Evacuate then destroy: the work of {evacuated} was written to {shell_quote(output)} "
        f"(a path git does not track) {when}, and this command destroys {destroyed}. A patch "
        "saved where git does not track it is lost work, not a backup.",
        "Commit the work on the branch of the lane it serves (or push it), then remove what is "
        "finished; or ask a human.")


class DestroyTarget(NamedTuple):
    """What one destruction of the command removes: linked ``worktrees`` (real paths), the
    ``branches`` (names) and the command ``text`` for messages. A NamedTuple (hook path)."""

    worktrees: frozenset[str]
    branches: frozenset[str]
    text: str


def destroyed(plan: Plan, facts: GuardFacts) -> list[DestroyTarget]:
    out: list[DestroyTarget] = []
    for d, g in plan.destructions:
        if d.kind not in PAIRED_KINDS or d.dynamic:
            continue
        if d.kind.startswith("worktree_remove"):
            wts = [facts.worktree_at(p) for p in d.targets]
            paths = frozenset(os.path.realpath(p) for p in d.targets)
            branches = frozenset(w.branch.removeprefix("refs/heads/") for w in wts
                                 if w is not None and w.branch)
        else:
            paths = frozenset()
            branches = frozenset(r.removeprefix("refs/heads/") for r in d.refs)
        out.append(DestroyTarget(paths, branches, f"`{describe(g)}`"))
    for target, inv in plan.rm_targets:
        if not target.startswith("/"):
            continue
        hit = [w for w in facts.worktrees()
               if not w.is_main and under(os.path.realpath(w.path), os.path.realpath(target))]
        if hit:
            out.append(DestroyTarget(frozenset(os.path.realpath(w.path) for w in hit),
                               frozenset(w.branch.removeprefix("refs/heads/") for w in hit
                                         if w.branch), f"`{describe(inv)}`"))
    return out


def records_for(e: Evacuation, g: GitInvocation, facts: GuardFacts, command: str
                 ) -> list[EvacuationRecord]:
    """The records of one evacuation whose outputs land where git does not track them."""
    source = e.source_cwd
    wt = facts.worktree_holding(source) if source else None
    branches = [wt.branch.removeprefix("refs/heads/")] if wt is not None and wt.branch else []
    table = facts.table()
    branches += [n for n in rev_branch_names(e.source_rev) if n in table.local]
    roots = {os.path.realpath(w.path): w for w in facts.worktrees()}
    untracked: list[str] = []
    by_root: dict[str, list[str]] = {}
    for out in e.outputs:
        if e.dynamic or not out.startswith("/") or e.kind == "format_patch":
            untracked.append(out)
            continue
        real = os.path.realpath(out)
        inside = [r for r in roots if under(real, r)]
        if not inside:
            untracked.append(out)  # outside the repository
        else:
            by_root.setdefault(max(inside, key=len), []).append(real)
    for root, paths in by_root.items():
        tracked = tracked_paths(root, paths)
        untracked += [p for p in paths if p not in tracked]
    wt_path = os.path.realpath(wt.path) if wt is not None else None
    branch = branches[0] if branches else None
    recs = [EvacuationRecord(wt_path, branch, out, command) for out in untracked]
    recs += [EvacuationRecord(wt_path, b, out, command) for b in branches[1:] for out in untracked]
    return recs


def evacuate_destroy(plan: Plan, repos: GuardRepos, records: Sequence[EvacuationRecord]
                      ) -> list[Decision]:
    if not (plan.destructions or plan.rm_targets) or not (plan.evacuations or records):
        return []
    first = next((g for _, g in plan.destructions), None)
    cwd = first.cwd if first is not None else (plan.rm_targets[0][1].cwd if plan.rm_targets
                                              else None)
    facts = repos.of(cwd, first)
    if facts is None:
        return []
    mode = facts.config.branches.evacuation.mode
    if mode == "off":
        return []
    try:
        targets = destroyed(plan, facts)
        if not targets:
            return []
        found = [(r, False) for e, g in plan.evacuations
                 for r in records_for(e, g, facts, plan.parsed.text)]
        found += [(r, True) for r in records]
    except (BranchkeeperError, ValueError) as exc:
        why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
        return [unparsed_decision("The command saves work and destroys a worktree or branch",
                                  f"git could not answer ({why})")]
    out: list[Decision] = []
    for rec, same_turn in found:
        for t in targets:
            wt_hit = rec.worktree is not None and rec.worktree in t.worktrees
            br_hit = rec.branch is not None and rec.branch in t.branches
            if wt_hit or br_hit:
                what = (f"worktree {shell_quote(rec.worktree)}" if wt_hit and rec.worktree
                        else f"branch {shell_quote(rec.branch or '')}")
                out.append(evacuation_decision(what, rec.output, t.text, mode=mode,
                                               same_turn=same_turn))
                break
    return out[:1] + [d for d in out[1:] if d.reason != out[0].reason]


def evacuations_in(command: str, *, cwd: str) -> list[EvacuationRecord]:
    """Every evacuation in ``command`` whose output lands in an ignored, untracked or outside
    path, as records for the same-turn rule (call it after the command ran, PostToolUse).
    Never raises: an unreadable command or a git failure gives what could be judged."""
    try:
        parsed = parse_command(command, cwd=cwd, home=os.environ.get("HOME") or None,
                           env=os.environ)
        plan = plan_command(parsed)
        repos = GuardRepos()
        out: list[EvacuationRecord] = []
        for e, g in plan.evacuations:
            facts = repos.of(g.cwd, g)
            if facts is None:
                continue
            try:
                out.extend(records_for(e, g, facts, command))
            except (BranchkeeperError, ValueError):
                out.extend(EvacuationRecord(e.source_cwd and posixpath.normpath(e.source_cwd),
                                            None, o, command) for o in e.outputs)
        return out
    except Exception:
        return []
