"""The merge primitive of the git layer: merge-tree --stdin output, isolation of failing pairs,
the scratch object store (the repository never gains an object), and diff-tree parsers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from branchkeeper.git import mergetree
from branchkeeper.git.difftree import NumstatEntry, RawEntry, parse_numstat_z, parse_raw_z
from branchkeeper.git.isolate import Attempt, Failure, failure_of, run_isolated
from branchkeeper.git.mergetree import (
    STOPPED,
    MergeMessage,
    MergeOutcome,
    ScratchObjects,
    merge_pairs,
    parse_merge_tree,
    remove_stale,
)
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import GitError, processes_started, stream_git
from branchkeeper.git.types import Oid
from branchkeeper.git.watchdog import cpu_ticks
from tests.gitrepo import GitRepo

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def _edit(text: str, n: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[n - 1] = new + "\n"
    return "".join(rows)


def objects_in(repo: GitRepo) -> set[str]:
    """Every object file (loose and packed) under the repository's object store."""
    root = repo.path / ".git" / "objects"
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def delete_loose(repo: GitRepo, oid: str) -> None:
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


@pytest.fixture
def shapes(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """main and branches that merge cleanly, conflict, rename, delete/modify, and an orphan."""
    repo = GitRepo.init(tmp_path / "repo")
    ids = {"base": repo.commit("base", files={"f.txt": LINES, "del.txt": "d\n",
                                              "ren.txt": "r\n"}, days_ago=9)}
    repo.switch("clean", create=True)
    ids["clean"] = repo.commit("clean", files={"f.txt": _edit(LINES, 3, "three")}, days_ago=8)
    repo.switch("main")
    ids["m1"] = repo.commit("m1", files={"f.txt": _edit(LINES, 17, "seventeen")}, days_ago=7)
    repo.switch("conflict", create=True, start=ids["base"])
    ids["conflict"] = repo.commit("conflict", files={"f.txt": _edit(LINES, 17, "XVII"),
                                                     "del.txt": "changed\n"}, days_ago=6)
    repo.switch("main")
    ids["m2"] = repo.commit("m2", files={"del.txt": None}, days_ago=5)
    repo.switch("rename", create=True, start=ids["base"])
    repo.git("mv", "ren.txt", "renamed.txt")
    ids["rename"] = repo.commit("rename", days_ago=4)
    repo.git("checkout", "-q", "--orphan", "orphan")
    repo.git("rm", "-rqf", ".")
    ids["orphan"] = repo.commit("orphan", files={"o.txt": "o\n"}, days_ago=3)
    repo.switch("main")
    return repo, ids


def _stdin_merge(repo: GitRepo, pairs: list[tuple[str, str]], *extra: str,
                 scratch: Path) -> bytes:
    env = dict(os.environ, GIT_OBJECT_DIRECTORY=str(scratch),
               GIT_ALTERNATE_OBJECT_DIRECTORIES=str(repo.path / ".git" / "objects"))
    scratch.mkdir(exist_ok=True)
    proc = subprocess.run(["git", "merge-tree", "--write-tree", "--stdin", *extra],
                          cwd=repo.path, input="".join(f"{a} {b}\n" for a, b in pairs).encode(),
                          capture_output=True, env=env, check=True)
    return proc.stdout


def test_parse_merge_tree_every_shape_with_and_without_messages(
        shapes: tuple[GitRepo, dict[str, str]], tmp_path: Path) -> None:
    repo, ids = shapes
    pairs = [("main", "clean"), ("main", "conflict"), ("main", "rename")]
    tree = {name: repo.git("merge-tree", "--write-tree", "main", name, check=False
                           ).splitlines()[0] for name in ("clean", "conflict", "rename")}
    base_del = repo.rev(f"{ids['base']}:del.txt")
    conf_del = repo.rev("conflict:del.txt")
    quiet, complete = parse_merge_tree(
        _stdin_merge(repo, pairs, "--no-messages", scratch=tmp_path / "s1"), messages=False)
    assert complete
    assert quiet == [
        MergeOutcome(True, Oid(tree["clean"])),
        MergeOutcome(False, Oid(tree["conflict"]), ("del.txt", "f.txt")),
        MergeOutcome(True, Oid(tree["rename"])),
    ]
    loud, complete = parse_merge_tree(
        _stdin_merge(repo, pairs, "--messages", scratch=tmp_path / "s2"), messages=True)
    assert complete
    modify_delete = ("CONFLICT (modify/delete): del.txt deleted in main and modified in "
                     "conflict.  Version conflict of del.txt left in tree.")
    assert loud == [
        MergeOutcome(True, Oid(tree["clean"]), (),
                     (MergeMessage(("f.txt",), "Auto-merging", "Auto-merging f.txt"),)),
        MergeOutcome(False, Oid(tree["conflict"]), ("del.txt", "f.txt"),
                     (MergeMessage(("del.txt",), "CONFLICT (modify/delete)", modify_delete),
                      MergeMessage(("f.txt",), "Auto-merging", "Auto-merging f.txt"),
                      MergeMessage(("f.txt",), "CONFLICT (contents)",
                                   "CONFLICT (content): Merge conflict in f.txt"))),
        MergeOutcome(True, Oid(tree["rename"])),
    ]
    assert {base_del, conf_del} == {e.split()[1] for e in repo.git(
        "merge-tree", "--write-tree", "main", "conflict", check=False).splitlines()[1:3]
        if "del.txt" in e}


def test_parse_merge_tree_drops_a_cut_record_and_rejects_bad_fields() -> None:
    tree = "a" * 40
    assert parse_merge_tree(f"1\0{tree}\0\0".encode(), messages=False) == (
        [MergeOutcome(True, Oid(tree))], True)
    assert parse_merge_tree(f"1\0{tree}\0\0" "0\0{tree}\0100644 ".encode(), messages=False) == (
        [MergeOutcome(True, Oid(tree))], False)
    with pytest.raises(ParseError, match="bad merge status"):
        parse_merge_tree(f"2\0{tree}\0\0".encode(), messages=False)
    with pytest.raises(ParseError, match="bad tree id"):
        parse_merge_tree(b"1\0not-a-tree\0\0", messages=False)
    with pytest.raises(ParseError, match="bad conflicted entry"):
        parse_merge_tree(f"0\0{tree}\0garbage\0\0".encode(), messages=False)
    with pytest.raises(ParseError, match="clean merge followed"):
        parse_merge_tree(f"1\0{tree}\0stray\0\0".encode(), messages=False)


def test_merge_pairs_isolates_unrelated_and_missing_and_keeps_the_repository_clean(
        shapes: tuple[GitRepo, dict[str, str]]) -> None:
    repo, ids = shapes
    repo.switch("needs-blob", create=True, start=ids["base"])
    lost = repo.commit("lost", files={"f.txt": _edit(LINES, 17, "gone")}, days_ago=2)
    repo.switch("main")
    blob = repo.rev(f"{lost}:f.txt")
    delete_loose(repo, blob)
    common = repo.path / ".git"
    before = objects_in(repo)
    pairs = [(ids["m2"], ids["clean"]), (ids["m2"], ids["orphan"]), (ids["m2"], ids["rename"]),
             (ids["m2"], lost), (ids["m2"], ids["conflict"])]
    started = processes_started()
    with ScratchObjects(common) as scratch:
        where = scratch.path
        assert where is not None and where.parent == common / "branchkeeper" / "tmp"
        outcomes, failures = merge_pairs(repo.path, pairs, scratch=scratch)
        for outcome in outcomes.values():
            assert subprocess.run(["git", "cat-file", "-e", outcome.tree], cwd=repo.path,
                                  env=dict(os.environ, **scratch.env())).returncode == 0
    assert processes_started() - started == 5  # batch, probe orphan, rest, probe lost, rest
    assert not where.exists()
    assert objects_in(repo) == before
    assert set(outcomes) == {pairs[0], pairs[2], pairs[4]}
    assert [outcomes[p].clean for p in (pairs[0], pairs[2], pairs[4])] == [True, True, False]
    assert failures == {
        pairs[1]: Failure(None, "fatal: refusing to merge unrelated histories"),
        pairs[3]: Failure(blob, f"fatal: unable to read blob object {blob}"),
    }
    assert failures[pairs[3]].reason == f"object missing ({blob})"


def test_merge_pairs_in_two_streams_answers_the_same_and_isolates_in_each(
        shapes: tuple[GitRepo, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Split over two streams (the threshold lowered to this small batch), every pair gets
    the answer one stream gives, and each stream isolates its own failing pair."""
    repo, ids = shapes
    pairs = [(ids["m2"], ids["clean"]), (ids["m2"], ids["orphan"]), (ids["m2"], ids["rename"]),
             (ids["m2"], ids["conflict"]), (ids["m1"], ids["orphan"])]
    common = repo.path / ".git"
    with ScratchObjects(common) as scratch:
        one = merge_pairs(repo.path, pairs, scratch=scratch, streams=1)
    monkeypatch.setattr(mergetree, "PARALLEL_MIN", 2)
    started = processes_started()
    with ScratchObjects(common) as scratch:
        two = merge_pairs(repo.path, pairs, scratch=scratch)
    # stream 1 [clean, orphan, rename]: batch, probe orphan, rest; stream 2 [conflict, orphan]:
    # batch, then the failing last pair alone needs no probe
    assert processes_started() - started == 4
    assert two == one
    unrelated = Failure(None, "fatal: refusing to merge unrelated histories")
    assert two[1] == {pairs[1]: unrelated, pairs[4]: unrelated}
    assert set(two[0]) == {pairs[0], pairs[2], pairs[3]}


def _hang(scratch: ScratchObjects) -> None:
    """Make every git reading through ``scratch`` wait forever without output or CPU time:
    its alternates file is a FIFO nobody writes."""
    assert scratch.path is not None
    (scratch.path / "info").mkdir()
    os.mkfifo(scratch.path / "info" / "alternates")


def test_a_stream_that_stops_answering_is_ended_and_its_pairs_fail_stopped(
        shapes: tuple[GitRepo, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, ids = shapes
    pairs = [(ids["m2"], ids["clean"]), (ids["m2"], ids["rename"]), (ids["m1"], ids["clean"])]
    monkeypatch.setattr(mergetree, "PARALLEL_MIN", 2)
    started = processes_started()
    with ScratchObjects(repo.path / ".git") as scratch:
        _hang(scratch)
        outcomes, failures = merge_pairs(repo.path, pairs, scratch=scratch, idle=0.5)
    assert processes_started() - started == 2  # one per stream; nothing probed after a stop
    assert outcomes == {}
    why = f"{STOPPED} (git stopped answering: no output and no CPU time for 0.5 s)"
    assert failures == {pair: Failure(None, why) for pair in pairs}
    assert failures[pairs[0]].reason == f"git error: {why}"


def test_stream_git_idle_bound_ends_a_silent_git_and_cpu_ticks_reads_this_process(
        tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("c", files={"a": "1\n"})
    with pytest.raises(GitError) as caught:
        list(stream_git(["-c", "alias.pause=!sleep 30", "pause"], cwd=repo.path, idle=0.5))
    assert caught.value.returncode is None
    assert str(caught.value).splitlines()[0] == (
        "git stopped answering: no output and no CPU time for 0.5 s: "
        "git -c alias.pause=!sleep 30 pause")
    before = cpu_ticks(os.getpid())
    assert before is not None
    after = before
    while after == before:  # CPU time moves while this process computes
        sum(range(10_000))
        after = cpu_ticks(os.getpid())
        assert after is not None
    assert after > before  # (the loop may end at once: the tick can move before its test)
    assert cpu_ticks(2 ** 22 + 7) is None  # above the kernel's pid limit: no such process


def test_scratch_left_by_a_killed_run_is_removed_by_the_next(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("c", files={"a": "1\n"})
    parent = repo.path / ".git" / "branchkeeper" / "tmp"
    parent.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = parent / f"objects-{dead.pid}-abc"
    (stale / "ab").mkdir(parents=True)
    alive = parent / f"objects-{os.getppid()}-def"
    alive.mkdir()
    old = parent / f"objects-{os.getppid()}-old"
    old.mkdir()
    os.utime(old, (time.time() - 3 * 86400, time.time() - 3 * 86400))
    other = parent / "unrelated"
    other.mkdir()
    assert sorted(remove_stale(parent)) == sorted([stale, old])
    assert sorted(p.name for p in parent.iterdir()) == sorted([alive.name, "unrelated"])
    with ScratchObjects(repo.path / ".git") as scratch:
        assert scratch.path is not None and scratch.path.is_dir()
    assert sorted(p.name for p in parent.iterdir()) == sorted([alive.name, "unrelated"])


def test_sigterm_inside_a_scratch_removes_it(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("c", files={"a": "1\n"})
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from branchkeeper.git.mergetree import ScratchObjects, Terminated\n"
        f"common = Path({str(repo.path / '.git')!r})\n"
        "try:\n"
        "    with ScratchObjects(common) as s:\n"
        "        print(s.path, flush=True)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "except Terminated:\n"
        "    sys.exit(7)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 7, proc.stderr
    assert not Path(proc.stdout.strip()).exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_run_isolated_probes_at_the_failure_point_only() -> None:
    calls: list[list[int]] = []
    bad = {3, 7}

    def oid(n: int) -> str:
        return f"{n:040x}"

    def run(batch: list[int]) -> Attempt[int, int]:
        calls.append(list(batch))
        for i, item in enumerate(batch):
            if item in bad:
                err = GitError("git failed", argv=["x"], returncode=128,
                               stderr=f"fatal: unable to read {oid(item)}\n".encode())
                return Attempt({b: b * 10 for b in batch[:i]}, i, err)
        return Attempt({b: b * 10 for b in batch}, len(batch), None)

    results, failures = run_isolated(list(range(10)), run)  # type: ignore[arg-type]
    assert results == {i: i * 10 for i in range(10) if i not in bad}
    assert failures == {3: Failure(oid(3), f"fatal: unable to read {oid(3)}"),
                        7: Failure(oid(7), f"fatal: unable to read {oid(7)}")}
    assert calls == [list(range(10)), [3], [4, 5, 6, 7, 8, 9], [7], [8, 9]]
    capped, lost = run_isolated(list(range(10)), run, max_failures=1)  # type: ignore[arg-type]
    assert capped == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50, 6: 60}
    assert sorted(lost) == [3, 7, 8, 9]
    assert lost[8] == Failure(None, "not isolated: more than 1 items of one stream failed")


def test_failure_of_names_the_object() -> None:
    oid = "b" * 40
    for text in (f"fatal: unable to read {oid}", f"fatal: could not fetch {oid} from promisor remote",
                 f"error: missing blob object '{oid}'", f"fatal: bad object {oid}"):
        err = GitError("git failed", argv=["x"], returncode=128, stderr=text.encode())
        assert failure_of(err) == Failure(oid, text)
    plain = GitError("git failed", argv=["x"], returncode=128, stderr=b"fatal: nope\n")
    assert failure_of(plain) == Failure(None, "fatal: nope")
    assert failure_of(plain).reason == "git error: fatal: nope"


def test_diff_tree_parsers_on_real_output(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    odd = "dir with space/naïve\nname.txt"
    c1 = repo.commit("c1", files={"a.txt": "1\n", odd: "x\n", "bin.dat": "\0\1"})
    c2 = repo.commit("c2", files={"a.txt": "1\n2\n", odd: None, "bin.dat": "\0\2"})
    raw = subprocess.run(["git", "diff-tree", "--stdin", "-r", "--raw", "-z", "--no-renames",
                          "--no-abbrev"], cwd=repo.path, input=f"{c2}\n{c2} {c1}\n".encode(),
                         capture_output=True, check=True).stdout
    zero = "0" * 40

    def blob(rev: str, path: str) -> str:
        return repo.git("rev-parse", f"{rev}:{path}")

    entries = [
        RawEntry("100644", "100644", blob(c1, "a.txt"), blob(c2, "a.txt"), "M", "a.txt"),
        RawEntry("100644", "100644", blob(c1, "bin.dat"), blob(c2, "bin.dat"), "M", "bin.dat"),
        RawEntry("100644", "000000", blob(c1, odd), zero, "D", odd),
    ]
    assert parse_raw_z(raw) == [(c2, entries), (c2, entries)]
    t1, t2 = repo.git("rev-parse", f"{c1}^{{tree}}"), repo.git("rev-parse", f"{c2}^{{tree}}")
    num = subprocess.run(["git", "diff-tree", "--stdin", "-r", "--numstat", "-z",
                          "--no-renames"], cwd=repo.path,
                         input=f"{t1} {t2}\n{c2}\n".encode(), capture_output=True,
                         check=True).stdout
    counts = [NumstatEntry(1, 0, "a.txt"), NumstatEntry(None, None, "bin.dat"),
              NumstatEntry(0, 1, odd)]
    assert parse_numstat_z(num) == [(f"{t1} {t2}", counts), (c2, counts)]
    with pytest.raises(ParseError):
        parse_numstat_z(f"{c2}\0garbage\0".encode())
    with pytest.raises(ParseError):
        parse_raw_z(f"{c2}\0:100644 garbage\0x\0".encode())
