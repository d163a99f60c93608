"""park and park --clear (first document, section 5), through the CLI, on real repositories."""

from __future__ import annotations

import json
import subprocess

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo


def _sweep(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    capsys.readouterr()
    assert main(["-C", str(repo.path), "sweep", "--json"]) == 0
    return {b["name"]: b for b in json.loads(capsys.readouterr().out)["branches"]}


def test_park_then_clear_pushes_and_exempts_dormancy(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    w.git("config", "user.name", "Pat Parker")
    w.switch("slow-task", create=True, days_ago=50)
    w.commit("work", files={"s.txt": "s\n"}, days_ago=50)
    w.git("push", "-q", "-u", "origin", "slow-task")
    w.switch("main")
    before = _sweep(w, capsys)["slow-task"]
    assert (before["state"], before["stage"]) == ("dormant", "block")
    tip = w.rev("slow-task")

    capsys.readouterr()
    assert main(["-C", str(w.path), "park", "slow-task", "--reason", "waiting for the API team",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    new = w.rev("slow-task")
    assert result == {"name": "slow-task", "action": "park", "old": tip, "new": new,
                      "journal_id": result["journal_id"], "pushed": True, "push_message": "",
                      "restore": f"git update-ref refs/heads/slow-task {tip} {new}"}
    # an empty commit: same tree as its parent, trailers in the message
    assert w.rev("slow-task^{tree}") == w.rev(f"{tip}^{{tree}}")
    assert w.git("log", "-1", "--format=%B", "slow-task") == (
        "Park slow-task\n\nParked-Reason: waiting for the API team\nParked-By: Pat Parker")
    assert bare.git("rev-parse", "refs/heads/slow-task") == new
    after = _sweep(w, capsys)["slow-task"]
    assert (after["state"], after["stage"], after["ahead"]) == ("parked", None, 1)
    assert after["parked"]["reason"] == "waiting for the API team"
    assert after["parked"]["by"] == "Pat Parker"
    # every command's reason says "parked" once (it read "parked: parked: ..." for sweep)
    assert {k: v["reason"] for k, v in after["actions"].items() if v is not None} == {
        "sweep_clean": "parked: waiting for the API team",
        "prune": "parked: waiting for the API team",
        "delete": "no proof holds: the branch has commits that are not on the base",
        "delete_remote": "no proof holds: the branch has commits that are not on the base"}

    capsys.readouterr()
    assert main(["-C", str(w.path), "park", "--clear", "slow-task", "--no-push"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("unparked slow-task: ")
    assert w.git("log", "-1", "--format=%(trailers:only=true)", "slow-task") == "Unparked: Pat Parker"
    cleared = _sweep(w, capsys)["slow-task"]
    assert (cleared["state"], cleared["parked"], cleared["ahead"]) == ("live", None, 1)


def test_park_undo_moves_the_branch_back(remote_and_clone: tuple[GitRepo, GitRepo],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.switch("t", create=True)
    tip = w.commit("t", files={"t": "t\n"})
    w.switch("main")
    assert main(["-C", str(w.path), "park", "t", "--reason", "r", "--by", "me"]) == 0
    assert w.rev("t") != tip
    capsys.readouterr()
    assert main(["-C", str(w.path), "undo"]) == 0
    assert w.rev("t") == tip


def test_park_refuses_bad_input(remote_and_clone: tuple[GitRepo, GitRepo],
                                capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.git("branch", "-q", "x")
    capsys.readouterr()
    assert main(["-C", str(w.path), "park", "x"]) == 2  # a usage error (README)
    assert capsys.readouterr().err == (
        "branchkeeper: error: park needs --reason TEXT (why the branch waits)\n")
    assert main(["-C", str(w.path), "park", "--clear", "x", "--reason", "r"]) == 2
    assert capsys.readouterr().err == "branchkeeper: error: --clear takes no --reason\n"
    assert main(["-C", str(w.path), "park", "x", "--reason", "two\nlines"]) == 4
    assert capsys.readouterr().err == (
        "branchkeeper: error: --reason must be one line without control characters\n")
    assert main(["-C", str(w.path), "park", "--reason", "r", "--", "-nope"]) == 4
    assert capsys.readouterr().err == "branchkeeper: error: no branch '-nope' here or on origin\n"


def test_park_a_branch_named_like_an_option(remote_and_clone: tuple[GitRepo, GitRepo],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.git("update-ref", "refs/heads/-x", w.rev("main"))
    assert main(["-C", str(w.path), "park", "--no-push", "--reason", "odd name", "--", "-x"]) == 0
    assert w.git("log", "-1", "--format=%s", "refs/heads/-x") == "Park -x"


def test_park_refuses_the_default_branch_and_protected_names(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    before = bare.git("rev-parse", "main")
    capsys.readouterr()
    assert main(["-C", str(w.path), "park", "main", "--reason", "x"]) == 5
    assert capsys.readouterr().err == (
        "branchkeeper: error: main cannot be parked: it is the default branch; only work "
        "branches are\n")
    w.git("branch", "develop")
    assert main(["-C", str(w.path), "park", "develop", "--reason", "x"]) == 5
    assert "it is a protected name" in capsys.readouterr().err
    assert bare.git("rev-parse", "main") == before


def test_clear_refuses_a_branch_that_is_not_parked(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.git("branch", "idle")
    tip = w.rev("idle")
    capsys.readouterr()
    assert main(["-C", str(w.path), "park", "--clear", "idle"]) == 5
    assert capsys.readouterr().err == (
        "branchkeeper: error: idle is not parked (its tip carries no Parked-Reason trailer); "
        "nothing to clear\n")
    assert w.rev("idle") == tip


def test_undo_of_a_pushed_park_prints_the_remote_rewind(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    w.switch("task", create=True)
    tip = w.commit("t", files={"t": "t\n"})
    w.git("push", "-q", "-u", "origin", "task")
    w.switch("main")
    assert main(["-C", str(w.path), "park", "task", "--reason", "r", "--by", "me"]) == 0
    new = w.rev("task")
    assert bare.git("rev-parse", "task") == new
    capsys.readouterr()
    assert main(["-C", str(w.path), "undo"]) == 0
    out = capsys.readouterr().out
    rewind = (f"git push --force-with-lease=refs/heads/task:{new} origin "
              f"{tip}:refs/heads/task")
    assert rewind in out
    assert w.rev("task") == tip
    # the printed command really rewinds the remote, and only the empty marker goes
    subprocess.run(rewind, shell=True, cwd=w.path, check=True, capture_output=True)
    assert bare.git("rev-parse", "task") == tip


def test_a_local_park_marker_alone_is_not_lost_work(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """Only the marker is unpushed: the work under it is on the default branch or on the
    branch's own remote copy, so no LOST WORK RISK is raised for the marker."""
    _, w = remote_and_clone
    w.git("branch", "waiting")
    w.switch("pushed-wait", create=True)
    w.commit("work", files={"w.txt": "w\n"})
    w.git("push", "-q", "-u", "origin", "pushed-wait")
    w.switch("main")
    for name in ("waiting", "pushed-wait"):
        assert main(["-C", str(w.path), "park", "--no-push", "--reason", "r", "--by", "me",
                     "--", name]) == 0
    recs = _sweep(w, capsys)
    assert (recs["waiting"]["state"], recs["waiting"]["containment"],
            recs["waiting"]["unpushed"]) == ("parked", "in_default", 0)
    assert (recs["pushed-wait"]["state"], recs["pushed-wait"]["containment"],
            recs["pushed-wait"]["unpushed"]) == ("parked", "own_remote_only", 0)
