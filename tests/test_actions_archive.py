"""Archives of ignored files (issue 12, section 1): written, read back and compared, restored
without ever overwriting an existing file or writing through a symbolic link."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from branchkeeper.actions.archive import (
    ArchiveError,
    archive_files,
    restore_archive,
    verify_archive,
)
from branchkeeper.git.types import Oid

HEAD = Oid("a" * 40)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "notes" / "result.txt").write_text("result\n")
    (root / "notes" / "deep" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "notes" / "deep" / "run.sh", 0o750)
    os.symlink("result.txt", root / "notes" / "latest")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 4096)
    return root


MEMBERS = ["notes/result.txt", "notes/deep/run.sh", "notes/latest", "blob.bin"]


def test_archive_verifies_and_restores_every_member(tree: Path, tmp_path: Path) -> None:
    common = tmp_path / "common"
    info = archive_files(common, tree, MEMBERS, branch="refs/heads/feat", head=HEAD, label="wt")
    assert info.path.parent == common / "branchkeeper" / "archives"
    assert info.path.name.endswith("-wt.tar") and info.members == tuple(MEMBERS)
    assert (info.worktree, info.branch, info.head, info.size_bytes) == (
        str(tree), "refs/heads/feat", HEAD, info.path.stat().st_size)
    assert not list(info.path.parent.glob(".*.tmp"))  # no temporary file left
    target = tmp_path / "back"
    target.mkdir()
    done = restore_archive(info, into=target)
    assert (sorted(done.restored), done.kept, done.failed) == (sorted(MEMBERS), (), ())
    for name in ("notes/result.txt", "notes/deep/run.sh", "blob.bin"):
        assert (target / name).read_bytes() == (tree / name).read_bytes()
        assert (target / name).stat().st_mode & 0o7777 == (tree / name).stat().st_mode & 0o7777
    assert os.readlink(target / "notes" / "latest") == "result.txt"


def test_restore_never_overwrites_and_never_follows_a_link(tree: Path, tmp_path: Path) -> None:
    info = archive_files(tmp_path / "common", tree, MEMBERS, branch=None, head=HEAD, label="x")
    target = tmp_path / "back"
    (target / "notes").mkdir(parents=True)
    (target / "notes" / "result.txt").write_text("newer\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, target / "notes" / "deep")  # a link where a directory was
    done = restore_archive(info, into=target)
    assert done.kept == ("notes/result.txt",)
    assert done.failed == (("notes/deep/run.sh", "notes/deep is a symbolic link"),)
    assert sorted(done.restored) == ["blob.bin", "notes/latest"]
    assert (target / "notes" / "result.txt").read_text() == "newer\n"
    assert list(outside.iterdir()) == []


def test_verify_catches_a_difference(tree: Path, tmp_path: Path) -> None:
    info = archive_files(tmp_path / "common", tree, MEMBERS, branch=None, head=HEAD, label="x")
    verify_archive(info.path, tree, MEMBERS)
    blob = (tree / "blob.bin").read_bytes()
    (tree / "blob.bin").write_bytes(blob[:-1] + b"!")  # same size, one byte differs
    with pytest.raises(ArchiveError, match=r"blob\.bin does not match the file on disk"):
        verify_archive(info.path, tree, MEMBERS)
    (tree / "blob.bin").write_bytes(blob)
    os.chmod(tree / "notes" / "result.txt", 0o600)
    with pytest.raises(ArchiveError, match=r"result\.txt does not match"):
        verify_archive(info.path, tree, MEMBERS)
    with pytest.raises(ArchiveError, match="lists 4 member"):
        verify_archive(info.path, tree, MEMBERS[:2])


def test_a_changed_archive_is_never_restored(tree: Path, tmp_path: Path) -> None:
    info = archive_files(tmp_path / "common", tree, MEMBERS, branch=None, head=HEAD, label="x")
    with info.path.open("ab") as fh:
        fh.write(b"\0" * 512)
    target = tmp_path / "back"
    target.mkdir()
    with pytest.raises(ArchiveError, match="changed since it was written"):
        restore_archive(info, into=target)
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("bad", ["../escape", "/etc/passwd", "notes/", "missing.txt", "notes"])
def test_only_files_inside_the_worktree_are_archived(tree: Path, tmp_path: Path, bad: str) -> None:
    with pytest.raises(ArchiveError, match="cannot archive"):
        archive_files(tmp_path / "common", tree, [bad], branch=None, head=HEAD, label="x")
    assert not list((tmp_path / "common" / "branchkeeper" / "archives").glob("*"))


def test_a_hostile_member_name_is_refused_on_restore(tree: Path, tmp_path: Path) -> None:
    info = archive_files(tmp_path / "common", tree, ["blob.bin"], branch=None, head=HEAD,
                         label="x")
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w:") as tar:
        tar.add(tree / "blob.bin", arcname="../outside.bin")
    import hashlib

    from branchkeeper.state.archives import ArchiveInfo

    forged = ArchiveInfo(evil, str(tmp_path / "back"), None, HEAD, ("../outside.bin",),
                         evil.stat().st_size, hashlib.sha256(evil.read_bytes()).hexdigest())
    (tmp_path / "back").mkdir()
    done = restore_archive(forged)
    assert done.failed == (("../outside.bin", "not a file path inside the worktree"),)
    assert not (tmp_path / "outside.bin").exists()
    assert info.path.is_file()
