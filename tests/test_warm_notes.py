"""The sweep's notes are the same on a warm (cached) run as on the cold run (issue 11): a
whitespace-blind patch-id, a missing object, a partial clone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.git import repo as gitrepo
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config import Config
from tests.gitrepo import NOW, GitRepo
from tests.test_patch_id_whitespace import _indentation_only
from tests.test_verdict_objects import _delete_loose, c13, partial_clone


def _notes_twice(repo: GitRepo) -> tuple[list[str], list[str]]:
    facts = repo_facts(repo.path)
    cold = build_inventory(facts, Config(), now=NOW, use_cache=True).notes
    warm = build_inventory(facts, Config(), now=NOW, use_cache=True).notes
    return cold, warm


@pytest.fixture
def git_238(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, "2.38.0")
    gitrepo.git_version.cache_clear()
    yield
    monkeypatch.delenv(gitrepo.ASSUME_VERSION_ENV)
    gitrepo.git_version.cache_clear()


def test_warm_notes_whitespace_blind_patch_id(remote_and_clone: tuple[GitRepo, GitRepo],
                                              git_238: None) -> None:
    _, w = remote_and_clone
    _indentation_only(w)
    note = "git 2.38: patch-id ignores whitespace; 1 branches not proven by patch-id"
    assert _notes_twice(w) == ([note], [note])


def test_warm_notes_missing_object(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    ids = c13(w)
    _delete_loose(w, ids["blob"])
    note = (f"1 branch(es) not judged: 1 object(s) missing from the repository "
            f"({ids['blob']}); run: git fsck")
    assert _notes_twice(w) == ([note], [note])


def test_warm_notes_partial_clone(tmp_path: Path) -> None:
    clone, _ = partial_clone(tmp_path)
    note = ("partial clone (promisor remote origin): 1 branch(es) not judged: objects they "
            "need are not in this clone, and branchkeeper never fetches them")
    assert _notes_twice(clone) == ([note], [note])
