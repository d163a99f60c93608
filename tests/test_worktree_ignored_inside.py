"""What lies inside an ignored directory that git reports whole (``!! node_modules/``,
``!! build/``) decides too (issue 11): a nested repository keeps the worktree (``no_nested``),
a ``protected_ignored`` match keeps it (``ignored_disposable``), and a directory too large to
scan keeps it with the reason; a regenerable directory holding neither still goes. The gates,
``sweep --clean`` and the guard read the same verdict."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.analysis.ignored import Blocked, IgnoredRules, IgnoredVerdict, judge_ignored
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo

NESTED = "a repository inside an ignored directory: its commits and files are nowhere else"


@pytest.fixture
def world(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> dict[str, Any]:
    """A merged, pushed branch ``done`` checked out in ``wt``, with ``node_modules/`` and
    ``build/`` ignored (both regenerable) and holding only regenerable files."""
    _, repo = remote_and_clone
    wt = tmp_path / "wt"
    w = repo.worktree_add(wt, "-b", "done")
    w.commit("done", files={"d.txt": "d\n"}, days_ago=2)
    repo.merge("done", days_ago=1)
    repo.git("push", "-q", "origin", "main", "done")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("node_modules/\nbuild/\n")
    (wt / "node_modules" / "pkg").mkdir(parents=True)
    (wt / "node_modules" / "pkg" / "index.js").write_text("x\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.o").write_text("o\n")
    return {"repo": repo, "wt": wt}


def _at_risk(wt: Path) -> None:
    (wt / "build" / ".env").write_text("SECRET=1\n")
    dep = GitRepo.init(wt / "node_modules" / "dep")
    dep.commit("only here", files={"i": "i\n"})


def test_nested_repository_and_protected_file_keep_the_worktree(
        world: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = world["repo"], world["wt"]
    _at_risk(wt)
    code, doc = cli_json(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert code == 3
    assert doc["blockers"] == [
        f"SKIP_NESTED: nested: repository {wt}/node_modules/dep",
        "SKIP_PROTECTED_IGNORED: ignored files it would lose: build/.env (matches protected "
        "glob '.env*' inside ignored directory build/), node_modules/dep/ (" + NESTED + ")"]
    code, out, err = cli(capsys, repo, "sweep", "--clean", "--dry-run")
    assert (code, err) == (0, "")
    done, main = repo.rev("done")[:10], repo.rev("main")[:10]
    assert out == (
        "dry run: sweep-clean: 2 branches (default branch main)\n"
        f"  blocked        done  {done}  merged into origin/main: every commit is on it; kept: "
        f"its worktree {wt} holds work\n"
        f"      blocks removal: SKIP_NESTED: repository {wt}/node_modules/dep\n"
        "      blocks removal: SKIP_PROTECTED_IGNORED: build/.env (matches protected glob "
        "'.env*' inside ignored directory build/)\n"
        f"  kept           main  {main}  default\n")
    code, listing = cli_json(capsys, repo, "worktree", "list", "--no-gh")
    (row,) = [w for w in listing["worktrees"] if w["path"] == str(wt)]
    assert (row["nested"], row["ignored"]) == (
        [f"{wt}/node_modules/dep"],
        {"count": 2, "kept": ["build/.env", "node_modules/dep/"]})
    code, out, _ = cli(capsys, repo, "sweep", "--clean")
    assert code == 0 and (wt / "node_modules" / "dep" / ".git").is_dir()
    assert (wt / "build" / ".env").read_text() == "SECRET=1\n"


def test_regenerable_directories_holding_neither_still_go(
        world: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = world["repo"], world["wt"]
    code, out, err = cli(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert (code, err) == (0, "")
    assert out == (
        "dry run: nothing is changed\n"
        f"would remove worktree {wt}\n"
        f"branch done kept at {repo.rev('done')}\n"
        f"restore: {shlex.join(['git', 'worktree', 'add', str(wt), 'done'])}\n")
    code, out, _ = cli(capsys, repo, "sweep", "--clean")
    assert code == 0 and not wt.exists()


@pytest.mark.parametrize("command", ["rm -rf {wt}/node_modules", "rm -rf {wt}",
                                     "git worktree remove {wt}"])
def test_guard_reads_the_same_fact(world: dict[str, Any], command: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = world["repo"], world["wt"]
    line = command.format(wt=shlex.quote(str(wt)))
    code, out, _ = cli(capsys, repo, "check", "--json", "--", line)
    assert (code, json.loads(out)["verdict"]) == (0, "allow")
    _at_risk(wt)
    code, out, _ = cli(capsys, repo, "check", "--json", "--", line)
    doc = json.loads(out)
    assert (code, doc["verdict"]) == (2, "deny")
    assert "node_modules/dep/ (" in doc["reason"] and NESTED in doc["reason"]


def test_a_directory_too_large_to_scan_keeps_the_worktree(world: dict[str, Any]) -> None:
    wt = world["wt"]
    for i in range(5):
        (wt / "node_modules" / "pkg" / f"f{i}.js").write_text("x\n")
    rules = IgnoredRules(regenerable=("node_modules/", "build/"))
    entries = ["build/", "node_modules/"]
    assert judge_ignored(wt, entries, rules) == IgnoredVerdict(
        protected=(), disposable=("build/", "node_modules/"), needs_listing=())
    over = ("more than 4 entries to scan: a nested repository or a protected file inside "
            "cannot be ruled out")
    assert judge_ignored(wt, entries, rules, scan_cap=4) == IgnoredVerdict(
        protected=(Blocked("node_modules/", over),), disposable=("build/",), needs_listing=(),
        unarchivable=("node_modules/",), unscanned=("node_modules/",))


def test_a_too_large_directory_is_named_by_the_nested_gate(
        world: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from branchkeeper.analysis import ignored

    monkeypatch.setattr(ignored, "SCAN_CAP", 3)
    monkeypatch.setattr(ignored.judge_ignored, "__kwdefaults__",
                        {**(ignored.judge_ignored.__kwdefaults__ or {}), "scan_cap": 3})
    repo, wt = world["repo"], world["wt"]
    for i in range(3):
        (wt / "node_modules" / "pkg" / f"f{i}.js").write_text("x\n")
    code, doc = cli_json(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert code == 3
    assert doc["blockers"] == [
        f"SKIP_NESTED: nested: unscanned {wt}/node_modules",
        "SKIP_PROTECTED_IGNORED: ignored files it would lose: node_modules/ (more than 3 "
        "entries to scan: a nested repository or a protected file inside cannot be ruled out)"]
