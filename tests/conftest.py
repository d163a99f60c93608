"""Hermetic git fixtures: every test gets its own HOME, no system config, fixed identity and dates.

Helpers build real repositories (never mock git): a bare remote plus a clone, commits with fixed
dates, worktrees, merges of every style.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from branchkeeper.clock import NOW_ENV
from tests.gitrepo import NOW, GitRepo


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    template = tmp_path_factory.mktemp("template")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    # The product's "now" is the suite's: ages never depend on how long the run has taken.
    monkeypatch.setenv(NOW_ENV, str(NOW))
    # No prune of a test starts a background worktree reap unless the test asks for one.
    monkeypatch.setenv("BRANCHKEEPER_REAP_DISABLE", "1")
    # Nothing of the host the suite itself runs under may reach a hook (it tells hosts apart).
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "CLAUDE_PROJECT_DIR",
                "CLAUDE_CODE_CHILD_SESSION", "CURSOR_VERSION", "CURSOR_PROJECT_DIR",
                "GEMINI_SESSION_ID", "COPILOT_HOME"):
        monkeypatch.delenv(var, raising=False)
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"
        "[advice]\n\tdetachedHead = false\n"
    )


@pytest.fixture
def remote_and_clone(tmp_path: Path) -> Iterator[tuple[GitRepo, GitRepo]]:
    """A bare ``origin`` with one commit on ``main`` and a clone of it (``origin/HEAD`` set)."""
    bare = GitRepo.init_bare(tmp_path / "origin.git")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("initial", files={"README.md": "hello\n"}, days_ago=60)
    seed.git("remote", "add", "origin", str(bare.path))
    seed.git("push", "-q", "origin", "main")
    clone = GitRepo.clone(bare.path, tmp_path / "work")
    yield bare, clone


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=os.environ.copy())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` cases run only when ``-m`` names them (pyproject's marker says so)."""
    expr = config.getoption("-m") or ""
    if "slow" in expr and "not slow" not in expr:
        return
    kept = [i for i in items if i.get_closest_marker("slow") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
