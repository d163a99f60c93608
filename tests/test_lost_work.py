"""LOST WORK RISK covers every kind of local-only work (issue 12, section 4): unpushed branches,
a detached commit no ref holds, dirty worktrees, stash entries, our refs no remote holds, and
worktrees holding ignored files the ignored-content rule keeps; each with the one command that
secures it, at risk first, in the sweep (text and JSON), SessionStart and the report."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.analysis.lost_work import (
    commit_command,
    read_kept_refs,
    read_stashes,
    unsecured_stashes,
)
from branchkeeper.git.run import processes_started
from tests.cleanuputil import cli_json
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook
from tests.reaputil import add_worktree, age_files, commit_in


@pytest.fixture
def world(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> dict[str, Any]:
    _, repo = remote_and_clone
    repo.switch("unpushed", create=True, days_ago=5)
    repo.commit("local only", files={"u.txt": "u\n"}, days_ago=5)
    repo.switch("main")
    det = tmp_path / "det"
    w = add_worktree(repo, det, "--detach", start="main", hours=30)
    lonely = commit_in(w, "lonely", {"l.txt": "l\n"}, hours=30)
    age_files(det, 30)
    dirty = tmp_path / "dirty"
    d = add_worktree(repo, dirty, "-b", "dirty-work", start="main", hours=20)
    d.git("push", "-q", "-u", "origin", "dirty-work")
    (dirty / "README.md").write_text("changed\n")
    (dirty / "new file.txt").write_text("new\n")
    (dirty / ".claude").mkdir()
    (dirty / ".claude" / "settings.local.json").write_text("{}\n")
    age_files(dirty, 20)
    (repo.path / "stashed.txt").write_text("stash me\n")
    repo.git("stash", "push", "-q", "-u", "-m", "half-done idea")
    stash = repo.rev("stash@{0}")
    pinned = repo.git("commit-tree", "main^{tree}", "-p", "main", "-m", "pinned work")
    repo.git("update-ref", "refs/branchkeeper/pinned/old-wt-1234", pinned)
    notes = tmp_path / "notes"
    n = add_worktree(repo, notes, "-b", "notes-work", start="main", hours=10)
    n.git("push", "-q", "-u", "origin", "notes-work")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("notes/\n")
    (notes / "notes").mkdir()
    (notes / "notes" / "result.txt").write_text("r\n")
    age_files(notes, 10)
    return {"repo": repo, "det": det, "lonely": lonely, "dirty": dirty, "stash": stash,
            "pinned": pinned, "notes": notes}


def _expected(w: dict[str, Any]) -> list[dict[str, Any]]:
    det, dirty, notes = str(w["det"]), str(w["dirty"]), str(w["notes"])
    lonely, stash, pinned = w["lonely"], w["stash"], w["pinned"]
    commit = (shlex.join(["git", "-C", dirty, "add", "--", "README.md", "new file.txt"]) + " && "
              + shlex.join(["git", "-C", dirty, "commit", "-m", "WIP: save work"]) + " && "
              + shlex.join(["git", "-C", dirty, "push", "-u", "origin", "dirty-work"]))
    return [
        {"kind": "unpushed_branch", "subject": "unpushed", "detail": "1 commit(s) no remote holds",
         "secure": "git push -u origin unpushed", "count": 1, "age_days": 5.0, "worktree": None},
        {"kind": "detached_commit", "subject": det,
         "detail": f"detached HEAD {lonely[:10]} is held by no ref",
         "secure": shlex.join(["git", "-C", det, "push", "origin",
                               f"HEAD:refs/heads/rescue/det-{lonely[:10]}"]),
         "count": None, "age_days": 1.25, "worktree": det},
        {"kind": "dirty_worktree", "subject": dirty,
         "detail": "2 uncommitted or untracked file(s): README.md, new file.txt",
         "secure": commit, "count": 2, "age_days": 0.83, "worktree": dirty},
        {"kind": "stash", "subject": "stash@{0}", "detail": "On main: half-done idea",
         "secure": f"git push origin {stash}:refs/heads/stash/0-{stash[:10]}", "count": None,
         "age_days": 0.0, "worktree": None},
        {"kind": "kept_ref", "subject": "refs/branchkeeper/pinned/old-wt-1234",
         "detail": "1 commit(s) no remote holds",
         "secure": "git push origin refs/branchkeeper/pinned/old-wt-1234:refs/heads/rescue/"
                   f"old-wt-1234-{pinned[:10]}", "count": 1, "age_days": None, "worktree": None},
        {"kind": "ignored_files", "subject": notes,
         "detail": "1 ignored file(s) a removal would lose: notes/result.txt",
         "secure": f"branchkeeper worktree retire --archive-ignored {notes}", "count": 1,
         "age_days": 0.42, "worktree": notes},
    ]


def _sweep(capsys: pytest.CaptureFixture[str], repo: GitRepo, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["-C", str(repo.path), "sweep", *extra])
    return rc, capsys.readouterr().out


def test_sweep_json_lists_every_kind_most_at_risk_first(world: dict[str, Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _sweep(capsys, world["repo"], "--json")
    doc = json.loads(out)
    assert rc == 0
    assert doc["lost_work"] == _expected(world)
    assert doc["summary"]["lost_work_risk"] == 6
    assert doc["summary"]["lost_work_by_kind"] == {
        "unpushed_branch": 1, "detached_commit": 1, "worktree_ref": 0, "submodule_store": 0,
        "dirty_worktree": 1, "stash": 1,
        "kept_ref": 1, "ignored_files": 1}
    assert _sweep(capsys, world["repo"], "--fail-on-risk")[0] == 1


def test_sweep_text_lists_every_kind_with_its_command(world: dict[str, Any],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _sweep(capsys, world["repo"])
    block = out.split("\n\n")[1].splitlines()
    items = _expected(world)
    assert block == [
        "LOST WORK RISK: 1 branch(es), 1 detached commit(s), 1 dirty worktree(s), 1 stash(es), "
        "1 ref(s) of ours, 1 worktree(s) holding ignored files exist only in this clone",
        "  unpushed  1 commit(s) no remote holds, 5d old",
        f"    secure it: {items[0]['secure']}",
        f"  worktree {world['det']}  {items[1]['detail']}",
        f"    secure it: {items[1]['secure']}",
        f"  worktree {world['dirty']}  {items[2]['detail']}",
        f"    secure it: {items[2]['secure']}",
        f"  stash@{{0}}  {items[3]['detail']}",
        f"    secure it: {items[3]['secure']}",
        f"  ref {items[4]['subject']}  {items[4]['detail']}",
        f"    secure it: {items[4]['secure']}",
        f"  worktree {world['notes']}  {items[5]['detail']}",
        f"    keep them: {items[5]['secure']}",
    ]
    (total,) = [ln for ln in out.splitlines() if "branches: " in ln]
    assert total.endswith("; LOST WORK RISK: 6")


def test_session_start_names_every_kind(world: dict[str, Any]) -> None:
    repo = world["repo"]
    result = run_hook("SessionStart", {"session_id": "s1", "cwd": str(repo.path),
                                       "source": "resume"})
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    items = _expected(world)
    assert text.splitlines()[:8] == [
        "LOST WORK RISK: 1 branch(es) hold commits no remote-tracking ref contains; push them "
        "now:",
        "  unpushed (5 days idle): git push -u origin unpushed",
        "LOST WORK RISK: 5 more piece(s) of work exist only in this clone; secure them:",
        *(f"  {label} {i['subject']}: {i['detail']}; {i['secure']}"
          for label, i in zip(("worktree", "worktree", "stash", "ref", "worktree"), items[1:],
                              strict=True)),
    ]


def test_report_ranks_by_every_kind(world: dict[str, Any],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["report", "--repo", str(world["repo"].path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["repositories"]
    assert (row["lost_work"], row["lost_work_by_kind"]) == (6, {
        "unpushed_branch": 1, "detached_commit": 1, "dirty_worktree": 1, "stash": 1,
        "kept_ref": 1, "ignored_files": 1})
    assert row["why"][0] == (
        "6 piece(s) of work at LOST WORK RISK, only in this clone (1 unpushed branch(es), "
        "1 detached commit(s), 1 dirty worktree(s), 1 stash(es), 1 ref(s) of ours, 1 worktree(s) "
        "holding ignored files)")


def test_stashes_and_our_refs_cost_one_or_two_git_processes(world: dict[str, Any]) -> None:
    repo = world["repo"]
    for _ in range(3):
        repo.git("stash", "push", "-q", "--allow-empty", check=False)
    before = processes_started()
    assert [s.name for s in read_stashes(repo.path)] == ["stash@{0}"]
    assert processes_started() - before == 1
    before = processes_started()
    assert read_kept_refs(repo.path) == {
        "refs/branchkeeper/pinned/old-wt-1234": (world["pinned"], 1)}
    assert processes_started() - before == 2
    # a local branch at the kept tip (undo brought it back, say) lists it: not twice
    repo.git("branch", "back-again", "refs/branchkeeper/pinned/old-wt-1234")
    assert read_kept_refs(repo.path) == {}
    repo.git("branch", "-D", "back-again")
    assert read_kept_refs(repo.path) == {
        "refs/branchkeeper/pinned/old-wt-1234": (world["pinned"], 1)}
    repo.git("push", "-q", "origin", "refs/branchkeeper/pinned/old-wt-1234:refs/heads/kept")
    repo.git("fetch", "-q", "origin")
    assert read_kept_refs(repo.path) == {}  # a remote-tracking ref holds it now


def test_a_stash_secured_as_the_sweep_says_is_no_longer_at_risk(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    (repo.path / "README.md").write_text("edited\n")
    repo.git("stash", "push", "-q", "-m", "idea")

    def stash_risks() -> list[dict[str, Any]]:
        _code, doc = cli_json(capsys, repo, "sweep")
        return [i for i in doc["lost_work"] if i["kind"] == "stash"]

    (item,) = stash_risks()
    stashes = read_stashes(repo.path)
    before = processes_started()
    assert unsecured_stashes(repo.path, stashes) == stashes
    assert processes_started() - before == 1
    repo.git(*shlex.split(item["secure"])[1:])  # the printed `git push origin <oid>:refs/...`
    repo.git("fetch", "-q", "origin")
    assert stash_risks() == []
    assert unsecured_stashes(repo.path, stashes) == []


def test_commit_command_names_every_path_and_add_all_leaves_the_install_files_out() -> None:
    """The paths come from the one reading of the worktree, the install's untracked files
    already left out: every path named is work, a host directory's included."""
    assert commit_command("/w", []) is None
    assert commit_command("/w", ["a b", ".claude/x", "-n"]) == (
        "git -C /w add -- 'a b' .claude/x -n && git -C /w commit -m 'WIP: save work'")
    many = [f"f{i}" for i in range(10)] + [".codex/hooks.json"]
    assert commit_command("/w", many) == (
        "git -C /w add -A -- . ':(exclude,literal).claude/settings.json' "
        "':(exclude,literal).claude/settings.local.json' ':(exclude,literal).cursor/hooks.json' "
        "':(exclude,literal).gemini/settings.json' "
        "':(exclude,literal).github/hooks/branchkeeper.json' && "
        "git -C /w commit -m 'WIP: save work'")


