"""The reference-transaction hook on real repositories (issue 15): every route that deletes or
rewinds a branch keeps exactly the losing updates (or refuses them in block mode), and undo
brings each branch back at its old tip."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.githookutil import (
    counting_program,
    hook_log,
    install,
    kept,
    kept_by_branch,
    operations,
    set_mode,
    starts,
    undo,
)
from tests.gitrepo import GitRepo


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone with ``main`` pushed and ``feat``: two commits no other ref holds."""
    _bare, clone = remote_and_clone
    clone.switch("feat", create=True)
    clone.commit("feat one", files={"one.txt": "1\n"})
    clone.commit("feat two", files={"two.txt": "2\n"})
    clone.switch("main")
    install(clone)
    return clone


def _branch_D(repo: GitRepo, tmp: Path) -> None:
    repo.git("branch", "-D", "feat")


def _branch_f(repo: GitRepo, tmp: Path) -> None:
    repo.git("branch", "-f", "feat", "main")


def _update_ref_d(repo: GitRepo, tmp: Path) -> None:
    repo.git("update-ref", "-d", "refs/heads/feat")


def _update_ref_d_old(repo: GitRepo, tmp: Path) -> None:
    repo.git("update-ref", "-d", "refs/heads/feat", repo.rev("feat"))


def _reset_hard(repo: GitRepo, tmp: Path) -> None:
    repo.switch("feat")
    repo.git("reset", "-q", "--hard", "main")
    repo.switch("main")


def _rebase_drop(repo: GitRepo, tmp: Path) -> None:
    # replays only "feat two" onto main: "feat one" is dropped
    repo.git("rebase", "-q", "--onto", "main", "feat~1", "feat")
    repo.switch("main")


def _push_dot(repo: GitRepo, tmp: Path) -> None:
    repo.git("push", "-q", ".", "+main:feat")


def _fetch_dot(repo: GitRepo, tmp: Path) -> None:
    repo.git("fetch", "-q", ".", "+refs/heads/main:refs/heads/feat")


def _python_script(repo: GitRepo, tmp: Path) -> None:
    res = subprocess.run([sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run("
                          "['git', 'branch', '-D', 'feat']).returncode)"],
                         cwd=repo.path, capture_output=True, text=True)
    if res.returncode != 0:
        raise AssertionError(f"the script failed ({res.returncode}):\n{res.stderr}")


def _second_worktree(repo: GitRepo, tmp: Path) -> None:
    other = repo.worktree_add(tmp / "second", "-b", "second")
    other.git("branch", "-D", "feat")


def _packed(repo: GitRepo, tmp: Path) -> None:
    repo.git("pack-refs", "--all")
    assert not (repo.path / ".git" / "refs" / "heads" / "feat").exists()
    repo.git("branch", "-D", "feat")


ROUTES: dict[str, Callable[[GitRepo, Path], None]] = {
    "branch -D": _branch_D, "branch -f": _branch_f, "update-ref -d": _update_ref_d,
    "update-ref -d OLD": _update_ref_d_old, "reset --hard": _reset_hard,
    "rebase dropping a commit": _rebase_drop, "push . +x:y": _push_dot,
    "fetch . +a:b": _fetch_dot, "python subprocess": _python_script,
    "second worktree": _second_worktree, "packed refs": _packed,
}
#: What each route leaves the branch at: None (deleted), "main", or "rebased".
AFTER = {"branch -D": None, "branch -f": "main", "update-ref -d": None,
         "update-ref -d OLD": None, "reset --hard": "main", "rebase dropping a commit": "rebased",
         "push . +x:y": "main", "fetch . +a:b": "main", "python subprocess": None,
         "second worktree": None, "packed refs": None}


@pytest.mark.parametrize("route", list(ROUTES))
def test_keep_mode_keeps_the_old_tip_and_undo_restores_it(repo: GitRepo, tmp_path: Path,
                                                          route: str) -> None:
    old = repo.rev("feat")
    ROUTES[route](repo, tmp_path)
    now = repo.rev("feat") if repo.has_ref("refs/heads/feat") else None
    if AFTER[route] is None:
        assert now is None
    elif AFTER[route] == "main":
        assert now == repo.rev("main")
    else:
        assert now is not None and now != old
    assert kept_by_branch(repo) == {"feat": old}
    [op] = operations(repo)
    assert (op["op"], op["status"], op["items"], op["bundle"]) == ("git-hook-keep", "done", 1, None)
    assert op["results"] == {"refs/heads/feat": "deleted" if now is None else "moved"}
    assert undo(repo, op["id"]) == 0
    assert repo.rev("feat") == old
    assert hook_log(repo) == []


@pytest.mark.parametrize("route", list(ROUTES))
def test_block_mode_refuses_and_changes_nothing(repo: GitRepo, tmp_path: Path,
                                                route: str) -> None:
    set_mode(repo, "block")
    old = repo.rev("feat")
    with pytest.raises(AssertionError) as failed:
        ROUTES[route](repo, tmp_path)
    lost = 1 if route == "rebase dropping a commit" else 2
    what = ("delete branch feat" if AFTER[route] is None else
            f"move branch feat to {(repo.rev('main') if AFTER[route] == 'main' else '')[:10]}")
    if route == "rebase dropping a commit":
        assert "branchkeeper: refusing to move branch feat to " in str(failed.value)
    else:
        line = (f"branchkeeper: refusing to {what}: {lost} commits would be lost (in no other "
                "branch, tag, remote-tracking or refs/branchkeeper ref); keep them first: "
                "git push -u origin feat, or branchkeeper park --reason '<why>' -- feat, or "
                "branchkeeper delete --allow-unproven --reason '<why>' -- feat (saved in a bundle)")
        assert line in str(failed.value).splitlines()
    assert repo.rev("feat") == old
    assert kept(repo) == {}
    assert operations(repo) == []


def test_off_mode_neither_keeps_nor_refuses(repo: GitRepo) -> None:
    set_mode(repo, "off")
    repo.git("branch", "-D", "feat")
    assert kept(repo) == {} and operations(repo) == []


def test_many_deletions_in_one_transaction_are_one_operation(repo: GitRepo) -> None:
    names = [f"agent-{i:02d}" for i in range(20)]
    tree = repo.rev("main^{tree}")
    tips = {n: repo.git("commit-tree", "-p", "main", "-m", f"work {n}", tree) for n in names}
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo.path, check=True, text=True,
                   input="".join(f"create refs/heads/{n} {t}\n" for n, t in tips.items()))
    for packed in (False, True):
        if packed:
            repo.git("pack-refs", "--all")
        stdin = "".join(f"delete refs/heads/{n}\n" for n in names)
        subprocess.run(["git", "update-ref", "--stdin"], input=stdin, text=True, cwd=repo.path,
                       check=True)
        assert kept_by_branch(repo) == tips
        op = operations(repo)[0]
        assert (op["op"], op["items"], set(op["results"].values())) == (
            "git-hook-keep", 20, {"deleted"})
        assert undo(repo, op["id"]) == 0
        assert {n: repo.rev(n) for n in names} == tips
        repo.git("update-ref", "-d", "refs/branchkeeper/kept", check=False)
        for ref in kept(repo):
            repo.git("update-ref", "-d", ref)


