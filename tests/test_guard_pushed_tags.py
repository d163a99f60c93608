"""Issue 17: a pushed tag leaves no trace in local refs, but a remote that is a directory on
this machine can be read without a network call. ``rm -rf .git`` and ``git tag -d`` are judged
with the tags that remote holds; a deletion that takes the remote with it (``rm -rf /``, the
directory holding both) finds nothing held there; a remote over the network is never asked.
Deleting a whole repository whose git directory holds only branchkeeper's rebuilt caches asks
no one; its journal or bundles are still asked (issue 19). Each case on two real repositories:
``tagged`` (the tag ``v1`` is the only local ref of its commit and was pushed) and ``unpushed``
(the same, never pushed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo

A = ("allow", "")
REPO, TAG, TAMPER = "R-RM-REPOSITORY", "R-GIT-TAG-DELETE", "R-BRANCHKEEPER-TAMPER"


def _tag(c: GitRepo, *, push: bool, name: str = "v1") -> None:
    c.git("switch", "-q", "--detach", "main")
    c.commit("release", files={"release.txt": c.path.name + "\n"})
    c.git("tag", name)
    c.git("switch", "-q", "main")
    if push:
        c.git("push", "-q", "origin", "refs/tags/" + name)


@pytest.fixture
def w(tmp_path: Path) -> Path:
    """``origin.git`` (bare, a path remote) with ``main``; clones ``tagged`` and ``unpushed``
    (module docstring); ``net``: a clone that pushed its tag ``net-v1``, then had its remote URL
    changed to a network one."""
    bare = GitRepo.init_bare(tmp_path / "origin.git")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("initial", files={"README.md": "hi\n"})
    seed.git("push", "-q", str(bare.path), "main")
    tagged, unpushed, net = (GitRepo.clone(bare.path, tmp_path / n) for n in ("tagged", "unpushed", "net"))
    _tag(unpushed, push=False)
    _tag(net, push=True, name="net-v1")
    net.git("remote", "set-url", "origin", "https://example.invalid/origin.git")
    _tag(tagged, push=True)
    return tmp_path


def _decide(w: Path, repo: str, command: str) -> tuple[str, str]:
    d = decide_command(command.replace("{W}", str(w)), cwd=str(w / repo))
    return d.verdict.value, d.rule_id


CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    # (command, decision in tagged/, decision in unpushed/)
    ("rm -rf .git", A, ("deny", REPO)),
    ("find . -delete", A, ("deny", REPO)),
    ("git tag -d v1", A, ("deny", TAG)),
    ("git tag --delete v1", A, ("deny", TAG)),
    # the remote goes too: nothing holds the commits any more, branches included
    ("rm -rf .git {W}/origin.git", ("deny", REPO), ("deny", REPO)),
    ("rm -rf {W}", ("deny", REPO), ("deny", REPO)),
    ("find {W} -exec rm -rf {} +", ("deny", REPO), ("deny", REPO)),
]


@pytest.mark.parametrize(("command", "tagged", "unpushed"), CASES, ids=[c for c, _, _ in CASES])
def test_pushed_tag_both_states(w: Path, command: str, tagged: tuple[str, str],
                                unpushed: tuple[str, str]) -> None:
    assert _decide(w, "tagged", command) == tagged
    assert _decide(w, "unpushed", command) == unpushed


def test_network_remote_is_never_asked(w: Path) -> None:
    """A remote over the network holds the tag, but the guard cannot see it: denied, with no
    git process beyond the local ones (``for-each-ref``, ``config``, ``rev-list``)."""
    before = processes_started()
    assert _decide(w, "net", "rm -rf .git") == ("deny", REPO)
    assert processes_started() - before == 3


def test_text_remote_goes_too(w: Path) -> None:
    t = f"{w}/tagged"
    d = decide_command(f"rm -rf .git {w}/origin.git", cwd=t)
    assert d.text == (
        f"[R-RM-REPOSITORY] `rm -rf .git {w}/origin.git` would delete the repository {t}/.git, and "
        "with it 2 commits that no remote-tracking ref contains, held by:\n"
        "  - refs/heads/main\n  - refs/tags/v1\n\n"
        "Push the work first (git push -u origin '<branch>' for each branch, git push origin --tags), "
        f"or keep everything in a bundle outside the repository (git -C {t} bundle create ../keep.bundle "
        "--all); then delete. Or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_records_in_the_git_directory_are_still_asked(w: Path) -> None:
    """Only rebuilt caches go freely with a repository: a journal, or branchkeeper's keys in the
    git config, are records (issue 19), and deleting them is asked."""
    t = w / "tagged"
    decide_command("rm -rf .git", cwd=str(t))  # the guard writes its config cache there
    assert (t / ".git" / "branchkeeper" / "config-cache.json").exists()
    assert _decide(w, "tagged", "rm -rf .git") == A
    (t / ".git" / "branchkeeper" / "journal.jsonl").write_text("{}\n")
    d = decide_command("rm -rf .git", cwd=str(t))
    assert d.text == (
        f"[R-BRANCHKEEPER-TAMPER] `rm -rf .git` would change branchkeeper's journal, bundles, archives "
        f"and state ({t}/.git/branchkeeper). An agent may not loosen or switch off the guard that keeps "
        "its work from being lost; a person decides.\n\n"
        "Ask a human to make this change (what a person runs outside the agent is never judged). A "
        "change that only adds protection can be written whole with the Write tool: the guard allows "
        "it when nothing weakens.")
    (t / ".git" / "branchkeeper" / "journal.jsonl").unlink()
    GitRepo(t).git("config", "branch.main.branchkeeper-parked", "waiting")
    assert _decide(w, "tagged", "rm -rf .git") == ("ask", TAMPER)


def test_tag_delete_counts_only_commits_no_remote_holds(w: Path) -> None:
    """``v1`` is pushed to the remote on this machine, ``v2`` (one commit on top of it) is not:
    the deny names ``v2`` alone, and counts its one commit, not the commit ``v1`` keeps on the
    remote; one ``rev-list`` more than a deletion where no tag is held there."""
    c = GitRepo(w / "tagged")
    c.git("switch", "-q", "--detach", "v1")
    c.commit("after release", files={"after.txt": "x\n"})
    c.git("tag", "v2")
    c.git("switch", "-q", "main")
    v2 = c.git("rev-parse", "v2").strip()
    before = processes_started()
    d = decide_command("git tag -d v1 v2", cwd=str(c.path))
    started = processes_started() - before
    assert d.text == (
        "[R-GIT-TAG-DELETE] `git tag -d v1 v2` would lose work: no branch, other tag or "
        "remote-tracking ref contains the commit of the tag below (1 commit would be reachable "
        f"from no ref):\n  - v2 at {v2[:10]}\n\n"
        "Keep the work first: push the tag (git push origin refs/tags/v2) or put its commit on "
        "a branch (git branch v2-keep refs/tags/v2); then delete it. Or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)
    before = processes_started()
    assert _decide(w, "unpushed", "git tag -d v1") == ("deny", TAG)
    assert started == processes_started() - before + 1


def test_every_rebuilt_file_a_sweep_writes_goes_freely(
        w: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After a sweep the git directory holds the inventory cache, the commit facts, the walk,
    the stored result, the last sweep's rows and the merges' scratch directory (``inner`` is
    checked by a merge into the squash commit of ``outer``): all rebuilt on demand
    (docs/architecture.md), so deleting the pushed repository whole asks no one."""
    t = w / "tagged"
    c = GitRepo(t)
    c.switch("inner", create=True)
    c.commit("inner", files={"a.txt": "a\n"})
    c.switch("outer", create=True)
    c.commit("outer", files={"b.txt": "b\n"})
    c.switch("main")
    c.squash_merge("outer")
    c.git("push", "-q", "origin", "main", "inner", "outer")
    assert main(["-C", str(t), "sweep"]) == 0
    capsys.readouterr()
    decide_command("rm -rf .git", cwd=str(t))
    assert sorted(os.listdir(t / ".git" / "branchkeeper")) == [
        "cache.json", "commits.bin", "config-cache.json", "last-sweep.json",
        "sweep-result.json", "tmp", "walk.bin"]
    assert _decide(w, "tagged", "rm -rf .git") == A
