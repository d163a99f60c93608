"""Per-decision repository facts for the command guard: each read at most once, lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from branchkeeper.git.repo import Worktree
    from branchkeeper.model.config import Config

import os

from branchkeeper.analysis.guard_facts import LeanRefs, load_guard_config, read_lean_refs, read_worktrees
from branchkeeper.analysis.refs import RefTable
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import Repo, locate
from branchkeeper.policy.plan import under
from branchkeeper.shell.model import GitInvocation


class GuardFacts:
    """Facts of one repository, each read at most once per decision (lazily). A plain class:
    it is on the hook path, where a dataclass costs its generation at import."""

    __slots__ = ("config", "config_note", "leans", "repo", "tables", "worktree_list")

    def __init__(self, repo: Repo, config: Config, config_note: str) -> None:
        self.repo = repo
        self.config = config
        self.config_note = config_note
        self.leans: dict[str, LeanRefs] = {}
        self.tables: dict[str, RefTable] = {}
        self.worktree_list: list[Worktree] | None = None

    def lean(self, remote: str | None = None) -> LeanRefs:
        """Branch names and tips (one ``for-each-ref`` per remote per decision)."""
        remote = remote or self.config.branches.remote
        if remote not in self.leans:
            self.leans[remote] = read_lean_refs(self.repo, remote)
        return self.leans[remote]

    def table(self, remote: str | None = None) -> RefTable:
        """The same refs as records (built from :meth:`lean`, no second git call)."""
        remote = remote or self.config.branches.remote
        if remote not in self.tables:
            self.tables[remote] = self.lean(remote).table()
        return self.tables[remote]

    def worktrees(self) -> list[Worktree]:
        if self.worktree_list is None:
            self.worktree_list = read_worktrees(self.repo)
        return self.worktree_list

    def worktree_at(self, path: str) -> Worktree | None:
        """The worktree a ``git worktree`` command names by ``path`` (absolute, resolved from
        its cwd): the one at that real path, else, as git does, the one whose path ends with a
        unique suffix of it (``git worktree remove agent1`` from anywhere)."""
        real = os.path.realpath(path)
        for wt in self.worktrees():
            if os.path.realpath(wt.path) == real:
                return wt
        parts = [p for p in path.split("/") if p]
        paths = [(wt, str(wt.path).rstrip("/")) for wt in self.worktrees()]
        for k in range(1, len(parts) + 1):
            suffix = "/" + "/".join(parts[-k:])
            found = [wt for wt, p in paths if p.endswith(suffix)]
            if len(found) == 1:
                return found[0]
            if not found:
                return None
        return None

    def worktree_holding(self, path: str) -> Worktree | None:
        """The innermost worktree containing ``path``."""
        real = os.path.realpath(path)
        best: Worktree | None = None
        for wt in self.worktrees():
            root = os.path.realpath(wt.path)
            if under(real, root) and (best is None or len(root) > len(str(best.path))):
                best = wt
        return best


class GuardRepos:
    """Repositories met in one command, keyed by common dir."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str | None, str | None, str | None], GuardFacts | None] = {}

    def of(self, cwd: str | None, g: GitInvocation | None = None) -> GuardFacts | None:
        git_dir = g.git_dir if g is not None else None
        work_tree = g.work_tree if g is not None else None
        key = (cwd, git_dir, work_tree)
        if key not in self.by_key:
            repo = locate(cwd, git_dir=git_dir, work_tree=work_tree) if cwd else None
            if repo is None:
                self.by_key[key] = None
            else:
                config, note = load_guard_config(repo)
                self.by_key[key] = GuardFacts(repo, config, note)
        return self.by_key[key]


def git_failed(exc: BranchkeeperError) -> str:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return first[:300]


def child_checkouts(path: str, limit: int = 500) -> list[str]:
    """Direct subdirectories of ``path`` that are git checkouts (hold a ``.git``), looking at
    no more than ``limit`` entries: how a worktree is found under a deletion's target that
    lies outside every repository (no git process)."""
    out: list[str] = []
    try:
        with os.scandir(path) as entries:
            for n, entry in enumerate(entries):
                if n >= limit:
                    break
                if entry.is_dir(follow_symlinks=False) and os.path.lexists(
                        os.path.join(entry.path, ".git")):
                    out.append(entry.path)
    except OSError:
        return out
    return out
