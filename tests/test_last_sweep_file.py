"""``last-sweep.json`` says whether it still describes the repository (issue 16): the rows
oldest first, the key of the refs the sweep read (equal to the key of the guard's own lean
reading of them), the key of the configuration, and whether the budget left anything unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.analysis.guard_facts import read_lean_refs
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.git.locate import locate
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config_file import load_config
from branchkeeper.state.config_cache import config_key, load_config_cached
from branchkeeper.state.last_sweep import ORDER_AGE, read_sweep, refs_key
from tests.gitrepo import NOW, GitRepo


def _file(repo: GitRepo) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (repo.path / ".git" / "branchkeeper" / "last-sweep.json").read_text())
    return data


def _lean_key(repo: GitRepo) -> str:
    found = locate(str(repo.path))
    assert found is not None
    lean = read_lean_refs(found, "origin")
    return refs_key(lean.remote_head, lean.local, lean.remote)


def test_the_sweep_writes_its_keys_and_rows_oldest_first(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    for name, days in (("young", 1), ("old", 40), ("mid", 9)):
        work.switch(name, create=True, start="main", days_ago=days)
        work.commit(name, files={f"{name}.txt": "x\n"}, days_ago=days)
    work.git("push", "-q", "origin", "mid")
    work.git("symbolic-ref", "refs/heads/alias", "refs/heads/old")  # a local symref counts
    work.switch("main")
    facts = repo_facts(work.path)
    config = load_config(facts.main_root).config
    build_inventory(facts, config)
    data = _file(work)
    assert (data["order"], data["complete"]) == (ORDER_AGE, True)
    rows = data["branches"]
    assert isinstance(rows, dict)
    assert list(rows) == ["main", "alias", "old", "mid", "young"]  # main: 60 days, by age
    assert data["refs"] == _lean_key(work)
    cached = load_config_cached(Path(facts.main_root), Path(facts.common_dir))
    assert data["config"] == config_key(config) == config_key(cached)
    # any ref that moves changes the key
    work.git("push", "-q", "origin", "young")
    assert _lean_key(work) != data["refs"]


def test_a_sweep_the_budget_cut_short_is_not_complete(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    work.switch("topic", create=True)
    work.commit("t", files={"t.txt": "t\n"})
    facts = repo_facts(work.path)
    build_inventory(facts, load_config(facts.main_root).config, budget_ms=0)
    assert _file(work)["complete"] is False


def _stamp(repo: GitRepo) -> tuple[int, int, bytes]:
    path = repo.path / ".git" / "branchkeeper" / "last-sweep.json"
    return path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes()


def test_a_sweep_that_finds_nothing_new_leaves_the_file_as_it_was(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: same file, same bytes, same ``time`` an hour later (its readers bring the
    ages forward); a moved ref, a hand-edited row or a crossed dormancy threshold rewrite it."""
    _, work = remote_and_clone
    work.switch("topic", create=True, start="main", days_ago=5)
    work.commit("t", files={"t.txt": "t\n"}, days_ago=5)
    work.switch("main")
    facts = repo_facts(work.path)
    config = load_config(facts.main_root).config
    build_inventory(facts, config, use_cache=True)
    first = _stamp(work)
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 3600))
    build_inventory(facts, config, use_cache=True)
    assert _stamp(work) == first
    assert json.loads(first[2])["time"] == NOW
    found = locate(str(work.path))
    assert found is not None
    entry = read_sweep(found).entry("topic", work.rev("topic"))
    assert entry is not None and entry.age_days == pytest.approx(5 + 1 / 24, abs=0.006)
    # two days later topic is dormant: the file says so from then on
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 2 * 86400 + 60))
    build_inventory(facts, config, use_cache=True)
    data = _file(work)
    assert (data["time"], data["branches"]["topic"][1:3]) == (NOW + 2 * 86400 + 60,
                                                              ["dormant", "advisory"])
    # a row edited by hand is written again
    path = work.path / ".git" / "branchkeeper" / "last-sweep.json"
    path.write_text(json.dumps({**data, "branches": {**data["branches"],
                                                     "topic": [None, "live", None, None, 1, None]}}))
    build_inventory(facts, config, use_cache=True)
    assert _file(work) == data


def test_the_guards_bring_ages_forward_from_the_file_time_not_its_mtime(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's ``time`` is the product's clock (``BRANCHKEEPER_NOW``), its mtime the wall
    clock's: mixing them made ages depend on when the file happened to be written."""
    import os

    _, work = remote_and_clone
    work.switch("topic", create=True, start="main", days_ago=5)
    work.commit("t", files={"t.txt": "t\n"}, days_ago=5)
    work.switch("main")
    facts = repo_facts(work.path)
    build_inventory(facts, load_config(facts.main_root).config, use_cache=True)
    path = work.path / ".git" / "branchkeeper" / "last-sweep.json"
    os.utime(path, (NOW + 10 * 86400, NOW + 10 * 86400))  # written "later" by the wall clock
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 86400))
    found = locate(str(work.path))
    assert found is not None
    entry = read_sweep(found).entry("topic", work.rev("topic"))
    assert entry is not None and entry.age_days == pytest.approx(6.0, abs=0.006)
