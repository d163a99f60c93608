"""The git hook's decision (analysis/losing.py) on git without ``patch-id --verbatim``: equal
patch-ids may differ in whitespace there, so a rewind is judged lossless by patch-id only when a
content check confirms it (issue 11; the sweep's rule, tests/test_patch_id_whitespace.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from branchkeeper.analysis.losing import Candidate, Losing, losing_updates
from branchkeeper.git import repo as gitrepo
from branchkeeper.git.types import Oid
from tests.gitrepo import GitRepo

BASE = "def f():\n    if x:\n        pass\n"
INSIDE = "def f():\n    if x:\n        pass\n        do_it()\n"
OUTSIDE = "def f():\n    if x:\n        pass\n    do_it()\n"


@pytest.fixture
def assume(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    gitrepo.git_version.cache_clear()
    yield
    monkeypatch.delenv(gitrepo.ASSUME_VERSION_ENV, raising=False)
    gitrepo.git_version.cache_clear()


def _git(version: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if version is not None:
        monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, version)
    gitrepo.git_version.cache_clear()


def _start(tmp_path: Path) -> GitRepo:
    r = GitRepo.init(tmp_path / "r")
    r.commit("init", files={"p.py": BASE, "other.txt": "o\n"}, days_ago=5)
    r.switch("feat", create=True)
    return r


def _reindent(r: GitRepo) -> Candidate:
    """feat's one commit is rewritten with the same patch but for its indentation."""
    r.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    old = Oid.parse(r.rev("feat"))
    r.git("reset", "-q", "--hard", "main")
    r.commit("add do_it", files={"p.py": OUTSIDE}, days_ago=3)
    return Candidate("refs/heads/feat", old, Oid.parse(r.rev("feat")))


@pytest.mark.parametrize("version", [None, "2.38.0", "2.30.0"])
def test_losing_reindented_rewrite_loses_its_commit_on_every_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assume: None,
        version: str | None) -> None:
    r = _start(tmp_path)
    c = _reindent(r)
    _git(version, monkeypatch)
    assert losing_updates(r.path, [c], excluded=[c.ref]) == [
        Losing("refs/heads/feat", c.old, c.new, 1)]


@pytest.mark.parametrize("version", [None, "2.38.0", "2.30.0"])
def test_losing_rebase_onto_untouched_files_is_lossless_on_every_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assume: None,
        version: str | None) -> None:
    r = _start(tmp_path)
    r.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    old = Oid.parse(r.rev("feat"))
    r.switch("main")
    r.commit("main moves elsewhere", files={"new.txt": "n\n"}, days_ago=3)
    r.switch("feat")
    r.git("rebase", "-q", "main")
    c = Candidate("refs/heads/feat", old, Oid.parse(r.rev("feat")))
    _git(version, monkeypatch)
    # the same blobs on both sides: the raw diffs agree, no merge needed
    assert losing_updates(r.path, [c], excluded=[c.ref]) == []


@pytest.mark.parametrize(("version", "lost"), [(None, 0), ("2.38.0", 0), ("2.30.0", 1)])
def test_losing_rebase_over_a_moved_file_needs_merge_tree_on_blind_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assume: None,
        version: str | None, lost: int) -> None:
    r = _start(tmp_path)
    r.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    old = Oid.parse(r.rev("feat"))
    r.switch("main")
    r.commit("main edits p.py far away", files={"p.py": "# header\n\n\n\n\n" + BASE},
             days_ago=3)
    r.switch("feat")
    r.git("rebase", "-q", "main")
    c = Candidate("refs/heads/feat", old, Oid.parse(r.rev("feat")))
    _git(version, monkeypatch)
    # git 2.38 confirms by merging; 2.30 has no content check for it: the commit counts lost
    expected = [Losing("refs/heads/feat", c.old, c.new, lost)] if lost else []
    assert losing_updates(r.path, [c], excluded=[c.ref]) == expected
    scratch = r.path / ".git" / "branchkeeper" / "tmp"
    assert not scratch.exists() or list(scratch.iterdir()) == []
