"""The merge check's pre-screen (issue 20): a candidate that no merge can verify is told from
blob ids alone and never merged; every other candidate is left for the merge to decide."""

from __future__ import annotations

from pathlib import Path

from branchkeeper.analysis.landing import may_reproduce
from tests.gitrepo import GitRepo

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def _edit(text: str, n: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[n - 1] = new + "\n"
    return "".join(rows)


def _raw(repo: GitRepo, *revs: str) -> list[tuple[bytes, bytes]]:
    """``(meta, path)`` of ``diff-tree --raw -z`` between the revisions (one: its parent)."""
    out = repo.git("diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev",
                   *(revs if len(revs) == 2 else (f"{revs[0]}~1", revs[0])))
    tokens = out.encode().split(b"\0")[:-1]
    return list(zip(tokens[0::2], tokens[1::2], strict=True))


def test_may_reproduce_decides_only_where_certain(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    fork = repo.commit("base", files={"x.txt": LINES, "y.txt": LINES}, days_ago=9)
    repo.switch("feature", create=True)
    tip = repo.commit("edit", files={"x.txt": _edit(LINES, 3, "three"),
                                     "y.txt": _edit(LINES, 5, "five")}, days_ago=8)
    repo.switch("main")
    # the same paths, other content, on a base that had not moved there: cannot be the landing
    other = repo.commit("other", files={"x.txt": _edit(LINES, 15, "fifteen"),
                                        "y.txt": _edit(LINES, 17, "seventeen")}, days_ago=7)
    # the branch landed as a squash on the moved base: both paths changed on both sides
    repo.git("merge", "-q", "--squash", "feature")
    squash = repo.commit("squash", days_ago=6)
    # a base that already has the branch's y.txt: a commit changing it again cannot be it
    repo.switch("line", create=True, start=fork)
    repo.commit("same y", files={"x.txt": _edit(LINES, 12, "twelve"),
                                 "y.txt": _edit(LINES, 5, "five")}, days_ago=6)
    again = repo.commit("again", files={"x.txt": LINES, "y.txt": LINES}, days_ago=5)
    repo.switch("main")
    branch = _raw(repo, fork, tip)
    assert not may_reproduce(dict((p, m) for m, p in _raw(repo, other)), branch)
    assert may_reproduce(dict((p, m) for m, p in _raw(repo, squash)), branch)
    assert not may_reproduce(dict((p, m) for m, p in _raw(repo, again)), branch)
    # a new path (no version at the merge base) is never decided here: a rename's target
    repo.switch("adds", create=True, start=fork)
    added = _raw(repo, fork, repo.commit("add", files={"z.txt": "z\n"}, days_ago=4))
    repo.switch("main")
    other_z = repo.commit("z elsewhere", files={"z.txt": "other\n"}, days_ago=3)
    assert may_reproduce(dict((p, m) for m, p in _raw(repo, other_z)), added)
    # different paths after all (a hash collision): nothing is decided
    assert may_reproduce({b"elsewhere.txt": _raw(repo, other_z)[0][0]}, branch)
