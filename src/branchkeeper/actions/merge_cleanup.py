"""Cleanup after a merge (first document, section 7; issue 6, section 1 PostToolUse).

Runs after a successful ``git merge <branch>...`` in a checkout whose current branch is the
default branch or an integration line. For each merged local branch:

1. Read each merged branch's verdict from one inventory (the record ``sweep`` shows, issue 11
   section 5: never judged again here), within ``branches.sweep.budget_ms``. A branch merged by
   ancestry (into the default branch or an integration line) may be deleted without a bundle:
   every commit stays reachable from that ref. A branch proven preserved another way (a squash,
   a rebase, patch-ids) gets the ``branchkeeper sweep --clean`` command instead (its own commits
   are not reachable from any ref that stays, so only the bundle-backed cleanup may delete it).
   Anything else is left alone, silently.
2. A branch held by a worktree is never touched: the removal and delete commands are printed,
   whatever the mode (``git worktree remove`` deletes ignored files, so a person or the agent
   must decide).
3. ``mode: act`` deletes a proven branch held by no worktree with a compare-and-swap on the
   proven tip (``update-ref -d REF OLD``), no bundle (every commit is reachable from HEAD),
   journaled, and prints the restore line ``git branch <name> <sha>``. ``advise`` prints the
   delete command instead.
4. The remote delete is never run (a network call): ``git push <remote> --delete <name>`` is
   printed for a branch that exists on the remote.

The creator and touch records (``branch.<name>.branchkeeper*``) are kept on purpose: the Stop
guard reads them to insist on the remote delete (merged but not deleted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.analysis.refs import matches_any
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.model.records import BranchAction, BranchState
from branchkeeper.shell.quoting import git_cmd, shell_quote

#: Timeout of each git call here, seconds (this runs inside a PostToolUse hook).
TIMEOUT_S = 20.0
#: The journal's name for this operation.
OP_NAME = "merge-cleanup"


@dataclass(frozen=True, slots=True)
class MergeCleanupResult:
    """What the cleanup did: ``lines`` to show the agent (empty: nothing to say) and the
    branches ``deleted`` (name -> the tip deleted)."""

    lines: tuple[str, ...]
    deleted: dict[str, Oid]
    #: the merge was on the default branch or an integration line (the cleanup step ran)
    on_line: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def merged_names(args: Sequence[str]) -> list[str]:
    """The branch operands of ``git merge`` arguments (subcommand removed); ``[]`` for
    ``--abort``/``--continue``/``--quit`` and the like."""
    value_opts = {"-m", "-F", "-s", "-X", "--strategy", "--strategy-option", "--file",
                  "--message", "--cleanup", "--into-name", "-S", "--gpg-sign"}
    if any(a in ("--abort", "--continue", "--quit", "--skip") for a in args):
        return []
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--":
            out.extend(args[i + 1:])
            break
        if arg.startswith("-"):
            # -S and --gpg-sign take their value glued only; the others may take the next word
            skip = arg in value_opts and arg not in ("-S", "--gpg-sign")
            continue
        out.append(arg)
    return out


def cleanup_after_merge(cwd: Path, names: Sequence[str], config: Config) -> MergeCleanupResult:
    """Section 7 for the branches ``names`` just merged in the checkout at ``cwd``.

    Returns the lines to show (empty when the checkout is not on the default branch or an
    integration line, the mode is ``off``, or nothing was merged). Raises
    :class:`~branchkeeper.errors.NotARepositoryError` outside a repository and
    :class:`~branchkeeper.git.run.GitError` when the ref listing fails.
    """
    branches = config.branches
    mode = branches.cleanup_after_merge.mode
    if mode == "off" or not names:
        return MergeCleanupResult((), {})
    facts = repo_facts(cwd)
    root = facts.root
    head_ref = run_git(["symbolic-ref", "-q", "HEAD"], cwd=root, check=False, timeout=TIMEOUT_S)
    current = head_ref.text.strip().removeprefix("refs/heads/")
    if head_ref.returncode != 0 or not current:
        return MergeCleanupResult((), {})
    inv = build_inventory(facts, config, budget_ms=branches.sweep.budget_ms)
    if current != inv.default.name and not matches_any(current, branches.integration_lines):
        return MergeCleanupResult((), {})
    records = inv.by_name()
    never = {current, inv.default.name or "", *branches.protected_names}
    holders = {w.branch.removeprefix("refs/heads/"): str(w.path)
               for w in inv.worktrees if w.branch}
    lines: list[str] = []
    to_delete: dict[str, Oid] = {}
    for name in dict.fromkeys(names):
        rec = records.get(name)
        if (rec is None or rec.local_tip is None or rec.actions is None or name in never
                or rec.state in (BranchState.DEFAULT, BranchState.INTEGRATION_LINE,
                                 BranchState.EXEMPT)):
            continue
        if rec.actions.sweep_clean.action is not BranchAction.DELETE:
            continue
        if rec.state is BranchState.PATCH_EQUIVALENT:
            lines.append(f"{name}: {rec.reason}; delete it with the bundle-backed cleanup: "
                         "branchkeeper sweep --clean")
            continue
        remote_cmd = (git_cmd("push", branches.remote, "--delete", name)
                      if rec.remote_tip is not None else "")
        if name in holders:
            lines.append(f"{name} is merged into {current} and checked out in a worktree; "
                         f"finish with: {git_cmd('worktree', 'remove', holders[name])} && "
                         f"{git_cmd('branch', '-d', '--', name)}")
        elif mode == "act":
            to_delete[name] = rec.local_tip
            continue
        else:
            lines.append(f"{name} is merged into {current}; delete it with: "
                         f"{git_cmd('branch', '-d', '--', name)}")
        if remote_cmd:
            lines.append(f"  after {current} is pushed, delete the remote branch: {remote_cmd}")
    deleted: dict[str, Oid] = {}
    if to_delete:
        deleted = _delete(facts.common_dir, root, to_delete, current)
        for name, tip in to_delete.items():
            if name in deleted:
                lines.append(f"deleted {name} (merged into {current}); restore: "
                             f"{git_cmd('branch', name, tip)}")
            else:
                lines.append(f"kept {name}: its tip moved after the proof")
            if records[name].remote_tip is not None:
                lines.append(f"  after {current} is pushed, delete the remote branch: "
                             f"{git_cmd('push', branches.remote, '--delete', name)}")
    return MergeCleanupResult(tuple(lines), deleted, on_line=True)


def _delete(common: Path, root: Path, tips: dict[str, Oid], into: str) -> dict[str, Oid]:
    """Compare-and-swap delete of ``tips`` (name -> proven tip), journaled; the deleted ones."""
    from branchkeeper.actions.refupdate import RefOutcome, check_ref_locks, delete_refs_cas
    from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

    check_ref_locks(root, [f"refs/heads/{n}" for n in tips])  # before anything is journaled
    journal = Journal(common)
    items = [JournalItem(f"refs/heads/{n}", t, None, git_cmd("branch", n, t))
             for n, t in tips.items()]
    op_id = journal.begin(OP_NAME, items, bundle=None,
                          note=f"merged into {shell_quote(into)} (ancestor of HEAD); no bundle")
    results = delete_refs_cas(root, {f"refs/heads/{n}": t for n, t in tips.items()})
    outcome = {RefOutcome.DELETED: ItemOutcome.DELETED, RefOutcome.RACED: ItemOutcome.RACED}
    journal.record(op_id, *(ItemResult(ref, outcome.get(r.outcome, ItemOutcome.FAILED), r.reason)
                            for ref, r in results.items()))
    done = {n: t for n, t in tips.items()
            if results[f"refs/heads/{n}"].outcome is RefOutcome.DELETED}
    journal.end(op_id, OpStatus.DONE if len(done) == len(tips) else OpStatus.PARTIAL)
    return done
