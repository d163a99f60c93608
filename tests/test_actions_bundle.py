"""Recovery bundles: compact and full, verified, restorable; a corrupt or raced bundle aborts."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.actions.bundle import (
    COMPACT_NOTE,
    BundleError,
    BundleRaceError,
    create_bundle,
    parse_header,
    verify_bundle,
)
from branchkeeper.git.types import Oid
from branchkeeper.state.bundles import restore_command
from branchkeeper.state.statedir import bundles_dir, common_dir_of
from tests.gitrepo import GitRepo


def _history(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """main: c1-c2-c3-merge(done); feature x forks at c2 with x1, x2; done (merged) has d1."""
    repo = GitRepo.init(tmp_path / "repo")
    ids: dict[str, str] = {}
    ids["c1"] = repo.commit("c1", files={"a": "1\n"}, days_ago=10)
    ids["c2"] = repo.commit("c2", files={"a": "2\n"}, days_ago=9)
    repo.switch("x", create=True)
    ids["x1"] = repo.commit("x1", files={"x": "1\n"}, days_ago=8)
    ids["x2"] = repo.commit("x2", files={"x": "2\n"}, days_ago=7)
    repo.switch("main")
    ids["c3"] = repo.commit("c3", files={"a": "3\n"}, days_ago=6)
    repo.switch("done", create=True)
    ids["d1"] = repo.commit("d1", files={"d": "1\n"}, days_ago=5)
    repo.switch("main")
    ids["merge"] = repo.merge("done", days_ago=4)
    return repo, ids


def _restore_into(target: GitRepo, bundle: Path, ref: str) -> str:
    target.git("fetch", "-q", str(bundle), f"{ref}:{ref}")
    return target.rev(ref)


def test_compact_bundle_of_unmerged_and_merged_refs(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    common = common_dir_of(repo.path)
    refs = {"refs/heads/x": Oid(ids["x2"]), "refs/heads/done": Oid(ids["d1"])}
    info = create_bundle(repo.path, common, refs, base=Oid(ids["merge"]), label="delete x/done")
    assert info.compact is True
    assert info.note == COMPACT_NOTE
    assert info.heads == refs
    # x hangs from its fork point c2; done (already in main) is carried as one commit on c3.
    assert sorted(info.prerequisites) == sorted([ids["c2"], ids["c3"]])
    assert info.path.parent == bundles_dir(common)
    assert info.path.name.endswith("-delete-x-done.bundle")
    assert info.size_bytes == info.path.stat().st_size
    assert parse_header(info.path) == (info.prerequisites, refs)
    assert info.restore_command("refs/heads/x") == (
        f"git fetch {info.path} refs/heads/x:refs/heads/x"
    )
    # A clone of main only has the prerequisites: the restore works there.
    other = GitRepo.clone(repo.path, tmp_path / "other", "--single-branch", "--branch", "main")
    assert _restore_into(other, info.path, "refs/heads/x") == ids["x2"]
    assert other.git("log", "--format=%s", "refs/heads/x") == "x2\nx1\nc2\nc1"
    assert _restore_into(other, info.path, "refs/heads/done") == ids["d1"]


def test_full_bundle_without_base_restores_into_an_empty_repository(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    common = common_dir_of(repo.path)
    info = create_bundle(repo.path, common, {"refs/heads/x": Oid(ids["x2"])}, base=None,
                         label="x")
    assert (info.compact, info.prerequisites, info.note) == (
        False, (), "full bundle: no base branch given")
    empty = GitRepo.init(tmp_path / "empty")
    assert _restore_into(empty, info.path, "refs/heads/x") == ids["x2"]
    assert empty.git("rev-parse", "refs/heads/x^{tree}") == repo.git("rev-parse", "x^{tree}")


def test_unverifiable_base_falls_back_to_full(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    info = create_bundle(repo.path, common_dir_of(repo.path), {"refs/heads/x": Oid(ids["x2"])},
                         base=Oid("e" * 40), label="x")
    assert (info.compact, info.prerequisites, info.note) == (
        False, (), "full bundle: base unverifiable")


def test_compact_that_cannot_carry_every_ref_falls_back_to_full(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    # Both tips are in main and c2 is the parent of c3: a compact bundle would drop c2's ref.
    repo.branch("old", ids["c2"])
    repo.branch("newer", ids["c3"])
    refs = {"refs/heads/old": Oid(ids["c2"]), "refs/heads/newer": Oid(ids["c3"])}
    info = create_bundle(repo.path, common_dir_of(repo.path), refs, base=Oid(ids["merge"]),
                         label="both")
    assert (info.compact, info.prerequisites, info.heads, info.note) == (
        False, (), refs, ("full bundle: a smaller bundle without the default branch's history would "
        "have left out some branches"))


def test_corrupt_bundle_fails_verification(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    info = create_bundle(repo.path, common_dir_of(repo.path), {"refs/heads/x": Oid(ids["x2"])},
                         base=None, label="x")
    data = bytearray(info.path.read_bytes())
    pack_start = data.index(b"\n\n") + 2
    data[pack_start + 40] ^= 0xFF
    info.path.write_bytes(bytes(data))
    with pytest.raises(BundleError) as caught:
        verify_bundle(repo.path, info.path, expected={"refs/heads/x": Oid(ids["x2"])})
    assert str(caught.value).startswith(f"recovery bundle does not unpack: {info.path}\n")
    info.path.write_bytes(bytes(data[: pack_start - 5]))  # header cut short
    with pytest.raises(BundleError):
        verify_bundle(repo.path, info.path)


def test_ref_moved_before_bundle_aborts_and_leaves_no_file(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    common = common_dir_of(repo.path)
    with pytest.raises(BundleRaceError) as caught:
        create_bundle(repo.path, common, {"refs/heads/x": Oid(ids["x1"])}, base=Oid(ids["merge"]),
                      label="x")
    assert caught.value.moved == {"refs/heads/x": (ids["x1"], ids["x2"])}
    assert list(bundles_dir(common).iterdir()) == []


def test_restore_command_quotes() -> None:
    assert restore_command(Path("/tmp/a b/x.bundle"), "refs/heads/$(rm -rf ~)") == (
        "git fetch '/tmp/a b/x.bundle' 'refs/heads/$(rm -rf ~):refs/heads/$(rm -rf ~)'"
    )


def test_bad_ref_names_are_rejected(tmp_path: Path) -> None:
    repo, ids = _history(tmp_path)
    with pytest.raises(ValueError):
        create_bundle(repo.path, common_dir_of(repo.path), {"--all": Oid(ids["x2"])}, base=None,
                      label="x")
