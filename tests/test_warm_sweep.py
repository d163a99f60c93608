"""A warm sweep (issue 16): the subgraph walk and the tips' commit facts come from the cache,
the records are the same as a cold sweep's, and a damaged, stale or unsafe cache is never
trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.analysis.inventory import Inventory, build_inventory
from branchkeeper.analysis.refs import read_refs
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import processes_started
from branchkeeper.model.config import Config
from branchkeeper.state.inventory_cache import InventoryCache
from branchkeeper.state.walk_cache import FILE_NAME, load_walk, save_walk
from tests.gitrepo import NOW, GitRepo
from tests.test_verdict_objects import _kinds


def _sweep(w: GitRepo) -> tuple[Inventory, int]:
    before = processes_started()
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW)
    return inv, processes_started() - before


def _walk_file(w: GitRepo) -> Path:
    return w.path / ".git" / "branchkeeper" / FILE_NAME


@pytest.fixture
def swept(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, w = remote_and_clone
    _kinds(w, 1, "a")
    w.git("push", "-q", "origin", "main")
    _sweep(w)  # cold: every cache written
    return w


def test_the_first_warm_sweep_after_a_cold_one_is_as_warm_as_the_next(
        swept: GitRepo) -> None:
    """Issue 20: a cold pass leaves a complete cache (the first warm run after it must not
    redo work a second warm run skips)."""
    first, first_n = _sweep(swept)
    second, second_n = _sweep(swept)
    assert (first.records, first_n) == (second.records, second_n)
    assert first_n == 4, first_n  # rev-parse, for-each-ref, worktree list, config: no proof


def test_warm_sweep_reads_the_walk_and_gives_the_same_records(swept: GitRepo) -> None:
    assert _walk_file(swept).is_file()
    warm, warm_n = _sweep(swept)
    _walk_file(swept).unlink()
    walked, walked_n = _sweep(swept)
    assert warm.records == walked.records
    assert walked_n == warm_n + 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_damaged_walk_file_is_walked_again(swept: GitRepo, damage: str) -> None:
    good, good_n = _sweep(swept)
    path = _walk_file(swept)
    blob = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        path.write_bytes(blob[:-8] + bytes(b ^ 0xFF for b in blob[-8:]))
    else:
        path.write_bytes(b"not a walk")
    again, again_n = _sweep(swept)
    assert again.records == good.records
    assert again_n == good_n + 1
    assert path.read_bytes() == blob  # rewritten whole


def test_a_moved_branch_walks_again(swept: GitRepo) -> None:
    swept.switch("a0-open")
    swept.commit("more", files={"more.txt": "m\n"}, days_ago=1)
    swept.switch("main")
    inv, _ = _sweep(swept)
    rec = inv.by_name()["a0-open"]
    assert (rec.state.value, rec.ahead) == ("live", 2)


def test_replace_refs_are_never_cached(swept: GitRepo) -> None:
    _walk_file(swept).unlink()
    tip = swept.rev("a0-open")
    swept.git("replace", "-f", tip, swept.rev("main"))
    _sweep(swept)
    assert not _walk_file(swept).exists()


def test_walk_file_round_trip_and_key_mismatch(tmp_path: Path) -> None:
    key, other = b"k" * 32, b"o" * 32
    assert load_walk(tmp_path, key) is None
    save_walk(tmp_path, key, b"commit x\n" * 1000)
    assert load_walk(tmp_path, key) == b"commit x\n" * 1000
    assert load_walk(tmp_path, other) is None
    with pytest.raises(ValueError, match="32 bytes"):
        save_walk(tmp_path, b"short", b"")


def test_warm_records_equal_cold_records_behind_counts_included(swept: GitRepo) -> None:
    state = swept.path / ".git" / "branchkeeper"
    for sub in state.iterdir():
        if sub.is_file():
            sub.unlink()
    cold, _ = _sweep(swept)
    warm, warm_n = _sweep(swept)
    assert warm.records == cold.records
    assert any(r.behind for r in warm.records)
    # rev-parse (the repository's facts), for-each-ref, worktree list, config: nothing else
    assert warm_n == 4


def test_lean_ref_listing_reads_what_the_full_one_reads(swept: GitRepo, tmp_path: Path) -> None:
    w = swept
    w.switch("a0-open")
    w.commit("park: later\n\nParked-Reason: waiting on review\nParked-By: alice\n",
             allow_empty=True)
    w.switch("a0-squash")
    w.commit("two line\nsubject #12\n\nbody\n", files={"s2.txt": "2\n"}, days_ago=2)
    w.switch("main")
    w.git("tag", "-a", "-m", "a tag", "v1", "main")  # a remote branch at a tag object
    w.git("update-ref", "refs/remotes/origin/a-tag", w.rev("v1"))
    w.git("config", "branch.a0-merged.remote", "origin")  # its upstream is gone
    w.git("config", "branch.a0-merged.merge", "refs/heads/a0-gone")
    full = read_refs(w.path, "origin")
    cache = InventoryCache.load(tmp_path)
    before = processes_started()
    lean = read_refs(w.path, "origin", tip_facts=cache.tip_facts())
    assert processes_started() - before == 2  # for-each-ref, one log for every tip
    # A tip that is not a commit is not judged ("tip is a tag object"): no subject is read.
    tag = full.remote["a-tag"]._replace(subject="")
    full.remote["a-tag"] = full.by_ref[tag.ref] = tag
    assert lean == full
    assert full.local["a0-open"].parked_reason == "waiting on review"
    before = processes_started()
    assert read_refs(w.path, "origin", tip_facts=cache.tip_facts()) == full
    assert processes_started() - before == 1
