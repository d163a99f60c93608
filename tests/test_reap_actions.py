"""``worktree reap``: ignored content, salvage, the race, PR evidence, archive and restore."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from branchkeeper.actions import reap as reap_mod
from branchkeeper.git.repo import Worktree
from tests.gitrepo import GitRepo
from tests.reaputil import (
    add_worktree,
    age_files,
    bk,
    by_path,
    commit_in,
    fake_gh,
    no_gh,
    reap_json,
)


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    clone.commit("ignore", files={".gitignore": ".env*\nbuild/\nscratch/\n.agentic/\n"}, days_ago=5)
    clone.git("push", "-q", "origin", "main")
    return clone


def clean_wt(repo: GitRepo, tmp_path: Path, name: str) -> Path:
    """A worktree on a new branch at main (no unique commits): removable once aged."""
    path = tmp_path / name
    add_worktree(repo, path, "-b", name, start="main")
    return path


def write(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_protected_ignored_and_strict(repo: GitRepo, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    p_env = clean_wt(repo, tmp_path, "env")
    write(p_env / ".env.local", "SECRET=1\n")
    p_build = clean_wt(repo, tmp_path, "build")
    write(p_build / "build" / "out.o")
    write(p_build / "scratch" / "notes.txt")
    for p in (p_env, p_build):
        age_files(p)
    data = by_path(reap_json(capsys, repo, "--dry-run"))
    assert (data[str(p_env)]["disposition"], data[str(p_env)]["reason"]) == (
        "SKIP_PROTECTED_IGNORED", "ignored files it would lose: .env.local (matches protected "
                                  "glob '.env*')")
    # the default polarity: build/ is regenerable, scratch/notes.txt is not
    assert (data[str(p_build)]["disposition"], data[str(p_build)]["reason"]) == (
        "SKIP_PROTECTED_IGNORED", "ignored files it would lose: scratch/notes.txt (not "
                                  "regenerable: no branches.cleanup_after_merge.regenerable "
                                  "glob matches)")
    assert data == by_path(reap_json(capsys, repo, "--dry-run", "--strict-ignored"))
    data = by_path(reap_json(capsys, repo, "--dry-run", "--ignored", "lenient"))
    assert data[str(p_build)]["disposition"] == "REMOVABLE"
    assert data[str(p_env)]["disposition"] == "SKIP_PROTECTED_IGNORED"  # protected either way


def test_agent_state_polarity(repo: GitRepo, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    p_notes = clean_wt(repo, tmp_path, "notes")
    write(p_notes / ".agentic" / "plan.md")
    p_tele = clean_wt(repo, tmp_path, "tele")
    write(p_tele / ".agentic" / "telemetry" / "t.json")
    write(p_tele / ".agentic" / "run.log")
    for p in (p_notes, p_tele):
        age_files(p)
    data = by_path(reap_json(capsys, repo, "--dry-run"))
    assert (data[str(p_notes)]["disposition"], data[str(p_notes)]["reason"]) == (
        "SKIP_PROTECTED_IGNORED", "ignored files it would lose: .agentic/plan.md (agent state "
                                  "(.agentic/) not listed disposable)")
    assert data[str(p_tele)]["disposition"] == "REMOVABLE"


def test_salvage_appends_then_removes(repo: GitRepo, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = clean_wt(repo, tmp_path, "salv")
    write(path / ".agentic" / "events.jsonl", '{"e": 2}\n')
    write(repo.path / ".agentic" / "events.jsonl", '{"e": 1}\n')
    age_files(path)
    data = by_path(reap_json(capsys, repo))
    entry = data[str(path)]
    assert (entry["outcome"], entry["salvaged"]) == (
        "removed", [str(repo.path / ".agentic" / "events.jsonl")])
    assert (repo.path / ".agentic" / "events.jsonl").read_text() == '{"e": 1}\n{"e": 2}\n'
    assert not path.exists()


def test_salvage_failure_blocks_removal(repo: GitRepo, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = clean_wt(repo, tmp_path, "salvfail")
    write(path / ".agentic" / "events.jsonl", '{"e": 2}\n')
    write(repo.path / ".agentic", "a file where the directory should be\n")
    age_files(path)
    entry = by_path(reap_json(capsys, repo))[str(path)]
    assert (entry["disposition"], entry["outcome"]) == ("REMOVABLE", "failed")
    assert entry["detail"] == ("salvage failed, kept: could not salvage .agentic/events.jsonl: "
                               f"[Errno 17] File exists: '{repo.path / '.agentic'}'")
    assert (path / ".agentic" / "events.jsonl").read_text() == '{"e": 2}\n'


def test_race_new_file_after_check_survives(repo: GitRepo, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = clean_wt(repo, tmp_path, "race1")
    age_files(path)

    def drop(wt: Worktree) -> None:
        write(wt.path / "late.txt", "written between check and removal\n")
        age_files(wt.path)  # old mtimes: the clean gate, not the idle gate, must catch it

    monkeypatch.setattr(reap_mod, "DEFAULT_HOOKS", reap_mod.ReapHooks(after_check=drop))
    entry = by_path(reap_json(capsys, repo))[str(path)]
    assert (entry["disposition"], entry["outcome"], entry["detail"]) == (
        "SKIP_DIRTY", "raced", "re-check: SKIP_DIRTY: 1 untracked file(s): late.txt")
    assert (path / "late.txt").read_text() == "written between check and removal\n"


def test_race_file_after_recheck_git_refuses(repo: GitRepo, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = clean_wt(repo, tmp_path, "race2")
    age_files(path)

    def drop(wt: Worktree) -> None:
        write(wt.path / "later.txt", "after the re-check\n")

    monkeypatch.setattr(reap_mod, "DEFAULT_HOOKS", reap_mod.ReapHooks(before_remove=drop))
    entry = by_path(reap_json(capsys, repo))[str(path)]
    assert (entry["outcome"], entry["detail"]) == (
        "failed", f"git refused, kept: fatal: '{path}' contains modified or untracked files, "
                  "use --force to delete it")
    assert (path / "later.txt").read_text() == "after the re-check\n"


def test_race_hidden_edit_after_recheck_keeps_the_worktree(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """git removes an edit a skip-worktree flag hides without --force: the removal step reads
    the hidden edits again right before it, as git reads the status."""
    path = clean_wt(repo, tmp_path, "race3")
    age_files(path)

    def hide(wt: Worktree) -> None:
        subprocess.run(["git", "update-index", "--skip-worktree", "README.md"], cwd=wt.path,
                       check=True)
        write(wt.path / "README.md", "edited after the re-check\n")

    monkeypatch.setattr(reap_mod, "DEFAULT_HOOKS", reap_mod.ReapHooks(before_remove=hide))
    entry = by_path(reap_json(capsys, repo))[str(path)]
    assert (entry["outcome"], entry["detail"]) == (
        "failed", "git refused, kept: it holds edits git status does not show "
                  "(skip-worktree or assume-unchanged): README.md")
    assert (path / "README.md").read_text() == "edited after the re-check\n"


def pushed_unproven(repo: GitRepo, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    w = add_worktree(repo, path, "-b", name, start="main")
    commit_in(w, f"{name} work", {f"{name}.txt": "w\n"})
    w.git("push", "-q", "origin", name)
    repo.git("fetch", "-q", "origin")
    age_files(path)
    return path


def test_pr_evidence_dispositions(repo: GitRepo, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["p-open", "p-closed", "p-none", "p-merged"]
    paths = {n: pushed_unproven(repo, tmp_path, n) for n in names}
    tips = {n: repo.rev(f"refs/heads/{n}") for n in names}
    rec = '[{{"number": {num}, "state": "{st}", "headRefOid": "{tip}", "mergedAt": null}}]'
    fake_gh(tmp_path, monkeypatch, bodies={
        "p-open": rec.format(num=1, st="OPEN", tip=tips["p-open"]),
        "p-closed": rec.format(num=2, st="CLOSED", tip=tips["p-closed"]),
        "p-merged": rec.format(num=3, st="MERGED", tip=tips["p-merged"])})
    data = reap_json(capsys, repo, "--dry-run")
    assert (data["pr_evidence"], data["degraded"]) == ("PR evidence: gh logged in", False)
    got = {n: (by_path(data)[str(p)]["disposition"], by_path(data)[str(p)]["reason"])
           for n, p in paths.items()}
    assert got == {
        "p-open": ("SKIP_PR_OPEN", "PR #1 is open"),
        "p-closed": ("SKIP_UNPROVEN", "PR #2 is closed, unmerged: reported, never removed"),
        "p-none": ("SKIP_AMBIGUOUS_NO_PR", "pushed, 1 unique commit(s) unproven, no PR"),
        "p-merged": ("SKIP_UNPROVEN", "PR #3 is merged, but the tip is not proven on the base "
                                      "(a merged PR alone is never proof)")}


def test_gh_error_and_degraded(repo: GitRepo, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = pushed_unproven(repo, tmp_path, "p-err")
    fake_gh(tmp_path, monkeypatch, list_rc=1)
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert (entry["disposition"], entry["reason"]) == (
        "SKIP_LS_REMOTE_ERROR", "PR evidence failed: gh pr list failed (exit 1): HTTP 502")
    _rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--dry-run", "--no-gh")
    assert out.splitlines()[0] == "degraded mode: --no-gh: PR evidence disabled"
    assert "  SKIP_UNPROVEN: pushed, unproven; --no-gh: PR evidence disabled" in out.splitlines()
    no_gh(tmp_path, monkeypatch)
    data = reap_json(capsys, repo, "--dry-run")
    assert (data["pr_evidence"], data["degraded"]) == (
        "degraded mode: gh is not installed (degraded mode: no PR evidence)", True)


def test_archive_refused_without_pr_evidence(repo: GitRepo, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = clean_wt(repo, tmp_path, "never")
    no_gh(tmp_path, monkeypatch)
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--archive-unproven")
    assert (rc, out) == (5, "")
    assert err == ("branchkeeper: error: --archive-unproven needs PR evidence and there is none "
                   "(gh is not installed (degraded mode: no PR evidence)); without it an "
                   "unproven branch cannot be told from one behind an open PR. Nothing was "
                   "archived or removed.\n")
    fake_gh(tmp_path, monkeypatch)
    rc, _, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--archive-unproven",
                    "--no-gh")
    assert rc == 5 and "--no-gh: PR evidence disabled" in err
    assert path.is_dir()


def test_archive_unproven_bundle_restores(repo: GitRepo, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "unpushed"
    w = add_worktree(repo, path, "-b", "unpushed", start="main", hours=48)
    commit_in(w, "one", {"u.txt": "1\n"}, hours=48)
    tip = commit_in(w, "two", {"u.txt": "2\n"}, hours=48)
    age_files(path, 48)
    opened = pushed_unproven(repo, tmp_path, "opened")
    fake_gh(tmp_path, monkeypatch, bodies={"opened": (
        f'[{{"number": 9, "state": "OPEN", "headRefOid": "{repo.rev("opened")}", '
        '"mergedAt": null}]')})
    age_files(opened, 48)
    data = reap_json(capsys, repo, "--archive-unproven")
    entry = by_path(data)[str(path)]
    bundle = entry["bundle"]
    fetch = (f"git fetch {bundle['path']} refs/heads/unpushed:refs/heads/unpushed")
    assert (entry["disposition"], entry["outcome"], entry["restore"]) == (
        "SKIP_NOT_PUSHED", "archived", [fetch, f"git worktree add {path} unpushed"])
    assert bundle["compact"] is True and bundle["prerequisites"] == [repo.rev("main")]
    assert by_path(data)[str(opened)]["outcome"] == "kept"  # SKIP_PR_OPEN is never archived
    assert not path.exists() and repo.rev("refs/heads/unpushed") == tip
    # delete the branch by hand, expire it; the printed command restores it
    repo.git("branch", "-D", "unpushed")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", tip, check=False) == ""
    subprocess.run(fetch, shell=True, cwd=repo.path, check=True, capture_output=True)
    assert repo.rev("refs/heads/unpushed") == tip
    # and undo restores it too (from the bundle when the commit is gone)
    repo.git("branch", "-D", "unpushed")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--json")
    undo = json.loads(out)
    assert (rc, undo["op"], [i["outcome"] for i in undo["items"]]) == (0, "worktree-reap", ["restored"])
    assert repo.rev("refs/heads/unpushed") == tip
    assert [w["outcome"] for w in undo["worktrees"]] == ["restored"] and path.is_dir()


def test_archive_default_min_age(repo: GitRepo, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "young"
    w = add_worktree(repo, path, "-b", "young", start="main", hours=10)
    commit_in(w, "one", {"y.txt": "1\n"})
    age_files(path)
    fake_gh(tmp_path, monkeypatch)
    entry = by_path(reap_json(capsys, repo, "--archive-unproven"))[str(path)]
    assert (entry["disposition"], entry["reason"], entry["outcome"]) == (
        "SKIP_ACTIVE", "added 10.0 h ago, younger than --min-age-hours 24", "kept")


def test_list_shows_the_idle_time_reap_reads(repo: GitRepo, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11, section 5: ``worktree list`` said ``0m`` where ``reap`` said idle 48 h. A
    rewritten reflog file (``git reflog expire``, ``gc``) is new on disk while its last entry is
    old: both read the entry, never the file's mtime."""
    path = tmp_path / "quiet"
    add_worktree(repo, path, "-b", "quiet", start="main", hours=48)
    age_files(path, 48)
    logs_head = repo.path / ".git" / "worktrees" / "quiet" / "logs" / "HEAD"
    logs_head.write_bytes(logs_head.read_bytes())  # rewritten just now, entries unchanged
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    row = next(w for w in json.loads(out)["worktrees"] if w["path"] == str(path))
    idle_gate = next(g for g in row["reap"]["gates"] if g["name"] == "idle")
    assert (rc, row["idle_hours"], idle_gate) == (
        0, 48.0, {"name": "idle", "passed": True, "detail": "idle for 48.0 h (window 3 h)"})
    reaped = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert (reaped["outcome"], next(g for g in reaped["gates"] if g["name"] == "idle")) == (
        "would_remove", idle_gate)
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list")
    line = next(ln for ln in out.splitlines() if str(path) in ln)
    assert (rc, line.split("│")[5].strip()) == (0, "2d")
