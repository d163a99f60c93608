"""What a linked worktree's admin directory ``<common dir>/worktrees/<id>/`` holds that nothing
else does: its own refs (``refs/worktree/*``, ``refs/bisect/*``, ``refs/rewritten/*``) and its
submodule stores (``modules/``).

A commit held only by such a ref is LOST WORK RISK of that worktree and keeps it
(``SKIP_WORKTREE_REF``) from retire, reap and ``sweep --clean``; ``prune`` holds a prunable entry
whose refs or submodule stores hold work (the other entries still prune). A worktree with an
initialised submodule, which ``git worktree remove`` refuses, is ``SKIP_SUBMODULE`` in the dry
runs and the real runs alike.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.cleanuputil import cli, cli_json, norm
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike
from tests.reaputil import add_worktree, age_files, commit_in, hours_env

SUBMODULE = ("-c", "protocol.file.allow=always", "submodule")


def _ref_worktree(repo: GitRepo, tmp_path: Path, ref: str, *, name: str = "wt") -> tuple[Path, str]:
    """A detached worktree at main whose one commit of its own only ``ref`` (a ref of that
    worktree) holds, its HEAD back at main, idle for 30 h: (path, the commit)."""
    wt = tmp_path / name
    w = add_worktree(repo, wt, "--detach", start="main", hours=30)
    head = commit_in(w, "only here", {"o.txt": "o\n"}, hours=30)
    w.git("update-ref", ref, head)
    w.git("checkout", "-q", "--detach", "main", env=hours_env(30))
    age_files(wt, 30)
    return wt, head


def _ref_item(wt: Path, ref: str, head: str) -> dict[str, object]:
    leaf = ref.rsplit("/", 1)[-1]
    return {"kind": "worktree_ref", "subject": str(wt),
            "detail": f"its own ref {ref} holds 1 commit(s) no branch, tag or remote holds",
            "secure": f"git push origin {head}:refs/heads/rescue/{wt.name}-{leaf}-{head[:10]}",
            "count": 1, "age_days": 1.25, "worktree": str(wt)}


def _reachable(repo: GitRepo, oid: str) -> bool:
    return repo.git("cat-file", "-t", oid, check=False) == "commit"


@pytest.mark.parametrize("ref", ["refs/worktree/keep", "refs/bisect/bad",
                                 "refs/rewritten/onto"])
def test_a_commit_only_a_worktree_ref_holds_is_lost_work_and_keeps_the_worktree(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], ref: str) -> None:
    _, repo = remote_and_clone
    wt, head = _ref_worktree(repo, tmp_path, ref)
    code, doc = cli_json(capsys, repo, "sweep")
    assert code == 0
    assert doc["lost_work"] == [_ref_item(wt, ref, head)]
    assert doc["summary"]["lost_work_by_kind"]["worktree_ref"] == 1
    code, out, _ = cli(capsys, repo, "sweep")
    item = _ref_item(wt, ref, head)
    assert out.splitlines()[2:5] == [
        "LOST WORK RISK: 1 worktree ref(s) exist only in this clone",
        f"  worktree {wt}  {item['detail']}",
        f"    secure it: {item['secure']}"]
    blocker = (f"SKIP_WORKTREE_REF: its own refs hold commits no branch, tag or remote holds: "
               f"{ref} (1 commit(s))")
    code, out, _ = cli(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert (code, out) == (3, f"dry run: nothing is changed\n"
                              f"would keep worktree {wt}: SKIP_WORKTREE_REF\n"
                              f"  blocker: {blocker}\n"
                              "would record an automatic hold: it says why the worktree stays "
                              "and ends when a later retire removes it\n")
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[:2]) == (3, [f"kept worktree {wt}: SKIP_WORKTREE_REF",
                                                f"  blocker: {blocker}"])
    code, out, _ = cli(capsys, repo, "worktree", "reap")
    assert (code, out) == (0, f"PR evidence: not needed\nkept: {wt} (detached "
                              f"{repo.rev('main')[:10]})\n  {blocker}\n"
                              "removed 0, archived 0, kept 1\n")
    assert wt.is_dir() and _reachable(repo, head)
    assert GitRepo(wt).git("rev-parse", ref) == head


def test_a_worktree_ref_at_a_commit_a_branch_holds_keeps_nothing(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _ref_worktree(repo, tmp_path, "refs/worktree/keep")
    repo.git("push", "-q", "origin", f"{head}:refs/heads/saved")
    repo.git("fetch", "-q", "origin")
    code, doc = cli_json(capsys, repo, "sweep")
    assert (code, doc["lost_work"]) == (0, [])
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert code == 0 and norm(out).splitlines()[0] == f"removed worktree {wt}"
    assert not wt.exists()


def test_sweep_clean_keeps_a_merged_branch_worktree_whose_ref_holds_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt = tmp_path / "topic"
    w = add_worktree(repo, wt, "-b", "topic", start="main", hours=30)
    commit_in(w, "topic work", {"t.txt": "t\n"}, hours=30)
    repo.merge("topic", days_ago=1)
    repo.git("push", "-q", "origin", "main")
    extra = commit_in(w, "experiment", {"x.txt": "x\n"}, hours=30)
    w.git("update-ref", "refs/worktree/experiment", extra)
    w.git("reset", "-q", "--hard", "HEAD~1", env=hours_env(30))
    age_files(wt, 30)
    code, dry, _ = cli(capsys, repo, "sweep", "--clean", "--dry-run")
    code2, real, _ = cli(capsys, repo, "sweep", "--clean")
    assert (code, code2) == (0, 0)
    assert wt.is_dir() and repo.has_ref("refs/heads/topic") and _reachable(repo, extra)
    reason = ("SKIP_WORKTREE_REF: its own refs hold commits no branch, tag or remote holds: "
              "refs/worktree/experiment (1 commit(s))")
    assert reason in dry and reason in real
    assert [ln for ln in dry.splitlines() if "topic" in ln] == \
        [ln for ln in real.splitlines() if "topic" in ln]


def _prunable(repo: GitRepo, tmp_path: Path, name: str, *args: str) -> Path:
    wt = tmp_path / name
    add_worktree(repo, wt, *args, start="main", hours=30)
    return wt


def test_prune_holds_a_prunable_worktree_whose_ref_holds_work_and_prunes_the_rest(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _ref_worktree(repo, tmp_path, "refs/worktree/keep")
    plain = _prunable(repo, tmp_path, "plain", "-b", "plain")
    for gone in (wt, plain):
        gone.rename(gone.with_name(gone.name + "-moved"))
    item = _ref_item(wt, "refs/worktree/keep", head)
    why = "its own ref refs/worktree/keep holds 1 commit(s) no branch, tag or remote holds"
    risk = f"LOST WORK RISK: worktree {wt}  {item['detail']}; secure it: {item['secure']}"
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch", "--dry-run")
    assert code == 0
    assert doc["notes"] == [
        "dry run: fetch, worktree prune and the background worktree reap not run",
        f"would hold prunable worktree {wt} from git worktree prune: {why}", risk]
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch")
    assert code == 0
    assert doc["notes"] == [
        "fetch skipped (--no-fetch)",
        f"held prunable worktree {wt} from git worktree prune: {why}", risk,
        "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    listed = repo.git("worktree", "list", "--porcelain")
    assert f"worktree {wt}\n" in listed + "\n" and str(plain) not in listed
    assert "locked" not in listed  # held for the prune only
    assert repo.git("rev-parse", f"worktrees/{Path(wt).name}/refs/worktree/keep") == head
    code, doc = cli_json(capsys, repo, "sweep")
    assert [(i["kind"], i["subject"]) for i in doc["lost_work"]] == [("worktree_ref", str(wt))]


def _with_submodule(repo: GitRepo, tmp_path: Path) -> None:
    """Main gets a submodule ``lib`` (a local repository), pushed."""
    sub = GitRepo.init(tmp_path / "sub")
    sub.commit("s1", files={"s.txt": "s\n"}, days_ago=50)
    repo.git(*SUBMODULE, "add", "-q", str(sub.path), "lib")
    repo.commit("add lib", days_ago=40)
    repo.git("push", "-q", "origin", "main")


def _submodule_worktree(repo: GitRepo, tmp_path: Path, name: str, *, init: bool = True
                        ) -> Path:
    wt = tmp_path / name
    w = add_worktree(repo, wt, "-b", name, start="main", hours=30)
    if init:
        w.git(*SUBMODULE, "update", "--init", "-q")
    age_files(wt, 30)
    return wt


def test_a_worktree_with_an_initialised_submodule_is_kept_by_dry_and_real_runs_alike(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "withsub")
    reason = ("initialised submodule(s): modules/lib; git refuses to remove it: check that "
              "their commits are on their remotes (triage), then remove it by hand")
    triage = shlex.join(["git", "-C", str(wt), "submodule", "foreach", "--recursive",
                         "git log --oneline HEAD --branches --not --remotes"])
    code, out, _ = cli(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert (code, out) == (3, f"dry run: nothing is changed\n"
                              f"would keep worktree {wt}: SKIP_SUBMODULE\n"
                              f"  blocker: SKIP_SUBMODULE: {reason}\n"
                              f"  triage: {triage}\n"
                              "would record an automatic hold: it says why the worktree stays "
                              "and ends when a later retire removes it\n")
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[:3]) == (3, [f"kept worktree {wt}: SKIP_SUBMODULE",
                                                f"  blocker: SKIP_SUBMODULE: {reason}",
                                                f"  triage: {triage}"])
    code, doc = cli_json(capsys, repo, "worktree", "list")
    (row,) = [w for w in doc["worktrees"] if w["path"] == str(wt)]
    assert (row["retire"]["disposition"], row["retire"]["reason"]) == ("SKIP_SUBMODULE", reason)
    assert row["reap"]["disposition"] == "SKIP_SUBMODULE"
    code, out, _ = cli(capsys, repo, "worktree", "reap")
    assert (code, out) == (0, f"PR evidence: not needed\nkept: {wt} (withsub)\n"
                              f"  SKIP_SUBMODULE: {reason}\n  triage: {triage}\n"
                              "removed 0, archived 0, kept 1\n")
    assert (wt / "lib" / "s.txt").is_file()


def test_a_worktree_whose_submodule_is_not_initialised_is_removable(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "nosub", init=False)
    code, out, _ = cli(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert code == 0 and out.splitlines()[1] == f"would remove worktree {wt}"
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert code == 0 and not wt.exists()


def test_sweep_clean_dry_and_real_runs_agree_on_a_merged_worktree_with_a_submodule(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "topic")
    commit_in(GitRepo(wt), "topic work", {"t.txt": "t\n"}, hours=30)
    repo.merge("topic", days_ago=1)
    repo.git("push", "-q", "origin", "main")
    age_files(wt, 30)
    code, dry, _ = cli(capsys, repo, "sweep", "--clean", "--dry-run")
    code2, real, _ = cli(capsys, repo, "sweep", "--clean")
    assert (code, code2) == (0, 0)
    assert "SKIP_SUBMODULE" in dry
    assert [ln for ln in norm(dry).splitlines() if "topic" in ln] == \
        [ln for ln in norm(real).splitlines() if "topic" in ln]
    assert wt.is_dir() and repo.has_ref("refs/heads/topic")


def test_prune_holds_a_prunable_worktree_with_a_submodule_store_and_prunes_the_rest(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "withsub")
    plain = _submodule_worktree(repo, tmp_path, "plain", init=False)
    for gone in (wt, plain):
        gone.rename(gone.with_name(gone.name + "-moved"))
    admin = repo.path / ".git" / "worktrees" / "withsub"
    store = admin / "modules" / "lib"
    why = f"submodule store(s) lib in {admin / 'modules'}"
    secure = shlex.join(["git", "--git-dir", str(store), "push", "origin",
                         "refs/heads/*:refs/heads/*", "HEAD:refs/heads/rescue/withsub-lib"])
    risk = (f"LOST WORK RISK: worktree {wt}  submodule store {store} of a worktree whose "
            "directory is gone (prunable): git worktree prune would delete it and the submodule "
            f"commits only it holds; secure it: {secure}")
    code, doc = cli_json(capsys, repo, "prune", "--no-fetch")
    assert code == 0
    assert doc["notes"] == [
        "fetch skipped (--no-fetch)",
        f"held prunable worktree {wt} from git worktree prune: {why}", risk,
        "worktree reap not started (BRANCHKEEPER_REAP_DISABLE=1)"]
    listed = repo.git("worktree", "list", "--porcelain")
    assert str(wt) in listed and str(plain) not in listed and "locked" not in listed
    assert (store / "HEAD").is_file()


def test_a_submodule_checked_out_by_hand_is_found_through_gitmodules(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "byhand", init=False)
    (wt / "lib").rmdir()
    repo.git("clone", "-q", str(tmp_path / "sub"), str(wt / "lib"))  # its own .git directory
    age_files(wt, 30)
    assert not (repo.path / ".git" / "worktrees" / "byhand" / "modules").exists()
    repo.git("worktree", "remove", str(wt), check=False)
    assert (wt / "lib" / "s.txt").is_file()  # git refuses it too: the gate says so first
    code, doc = cli_json(capsys, repo, "worktree", "retire", "--dry-run", str(wt))
    assert (code, doc["disposition"], doc["blockers"]) == (3, "SKIP_SUBMODULE", [
        "SKIP_SUBMODULE: initialised submodule(s): lib; git refuses to remove it: check that "
        "their commits are on their remotes (triage), then remove it by hand"])


def test_the_guard_denies_a_worktree_remove_that_deletes_a_worktree_ref_holding_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    wt, head = _ref_worktree(repo, tmp_path, "refs/worktree/keep")
    retire = f"`branchkeeper worktree retire {wt}` check it for you."
    for command in (f"git worktree remove {wt}", f"git worktree remove --force {wt}"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("deny", (
            f"[R-GIT-WORKTREE-REMOVE-FORCE] `{command}` would lose work:\n"
            "refs of its own that hold commits no branch, tag or remote holds (the removal "
            "deletes them):\n  - refs/worktree/keep (1 commit(s))\n\n"
            "First keep each listed ref's commits on a branch and push it "
            f"(git -C {wt} branch '<name>' '<ref>'); then remove the worktree without --force "
            f"(git worktree remove {wt}), or let {retire}\n\n{BRANCH_LIMIT_PRINCIPLE}")), command
    # rm -r leaves the admin directory: the ref stays (and prune holds the entry)
    assert check_and_hook_alike(f"rm -rf {wt}", repo.path, monkeypatch, capsys)["verdict"] \
        == "allow"
    assert wt.is_dir() and _reachable(repo, head)


def test_the_guard_denies_a_forced_remove_of_a_worktree_with_a_submodule_store(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "withsub")
    store = repo.path / ".git" / "worktrees" / "withsub" / "modules" / "lib"
    checked = check_and_hook_alike(f"git worktree remove --force {wt}", repo.path, monkeypatch,
                                   capsys)
    assert (checked["verdict"], checked["text"]) == ("deny", (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree remove --force {wt}` would lose work:\n"
        "submodule stores (--force deletes them with any submodule commit only they hold):\n"
        f"  - {store}\n\n"
        f"First push each submodule's commits (git -C {wt} submodule foreach --recursive "
        "'git log --oneline HEAD --branches --not --remotes' lists them); then it is removed "
        "by hand: git refuses a worktree with submodule stores without --force, and "
        f"`branchkeeper worktree retire {wt}` keeps it (SKIP_SUBMODULE). Once that lists no "
        f"commit, a human runs git worktree remove --force {wt}, which deletes the stores with "
        f"it.\n\n{BRANCH_LIMIT_PRINCIPLE}"))
    # what the text says: without --force git refuses, and retire keeps the worktree
    refused = subprocess.run(["git", "worktree", "remove", str(wt)], cwd=repo.path,
                             capture_output=True, text=True, check=False)
    assert refused.returncode != 0 and "submodules cannot be moved or removed" in refused.stderr
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert code != 0 and "SKIP_SUBMODULE" in out and wt.is_dir()
    # without --force git refuses a worktree with submodules itself: nothing to lose
    assert check_and_hook_alike(f"git worktree remove {wt}", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def test_f02_the_guard_denies_removing_a_gone_worktree_whose_submodule_store_holds_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = remote_and_clone
    _with_submodule(repo, tmp_path)
    wt = _submodule_worktree(repo, tmp_path, "withsub")
    plain = _submodule_worktree(repo, tmp_path, "plain", init=False)
    shutil.rmtree(wt)
    shutil.rmtree(plain)
    store = repo.path / ".git" / "worktrees" / "withsub" / "modules" / "lib"
    secure = shlex.join(["git", "--git-dir", str(store), "push", "origin",
                         "refs/heads/*:refs/heads/*", "HEAD:refs/heads/rescue/withsub-lib"])
    for command in (f"git worktree remove {wt}", f"git worktree remove --force {wt}"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("deny", (
            f"[R-GIT-WORKTREE-REMOVE-FORCE] `{command}` would lose work:\n"
            "submodule stores (the removal deletes them with the entry, and any submodule "
            f"commit only they hold):\n  - {store}\n\n"
            f"First {secure}; then remove the worktree without --force (git worktree remove "
            f"{wt}), or let `branchkeeper worktree retire {wt}` check it for you.\n\n"
            + BRANCH_LIMIT_PRINCIPLE)), command
    # contrast: a gone worktree with no submodule store loses nothing to the removal
    assert check_and_hook_alike(f"git worktree remove {plain}", repo.path, monkeypatch,
                                capsys)["verdict"] == "allow"


def test_once_the_printed_command_secures_the_ref_the_worktree_retires(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, repo = remote_and_clone
    wt, head = _ref_worktree(repo, tmp_path, "refs/worktree/keep")
    (item,) = cli_json(capsys, repo, "sweep")[1]["lost_work"]
    repo.git(*shlex.split(item["secure"])[1:])  # git push origin <sha>:refs/heads/rescue/...
    rescue = f"refs/remotes/origin/rescue/wt-keep-{head[:10]}"
    assert repo.rev(rescue) == head
    assert cli_json(capsys, repo, "sweep")[1]["lost_work"] == []
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert code == 0 and norm(out).splitlines()[0] == f"removed worktree {wt}"
    assert not wt.exists() and _reachable(repo, head)
    assert repo.rev(rescue) == head  # the commit outlives the worktree and its ref
