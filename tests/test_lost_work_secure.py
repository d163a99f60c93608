"""The LOST WORK RISK commands, run top to bottom exactly as printed, leave nothing only in this
clone (issue 11): a branch pushed before its worktree's WIP commit gets that commit pushed too,
and a WIP commit never goes onto the default branch, an integration line or a protected name:
it goes onto a branch of its own."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.cleanuputil import cli_json
from tests.gitrepo import GitRepo

CONFIG = "branches:\n  protected_names: [main, release]\n"


def _world(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> dict[str, Path]:
    """``unpushed`` (a commit no remote holds) checked out in a worktree with an uncommitted
    edit; ``pushed`` in a worktree with an untracked file; ``release`` (a protected name, pushed)
    in a worktree with an edit; the main worktree on ``main`` with an edit; a detached worktree
    with a commit of its own and an edit; a stash."""
    _, w = remote_and_clone
    w.commit("policy", files={".branchkeeper.yaml": CONFIG}, days_ago=9)
    w.git("push", "-q", "origin", "main")
    paths = {"main": w.path}
    for name in ("unpushed", "pushed", "release"):
        w.branch(name, "main", days_ago=8)
        paths[name] = tmp_path / f"wt-{name}"
        w.git("worktree", "add", "-q", str(paths[name]), name)
        GitRepo(paths[name]).commit(f"{name} work", files={f"{name}.txt": "1\n"}, days_ago=7)
    for name in ("pushed", "release"):
        w.git("push", "-q", "-u", "origin", name)
    (paths["unpushed"] / "unpushed.txt").write_text("2\n")
    (paths["pushed"] / "notes.txt").write_text("untracked\n")
    (paths["release"] / "release.txt").write_text("2\n")
    (w.path / "README.md").write_text("edited on main\n")
    paths["det"] = tmp_path / "wt-det"
    w.git("worktree", "add", "-q", "--detach", str(paths["det"]), "main")
    GitRepo(paths["det"]).commit("detached work", files={"d.txt": "d\n"}, days_ago=6)
    (paths["det"] / "d.txt").write_text("d2\n")
    (w.path / "idea.txt").write_text("idea\n")
    w.git("stash", "push", "-q", "-u", "--", "idea.txt")
    return paths


def _only_local(w: GitRepo, paths: dict[str, Path]) -> dict[str, list[str]]:
    """After a fetch: every commit no remote-tracking ref holds (every ref and every worktree's HEAD), and
    every worktree's uncommitted paths."""
    w.git("fetch", "-q", "origin")
    heads = [GitRepo(p).rev("HEAD") for p in paths.values()]
    out = {"commits": w.git("rev-list", "--all", *heads, "--not", "--remotes").split()}
    for name, p in paths.items():
        out[name] = GitRepo(p).git("status", "--porcelain").splitlines()
    return out


def test_every_secure_command_run_in_order_leaves_nothing_only_local(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    paths = _world(remote_and_clone, tmp_path)
    main_tip, release_tip = w.rev("origin/main"), w.rev("origin/release")
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    det = GitRepo(paths["det"]).rev("HEAD")[:10]
    base = w.rev("main")[:10]
    rel = f"rescue/wip-wt-release-{GitRepo(paths['release']).rev('HEAD')[:10]}"
    q = {k: shlex.quote(str(p)) for k, p in paths.items()}
    wip = "git -C {0} add -- {1} && git -C {0} commit -m 'WIP: save work'"
    stash = w.rev("stash@{0}")
    assert [(i["kind"], i["subject"], i["secure"]) for i in doc["lost_work"]] == [
        ("unpushed_branch", "unpushed", "git push -u origin unpushed"),
        ("detached_commit", str(paths["det"]),
         f"git -C {q['det']} push origin HEAD:refs/heads/rescue/wt-det-{det}"),
        ("dirty_worktree", str(paths["main"]),
         f"git -C {q['main']} switch -c rescue/wip-work-{base} && "
         + wip.format(q["main"], "README.md")
         + f" && git -C {q['main']} push -u origin rescue/wip-work-{base}"),
        ("dirty_worktree", str(paths["det"]),
         f"git -C {q['det']} switch -c rescue/wip-wt-det-{det} && "
         + wip.format(q["det"], "d.txt")
         + f" && git -C {q['det']} push -u origin rescue/wip-wt-det-{det}"),
        ("dirty_worktree", str(paths["pushed"]),
         wip.format(q["pushed"], "notes.txt") + f" && git -C {q['pushed']} push -u origin pushed"),
        ("dirty_worktree", str(paths["release"]),
         f"git -C {q['release']} switch -c {rel} && " + wip.format(q["release"], "release.txt")
         + f" && git -C {q['release']} push -u origin {rel}"),
        ("dirty_worktree", str(paths["unpushed"]),
         wip.format(q["unpushed"], "unpushed.txt")
         + f" && git -C {q['unpushed']} push -u origin unpushed"),
        ("stash", "stash@{0}", f"git push origin {stash}:refs/heads/stash/0-{stash[:10]}"),
    ]
    for item in doc["lost_work"]:
        subprocess.run(item["secure"], shell=True, check=True, cwd=w.path,
                       capture_output=True)
    assert _only_local(w, paths) == {"commits": [], **{k: [] for k in paths}}
    # no WIP commit went onto a shared branch
    assert (bare.rev("main"), bare.rev("release")) == (main_tip, release_tip)
    assert cli_json(capsys, w, "sweep")[1]["lost_work"] == []
