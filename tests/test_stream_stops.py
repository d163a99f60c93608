"""A git stream of the cold pass is bounded by silence, never by a fixed time (issue 20): one
that stops answering (no output, no CPU time) is ended and leaves its tips ``unknown`` naming
why, never preserved and never cached; one that keeps answering runs as long as it takes.

The slow streams are real: a ``git`` on PATH that runs the real git, except that the stream
under test is replaced by a process that waits without output or CPU time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from branchkeeper.analysis import diffstreams
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.git import mergetree
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import GitError, processes_started, run_git_pipeline
from branchkeeper.model.config import Config
from branchkeeper.model.records import MissingChange, Supersession
from tests.gitrepo import NOW, GitRepo
from tests.test_verdict import c11_conflict

REAL_GIT = shutil.which("git")


def _stall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *words: str) -> None:
    """Put a ``git`` first on PATH that waits silently instead of running any git command
    holding one of the arguments ``words``, and bound the streams by 0.5 s of silence."""
    assert REAL_GIT is not None
    bindir = tmp_path / "stall-bin"
    bindir.mkdir()
    wrapper = bindir / "git"
    wrapper.write_text("#!/bin/sh\n"
                       'for a in "$@"; do case "$a" in '
                       f'{"|".join(words)}) exec sleep 60;; esac; done\n'
                       f'exec {REAL_GIT} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{Path(REAL_GIT).parent}")
    monkeypatch.setattr(diffstreams, "IDLE_S", 0.5)
    monkeypatch.setattr(mergetree, "IDLE_S", 0.5)


def _world(w: GitRepo) -> None:
    w.commit("base", files={"shared.txt": "one\ntwo\n"}, days_ago=30)
    w.switch("squashed", create=True, days_ago=29)
    w.commit("sq", files={"s.txt": "s\n"}, days_ago=29)
    w.switch("rebased", create=True, start="main", days_ago=28)
    w.commit("rb", files={"r.txt": "r\n"}, days_ago=28)
    w.switch("live", create=True, start="main", days_ago=2)
    w.commit("lv", files={"l.txt": "l\n"}, days_ago=2)
    w.switch("main")
    w.squash_merge("squashed", days_ago=27)
    w.rebase_merge("rebased", days_ago=26)
    # main changes both files again: only a proof by patch-id or by merge can hold
    w.commit("later", files={"s.txt": "s2\n", "r.txt": "r2\n"}, days_ago=25)
    w.git("push", "-q", "origin", "main")


def _states(w: GitRepo) -> dict[str, tuple[str, str]]:
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW)
    return {r.name: (r.state.value, r.reason) for r in inv.records}


def test_a_patch_id_stream_that_stops_answering_leaves_its_tips_unknown_uncached(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    _world(w)
    with monkeypatch.context() as m:
        _stall(tmp_path, m, "patch-id", "merge-tree")  # else the merge check proves them
        stalled = _states(w)
    why = ("git error: git stopped answering: no output and no CPU time for 0.5 s "
           "(diff-tree)")
    assert stalled == {"live": ("live", ""), "main": ("default", ""),
                       "rebased": ("unknown", why), "squashed": ("unknown", why)}
    # not cached: the next sweep judges them
    copy = "rebase-merged into origin/main: every commit is on it as a copy (the tip's copy is {})"
    assert _states(w) == {
        "live": ("live", ""), "main": ("default", ""),
        "rebased": ("patch_equivalent", copy.format(w.rev("main~1")[:10])),
        "squashed": ("patch_equivalent", copy.format(w.rev("main~2")[:10]))}


def test_a_path_stream_that_stops_answering_leaves_every_unmerged_tip_unknown(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    _world(w)
    with monkeypatch.context() as m:
        _stall(tmp_path, m, "--raw")
        stalled = _states(w)
    # the landing candidates' paths are not known: no unmerged tip is judged, live included
    why = ("git error: git stopped answering: no output and no CPU time for 0.5 s "
           "(diff-tree)")
    assert stalled == {"live": ("unknown", why), "main": ("default", ""),
                       "rebased": ("unknown", why), "squashed": ("unknown", why)}
    assert {n: s for n, (s, _) in _states(w).items()} == {
        "live": "live", "main": "default", "rebased": "patch_equivalent",
        "squashed": "patch_equivalent"}


def test_a_pipeline_that_keeps_answering_runs_past_its_idle_bound_one_that_is_silent_ends(
        tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("c", files={"a": "1\n"})
    drip = ["-c", "alias.drip=!for i in 1 2 3 4 5 6; do echo x; sleep 0.3; done", "drip"]
    cat = ["-c", "alias.pass=!cat", "pass"]
    before = processes_started()
    out = run_git_pipeline(drip, cat, cwd=repo.path, stdin=b"", idle=1.0)
    assert (out.returncode, out.stdout) == (0, b"x\n" * 6)  # 1.8 s in all, never 1 s silent
    assert processes_started() - before == 2
    pause = ["-c", "alias.pause=!echo first; exec sleep 30", "pause"]
    with pytest.raises(GitError) as caught:
        run_git_pipeline(pause, cat, cwd=repo.path, stdin=b"", idle=0.5)
    assert caught.value.returncode is None
    assert caught.value.stdout == b"first\n"  # what was answered stands
    assert str(caught.value).splitlines()[0] == (
        "git stopped answering: no output and no CPU time for 0.5 s: git -c "
        "alias.pause=!echo first; exec sleep 30 pause | git -c alias.pass=!cat pass")


def test_line_counts_of_a_stream_that_stops_answering_are_left_out_and_not_cached(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    _world(w)

    def lines() -> dict[str, int | None]:
        inv = build_inventory(repo_facts(w.path), Config(), now=NOW)
        return {r.name: r.lines for r in inv.records if r.state.value == "live"}

    with monkeypatch.context() as m:
        _stall(tmp_path, m, "--numstat")
        assert lines() == {"live": None}
    assert lines() == {"live": 1}


def test_c11_conflict_counts_of_a_stream_that_stops_answering_fall_back_and_are_not_cached(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The conflicted merge's patch (whole files as context) is a cold-pass stream like the
    others, bounded by silence (here 0.5 s, not git's fixed 60 s): ended, it leaves the branch
    superseded by its numstat counts (conflict markers included), which are not cached; the
    next sweep counts the branch's own lines."""
    _, w = remote_and_clone
    ids = c11_conflict(w)

    def superseded() -> Supersession | None:
        inv = build_inventory(repo_facts(w.path), Config(), now=NOW)
        return next(r for r in inv.records if r.name == "B1").superseded

    def landed(lib_added: int) -> Supersession:
        return Supersession(holder=ids["B2"], base="refs/remotes/origin/main",
                            landed_as=ids["S"], conflicted=True, holder_names=("B2",),
                            changes=(MissingChange("docs.md", 1, 0),
                                     MissingChange("lib.py", lib_added, 0)))

    with monkeypatch.context() as m:
        _stall(tmp_path, m, "-U1000000000")
        assert superseded() == landed(7)  # 2 lines of its own and 5 of markers
    assert superseded() == landed(2)
