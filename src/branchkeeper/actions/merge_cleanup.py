"""Cleanup after a merge (first document, section 7; issue 6, section 1 PostToolUse).

Runs after a successful ``git merge <branch>...`` in a checkout whose current branch is the
default branch or an integration line. For each merged local branch:

1. Prove by ancestry against the checkout's HEAD (``merge-base --is-ancestor``). A branch that
   is not an ancestor but whose commits all appear in HEAD by patch-id (``git cherry``) gets the
   ``branchkeeper sweep --clean`` command instead (its own commits are not reachable from HEAD,
   so only the bundle-backed cleanup may delete it).
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

from branchkeeper.analysis.refs import matches_any, read_refs, resolve_default_branch
from branchkeeper.git.repo import list_worktrees, repo_facts
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
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

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _is_ancestor(root: Path, tip: Oid, head: Oid) -> bool | None:
    result = run_git(["merge-base", "--is-ancestor", tip, head], cwd=root, check=False,
                     timeout=TIMEOUT_S)
    # 0: ancestor, 1: not an ancestor, anything else: an error (unknown)
    return {0: True, 1: False}.get(result.returncode)


def _patch_equivalent(root: Path, tip: Oid, head: Oid) -> bool:
    result = run_git(["cherry", head, tip], cwd=root, check=False, timeout=TIMEOUT_S)
    lines = result.text.splitlines()
    return result.returncode == 0 and bool(lines) and not any(ln.startswith("+") for ln in lines)


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
    table = read_refs(root, branches.remote)
    default = resolve_default_branch(branches.default, table)
    if current != default.name and not matches_any(current, branches.integration_lines):
        return MergeCleanupResult((), {})
    head_info = table.local.get(current)
    if head_info is None or head_info.oid is None:
        return MergeCleanupResult((), {})
    head = head_info.oid
    never = {current, default.name or "", *branches.protected_names}
    holders = {w.branch.removeprefix("refs/heads/"): str(w.path)
               for w in list_worktrees(facts) if w.branch}
    lines: list[str] = []
    to_delete: dict[str, Oid] = {}
    for name in dict.fromkeys(names):
        info = table.local.get(name)
        if (info is None or info.oid is None or name in never
                or matches_any(name, branches.integration_lines)
                or matches_any(name, branches.exempt)):
            continue
        tip = info.oid
        proven = _is_ancestor(root, tip, head)
        if not proven:
            if proven is False and _patch_equivalent(root, tip, head):
                lines.append(f"{name}: every commit is in {current} by patch-id; delete it with "
                             f"the bundle-backed cleanup: branchkeeper sweep --clean")
            continue
        remote_cmd = (git_cmd("push", branches.remote, "--delete", name)
                      if name in table.remote else "")
        if name in holders:
            lines.append(f"{name} is merged into {current} and checked out in a worktree; "
                         f"finish with: {git_cmd('worktree', 'remove', holders[name])} && "
                         f"{git_cmd('branch', '-d', '--', name)}")
        elif mode == "act":
            to_delete[name] = tip
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
            if name in table.remote:
                lines.append(f"  after {current} is pushed, delete the remote branch: "
                             f"{git_cmd('push', branches.remote, '--delete', name)}")
    return MergeCleanupResult(tuple(lines), deleted)


def _delete(common: Path, root: Path, tips: dict[str, Oid], into: str) -> dict[str, Oid]:
    """Compare-and-swap delete of ``tips`` (name -> proven tip), journaled; the deleted ones."""
    from branchkeeper.actions.refupdate import RefOutcome, delete_refs_cas
    from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

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
