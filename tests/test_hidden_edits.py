"""Edits ``git status`` cannot see (a skip-worktree or assume-unchanged file that differs from
its index entry) are uncommitted work for every reader: the sweep's LOST WORK RISK, sweep
--clean, retire, reap and the command guard (real repositories, git as installed)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.analysis.hidden_edits import hidden_edits
from branchkeeper.git.indexfile import may_hold_flags
from branchkeeper.git.run import processes_started
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike, run_hook
from tests.reaputil import add_worktree, age_files

FLAGS = {"skip-worktree": "--skip-worktree", "assume-unchanged": "--assume-unchanged"}


def _merged_worktree(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A repository whose branch ``feat`` is merged into ``main`` and checked out, idle for
    days, in the linked worktree ``wt``: clean, every remover would take it."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"README.md": "hello\n", "keep.txt": "k\n"}, days_ago=9)
    repo.switch("feat", create=True)
    repo.commit("feat", files={"feat.txt": "f\n"}, days_ago=8)
    repo.switch("main")
    repo.merge("feat", days_ago=7)
    wt = tmp_path / "wt"
    add_worktree(repo, wt, start="feat", hours=400)
    return repo, wt


def _hide_edit(wt: Path, flag: str) -> None:
    subprocess.run(["git", "update-index", FLAGS[flag], "README.md"], cwd=wt, check=True)
    (wt / "README.md").write_text("edited where git status does not look\n")
    assert subprocess.run(["git", "status", "--porcelain"], cwd=wt, capture_output=True,
                          check=True).stdout == b""


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_hidden_edit_is_lost_work_risk_everywhere(flag: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _hide_edit(wt, flag)
    age_files(wt, 400)
    secure = (f"git -C {wt} update-index --no-skip-worktree -- README.md && "
              f"git -C {wt} update-index --no-assume-unchanged -- README.md && "
              f"git -C {wt} add -- README.md && git -C {wt} commit -m 'WIP: save work'")
    code, out, _ = cli(capsys, repo, "sweep")
    block = out[out.index("LOST WORK RISK:"):].split("\n\n")[0]
    assert (code, block) == (0, "LOST WORK RISK: 1 dirty worktree(s) exist only in this clone\n"
                                f"  worktree {wt}  1 uncommitted or untracked file(s): README.md\n"
                                f"    secure it: {secure}")
    assert cli(capsys, repo, "sweep", "--fail-on-risk")[0] == 1

    code, doc = cli_json(capsys, repo, "sweep", "--clean")
    got = {i["name"]: (i["action"], i["blocking"]) for i in doc["branches"]}
    assert (code, got["feat"]) == (0, ("blocked", ["SKIP_DIRTY: README.md"]))

    code, doc = cli_json(capsys, repo, "worktree", "reap", "--min-age-hours", "1")
    (entry,) = [w for w in doc["worktrees"] if w["path"] == str(wt)]
    assert (code, entry["disposition"], entry["reason"]) == (
        0, "SKIP_DIRTY", "1 tracked change(s): README.md")

    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[:2]) == (3, [f"kept worktree {wt}: SKIP_DIRTY",
                                               "  blocker: SKIP_DIRTY: 1 tracked change(s): "
                                               "README.md"])

    for command in (f"rm -rf {wt}", f"git worktree remove --force {wt}",
                    f"git worktree remove {wt}"):
        checked = check_and_hook_alike(command, repo.path, monkeypatch, capsys)
        assert checked["verdict"] == "deny", command
        assert "uncommitted changes or untracked files:\n  - README.md" in checked["text"]
        assert (f"First commit the changes on the worktree's branch (git -C {wt} update-index "
                f"--no-skip-worktree -- README.md && git -C {wt} update-index "
                f"--no-assume-unchanged -- README.md && git -C {wt} add -A && git -C {wt} "
                "commit) or ask a human") in checked["text"]
    assert (wt / "README.md").read_text() == "edited where git status does not look\n"

    subprocess.run(secure, shell=True, check=True, capture_output=True)
    shown = subprocess.run(["git", "show", "HEAD:README.md"], cwd=wt, capture_output=True,
                           text=True, check=True).stdout
    assert shown == "edited where git status does not look\n"


def test_sparse_checkout_absent_and_unchanged_flagged_files_are_not_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo, wt = _merged_worktree(tmp_path)
    subprocess.run(["git", "sparse-checkout", "set", "--no-cone", "/keep.txt", "/feat.txt"],
                   cwd=wt, check=True, capture_output=True)
    assert not (wt / "README.md").exists()
    subprocess.run(["git", "update-index", "--assume-unchanged", "keep.txt"], cwd=wt, check=True)
    assert hidden_edits(wt) == []
    checked = check_and_hook_alike(f"git worktree remove --force {wt}", repo.path, monkeypatch,
                                   capsys)
    assert checked["verdict"] == "allow"
    code, doc = cli_json(capsys, repo, "worktree", "list")
    (row,) = [w for w in doc["worktrees"] if w["path"] == str(wt)]
    assert (code, row["dirty"]) == (0, {"tracked": 0, "untracked": 0})
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[0]) == (0, f"removed worktree {wt}")


def test_sparse_file_written_back_with_other_content_is_work(tmp_path: Path) -> None:
    """git (2.39 checked) clears the skip-worktree bit of a present file in a sparse checkout (status
    then shows it); with ``sparse.expectFilesOutsideOfPatterns`` it stays hidden: either way
    the edit is work."""
    _repo, wt = _merged_worktree(tmp_path)
    subprocess.run(["git", "sparse-checkout", "set", "--no-cone", "/keep.txt"], cwd=wt,
                   check=True, capture_output=True)
    subprocess.run(["git", "config", "--worktree", "sparse.expectFilesOutsideOfPatterns",
                    "true"], cwd=wt, check=True)
    (wt / "README.md").write_text("hello\n")
    (wt / "feat.txt").write_text("rewritten\n")
    assert hidden_edits(wt) == ["feat.txt"]


def test_index_scan_spares_the_process_only_when_no_entry_is_flagged(tmp_path: Path) -> None:
    repo, wt = _merged_worktree(tmp_path)
    index = Path(repo.git("rev-parse", "--git-path", "index", cwd=wt).strip())
    if not index.is_absolute():
        index = wt / index
    seen = []
    for step in (["--index-version", "2"], ["--index-version", "4"],
                 ["--skip-worktree", "feat.txt"], ["--no-skip-worktree", "feat.txt"],
                 ["--assume-unchanged", "keep.txt"], ["--no-assume-unchanged", "keep.txt"],
                 ["--index-version", "3"], ["--split-index"]):
        subprocess.run(["git", "update-index", *step], cwd=wt, check=True)
        seen.append(may_hold_flags(index))
    assert seen == [False, False, True, False, True, False, False, True]
    assert may_hold_flags(tmp_path / "no-index") is False
    (tmp_path / "junk").write_bytes(b"DIRC\0\0\0\x02\0\0\0\x05" + b"\0" * 30)
    assert may_hold_flags(tmp_path / "junk") is True
    assert json.loads(json.dumps(hidden_edits(wt))) == []


def test_stop_guard_names_a_hidden_edit_and_its_command_commits_it(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    bare, w = remote_and_clone
    w.switch("feature", create=True)
    fire = {"session_id": "sess-hidden", "cwd": str(w.path), "transcript_path": "/dev/null"}
    done = run_hook("PostToolUse", {**fire, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                    "tool_input": {"command": "git switch -c feature"},
                                    "tool_response": {"stdout": "", "stderr": "",
                                                      "interrupted": False}})
    assert (done.returncode, done.stderr) == (0, b"")
    _hide_edit(w.path, "skip-worktree")
    stop = run_hook("Stop", {**fire, "hook_event_name": "Stop", "stop_hook_active": False})
    command = (f"git -C {w.path} update-index --no-skip-worktree -- README.md && "
               f"git -C {w.path} update-index --no-assume-unchanged -- README.md && "
               f"git -C {w.path} add -- README.md && git -C {w.path} commit -m '<what the "
               f"change does>' && git -C {w.path} push -u origin feature")
    reason = json.loads(stop.stdout)["reason"]
    assert reason == (
        "branchkeeper: do not stop yet; finish the work on these branches first (the Stop "
        f"guard):\n- feature: uncommitted changes in {w.path} (README.md); commit and push "
        f"them\n    {command}\n\n{BRANCH_LIMIT_PRINCIPLE}")
    ran = subprocess.run(["bash", "-c", command], capture_output=True)
    assert ran.returncode == 0, ran.stderr
    assert bare.git("show", "feature:README.md") == "edited where git status does not look"


def test_rm_of_a_hidden_edit_is_denied_and_of_a_clean_file_allowed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _repo, wt = _merged_worktree(tmp_path)
    _hide_edit(wt, "assume-unchanged")
    checked = check_and_hook_alike("rm README.md", wt, monkeypatch, capsys)
    assert (checked["verdict"], "README.md" in checked["text"]) == ("deny", True)
    assert check_and_hook_alike("rm keep.txt", wt, monkeypatch, capsys)["verdict"] == "allow"


def test_git_processes_only_where_the_index_flags_a_file(tmp_path: Path) -> None:
    """No process for an index without a flagged entry; ls-files when one is flagged;
    hash-object as well when a flagged file is present, one for all of them."""
    _repo, wt = _merged_worktree(tmp_path)

    def processes() -> tuple[list[str], int]:
        before = processes_started()
        found = hidden_edits(wt)
        return found, processes_started() - before

    assert processes() == ([], 0)
    subprocess.run(["git", "sparse-checkout", "set", "--no-cone", "/keep.txt"], cwd=wt,
                   check=True, capture_output=True)
    assert processes() == ([], 1)  # README.md and feat.txt flagged, both absent
    subprocess.run(["git", "update-index", "--assume-unchanged", "keep.txt"], cwd=wt, check=True)
    (wt / "keep.txt").write_text("changed\n")
    assert processes() == (["keep.txt"], 2)


def test_session_start_and_report_count_the_hidden_edit(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _hide_edit(wt, "skip-worktree")
    started = run_hook("SessionStart", {"session_id": "s", "cwd": str(repo.path),
                                        "hook_event_name": "SessionStart", "source": "startup",
                                        "transcript_path": "/dev/null"})
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.splitlines()[:2] == [
        "LOST WORK RISK: 1 piece(s) of work exist only in this clone; secure them:",
        f"  worktree {wt}: 1 uncommitted or untracked file(s): README.md; git -C {wt} "
        f"update-index --no-skip-worktree -- README.md && git -C {wt} update-index "
        f"--no-assume-unchanged -- README.md && git -C {wt} add -- README.md && git -C {wt} "
        "commit -m 'WIP: save work'"]
    capsys.readouterr()
    assert main(["report", "--json", "--repo", str(repo.path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["repositories"]
    assert (row["lost_work"], row["lost_work_by_kind"], row["dirty_worktrees"]) == (
        1, {"dirty_worktree": 1}, 1)


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_a_flagged_file_deleted_outside_a_sparse_checkout_is_a_deletion(
        flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = _merged_worktree(tmp_path)
    subprocess.run(["git", "update-index", FLAGS[flag], "README.md"], cwd=wt, check=True)
    (wt / "README.md").unlink()
    assert hidden_edits(wt) == ["README.md"]
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[0]) == (3, f"kept worktree {wt}: SKIP_DIRTY")


def test_a_flagged_link_counts_when_retargeted_or_replaced(tmp_path: Path) -> None:
    _repo, wt = _merged_worktree(tmp_path)
    (wt / "link").symlink_to("keep.txt")
    for args in (["add", "link"], ["commit", "-q", "-m", "link"],
                 ["update-index", "--skip-worktree", "link"]):
        subprocess.run(["git", *args], cwd=wt, check=True)
    assert hidden_edits(wt) == []
    (wt / "link").unlink()
    (wt / "link").symlink_to("README.md")
    assert hidden_edits(wt) == ["link"]
    (wt / "link").unlink()
    (wt / "link").write_text("keep.txt")  # a file where the link was, with its target's text
    assert hidden_edits(wt) == ["link"]
