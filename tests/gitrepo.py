"""A small helper for building real repositories in tests (never mocks git).

Dates are fixed relative to a pinned "now" so hashes are stable within a test and ages are exact:
``days_ago=40`` makes a commit whose author and committer dates are 40 days before NOW.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Every test repository's "now": commits are dated relative to it, and the conftest pins the
#: product's clock (``BRANCHKEEPER_NOW``) to it, so ages are exact however long the suite runs.
NOW = int(time.time())


@dataclass
class GitRepo:
    """A repository on disk (a work tree, or a bare repository when ``bare``)."""

    path: Path
    bare: bool = False

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def init(cls, path: Path, *, branch: str = "main") -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
        return cls(path)

    @classmethod
    def init_bare(cls, path: Path, *, branch: str = "main") -> GitRepo:
        subprocess.run(["git", "init", "-q", "--bare", "-b", branch, str(path)], check=True)
        return cls(path, bare=True)

    @classmethod
    def clone(cls, source: Path, path: Path, *args: str) -> GitRepo:
        subprocess.run(["git", "clone", "-q", *args, str(source), str(path)], check=True)
        return cls(path)

    # -- running git --------------------------------------------------------------------------
    def git(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True,
            cwd: Path | None = None) -> str:
        """Run git here and return stdout (text, stripped of the final newline)."""
        full_env = os.environ.copy()
        if env:
            full_env.update(env)
        proc = subprocess.run(
            ["git", *args], cwd=cwd or self.path, capture_output=True, text=True, env=full_env
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc.stdout.rstrip("\n")

    def rev(self, rev: str) -> str:
        return self.git("rev-parse", "--verify", "-q", rev)

    def has_ref(self, ref: str) -> bool:
        return subprocess.run(["git", "show-ref", "--verify", "-q", ref], cwd=self.path).returncode == 0

    @staticmethod
    def date_env(days_ago: float) -> dict[str, str]:
        stamp = f"@{int(NOW - days_ago * 86400)} +0000"
        return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}

    # -- history --------------------------------------------------------------------------------
    def commit(self, message: str, *, files: Mapping[str, str | None] | None = None,
               days_ago: float = 0, cwd: Path | None = None, allow_empty: bool = False) -> str:
        """Write ``files`` (``None`` deletes), stage everything and commit; return the new id."""
        root = cwd or self.path
        for name, content in (files or {}).items():
            target = root / name
            if content is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        self.git("add", "-A", cwd=root)
        args = ["commit", "-q", "-m", message]
        if allow_empty or not files:
            args.append("--allow-empty")
        self.git(*args, env=self.date_env(days_ago), cwd=root)
        return self.git("rev-parse", "HEAD", cwd=root)

    def branch(self, name: str, start: str = "HEAD", *, days_ago: float = 0) -> None:
        """Create a branch; its reflog records the creation ``days_ago`` days back."""
        self.git("branch", name, start, env=self.date_env(days_ago))

    def switch(self, name: str, *, create: bool = False, start: str | None = None,
               days_ago: float = 0) -> None:
        """Switch (``create``: ``switch -c``, the reflog dated ``days_ago`` days back)."""
        args = ["switch", "-q"]
        if create:
            args.append("-c")
        args.append(name)
        if start:
            args.append(start)
        self.git(*args, env=self.date_env(days_ago))

    def merge(self, name: str, *, days_ago: float = 0, message: str | None = None) -> str:
        """A merge commit (``--no-ff``) of ``name`` into the current branch."""
        self.git("merge", "-q", "--no-ff", "-m", message or f"Merge {name}", name,
                 env=self.date_env(days_ago))
        return self.rev("HEAD")

    def squash_merge(self, name: str, *, days_ago: float = 0, message: str | None = None) -> str:
        """``merge --squash`` of ``name`` then one commit, as a forge's squash merge leaves it."""
        self.git("merge", "-q", "--squash", name)
        self.git("commit", "-q", "-m", message or f"Squash {name}", env=self.date_env(days_ago))
        return self.rev("HEAD")

    def rebase_merge(self, name: str, *, days_ago: float = 0) -> str:
        """Cherry-pick every commit of ``name`` onto the current branch (a forge's rebase merge)."""
        base = self.git("merge-base", "HEAD", name)
        commits = self.git("rev-list", "--reverse", f"{base}..{name}").split()
        for c in commits:
            self.git("cherry-pick", "--allow-empty", c, env=self.date_env(days_ago))
        return self.rev("HEAD")

    def worktree_add(self, path: Path, *args: str) -> GitRepo:
        self.git("worktree", "add", "-q", *args, str(path))
        return GitRepo(path)