def test_deleting_a_branch_and_its_only_holder_together_keeps_both(repo: GitRepo) -> None:
    repo.git("branch", "holder", "feat")
    repo.git("branch", "part", "feat~1")
    repo.git("branch", "-D", "part")  # held by feat and holder: nothing kept
    assert kept(repo) == {}
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo.path, check=True, text=True,
                   input="delete refs/heads/feat\ndelete refs/heads/holder\n")
    assert sorted(ref.split("/")[3] for ref in kept(repo)) == ["feat", "holder"]


def test_ordinary_updates_start_no_branchkeeper(repo: GitRepo, tmp_path: Path) -> None:
    program, log = counting_program(tmp_path)
    install(repo, program)
    repo.switch("feat")
    repo.commit("three", files={"three.txt": "3\n"})  # a commit: fast-forward
    repo.git("commit", "-q", "--amend", "-m", "three, reworded")  # same patch: not losing
    repo.git("push", "-q", "-u", "origin", "feat")  # remote-tracking refs only
    repo.git("fetch", "-q", "origin")
    repo.switch("main")
    repo.git("merge", "-q", "--ff-only", "feat")  # a fast-forward of main
    repo.git("branch", "new-one")  # a creation
    assert starts(log) == ["git-hook reference-transaction prepared",
                           "git-hook reference-transaction committed"]  # the amend only
    assert kept(repo) == {} and operations(repo) == []


def test_non_losing_deletions_and_rewinds_keep_nothing(repo: GitRepo) -> None:
    repo.git("branch", "copy", "feat")
    repo.git("branch", "-D", "copy")  # feat holds it
    repo.git("branch", "-m", "feat", "renamed")  # git deletes feat, then writes renamed
    repo.switch("renamed")
    repo.commit("main moves meanwhile", files={"other.txt": "x\n"})
    repo.switch("main")
    repo.commit("main moves", files={"main.txt": "m\n"})
    repo.git("rebase", "-q", "main", "renamed")  # every commit replayed: patch-equivalent
    repo.switch("main")
    repo.git("tag", "v1", "renamed")
    repo.git("branch", "-D", "renamed")  # the tag holds it
    assert kept(repo) == {} and operations(repo) == []
    assert hook_log(repo) == []
