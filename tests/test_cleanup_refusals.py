"""Refusals that no proof overrides (issue 3, section 2), field case C05, the stack rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.analysis.refusal_facts import CheckedOut, RefusalContext
from branchkeeper.policy.refusals import RefusalKind, refuse_batch
from tests.cleanuputil import branches, cli_json
from tests.gitrepo import GitRepo


def test_refuse_batch_stack_fixed_point() -> None:
    ctx = RefusalContext(default_name="main", protected_names=frozenset({"main"}),
                         integration_lines=("release/*",), exempt=("users/*",),
                         checked_out={"wt": CheckedOut("/w", False)},
                         dependents={"base": ("mid",), "mid": ("top",)})
    assert refuse_batch(["base", "mid", "top"], ctx) == {}
    got = refuse_batch(["base", "mid"], ctx)
    assert {k: v.kind for k, v in got.items()} == {"base": RefusalKind.STACK,
                                                   "mid": RefusalKind.STACK}
    assert got["mid"].reason == "the upstream of surviving branch top (a stack)"
    got = refuse_batch(["release/1", "users/me/x", "main", "wt"], ctx)
    assert {k: v.kind for k, v in got.items()} == {
        "release/1": RefusalKind.INTEGRATION_LINE, "users/me/x": RefusalKind.EXEMPT,
        "main": RefusalKind.DEFAULT, "wt": RefusalKind.CHECKED_OUT}
    assert refuse_batch(["wt"], ctx, ignore_checked_out=frozenset({"wt"})) == {}


def test_c05_two_remotes_and_every_refusal(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    upstream = GitRepo.init_bare(tmp_path / "upstream.git")
    fork = GitRepo.init_bare(tmp_path / "fork.git")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("initial", files={"README": "r\n"}, days_ago=30)
    seed.git("push", "-q", str(fork.path), "main")
    seed.commit("upstream moves", files={"u": "u\n"}, days_ago=20)
    seed.git("branch", "trunk-next")
    seed.git("push", "-q", str(upstream.path), "main", "trunk-next")
    upstream.git("symbolic-ref", "HEAD", "refs/heads/trunk-next")
    work = GitRepo.clone(fork.path, tmp_path / "work")
    work.git("remote", "add", "upstream", str(upstream.path))
    work.git("fetch", "-q", "upstream")
    work.git("remote", "set-head", "upstream", "--auto")
    base = work.rev("main")
    # Every one of these is an ancestor of main (proven), yet each is refused.
    for name in ("trunk-next", "master", "develop", "release/2", "users/me/x", "in-wt",
                 "stack-base", "stack-top"):
        work.branch(name, base)
    work.git("config", "branch.stack-top.remote", ".")
    work.git("config", "branch.stack-top.merge", "refs/heads/stack-base")
    work.git("worktree", "add", "-q", str(tmp_path / "wt"), "in-wt")
    work.commit("local work", files={"l": "l\n"}, days_ago=1)
    work.git("push", "-q", "origin", "main")
    work.git("switch", "-q", "-c", "current")
    (work.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*"]\n  exempt: ["users/*"]\n')
    names = ["main", "trunk-next", "master", "develop", "release/2", "users/me/x", "in-wt",
             "current", "stack-base"]
    code, doc = cli_json(capsys, work, "delete", *names)
    assert code == 5
    assert {i["name"]: i["reason"] for i in doc["branches"]} == {
        "main": "refused: the default branch",
        "trunk-next": "refused: the default branch of a remote",
        "master": "refused: a protected name (branches.protected_names)",
        "develop": "refused: a protected name (branches.protected_names)",
        "release/2": "refused: an integration line",
        "users/me/x": "refused: exempt (branches.exempt)",
        "in-wt": f"refused: checked out in worktree {tmp_path / 'wt'}",
        "current": "refused: the current branch",
        "stack-base": "refused: the upstream of surviving branch stack-top (a stack)",
    }
    # The sweep takes the clean proven worktree and the whole stack, never the refused ones.
    code, doc = cli_json(capsys, work, "sweep", "--clean")
    assert code == 0
    assert sorted(i["name"] for i in doc["branches"] if i["action"] == "deleted") == [
        "in-wt", "stack-base", "stack-top"]
    assert not (tmp_path / "wt").exists()
    code, doc = cli_json(capsys, work, "prune", "--no-fetch")
    assert code == 0
    assert [i["name"] for i in doc["branches"] if i["action"] == "deleted"] == []
    assert branches(work) == ["current", "develop", "main", "master", "release/2",
                              "trunk-next", "users/me/x"]