def test_session_start_without_unpushed_branches_says_no_more(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """With no unpushed branch listed first, the other kinds are not "more" of anything."""
    _, repo = remote_and_clone
    (repo.path / "idea.txt").write_text("half\n")
    repo.git("stash", "push", "-q", "-u", "-m", "idea")
    stash = repo.rev("stash@{0}")
    result = run_hook("SessionStart", {"session_id": "s1", "cwd": str(repo.path),
                                       "source": "startup"})
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.splitlines()[:2] == [
        "LOST WORK RISK: 1 piece(s) of work exist only in this clone; secure them:",
        f"  stash stash@{{0}}: On main: idea; git push origin {stash}:refs/heads/stash/0-"
        f"{stash[:10]}"]


def test_fail_on_risk_when_the_budget_left_a_worktree_unread(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    """A worktree the time budget left unread may hold work: --fail-on-risk does not say 0."""
    from branchkeeper.adapters.commands.sweep import exit_code
    from branchkeeper.analysis.inventory import build_inventory
    from branchkeeper.analysis.lost_work import inventory_lost_work
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.model.config_file import load_config

    _, repo = remote_and_clone
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side", "origin/main")
    facts = repo_facts(repo.path)
    inv = build_inventory(facts, load_config(facts.main_root).config)
    lost, notes = inventory_lost_work(inv)
    assert (lost, notes) == ([], [])
    assert exit_code(inv, fail_on_risk=True, lost=lost, notes=notes) == 0
    lost, notes = inventory_lost_work(inv, deadline=0.0)  # a deadline long past: nothing read
    assert (lost, notes) == ([], ["2 worktree(s) not inspected within the time budget"])
    assert exit_code(inv, fail_on_risk=True, lost=lost, notes=notes) == 1
    assert exit_code(inv, fail_on_risk=False, lost=lost, notes=notes) == 0


def test_a_branch_named_like_an_option_gets_a_push_that_works_everywhere(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """A branch ``-dash`` (git makes one only by update-ref) is pushed by its full ref names in
    the sweep, the WIP-cap denial and SessionStart alike: ``git push -u origin -dash`` would
    be read as options. The printed command is run and secures the branch."""
    from branchkeeper.policy.command import decide_command

    _, repo = remote_and_clone
    repo.commit("cap", files={".branchkeeper.yaml": "branches:\n  wip: {cap: 1}\n"})
    repo.git("push", "-q", "origin", "main")
    repo.switch("tmp", create=True)
    tip = repo.commit("dash work", files={"d.txt": "d\n"}, days_ago=2)
    repo.switch("main")
    repo.git("update-ref", "refs/heads/-dash", tip)
    repo.git("branch", "-q", "-D", "tmp")
    push = "git push -u origin refs/heads/-dash:refs/heads/-dash"
    code, doc = cli_json(capsys, repo, "sweep")
    assert code == 0
    assert [i["secure"] for i in doc["lost_work"]] == [push]
    denial = decide_command("git switch -c more", cwd=str(repo.path)).text
    assert f"secure them now: {push}\n" in denial
    result = run_hook("SessionStart", {"session_id": "s1", "cwd": str(repo.path),
                                       "source": "startup"})
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"  -dash (2 days idle): {push}" in text.splitlines()
    repo.git(*shlex.split(push)[1:])
    assert repo.rev("refs/remotes/origin/-dash") == tip
