"""Field case C15 (issue 12, section 2): the bare layout. ``clone --bare .bare``, a ``.git`` file
``gitdir: ./.bare``, worktrees ``tree/master`` (the default branch) and ``tree/feat``. The
default branch's worktree is never retired, reaped or listed removable, whichever worktree the
command runs from; neither is the checkout of an integration line or an exempt branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo
from tests.reaputil import age_files, hours_env

PROTECTED = "SKIP_PROTECTED_BRANCH"


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """The project directory: ``.bare`` (a bare clone), ``.git`` -> ``./.bare``, and the
    worktrees ``tree/master`` and ``tree/feat`` (feat merged into master, aged 48 h)."""
    origin = GitRepo.init_bare(tmp_path / "origin.git", branch="master")
    seed = GitRepo.init(tmp_path / "seed", branch="master")
    seed.commit("initial", files={"README.md": "hello\n"}, days_ago=30)
    seed.switch("feat", create=True, days_ago=20)
    seed.commit("feat", files={"f.txt": "f\n"}, days_ago=20)
    seed.switch("master")
    seed.merge("feat", days_ago=10)
    seed.git("remote", "add", "origin", str(origin.path))
    seed.git("push", "-q", "origin", "master", "feat")
    project = tmp_path / "project"
    project.mkdir()
    GitRepo.clone(origin.path, project / ".bare", "--bare")
    (project / ".git").write_text("gitdir: ./.bare\n")
    top = GitRepo(project)
    for name in ("master", "feat"):
        top.git("worktree", "add", "-q", str(project / "tree" / name), name, env=hours_env(48))
        age_files(project / "tree" / name, 48)
    return project


def _run(capsys: pytest.CaptureFixture[str], where: Path, *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    rc = main(["-C", str(where), *args, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, json.loads(out)


def _rows(capsys: pytest.CaptureFixture[str], where: Path) -> dict[str, Any]:
    rc, doc = _run(capsys, where, "worktree", "list", "--no-gh")
    assert rc == 0
    return {Path(w["path"]).name: w for w in doc["worktrees"]}


def _gate(verdict: dict[str, Any], name: str) -> tuple[bool, str]:
    (gate,) = [g for g in verdict["gates"] if g["name"] == name]
    return gate["passed"], gate["detail"]


@pytest.mark.parametrize("place", ["tree/master", "tree/feat", "."])
def test_c15_default_branch_worktree_is_never_removable(layout: Path, place: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    where = layout / place
    master = layout / "tree" / "master"
    rows = _rows(capsys, where)
    for command in ("retire", "reap"):
        verdict = rows["master"][command]
        assert verdict["disposition"] != "REMOVABLE"
        assert _gate(verdict, "not_protected") == (
            False, "master is the default branch: its checkout is never removed")
    if place != "tree/master":  # run elsewhere, the branch is what keeps it
        assert rows["master"]["retire"]["disposition"] == PROTECTED
        assert rows["master"]["reap"]["disposition"] == PROTECTED
    if place != "tree/feat":  # the other worktree, merged and idle, may go
        assert rows["feat"]["retire"]["disposition"] == "REMOVABLE"
        assert rows["feat"]["reap"]["disposition"] == "REMOVABLE"
    rc, doc = _run(capsys, where, "worktree", "reap", "--no-gh", "--dry-run")
    entry = {Path(w["path"]).name: w for w in doc["worktrees"]}["master"]
    assert (rc, entry["outcome"]) == (0, "kept")
    rc, doc = _run(capsys, where, "worktree", "retire", str(master))
    assert (rc, doc["refused"], doc["held"]) == (5, True, None)
    assert f"{PROTECTED}: master is the default branch: its checkout is never removed" \
        in doc["blockers"]
    assert (master / "README.md").read_text() == "hello\n"


def test_c15_reap_removes_feat_and_keeps_master(layout: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _run(capsys, layout, "worktree", "reap", "--no-gh")
    outcomes = {Path(w["path"]).name: (w["outcome"], w["disposition"]) for w in doc["worktrees"]}
    assert rc == 0
    assert outcomes["master"] == ("kept", PROTECTED)
    assert outcomes["feat"] == ("removed", "REMOVABLE")
    assert (layout / "tree" / "master" / "README.md").is_file()
    assert not (layout / "tree" / "feat").exists()


def test_c15_integration_line_and_exempt_checkouts_are_never_removable(
        layout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = GitRepo(layout / ".bare")
    for name in ("release/1.x", "users/ana"):
        bare.git("branch", name, "master")
        bare.git("worktree", "add", "-q", str(layout / "tree" / name.replace("/", "-")), name,
                 env=hours_env(48))
        age_files(layout / "tree" / name.replace("/", "-"), 48)
    (layout / ".bare" / ".branchkeeper.yaml").write_text(
        "branches:\n  integration_lines: ['release/*']\n  exempt: ['users/*']\n")
    rows = _rows(capsys, layout)
    assert _gate(rows["release-1.x"]["retire"], "not_protected") == (
        False, "release/1.x is an integration line (branches.integration_lines): its checkout "
               "is never removed")
    assert _gate(rows["users-ana"]["reap"], "not_protected") == (
        False, "users/ana is exempt (branches.exempt): its checkout is never removed")
    for name in ("release-1.x", "users-ana"):
        assert (rows[name]["retire"]["disposition"], rows[name]["reap"]["disposition"]) == (
            PROTECTED, PROTECTED)
