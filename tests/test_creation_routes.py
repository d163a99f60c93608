"""Creation routes under another name (docs/guard.md "Creation routes"; section 3): a copy,
``stash branch``, ``update-ref``, a fetch or push refspec creates a branch as ``git switch -c``
does, and is judged with the same denial; renames, remote-tracking fetches and pushes to an
existing branch create none."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.glue import created_branches
from branchkeeper.policy.command import decide_command
from branchkeeper.shell.gitargv import Creation
from branchkeeper.shell.gitcreate import creations
from branchkeeper.shell.parse import git_invocations, parse_command
from tests.gitrepo import GitRepo

CWD = "/repo"


def _routes(cmd: str) -> list[tuple[str, str, str | None, bool, bool, str | None]]:
    """(name, route, start, force, dynamic, remote) of each creation of ``cmd``."""
    found: list[Creation] = [c for g in git_invocations(parse_command(cmd, cwd=CWD))
                             for c in creations(g)]
    return [(c.name, c.route, c.start, c.force, c.dynamic, c.remote) for c in found]


ROUTES = [
    ("git branch -c old new", [("new", "branch_copy", "old", False, False, None)]),
    ("git branch -c new", [("new", "branch_copy", None, False, False, None)]),
    ("git branch --copy old new", [("new", "branch_copy", "old", False, False, None)]),
    ("git branch -C old new", [("new", "branch_copy", "old", True, False, None)]),
    ("git branch --copy --force old new", [("new", "branch_copy", "old", True, False, None)]),
    ("git branch -m old new", []),
    ("git branch -M old new", []),
    ("git branch new", [("new", "branch_create", None, False, False, None)]),
    ("git stash branch new", [("new", "stash_branch", None, False, False, None)]),
    ("git stash branch new stash@{1}", [("new", "stash_branch", "stash@{1}", False, False, None)]),
    ("git stash list", []),
    ("git update-ref refs/heads/new HEAD", [("new", "update_ref_create", "HEAD", False, False,
                                             None)]),
    ("git update-ref -d refs/heads/new", []),
    ("git update-ref refs/heads/new " + "0" * 40, []),
    ("git update-ref refs/tags/v1 HEAD", []),
    ("git update-ref --stdin <<'EOF'\ncreate refs/heads/a HEAD\nupdate refs/heads/b HEAD\n"
     "delete refs/heads/c\nEOF", [("a", "update_ref_create", "HEAD", False, False, None),
                                 ("b", "update_ref_create", "HEAD", False, False, None)]),
    ("git fetch origin main:new", [("new", "fetch_create", None, False, False, None)]),
    ("git fetch origin +main:refs/heads/new", [("new", "fetch_create", None, False, False,
                                                None)]),
    ("git fetch origin main:heads/new", [("new", "fetch_create", None, False, False, None)]),
    ("git fetch origin main:refs/remotes/origin/new", []),
    ("git fetch origin v1:tags/v1", []),
    ("git fetch origin main", []),
    ("git fetch --dry-run origin main:new", []),
    ("git pull origin main:new", [("new", "fetch_create", None, False, False, None)]),
    ("git pull --rebase -X ours origin +main:refs/heads/new", [("new", "fetch_create", None,
                                                               False, False, None)]),
    ("git pull origin main", []),
    ("git pull origin main:refs/remotes/origin/new", []),
    ("git symbolic-ref HEAD refs/heads/new", [("new", "symref_head", None, False, False, None)]),
    ("git symbolic-ref HEAD", []),
    ("git symbolic-ref HEAD refs/tags/v", []),
    ("git symbolic-ref refs/heads/x refs/heads/new", []),
    ("git fetch origin 'refs/heads/*:refs/heads/*'", [("*", "fetch_create", None, False, True,
                                                       None)]),
    ("git push origin HEAD:refs/heads/new", [("new", "push_create", "HEAD", False, False,
                                              "origin")]),
    ("git push origin x:new", [("new", "push_create", "x", False, False, "origin")]),
    ("git push --repo=up x:new", [("new", "push_create", "x", False, False, "up")]),
    ("git push . main:new", [("new", "push_create", "main", False, False, None)]),
    ("git push origin main", []),
    ("git push origin :gone", []),
    ("git push --dry-run origin x:new", []),
    ("git push origin x:refs/tags/t", []),
]


@pytest.mark.parametrize(("cmd", "want"), ROUTES, ids=[c for c, _ in ROUTES])
def test_creation_routes_read(cmd: str, want: list[tuple[object, ...]]) -> None:
    assert _routes(cmd) == want


@pytest.fixture
def atcap(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone at the cap (2): ``a`` (pushed) and ``b`` (unpushed), each one commit."""
    _, work = remote_and_clone
    for name in ("a", "b"):
        work.switch(name, create=True, start="main", days_ago=1)
        work.commit(name, files={f"{name}.txt": name}, days_ago=1)
    work.git("push", "-q", "origin", "a")
    work.switch("main")
    work.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 2}\n")
    return work


