"""The cold pass's streams: git output read as it arrives, raw records parsed one at a time,
the content tier checked while the whole diffs stream in, line counts bounded (issues 11, 20)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.analysis import inventory
from branchkeeper.analysis.commitfacts import path_set_hash
from branchkeeper.git.difftree import iter_raw_z, parse_raw_z, split_z
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import GitError, processes_started, stream_git
from tests.gitrepo import GitRepo


def _sweep(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    code = main(["-C", str(repo.path), "sweep", "--json"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return {b["name"]: b for b in json.loads(out)["branches"]}


def test_stream_git_yields_the_whole_output_in_chunks(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    commits = [repo.commit(f"c{i}", files={f"f{i}.txt": f"{i}\n"}) for i in range(30)]
    stdin = "".join(f"{c}\n" for c in commits).encode()
    before = processes_started()
    chunks = list(stream_git(["diff-tree", "--stdin", "-r", "-z", "--name-only"], cwd=repo.path,
                             stdin=stdin, chunk_size=64))
    assert processes_started() - before == 1
    assert len(chunks) > 1
    # the root commit has no parent to diff against: it prints nothing
    expected = b"".join(f"{c}\0f{i}.txt\0".encode() for i, c in enumerate(commits) if i)
    assert b"".join(chunks) == expected


def test_stream_git_raises_after_what_it_answered(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("root", files={"r.txt": "r\n"})
    good = repo.commit("one", files={"a.txt": "a\n"})
    bad = repo.commit("two", files={"b.txt": "only here\n"})
    blob = repo.git("rev-parse", f"{bad}:b.txt")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    (repo.path / "b.txt").write_text("changed\n")  # else git reads the checked-out copy
    got: list[bytes] = []
    with pytest.raises(GitError) as caught:
        got.extend(stream_git(["diff-tree", "--stdin", "-p", "--no-color"], cwd=repo.path,
                              stdin=f"{good}\n{bad}\n".encode()))
    assert b"".join(got).startswith(f"{good}\ndiff --git a/a.txt b/a.txt\n".encode())
    assert caught.value.returncode == 128
    assert blob.encode() in caught.value.stderr


def test_stream_git_closed_early_ends_git(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    commits = [repo.commit(f"c{i}", files={f"f{i}.txt": "x\n" * 50}) for i in range(40)]
    stream = stream_git(["diff-tree", "--stdin", "-r", "-p"], cwd=repo.path,
                        stdin=("\n".join(commits) + "\n").encode(), chunk_size=16)
    first = next(stream)
    stream.close()  # no exception, no process left waiting on a full pipe
    assert first


def test_split_z_drops_a_token_cut_mid_write() -> None:
    assert list(split_z([b"ab\0c", b"d\0e"])) == [b"ab", b"cd"]
    assert list(split_z([b"", b"x\0"])) == [b"x"]


def test_iter_raw_z_records_and_tree_pairs() -> None:
    c, t1, t2 = "a" * 40, "b" * 40, "c" * 40
    meta = f":100644 100644 {t1} {t2} M".encode()
    data = (f"{c}\0".encode() + meta + b"\0dir/x y\0" + meta + b"\0z\0"
            + f"{t1} {t2}\n".encode() + meta + b"\0q\0")
    assert list(iter_raw_z(split_z([data]))) == [
        (c, [meta, meta], [b"dir/x y", b"z"]),
        (f"{t1} {t2}", [meta], [b"q"]),
    ]
    with pytest.raises(ParseError):
        list(iter_raw_z(split_z([b"not-a-header\0"])))
    with pytest.raises(ParseError):
        list(iter_raw_z(split_z([meta + b"\0p\0"])))
    # the path of the last entry never came: the entry is dropped, the record kept
    assert parse_raw_z(f"{c}\0".encode() + meta + b"\0") == [(c, [])]


def test_path_set_hash_ignores_order_and_repeats() -> None:
    assert path_set_hash([b"b", b"a", b"b"]) == path_set_hash([b"a", b"b"])
    assert path_set_hash([b"a"]) != path_set_hash([b"a", b"b"])
    assert path_set_hash([]) == 0
    # bytes that are not UTF-8 hash as they are
    assert path_set_hash([b"\xff"]) != path_set_hash([b"\xfe"])


def test_lines_are_counted_up_to_a_bound_of_paths(remote_and_clone: tuple[GitRepo, GitRepo],
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    w.switch("small", create=True)
    w.commit("small", files={"a.txt": "1\n2\n"}, days_ago=3)
    w.switch("main")
    w.switch("wide", create=True)
    w.commit("wide", files={f"w{i}.txt": f"{i}\n" for i in range(4)}, days_ago=3)
    w.switch("main")
    monkeypatch.setattr(inventory, "MAX_COUNTED_PATHS", 3)
    cold = _sweep(w, capsys)
    assert (cold["small"]["lines"], cold["wide"]["lines"]) == (2, None)
    before = processes_started()
    warm = _sweep(w, capsys)  # the bound is cached: the warm run counts nothing
    assert (warm["small"]["lines"], warm["wide"]["lines"]) == (2, None)
    assert processes_started() - before <= 12


def test_content_on_base_checked_while_the_diff_streams(remote_and_clone: tuple[GitRepo, GitRepo],
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """A branch whose every changed path has its version on the default tip is proven by
    content; one path different (or deleted on one side only) is not."""
    _, w = remote_and_clone
    w.switch("same", create=True)
    w.commit("same", files={"a.txt": "A\n", "README.md": None}, days_ago=5)
    w.switch("main")
    w.switch("other", create=True)
    w.commit("other", files={"a.txt": "A\n", "b.txt": "mine\n"}, days_ago=5)
    w.switch("main")
    w.commit("later: a and b", files={"a.txt": "A\n", "b.txt": "theirs\n"}, days_ago=2)
    w.commit("later: readme gone", files={"README.md": None}, days_ago=1)
    w.git("push", "-q", "origin", "main")
    got = _sweep(w, capsys)
    assert got["same"]["proof"] == {"kind": "content_on_base", "base": "refs/remotes/origin/main",
                                    "landed_as": None, "verified": "content"}
    assert got["other"]["proof"] is None
    assert got["other"]["state"] == "live"


def test_merge_check_skips_bases_with_no_history_in_common(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A default branch that merged another repository's history (a second root): a base
    commit there that changes the branch's paths is no landing candidate, since git refuses
    to merge unrelated histories; before, each such pair failed and was probed alone."""
    _, w = remote_and_clone
    w.switch("feature", create=True)
    w.commit("feature: x", files={"x.txt": "mine\n"}, days_ago=9)
    w.switch("lib", create=True, start="main")
    w.git("checkout", "-q", "--orphan", "lib-root")
    w.git("rm", "-rfq", ".")
    w.commit("lib: x", files={"x.txt": "lib 1\n"}, days_ago=8)
    w.commit("lib: x again", files={"x.txt": "lib 2\n"}, days_ago=7)
    w.switch("main")
    w.git("merge", "-q", "--allow-unrelated-histories", "-m", "import lib", "lib-root",
          env=w.date_env(6))
    w.git("branch", "-q", "-D", "lib", "lib-root")
    w.git("push", "-q", "origin", "main")
    import branchkeeper.git.isolate as isolate

    failed: list[str] = []
    real = isolate.failure_of
    monkeypatch.setattr(isolate, "failure_of",
                        lambda exc: failed.append(str(exc)) or real(exc))  # type: ignore[func-returns-value]
    got = _sweep(w, capsys)
    assert (got["feature"]["state"], got["feature"]["proof"], got["feature"]["reason"]) == \
        ("live", None, "")
    assert failed == []
