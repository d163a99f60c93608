"""``worktree reap``: every gate and disposition on real repositories (issue 4, section 3)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.clock import NOW_ENV
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import processes_started
from branchkeeper.model.config_file import load_config
from branchkeeper.model.records import Containment
from tests.gitrepo import NOW, GitRepo
from tests.reaputil import (
    add_worktree,
    age_files,
    bk,
    by_path,
    commit_in,
    hours_env,
    reap_json,
)


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    clone.commit("ignore", files={".gitignore": ".env*\nbuild/\n.agentic/\n.claude/\n"},
                 days_ago=5)
    clone.git("push", "-q", "origin", "main")
    return clone


def merged_worktree(repo: GitRepo, tmp_path: Path, name: str) -> tuple[Path, str]:
    """A worktree on branch ``name`` whose one commit is merged into origin/main; aged 10 h."""
    path = tmp_path / name
    repo.git("fetch", "-q", "origin")
    w = add_worktree(repo, path, "-b", name, "--no-track", start="origin/main")
    tip = commit_in(w, f"{name} work", {f"{name}.txt": "x\n"})
    w.git("push", "-q", "origin", f"{name}:main")
    repo.git("merge", "-q", "--ff-only", tip)
    repo.commit(f"after {name}", files={f"after-{name}.txt": "y\n"}, days_ago=1)
    repo.git("push", "-q", "origin", "main")
    age_files(path)
    return path, tip


def gates(entry: dict[str, object]) -> list[tuple[object, ...]]:
    return [(g["name"], g["passed"], g["detail"]) for g in entry["gates"]]  # type: ignore[index,attr-defined]


def test_c01_unpushed_agent_work_is_kept(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo.path / ".claude" / "worktrees" / "x"
    w = add_worktree(repo, path, "-b", "worktree-x", start="main", hours=10)
    commit_in(w, "one", {"a.txt": "1\n"})
    tip = commit_in(w, "two", {"a.txt": "2\n"})
    age_files(path)
    data = reap_json(capsys, repo)
    entry = by_path(data)[str(path)]
    assert (entry["disposition"], entry["reason"], entry["outcome"]) == (
        "SKIP_NOT_PUSHED", "2 unique commit(s), never pushed", "kept")
    assert data["counts"] == {"removed": 0, "archived": 0, "would_remove": 0,
                              "would_archive": 0, "kept": 2, "raced": 0, "failed": 0}
    assert path.is_dir() and repo.rev("refs/heads/worktree-x") == tip
    facts = repo_facts(repo.path)
    inv = build_inventory(facts, load_config(facts.main_root).config)
    rec = inv.by_name()["worktree-x"]
    assert (rec.containment, rec.lost_work_risk) == (Containment.NOWHERE, True)


def test_merged_worktree_removed_and_journaled(repo: GitRepo, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path, tip = merged_worktree(repo, tmp_path, "feat-a")
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--dry-run")
    assert (rc, err) == (0, "")
    assert out == ("PR evidence: not needed\n"
                   "dry run: nothing is removed\n"
                   f"would remove: {path} (feat-a)\n"
                   "  REMOVABLE: every gate passed: removing the checkout loses nothing\n"
                   "would remove 1, would archive 0, keep 0\n")
    assert path.is_dir()
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap")
    restore = f"git worktree add {path} feat-a"
    assert (rc, err) == (0, "")
    assert out == ("PR evidence: not needed\n"
                   f"removed: {path} (feat-a)\n"
                   "  REMOVABLE: every gate passed: removing the checkout loses nothing\n"
                   f"  restore: {restore}\n"
                   "removed 1, archived 0, kept 0\n")
    assert not path.exists() and repo.rev("refs/heads/feat-a") == tip
    rc, out, _ = bk(capsys, "-C", str(repo.path), "undo", "--json")
    undo = json.loads(out)
    assert (rc, undo["op"], undo["items"], undo["worktrees"]) == (0, "worktree-reap", [
        {"ref": "refs/heads/feat-a", "old": tip, "remote": None, "outcome": "present",
         "reason": "", "command": ""}], [
        {"path": str(path), "branch": "feat-a", "commit": None, "outcome": "restored",
         "reason": "added back", "command": ""}])
    assert GitRepo(path).git("symbolic-ref", "--short", "HEAD") == "feat-a"  # undo re-added it
    assert GitRepo(path).rev("HEAD") == tip


def test_explain_lists_every_gate(repo: GitRepo, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = merged_worktree(repo, tmp_path, "feat-b")
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    names = [g[0] for g in gates(entry)]
    assert names == ["present", "not_main", "not_self", "not_protected", "no_hold", "unlocked",
                     "idle", "clean", "no_nested", "ignored_disposable", "preserved",
                     "refs_kept", "no_submodule"]
    assert all(g[1] for g in gates(entry))
    _rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--dry-run", "--explain")
    block = out.split(f"would remove: {path} (feat-b)\n")[1].split("would remove 1")[0]
    assert block.splitlines()[0] == ("  REMOVABLE: every gate passed: removing the checkout "
                                     "loses nothing")
    assert [ln.split(":")[0] for ln in block.splitlines()[1:]] == [
        "    pass present", "    pass not_main", "    pass not_self", "    pass not_protected",
        "    pass no_hold",
        "    pass unlocked", "    pass idle", "    pass clean", "    pass no_nested",
        "    pass ignored_disposable", "    pass preserved", "    pass refs_kept",
        "    pass no_submodule"]
    # --explain lists the main worktree too (kept), and the totals count what is listed
    listed = [ln for ln in out.splitlines() if ln.startswith(("would remove: ", "kept: "))]
    assert listed == [f"kept: {repo.path} (main)", f"would remove: {path} (feat-b)"]
    assert out.splitlines()[-1] == "would remove 1, would archive 0, keep 1"


def test_active_by_file_and_by_reflog(repo: GitRepo, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = merged_worktree(repo, tmp_path, "feat-c")
    (path / "feat-c.txt").touch()  # a file changed now
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert entry["disposition"] == "SKIP_ACTIVE"
    # sweep --clean removes this clean worktree with its merged branch now: reap says so
    assert entry["reason"] == ("last activity 0.0 h ago, within the 3 h activity window; "
                               "`branchkeeper sweep --clean` removes it now with its proven "
                               "branch unless it holds work (it does not wait for the window)")
    age_files(path)
    # a reflog entry now (the suite's now), no file touched
    GitRepo(path).git("checkout", "-q", "--detach", env=hours_env(0))
    age_files(path)
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert (entry["disposition"], entry["reason"]) == (
        "SKIP_ACTIVE", "last activity 0.0 h ago, within the 3 h activity window")
    monkeypatch.setenv(NOW_ENV, str(NOW + 4 * 3600))  # four hours later, by the product's clock
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert entry["disposition"] == "REMOVABLE"  # detached at a commit in origin/main


def test_locked_self_and_main(repo: GitRepo, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    p1, _ = merged_worktree(repo, tmp_path, "feat-l")
    p2, _ = merged_worktree(repo, tmp_path, "feat-s")
    repo.git("worktree", "lock", "--reason", "in use by CI", str(p1))
    _rc, out, _ = bk(capsys, "-C", str(p2), "worktree", "reap", "--json", "--dry-run")
    data = by_path(json.loads(out))
    assert (data[str(p1)]["disposition"], data[str(p1)]["reason"]) == (
        "SKIP_LOCKED", "locked: in use by CI")
    assert (data[str(p2)]["disposition"], data[str(p2)]["reason"]) == (
        "SKIP_SELF", "this command runs inside it")
    assert (data[str(repo.path)]["disposition"], data[str(repo.path)]["reason"]) == (
        "SKIP_SELF", "the main worktree is never removed")


def test_c03_detached_leftovers(repo: GitRepo, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    w1p, _ = merged_worktree(repo, tmp_path, "w1")
    (w1p / "README.md").write_text("modified\n")
    w2p = tmp_path / "w2"
    w2 = add_worktree(repo, w2p, "--detach", start="main", hours=400)
    head = commit_in(w2, "crash residual", {"r.txt": "r\n"}, hours=400)
    age_files(w1p, 400)
    age_files(w2p, 400)
    data = by_path(reap_json(capsys, repo, "--min-age-hours", "1"))
    assert (data[str(w1p)]["disposition"], data[str(w1p)]["reason"]) == (
        "SKIP_DIRTY", "1 tracked change(s): README.md")
    e2 = data[str(w2p)]
    assert (e2["disposition"], e2["reason"], e2["triage"], e2["outcome"]) == (
        "SKIP_UNREFERENCED_COMMIT", f"detached HEAD {head[:10]} is in no ref",
        f"git -C {w2p} branch -r --contains {head}", "kept")
    assert w1p.is_dir() and w2p.is_dir()
    # the reachability check is real: once a remote-tracking ref holds it, W2 is removable
    w2.git("push", "-q", "origin", "HEAD:refs/heads/residual")
    repo.git("fetch", "-q", "origin")
    age_files(w2p, 400)
    data = by_path(reap_json(capsys, repo))
    assert (data[str(w2p)]["disposition"], data[str(w2p)]["outcome"]) == ("REMOVABLE", "removed")
    assert data[str(w2p)]["restore"] == [f"git worktree add --detach {w2p} {head}"]
    assert not w2p.exists() and w1p.is_dir()


def test_detached_held_only_by_local_branch(repo: GitRepo, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit("local only", files={"l.txt": "l\n"}, days_ago=2)
    path = tmp_path / "d"
    add_worktree(repo, path, "--detach", start="main")
    age_files(path)
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    assert (entry["disposition"], entry["reason"]) == (
        "SKIP_UNPROVEN", f"detached HEAD {repo.rev('main')[:10]} is held only by the local ref "
                         "refs/heads/main, in no remote-tracking ref")


def test_min_age_is_explicit(repo: GitRepo, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = merged_worktree(repo, tmp_path, "feat-m")
    assert by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]["disposition"] == "REMOVABLE"
    entry = by_path(reap_json(capsys, repo, "--dry-run", "--min-age-hours", "48"))[str(path)]
    assert (entry["disposition"], entry["reason"]) == (
        "SKIP_ACTIVE", "added 10.0 h ago, younger than --min-age-hours 48")


def test_ages_follow_the_product_clock_not_the_suite_s(
        repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock is BRANCHKEEPER_NOW (the suite pins it to NOW): a day later the same worktree
    # is 34 h old, however long the suite has been running.
    path, _ = merged_worktree(repo, tmp_path, "feat-c")
    monkeypatch.setenv(NOW_ENV, str(NOW + 24 * 3600))
    entry = by_path(reap_json(capsys, repo, "--dry-run", "--min-age-hours", "48"))[str(path)]
    assert (entry["disposition"], entry["reason"]) == (
        "SKIP_ACTIVE", "added 34.0 h ago, younger than --min-age-hours 48")
    monkeypatch.setenv(NOW_ENV, "not a number")  # ignored: the wall clock
    from branchkeeper.clock import now
    assert abs(now() - time.time()) < 60


def test_unpushed_zero_unique_commits_is_removable(repo: GitRepo, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fresh"
    add_worktree(repo, path, "-b", "agent-task", start="main")
    age_files(path)
    entry = by_path(reap_json(capsys, repo, "--dry-run"))[str(path)]
    preserved = [g for g in gates(entry) if g[0] == "preserved"]
    assert (entry["disposition"], preserved) == (
        "REMOVABLE", [("preserved", True, "unpushed with no unique commits")])


def test_count_only_is_one_git_process(repo: GitRepo, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(3):
        add_worktree(repo, tmp_path / f"c{i}", "-b", f"c{i}")
    repo.git("worktree", "lock", str(tmp_path / "c0"))
    import shutil
    shutil.rmtree(tmp_path / "c1")
    before = processes_started()
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--count-only")
    assert processes_started() - before == 1
    assert (rc, out, err) == (0, "worktrees: 4 total, 3 linked, 1 locked, 1 prunable\n", "")
    rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--count-only", "--json")
    assert json.loads(out) == {"counts": {"total": 4, "linked": 3, "locked": 1, "prunable": 1}}


def test_worktree_list_shows_branch_state(repo: GitRepo, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = merged_worktree(repo, tmp_path, "feat-w")
    c01 = tmp_path / "c01"
    w = add_worktree(repo, c01, "-b", "c01")
    commit_in(w, "one", {"o.txt": "o\n"})
    _rc, out, _ = bk(capsys, "-C", str(repo.path), "worktree", "list", "--json")
    recs = {r["path"]: r["branch_state"] for r in json.loads(out)["worktrees"]}
    assert recs[str(path)] == {"state": "merged", "containment": None, "containing_ref": None,
                               "proof": {"kind": "ancestor", "base": "refs/remotes/origin/main"},
                               "ahead": 0, "reason": "merged into origin/main: every "
                                                     "commit is on it"}
    assert recs[str(c01)] == {"state": "live", "containment": "nowhere", "containing_ref": None,
                              "proof": None, "ahead": 1, "reason": ""}
    assert recs[str(repo.path)]["state"] == "default"