NEW_ROUTES = ["git branch -c a new", "git branch -C a new", "git branch --copy new",
              "git stash branch new", "git update-ref refs/heads/new HEAD",
              "git fetch origin main:new", "git fetch origin +main:refs/heads/new",
              "git push origin HEAD:refs/heads/new", "git push origin a:new",
              "git push . main:new", "git pull origin main:new",
              "git pull --rebase origin main:new", "git pull origin +main:refs/heads/new",
              "git symbolic-ref HEAD refs/heads/new"]
HARMLESS = ["git branch -m b renamed", "git branch -M b renamed",
            "git fetch origin main:refs/remotes/origin/new", "git push origin a",
            "git push origin HEAD:refs/heads/a", "git push origin a:main",
            "git update-ref refs/heads/a a", "git fetch origin a:a", "git stash branch a",
            "git pull origin main:refs/remotes/origin/new", "git symbolic-ref HEAD refs/heads/a"]


def _verdict(cmd: str, repo: GitRepo) -> tuple[str, str | None, str]:
    d = decide_command(cmd, cwd=str(repo.path))
    return d.verdict.value, d.rule_id, d.text


def test_every_route_is_denied_at_the_cap_as_switch_c(atcap: GitRepo) -> None:
    want = _verdict("git switch -c new", atcap)
    assert want[:2] == ("deny", "R-BRANCH-WIP-CAP")
    assert "Creating new would exceed the WIP cap: 2 open work branches, cap 2" in want[2]
    for cmd in NEW_ROUTES:
        assert _verdict(cmd, atcap) == want, cmd


def test_harmless_contrasts_are_allowed_at_the_cap(atcap: GitRepo) -> None:
    for cmd in HARMLESS:
        assert _verdict(cmd, atcap) == ("allow", "", ""), cmd


def test_routes_are_allowed_under_the_cap(atcap: GitRepo) -> None:
    atcap.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 10}\n")
    for cmd in NEW_ROUTES:
        assert _verdict(cmd, atcap) == ("allow", "", ""), cmd


def test_update_ref_delete_is_judged_as_a_delete(atcap: GitRepo) -> None:
    """``-d`` deletes: the unpushed ``b`` is refused by the deletion rule, not the cap."""
    verdict, rule, _ = _verdict("git update-ref -d refs/heads/b", atcap)
    assert (verdict, rule) == ("deny", "R-GIT-BRANCH-FORCE-DELETE")


def test_push_counts_only_where_the_count_reads_remote_branches(atcap: GitRepo) -> None:
    """Without ``count_remote`` the cap counts local branches only: a push that creates a
    remote branch adds none, while a fetch into a new local branch still does; a push to a
    remote other than ``branches.remote`` is never counted."""
    atcap.git("remote", "add", "mirror", str(atcap.path.parent / "origin.git"))
    assert _verdict("git push mirror a:new", atcap) == ("allow", "", "")
    atcap.path.joinpath(".branchkeeper.yaml").write_text(
        "branches:\n  wip: {cap: 2, count_remote: false}\n")
    assert _verdict("git push origin a:new", atcap) == ("allow", "", "")
    assert _verdict("git push . main:new", atcap)[:2] == ("deny", "R-BRANCH-WIP-CAP")
    assert _verdict("git fetch origin main:new", atcap)[:2] == ("deny", "R-BRANCH-WIP-CAP")


def test_created_branches_records_local_creations_only(atcap: GitRepo) -> None:
    """After the command ran, the local branches it made are named (for the creator
    record); a branch pushed to the remote is not, nor one a fetch only moved."""
    cases = [("git branch -c a copied", ["copied"]), ("git fetch -q origin main:fetched",
                                                        ["fetched"]),
             ("git update-ref refs/heads/made HEAD", ["made"]),
             ("git push -q origin a:pushed", []), ("git push -q . main:selfpushed",
                                                   ["selfpushed"]),
             ("git fetch -q origin +a:fetched", [])]
    for cmd, want in cases:
        atcap.git(*cmd.split()[1:])
        assert created_branches(cmd, cwd=Path(atcap.path)) == want, cmd
