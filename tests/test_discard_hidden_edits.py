"""The discard rule (``R-GIT-DISCARD-CHANGES``) sees the edits a skip-worktree or
assume-unchanged flag hides from ``git status`` (F08): every command that would overwrite or
delete such an edit is denied through ``branchkeeper check``, as the same command is over a plain
edit, and allowed when the flagged file holds no edit (real repositories, git as installed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from branchkeeper.analysis.guard_facts import discardable
from branchkeeper.git.run import processes_started
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike

FLAGS = {"skip-worktree": "--skip-worktree", "assume-unchanged": "--assume-unchanged"}
#: (command, the file whose hidden edit it overwrites or deletes)
COMMANDS = [
    ("git checkout -- a.txt", "a.txt"),
    ("git restore a.txt", "a.txt"),
    ("git reset --hard", "a.txt"),
    ("git checkout -f main", "a.txt"),
    ("git rm -f a.txt", "a.txt"),
    ("git rm -rf d", "d/x"),
    ("git mv -f b.txt d/x", "d/x"),
    ("git checkout other -- a.txt", "a.txt"),
    ("git restore --source other a.txt", "a.txt"),
]


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"a.txt": "a\n", "b.txt": "b\n", "d/x": "x\n"})
    repo.switch("other", create=True)
    repo.commit("other", files={"a.txt": "other\n"})
    repo.switch("main")
    return repo


def _flag(repo: GitRepo, flag: str, name: str) -> None:
    subprocess.run(["git", "update-index", FLAGS[flag], name], cwd=repo.path, check=True)


def _status(repo: GitRepo) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=repo.path, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize("flag", sorted(FLAGS))
@pytest.mark.parametrize(("command", "name"), COMMANDS)
def test_a_discard_over_a_hidden_edit_is_denied_and_without_an_edit_allowed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        flag: str, command: str, name: str) -> None:
    repo = _repo(tmp_path)
    _flag(repo, flag, name)
    assert check_and_hook_alike(command, repo.path, monkeypatch, capsys)["verdict"] == "allow"
    (repo.path / name).write_text("precious\n")
    assert _status(repo) == ""
    checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["rule_id"]) == ("deny", "R-GIT-DISCARD-CHANGES")
    assert f"uncommitted work in {repo.path} (" in checked["reason"]
    assert checked["reason"].endswith(f"):\n  - {name}")


def test_the_same_discard_over_a_plain_edit_is_denied_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    (repo.path / "a.txt").write_text("precious\n")
    plain = check_and_hook_alike("git checkout -- a.txt", repo.path, monkeypatch, capsys)
    subprocess.run(["git", "checkout", "--", "a.txt"], cwd=repo.path, check=True)
    _flag(repo, "assume-unchanged", "a.txt")
    (repo.path / "a.txt").write_text("precious\n")
    hidden = check_and_hook_alike("git checkout -- a.txt", repo.path, monkeypatch, capsys)
    assert hidden == plain
    assert plain["reason"] == (
        f"`git checkout -- a.txt` would discard uncommitted work in {repo.path} (changes to "
        "tracked files):\n  - a.txt")


def test_a_stash_save_beside_a_hidden_edit_is_denied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    _flag(repo, "assume-unchanged", "a.txt")
    (repo.path / "a.txt").write_text("precious\n")
    # nothing else changed: git stash saves nothing and resets nothing
    assert check_and_hook_alike("git stash", repo.path, monkeypatch, capsys)["verdict"] == "allow"
    (repo.path / "b.txt").write_text("b and more\n")
    checked = check_and_hook_alike("git stash", repo.path, monkeypatch, capsys)
    p = repo.path
    assert (checked["verdict"], checked["rule_id"], checked["reason"]) == (
        "deny", "R-GIT-DISCARD-CHANGES",
        f"`git stash` would discard uncommitted work in {p} (edits a skip-worktree or "
        "assume-unchanged flag hides: the stash leaves them out and its reset overwrites them):"
        "\n  - a.txt")
    assert checked["way_out"] == (
        f"Clear the flags and commit those edits first (git -C {p} update-index "
        f"--no-skip-worktree -- a.txt && git -C {p} update-index --no-assume-unchanged -- "
        f"a.txt && git -C {p} commit -a), then run the command again; or ask a human.")
    subprocess.run(["git", "update-index", "--no-assume-unchanged", "a.txt"], cwd=p, check=True)
    assert check_and_hook_alike("git stash", repo.path, monkeypatch, capsys)["verdict"] == "allow"


def test_discardable_starts_no_process_for_hidden_edits_without_a_flagged_entry(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo.path / "a.txt").write_text("plain\n")

    def processes(*specs: str) -> tuple[tuple[str, ...], int]:
        before = processes_started()
        found = discardable(str(repo.path), specs, tracked=True, untracked=False, ignored=False)
        return found, processes_started() - before

    assert processes("a.txt") == (("a.txt",), 1)  # the one status
    _flag(repo, "assume-unchanged", "b.txt")
    (repo.path / "b.txt").write_text("hidden\n")
    assert processes() == (("a.txt", "b.txt"), 3)  # status, ls-files -v, hash-object
    assert processes("a.txt") == (("a.txt",), 4)  # and ls-files for the pathspecs
