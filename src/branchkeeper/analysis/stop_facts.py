"""The facts the Stop and SubagentStop guard judges (first document, section 6).

For a given set of branch names: where each lives (local tip, remote-tracking tip, worktree),
whether its worktree is dirty, whether its commits are held by a remote, and whether it is
merged. Git processes, whatever the number of branches: one ``for-each-ref`` (all refs), one
``worktree list``, one ``status --porcelain`` per judged branch checked out in a worktree, ONE
``rev-list`` for containment of every tip, one ``for-each-ref --merged`` per base (the default
branch's local and remote refs and each integration line), and one ``reflog`` per branch whose
tip equals a base tip (to tell "unstarted" from "fast-forward merged").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.analysis.hidden_edits import hidden_edits, install_written
from branchkeeper.analysis.refs import matches_any, read_refs, resolve_default_branch
from branchkeeper.git.parse import ParseError, parse_status_z
from branchkeeper.git.repo import RepoFacts, list_worktrees, read_remote_config
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config

#: Timeout of each git call, seconds (these run inside a Stop hook).
TIMEOUT_S = 20.0
#: Changed paths kept per dirty worktree (the message names a few, the command up to ten).
MAX_PATHS = 200


@dataclass(frozen=True, slots=True)
class BranchFacts:
    """One judged branch.

    ``dirty`` holds up to :data:`MAX_PATHS` changed or untracked paths of its worktree, the
    untracked files ``branchkeeper install`` writes left out (``dirty_count`` the total; 0 =
    clean or no worktree).
    ``unpushed`` is True when the local tip is contained in no ``refs/remotes/<remote>/*`` ref
    and not in the local default branch. ``merged_into`` names the base (default branch or line)
    the tip is an ancestor of, or None.
    ``role`` is ``default``, ``integration_line`` or ``""`` (work).
    """

    name: str
    local_tip: Oid | None
    remote_tip: Oid | None
    worktree: str | None
    dirty: tuple[str, ...] = ()
    dirty_count: int = 0
    unpushed: bool = False
    merged_into: str | None = None
    role: str = ""
    error: str = ""
    #: the edits among ``dirty`` that a skip-worktree or assume-unchanged flag hides from
    #: ``git status`` and ``git add`` (:mod:`branchkeeper.analysis.hidden_edits`)
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StopFacts:
    """The facts of every judged branch, plus the repository's ``remote`` and ``default``
    (and whether that remote is configured)."""

    remote: str
    default: str | None
    branches: dict[str, BranchFacts]
    #: whether ``remote`` is configured (its URL set, or refs of it present): else nothing is
    #: pushed and the commands say nothing of pushing
    remote_configured: bool = True


def _dirty(path: str) -> tuple[tuple[str, ...], int, str, tuple[str, ...]]:
    """(the changed paths, at most :data:`MAX_PATHS`; how many there are; an error; the hidden
    edits among them). Untracked files are included (what a stop would strand), and so are the
    edits ``git status`` cannot see (:func:`~branchkeeper.analysis.hidden_edits.hidden_edits`),
    ignored files excluded, and so are the untracked files ``branchkeeper install`` writes
    (:func:`branchkeeper.analysis.hidden_edits.install_written`, the exclusion every reader
    applies)."""
    result = run_git(["-c", "core.quotePath=false", "status", "--porcelain=v1", "-z",
                      "--no-renames", "--untracked-files=all", "--ignore-submodules=none"],
                     cwd=Path(path), check=False,
                     timeout=TIMEOUT_S)
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = detail[-1] if detail else result.returncode
        return (), 0, f"git status failed in {path}: {why}", ()
    tracked, untracked, _ignored = parse_status_z(result.stdout)
    try:
        hidden = [p for p in hidden_edits(path, timeout=TIMEOUT_S) if p not in set(tracked)]
    except (GitError, ParseError) as exc:
        return (), 0, f"git ls-files failed in {path}: {exc}", ()
    paths = [*tracked, *hidden, *(p for p in untracked if not install_written(path, p))]
    return tuple(paths[:MAX_PATHS]), len(paths), "", tuple(hidden)


def _uncontained(root: Path, tips: set[Oid], remote: str, default_ref: str | None) -> set[Oid]:
    """The tips no ``refs/remotes/<remote>/*`` ref and not the local default contain (ONE
    ``rev-list``: a tip is printed exactly when nothing excluded reaches it)."""
    if not tips:
        return set()
    args = ["rev-list", *sorted(tips), "--not", f"--remotes={remote}"]
    if default_ref:
        args.append(default_ref)
    out = run_git(args, cwd=root, timeout=TIMEOUT_S).text.split()
    printed = set(out)
    return {t for t in tips if t in printed}


def _merged(root: Path, base: str, refs: list[str]) -> set[str]:
    if not refs:
        return set()
    out = run_git(["for-each-ref", "--format=%(refname)", f"--merged={base}", *refs], cwd=root,
                  timeout=TIMEOUT_S).text.splitlines()
    wanted = set(refs)
    return {r for r in out if r in wanted}


def _unstarted(root: Path, name: str) -> bool:
    """True when the branch's reflog holds only its creation (no commit, reset or merge)."""
    result = run_git(["reflog", "show", "--format=%H", f"refs/heads/{name}", "--"], cwd=root,
                     check=False, timeout=TIMEOUT_S)
    return result.returncode == 0 and len(result.text.split()) == 1


def gather_stop_facts(facts: RepoFacts, config: Config, names: Iterable[str]) -> StopFacts:
    """Facts for each of ``names`` that still exists (locally, on the remote, or as a worktree).

    Raises :class:`~branchkeeper.git.run.GitError` when listing refs, worktrees, containment or
    merges fails (the guard then fails open: the hook logs it and allows the stop).
    """
    branches_cfg = config.branches
    remote = branches_cfg.remote
    root = facts.root
    table = read_refs(root, remote)
    default = resolve_default_branch(branches_cfg.default, table)
    holders = {w.branch.removeprefix("refs/heads/"): str(w.path)
               for w in list_worktrees(facts) if w.branch}
    wanted = [n for n in dict.fromkeys(names)
              if n in table.local or n in table.remote or n in holders]
    local_default = f"refs/heads/{default.name}" if default.name in table.local else None

    def role(name: str) -> str:
        if name == default.name:
            return "default"
        if matches_any(name, branches_cfg.integration_lines):
            return "integration_line"
        return ""

    tips = {n: (table.local[n].oid if n in table.local else None) for n in wanted}
    rtips = {n: (table.remote[n].oid if n in table.remote else None) for n in wanted}
    uncontained = _uncontained(root, {t for t in tips.values() if t is not None}, remote,
                               local_default)
    bases: list[tuple[str, str]] = [(ref, default.name or "") for ref in default.refs]
    for name in sorted(set(table.local) | set(table.remote)):
        if name != default.name and matches_any(name, branches_cfg.integration_lines):
            ref = (f"refs/remotes/{remote}/{name}" if name in table.remote
                   else f"refs/heads/{name}")
            bases.append((ref, name))
    work = [n for n in wanted if not role(n)]
    refs = [f"refs/heads/{n}" for n in work if tips[n] is not None]
    refs += [f"refs/remotes/{remote}/{n}" for n in work if rtips[n] is not None]
    merged_into: dict[str, str] = {}
    base_tips = set()
    for ref, short in bases:
        oid = table.tip(ref)
        if oid is not None:
            base_tips.add(oid)
        for hit in _merged(root, ref, [r for r in refs if r != ref]):
            name = hit.removeprefix("refs/heads/").removeprefix(f"refs/remotes/{remote}/")
            if name != short:
                merged_into.setdefault(name, short)
    out: dict[str, BranchFacts] = {}
    for n in wanted:
        tip = tips[n]
        merged = merged_into.get(n)
        if merged and tip is not None and tip in base_tips and _unstarted(root, n):
            merged = None  # created at the base's tip and never moved: nothing was merged
        dirty: tuple[str, ...] = ()
        hidden: tuple[str, ...] = ()
        count = 0
        error = ""
        if n in holders:
            dirty, count, error, hidden = _dirty(holders[n])
        out[n] = BranchFacts(
            name=n, local_tip=tip, remote_tip=rtips[n], worktree=holders.get(n), dirty=dirty,
            dirty_count=count, unpushed=tip is not None and tip in uncontained,
            merged_into=merged, role=role(n), error=error, hidden=hidden)
    configured = bool(table.remote) or read_remote_config(root, remote).configured
    return StopFacts(remote, default.name, out, configured)
