"""``delete --remote`` against a local bare remote: proven, unproven, moved on the server, undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cleanuputil import branches, cli, cli_json, norm, short
from tests.gitrepo import GitRepo


def _merged_and_pushed(w: GitRepo, name: str, days: int) -> None:
    w.switch(name, create=True)
    w.commit(name, files={f"{name}.txt": name}, days_ago=days)
    w.git("push", "-q", "-u", "origin", name)
    w.switch("main")
    w.merge(name, days_ago=days - 1)
    w.git("push", "-q", "origin", "main")


def _remote_heads(bare: GitRepo) -> list[str]:
    return bare.git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads").split("\n")


def test_remote_delete_proven_then_undo(remote_and_clone: tuple[GitRepo, GitRepo],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    _merged_and_pushed(w, "done", 9)
    tip = w.rev("done")
    code, out, err = cli(capsys, w, "delete", "--remote", "done")
    assert (code, err) == (0, "")
    assert norm(out) == (
        "delete: 1 branch (default branch main)\n"
        f"  deleted        done  {tip[:10]}  merged into origin/main: every commit is on it\n"
        "      restore: git fetch BUNDLE refs/heads/done:refs/heads/done\n"
        "remote origin:\n"
        f"  deleted        origin/done  {tip[:10]}  merged into origin/main: every commit is on "
        "it\n"
        f"      restore: git push origin {tip}:refs/heads/done\n"
        "bundle: BUNDLE (compact, N bytes, verified)\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n"
    )
    assert _remote_heads(bare) == ["main"]
    assert not w.has_ref("refs/remotes/origin/done")
    code, out, _ = cli(capsys, w, "undo", "--json")
    assert code == 0
    # The local branch and its remote copy are both refs/heads/done: each keeps its own result.
    items = [(i["ref"], i["remote"], i["outcome"]) for i in json.loads(out)["items"]]
    assert items == [("refs/heads/done", None, "restored"),
                     ("refs/heads/done", "origin", "push")]
    assert w.rev("done") == tip


def test_remote_unproven_refuses_batch(remote_and_clone: tuple[GitRepo, GitRepo],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    _merged_and_pushed(w, "done", 9)
    w.switch("wip", create=True)
    w.commit("wip", files={"w.txt": "w"}, days_ago=2)
    w.git("push", "-q", "-u", "origin", "wip")
    w.switch("main")
    # Local "wip2" proven (reset onto main) while its remote copy is not.
    w.git("branch", "wip2", "main")
    w.git("push", "-q", "origin", "wip:wip2")
    w.git("fetch", "-q")
    w.commit("ahead", files={"z": "z"}, days_ago=1)
    code, doc = cli_json(capsys, w, "delete", "--remote", "done", "wip2", "main")
    assert code == 5
    assert [(i["name"], i["action"]) for i in doc["remote"]] == [
        ("done", "delete"), ("wip2", "SKIP_UNPROVEN"), ("main", "refused")]
    assert doc["refused"] == "3 of 6 names cannot be deleted; nothing was deleted"
    assert _remote_heads(bare) == ["done", "main", "wip", "wip2"]
    assert branches(w) == ["done", "main", "wip", "wip2"]


def test_remote_moved_on_server_left_alone(remote_and_clone: tuple[GitRepo, GitRepo],
                                           tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    _merged_and_pushed(w, "a", 9)
    _merged_and_pushed(w, "b", 7)
    other = GitRepo.clone(bare.path, tmp_path / "other")
    other.switch("b")
    other.commit("late work", files={"late.txt": "late"}, days_ago=0)
    other.git("push", "-q", "origin", "b")
    late = other.rev("b")
    code, doc = cli_json(capsys, w, "delete", "--remote", "a", "b")
    assert code == 5
    assert [(i["name"], i["action"], i["reason"]) for i in doc["remote"]] == [
        ("a", "deleted", "merged into origin/main: every commit is on it"),
        ("b", "raced", f"moved on the server to {late}; left alone")]
    assert bare.rev("refs/heads/b") == late
    assert _remote_heads(bare) == ["b", "main"]
    code, out, _ = cli(capsys, w, "undo")
    assert code == 0 and "git push origin" in out and short(w, "b") == doc["branches"][1]["tip"][:10]


def test_undo_of_a_remote_only_delete_survives_gc(remote_and_clone: tuple[GitRepo, GitRepo],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """After undo, the printed push must still work after gc: the commit, found only in the
    bundle, is fetched back and held by a keeper ref until the push is run."""
    import subprocess

    bare, w = remote_and_clone
    w.switch("sq", create=True)
    tip = w.commit("squashed work", files={"sq.txt": "sq\n"}, days_ago=5)
    w.git("push", "-q", "origin", "sq")
    w.switch("main")
    w.squash_merge("sq", days_ago=4)
    w.git("push", "-q", "origin", "main")
    w.git("branch", "-q", "-D", "sq")  # remote-only from here on
    code, _, err = cli(capsys, w, "delete", "--remote", "sq")
    assert (code, err) == (0, "")
    w.git("reflog", "expire", "--expire=now", "--all")
    w.git("gc", "-q", "--prune=now")
    assert w.git("cat-file", "-t", tip, check=False) == ""
    code, out, _ = cli(capsys, w, "undo")
    assert code == 0, out
    push = f"git push origin {tip}:refs/heads/sq"
    assert f"      {push}" in out.splitlines()
    w.git("gc", "-q", "--prune=now")
    subprocess.run(push, shell=True, cwd=w.path, check=True, capture_output=True)
    assert bare.git("rev-parse", "refs/heads/sq") == tip
