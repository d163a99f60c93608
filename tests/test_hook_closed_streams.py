"""A refusal survives a closed or failing output, and bad numbers in the state files never
block a new branch (found by outside testing of the hook path, issue 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo

DENY_RM = "rm -rf ../wt"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A repository with a dirty linked worktree ``../wt`` (an ``rm -rf`` of it is denied)."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a.txt": "1\n"})
    repo.worktree_add(tmp_path / "wt", "-b", "side")
    (tmp_path / "wt" / "untracked.txt").write_text("work\n")
    return repo


def _hook_with(redirect: str, cwd: Path, command: str) -> subprocess.CompletedProcess[bytes]:
    """The hook run by a shell with ``redirect`` applied (``>&-`` closes stdout)."""
    event = json.dumps({"session_id": "s", "cwd": str(cwd), "hook_event_name": "PreToolUse",
                        "tool_name": "Bash", "tool_input": {"command": command}})
    script = f'"{sys.executable}" -m branchkeeper hook PreToolUse {redirect}'
    return subprocess.run(["bash", "-c", script], input=event.encode(), capture_output=True)


def test_deny_with_stdout_closed_is_exit_2_with_the_reason(repo: GitRepo) -> None:
    result = _hook_with(">&-", repo.path, DENY_RM)
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode().startswith(
        "[R-GIT-WORKTREE-REMOVE-FORCE] `rm -rf ../wt` would delete the worktree ")
    assert b"Traceback" not in result.stderr


def test_deny_with_both_streams_closed_is_still_exit_2(repo: GitRepo) -> None:
    assert _hook_with(">&- 2>&-", repo.path, DENY_RM).returncode == 2


def test_quiet_answer_with_stdout_closed_is_exit_0(repo: GitRepo) -> None:
    result = _hook_with(">&-", repo.path, "ls -la")
    assert (result.returncode, result.stderr) == (0, b"")


def test_check_keeps_deny_when_output_cannot_be_written(repo: GitRepo) -> None:
    proc = subprocess.run(["bash", "-c", f'"{sys.executable}" -m branchkeeper check -- '
                                         f'"{DENY_RM}" > /dev/full'],
                          cwd=repo.path, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("branchkeeper: error: [Errno 28] No space left on device (if the output "
                           "could not be written, `branchkeeper log` still shows what a cleanup "
                           "did)\n")


def test_check_with_stdout_closed_keeps_its_exit_code(repo: GitRepo) -> None:
    for extra in ("", "--json "):
        proc = subprocess.run(["bash", "-c", f'"{sys.executable}" -m branchkeeper check {extra}-- '
                                             f'"{DENY_RM}" >&-'],
                              cwd=repo.path, capture_output=True, text=True)
        assert (proc.returncode, proc.stderr) == (2, ""), extra


def test_sweep_to_a_full_disk_is_an_error(repo: GitRepo) -> None:
    proc = subprocess.run(["bash", "-c", f'"{sys.executable}" -m branchkeeper sweep > /dev/full'],
                          cwd=repo.path, capture_output=True, text=True)
    assert proc.returncode == 4, proc.stderr
    assert "No space left on device" in proc.stderr


@pytest.mark.parametrize("age", ["1e999", "-1e999", "NaN", "Infinity", "1" * 400, "-5"])
def test_absurd_age_in_last_sweep_is_unknown(repo: GitRepo, age: str) -> None:
    """An age no day count can print reads as unknown; the creation is judged as usual."""
    repo.git("branch", "feat")
    state = repo.path / ".git" / "branchkeeper"
    state.mkdir(exist_ok=True)
    (state / "last-sweep.json").write_text(
        '{"time": 0, "branches": {"feat": ["' + repo.rev("feat") + '", "live", null, "nowhere", '
        + age + ', null]}}')
    proc = subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--", "git switch -c x"],
                          cwd=repo.path, capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (
        "allow\nLOST WORK RISK: branch feat holds commits no remote-tracking ref contains (age "
        "unknown); secure them now: git push -u origin feat\n")


def test_deeply_nested_state_files_are_ignored(repo: GitRepo) -> None:
    """A last sweep or config cache nested past the JSON reader's depth is no sweep / no cache
    (the config is validated again and the cache rewritten), never a refusal."""
    state = repo.path / ".git" / "branchkeeper"
    state.mkdir(exist_ok=True)
    deep = "[" * 100_000 + "]" * 100_000
    (state / "last-sweep.json").write_text(deep)
    (state / "config-cache.json").write_text(deep)
    proc = subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--", "git switch -c x"],
                          cwd=repo.path, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "allow\n", "")
    assert json.loads((state / "config-cache.json").read_text())["config"]["branches"]


@pytest.mark.parametrize("command", ["g\\it branch -D lonely", "g''it branch -D lonely",
                                     'g"i"t branch -D lonely', "$'\\x67'it branch -D lonely",
                                     "x=gi; ${x}t branch -D lonely"])
def test_hidden_spellings_reach_the_guard(repo: GitRepo, command: str) -> None:
    """The hook's textual fast path lets nothing through that ``check`` would refuse: a
    command that spells ``git`` through quotes, escapes or expansions is parsed and judged."""
    repo.switch("lonely", create=True)
    repo.commit("only here", files={"lonely.txt": "x\n"})
    repo.switch("main")
    check = subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--json", "--", command],
                           cwd=repo.path, capture_output=True, text=True)
    assert check.returncode == 2, check.stdout
    hook = _hook_with("", repo.path, command)
    assert hook.returncode == 0, hook.stderr
    answer = json.loads(hook.stdout)["hookSpecificOutput"]
    assert (answer["permissionDecision"], answer["permissionDecisionReason"]) == (
        "deny", json.loads(check.stdout)["text"])
