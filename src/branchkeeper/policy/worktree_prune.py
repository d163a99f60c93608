"""``git worktree prune`` and the removal of a worktree whose directory is gone (section 11;
docs/guard.md, ``R-GIT-WORKTREE-REMOVE-FORCE`` (prune)).

An entry whose checkout was deleted by hand keeps, in its admin directory, the only hold on
its detached HEAD, its own refs and its submodule stores; ``git worktree prune`` (any
options but ``--dry-run``) deletes every such entry at once, and ``git worktree remove`` of
its path deletes that one. The facts are :func:`branchkeeper.analysis.worktree_store
.gone_entries` (the filesystem and one ``rev-list``), read only for those commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from branchkeeper.analysis.guard_facts import GUARD_TIMEOUT_S, WorktreeContents
from branchkeeper.analysis.lost_work import rescue_command, store_rescue_command
from branchkeeper.analysis.worktree_store import GoneEntry, gone_entries
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.facts import GuardFacts
from branchkeeper.shell.quoting import shell_quote

R_WORKTREE_FORCE = "R-GIT-WORKTREE-REMOVE-FORCE"


def entry_problems(e: GoneEntry) -> tuple[list[str], list[str]]:
    """(problem lines, secure-it commands) for the gone entry ``e``: its detached HEAD held by
    no ref, each own ref holding commits nothing else holds, each submodule store."""
    label = Path(e.path).name
    problems: list[str] = []
    steps: list[str] = []
    if e.head is not None:
        problems.append(f"detached HEAD {e.head.short} is held by no branch, tag or "
                        "remote-tracking ref")
        steps.append(rescue_command(label, e.head, None))
    for h in e.held:
        problems.append(f"its own ref {h.ref} holds {h.count} commit(s) no branch, tag or "
                        "remote holds")
        steps.append(rescue_command(f"{label}-{h.ref.rsplit('/', 1)[-1]}", h.tip, None))
    for store in e.modules:
        problems.append(f"submodule store {shell_quote(store)} (it goes with any submodule "
                        "commit only it holds)")
        steps.append(store_rescue_command(e.path, store))
    return problems, steps


#: Why a ``git gc`` is judged as the prune it runs, whatever the entries' ages.
GC_NOTE = (" (`git gc` runs `git worktree prune --expire <gc.worktreePruneExpire>`, 3 months "
           "by default; the guard does not judge the entries' ages against that expiry, so it "
           "denies while such an entry exists)")


def prune_decision(entries: Sequence[GoneEntry], *, how: str, mode: str,
                   by_gc: bool = False) -> Decision:
    """``git worktree prune`` (not ``--dry-run``), or ``git gc`` (``by_gc``: the prune it
    runs): deny when some entry it deletes (directory gone, not locked) holds what no ref
    holds (:class:`GoneEntry` ``at_risk``), naming each entry and the way out:
    ``branchkeeper prune`` (pins the HEAD, holds the entry) or the listed commands, then push.
    ``how``: the command as written; ``mode``: ``force_removal.mode`` (``off`` allows)."""
    risky = [e for e in entries if e.at_risk]
    if not risky or mode == "off":
        return ALLOW
    lines: list[str] = []
    steps: list[str] = []
    for e in risky:
        problems, secure = entry_problems(e)
        lines.append(f"worktree {shell_quote(e.path)} (directory gone, entry "
                     f"{shell_quote(str(e.admin))}):")
        lines += ["  " + p for p in listed(problems)]
        steps += secure
    return Decision(
        Verdict.DENY, R_WORKTREE_FORCE,
        f"`{how}` would lose work: it deletes the entry of each worktree below, the only thing "
        "holding what is listed" + (GC_NOTE if by_gc else "") + ":\n" + "\n".join(lines),
        "Run `branchkeeper prune` instead: it pins each detached HEAD as "
        "refs/branchkeeper/pinned/<dir>-<sha> and locks an entry whose refs or submodule "
        "stores hold work before it prunes. Or secure each first (" + "; ".join(steps)
        + "), push it, then " + ("run gc" if by_gc else "prune") + "; or ask a human.")


def judge_prune(facts: GuardFacts, *, how: str, by_gc: bool = False) -> Decision:
    """Read the gone entries of ``facts``' repository (:func:`gone_entries`) and decide
    :func:`prune_decision` (``by_gc``: for ``git gc``). Raises GitError when they cannot be
    read (the caller denies)."""
    entries = gone_entries(Path(facts.repo.root), Path(facts.repo.common_dir),
                           timeout=GUARD_TIMEOUT_S)
    return prune_decision(entries, how=how, mode=facts.config.branches.force_removal.mode,
                          by_gc=by_gc)


def gone_contents(facts: GuardFacts, path: str) -> WorktreeContents | None:
    """What ``git worktree remove`` of ``path``, a worktree whose directory is gone, would
    lose, as :class:`WorktreeContents` (no files: its own refs and submodule stores), or
    ``None`` when ``path`` is not such an entry (locked, or its checkout exists). Raises
    GitError."""
    for e in gone_entries(Path(facts.repo.root), Path(facts.repo.common_dir),
                          timeout=GUARD_TIMEOUT_S):
        if e.path == path:
            return WorktreeContents((), (), True, (),
                                    tuple(f"{h.ref} ({h.count} commit(s))" for h in e.held),
                                    e.modules)
    return None
