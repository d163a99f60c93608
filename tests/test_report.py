"""``branchkeeper report``: discovery, ranking worst first, a broken repository, config file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo
from tests.reaputil import bk


def make_repos(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "projects"
    # clean: one merged branch not deleted
    bare = GitRepo.init_bare(tmp_path / "remotes" / "clean.git")
    clean = GitRepo.init(root / "clean")
    clean.commit("init", files={"a": "a\n"}, days_ago=3)
    clean.git("remote", "add", "origin", str(bare.path))
    clean.git("push", "-q", "-u", "origin", "main")
    clean.branch("done", "HEAD~0")
    clean.commit("more", files={"b": "b\n"}, days_ago=2)
    clean.git("push", "-q", "origin", "main")
    # risky: an unpushed branch (LOST WORK RISK) and a dirty worktree
    bare2 = GitRepo.init_bare(tmp_path / "remotes" / "risky.git")
    risky = GitRepo.init(root / "group" / "risky")
    risky.commit("init", files={"a": "a\n"}, days_ago=3)
    risky.git("remote", "add", "origin", str(bare2.path))
    risky.git("push", "-q", "-u", "origin", "main")
    risky.git("worktree", "add", "-q", "-b", "wip", str(root / "group" / "risky-wt"))
    GitRepo(root / "group" / "risky-wt").commit("wip", files={"w": "w\n"})
    (root / "group" / "risky-wt" / "dirty.txt").write_text("d\n")
    # dirty only: a worktree with an uncommitted edit on an unproven pushed branch
    mid = GitRepo.init(root / "mid")
    mid.commit("init", files={"a": "a\n"}, days_ago=3)
    # broken: a .git directory that is not a repository
    (root / "broken" / ".git").mkdir(parents=True)
    # skipped: node_modules and a virtualenv holding repositories
    GitRepo.init(root / "node_modules" / "dep")
    (root / "venv1").mkdir()
    (root / "venv1" / "pyvenv.cfg").write_text("home = /usr\n")
    GitRepo.init(root / "venv1" / "inner")
    return {"root": root, "clean": clean.path, "risky": risky.path, "mid": mid.path,
            "broken": root / "broken"}


def test_report_ranks_worst_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    rc, out, err = bk(capsys, "report", str(r["root"]), "--json")
    # the unreadable repository comes first: its work is not ruled out; every row still prints
    assert (rc, err) == (4, "error: 1 of 4 repositories could not be read; their work is not "
                            "ruled out (listed first)\n")
    rows = json.loads(out)["repositories"]
    assert [row["path"] for row in rows] == [str(r["broken"]), str(r["risky"]), str(r["clean"]),
                                             str(r["mid"])]
    broken, risky, clean, mid = rows
    assert (risky["lost_work"], risky["lost_work_by_kind"], risky["dirty_worktrees"],
            risky["unproven_worktrees"], risky["why"]) == (
        2, {"unpushed_branch": 1, "dirty_worktree": 1}, 1, 1,
        ["2 piece(s) of work at LOST WORK RISK, only in this clone (1 unpushed branch(es), "
         "1 dirty worktree(s))",
         "1 dirty worktree(s)",
         "1 worktree(s) on unproven branches"])
    assert (clean["lost_work"], clean["merged_not_deleted"], clean["why"]) == (
        0, 1, ["1 merged, not deleted"])
    assert mid["why"] == ["nothing to clean"]
    assert broken["error"] is not None and broken["why"] == []
    assert broken["error"].startswith(f"{r['broken']}: not inside a git repository")


def test_report_counts_a_dirty_main_worktree_as_its_lost_work_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = GitRepo.init_bare(tmp_path / "o.git")
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("init", files={"a": "a\n"}, days_ago=3)
    repo.git("remote", "add", "origin", str(bare.path))
    repo.git("push", "-q", "-u", "origin", "main")
    (repo.path / "a").write_text("edited\n")
    _rc, out, _ = bk(capsys, "report", "--repo", str(repo.path), "--json")
    (row,) = json.loads(out)["repositories"]
    assert (row["lost_work_by_kind"], row["dirty_worktrees"], row["why"]) == (
        {"dirty_worktree": 1}, 1,
        ["1 piece(s) of work at LOST WORK RISK, only in this clone (1 dirty worktree(s))",
         "1 dirty worktree(s)"])


def test_report_max_repos_and_explicit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    _rc, out, _ = bk(capsys, "report", "--repo", str(r["mid"]), "--repo", str(r["mid"]) + "/",
                    str(r["root"]), "--max-repos", "2", "--json")
    rows = json.loads(out)["repositories"]
    # mid (explicit, de-duplicated) then the first scanned (sorted: broken); the rest never run;
    # ranked, the unreadable one comes first
    assert [row["path"] for row in rows] == [str(r["broken"]), str(r["mid"])]


def test_report_count_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    _rc, out, _ = bk(capsys, "report", "--repo", str(r["risky"]), "--repo", str(r["clean"]),
                    "--count-only", "--json")
    rows = {row["path"]: row for row in json.loads(out)["repositories"]}
    assert [k for k in rows] == [str(r["risky"]), str(r["clean"])]
    risky = rows[str(r["risky"])]
    assert (risky["branches"], risky["remote_branches"], risky["worktrees"], risky["lost_work"],
            risky["why"]) == (2, 1, 2, None, ["2 local branch(es), 1 linked worktree(s)"])


def test_report_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "branchkeeper" / "repos.json"
    rc, out, err = bk(capsys, "report")
    assert rc == 4 and "no repositories: pass --repo DIR or ROOT" in err
    rc, out, _ = bk(capsys, "report", "--init-config")
    assert (rc, out) == (0, f"created {cfg}\n")
    assert json.loads(cfg.read_text()) == {"repos": [], "roots": []}
    cfg.write_text(json.dumps({"repos": [str(r["clean"])], "roots": []}))
    rc, out, _ = bk(capsys, "report", "--init-config")
    assert (rc, out) == (0, f"{cfg} already exists; left unchanged\n")
    assert json.loads(cfg.read_text()) == {"repos": [str(r["clean"])], "roots": []}
    rc, out, _ = bk(capsys, "report", "--json")
    assert [row["path"] for row in json.loads(out)["repositories"]] == [str(r["clean"])]


def test_report_text_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    rc, out, _ = bk(capsys, "report", "--repo", str(r["mid"]), "--repo", str(r["broken"]))
    assert rc == 4
    lines = [ln for ln in out.splitlines() if "│" in ln or "|" in ln]
    assert "nothing to clean" in out and "error:" in out
    assert lines  # a rich table


def test_report_names_each_root_that_held_no_repository(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = make_repos(tmp_path)
    (tmp_path / "empty").mkdir()
    rc, out, err = bk(capsys, "report", str(r["root"]), str(tmp_path / "nope"),
                      str(tmp_path / "empty"), "--count-only", "--json")
    assert rc == 4  # the scanned root holds one unreadable repository
    assert len(json.loads(out)["repositories"]) == 4
    assert err == (f"note: no repository under {tmp_path / 'nope'} (not a directory); skipped\n"
                   f"note: no repository under {tmp_path / 'empty'} (none within 3 levels); "
                   "skipped\n"
                   "error: 1 of 4 repositories could not be read; their work is not ruled out "
                   "(listed first)\n")
