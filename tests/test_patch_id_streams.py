"""Commit patch-ids and whole-diff patch-ids come from the same streams (issue 20: one
combined patch-id pass, so the git process count stays flat and low): each answer is placed
on its own line even where a commit line and a range line of one tip print the same name."""

from __future__ import annotations

import subprocess
from pathlib import Path

from branchkeeper.analysis.commitfacts import DiffFacts
from branchkeeper.git.repo import patch_id_mode
from branchkeeper.git.run import processes_started
from branchkeeper.git.types import Oid
from branchkeeper.state.commit_cache import CommitCache
from tests.gitrepo import GitRepo


def _pid(repo: GitRepo, *revs: str) -> str:
    """patch-id of ``git diff REV...`` (one commit: against its parent), by git alone."""
    diff = subprocess.run(["git", "diff-tree", "-p", "-r", "--full-index", "--binary",
                           "--no-renames", *revs], cwd=repo.path, check=True,
                          capture_output=True).stdout
    out = subprocess.run(["git", "patch-id", f"--{patch_id_mode()}"], cwd=repo.path,
                         input=diff, check=True, capture_output=True).stdout.decode()
    return out.split()[0] if out else ""


def _facts(repo: GitRepo) -> DiffFacts:
    return DiffFacts(repo.path, CommitCache.load(None, pid_mode=patch_id_mode()),
                     budgeted=False, spent=lambda: False)


def test_commit_and_range_lines_of_one_tip_get_their_own_answers(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    patch_id_mode()
    base = repo.commit("base", files={"a.txt": "1\n2\n3\n"})
    one = repo.commit("one", files={"a.txt": "1\nTWO\n3\n"})
    tip = repo.commit("tip", files={"b.txt": "b\n"})
    other = repo.commit("other", files={"c.txt": "c\n"})
    before = processes_started()
    found, failed = _facts(repo).patch_ids_with_ranges(
        [Oid(one), Oid(tip), Oid(other)], [(Oid(base), Oid(tip)), (Oid(base), Oid(other))])
    assert processes_started() - before == 2  # one pipeline: diff-tree | patch-id
    assert failed == {}
    assert found == {("c", one): _pid(repo, one), ("c", tip): _pid(repo, tip),
                     ("c", other): _pid(repo, other), ("r", tip): _pid(repo, base, tip),
                     ("r", other): _pid(repo, base, other)}
    assert len(set(found.values())) == 5


def test_a_tip_whose_own_commit_has_no_patch_is_asked_again_apart(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    base = repo.commit("base", files={"run.sh": "echo hi\n"})
    repo.commit("edit", files={"run.sh": "echo hello\n"})
    tip = repo.commit("nothing", allow_empty=True)  # its own diff prints no patch
    patch_id_mode()
    before = processes_started()
    found, failed = _facts(repo).patch_ids_with_ranges([Oid(tip)], [(Oid(base), Oid(tip))])
    # which line answered is not known from the order alone: each is asked in its own stream
    assert processes_started() - before == 6
    assert failed == {}
    assert _pid(repo, tip) == ""
    assert found == {("c", tip): "", ("r", tip): _pid(repo, base, tip)}
    assert found[("r", tip)] != ""


def test_line_counts_set_aside_the_tips_a_known_missing_blob_blinds(tmp_path: Path) -> None:
    from branchkeeper.analysis.diffstreams import range_line_counts

    repo = GitRepo.init(tmp_path / "r")
    base = repo.commit("base", files={"a.txt": "a\n"})
    fine = repo.commit("fine", files={"f.txt": "1\n2\n"})
    repo.git("checkout", "-q", "-b", "other", base)
    lacking = repo.commit("lacking", files={"m.txt": "only here\n", "x.txt": "x\n"})
    blob = repo.rev(f"{lacking}:m.txt")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    (repo.path / "m.txt").unlink()
    pairs = [(Oid(base), Oid(fine)), (Oid(base), Oid(lacking))]
    before = processes_started()
    counts, failed = range_line_counts(repo.path, pairs, known_missing={blob})
    # one raw stream finds the tip needing the known blob, one count runs on the others:
    # nothing fails, nothing is looked up or rerun
    assert processes_started() - before == 2
    assert counts == {fine: 2}
    assert {t: f.reason for t, f in failed.items()} == {lacking: f"object missing ({blob})"}
    before = processes_started()
    assert range_line_counts(repo.path, pairs) == (counts, failed)
    assert processes_started() - before == 3  # a count that fails, a raw stream, a lookup
