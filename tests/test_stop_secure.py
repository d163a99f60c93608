"""The Stop guard's command for uncommitted work leaves it pushed where a remote is configured
(the lost-work list's command, one function: ``lost_work.secure_command``), and says nothing
of pushing where none is: there it asks for a commit only, and judges no branch unpushed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook

SESSION = "sess-secure"


def _fire(repo: GitRepo, event: str, **extra: object) -> subprocess.CompletedProcess[bytes]:
    return run_hook(event, {"session_id": SESSION, "cwd": str(repo.path),
                            "transcript_path": "/dev/null", "hook_event_name": event, **extra})


def _touch_and_dirty(repo: GitRepo, *, commit: bool = False) -> None:
    repo.switch("feature", create=True)
    if commit:
        repo.commit("earlier", files={"a.txt": "a\n"})
    done = _fire(repo, "PostToolUse", tool_name="Bash",
                 tool_input={"command": "git switch -c feature"},
                 tool_response={"stdout": "", "stderr": "", "interrupted": False})
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (repo.path / "notes.txt").write_text("half done\n")


def _reason(stop: subprocess.CompletedProcess[bytes]) -> str:
    assert (stop.returncode, stop.stderr) == (0, b"")
    answer = json.loads(stop.stdout)
    assert answer["decision"] == "block"
    return str(answer["reason"])


def test_stop_command_commits_and_pushes(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    bare, w = remote_and_clone
    _touch_and_dirty(w)
    reason = _reason(_fire(w, "Stop", stop_hook_active=False))
    command = (f"git -C {w.path} add -- notes.txt && git -C {w.path} commit -m '<what the "
               f"change does>' && git -C {w.path} push -u origin feature")
    assert reason == (
        "branchkeeper: do not stop yet; finish the work on these branches first (the Stop "
        f"guard):\n- feature: uncommitted changes in {w.path} (notes.txt); commit and push "
        f"them\n    {command}\n\n{BRANCH_LIMIT_PRINCIPLE}")
    ran = subprocess.run(["bash", "-c", command], capture_output=True)
    assert ran.returncode == 0, ran.stderr
    assert bare.git("show", "feature:notes.txt") == "half done"
    stop = _fire(w, "Stop", stop_hook_active=False)
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, b"", b"")


def test_stop_without_a_remote_says_nothing_of_pushing(tmp_path: Path) -> None:
    w = GitRepo.init(tmp_path / "solo")
    w.commit("initial", files={"README.md": "hi\n"})
    _touch_and_dirty(w, commit=True)  # commits no remote holds: there is none
    reason = _reason(_fire(w, "Stop", stop_hook_active=False))
    command = (f"git -C {w.path} add -- notes.txt && git -C {w.path} commit -m '<what the "
               "change does>'")
    assert reason == (
        "branchkeeper: do not stop yet; finish the work on these branches first (the Stop "
        f"guard):\n- feature: uncommitted changes in {w.path} (notes.txt); commit them\n"
        f"    {command}\n\n{BRANCH_LIMIT_PRINCIPLE}")
    ran = subprocess.run(["bash", "-c", command], capture_output=True)
    assert ran.returncode == 0, ran.stderr
    stop = _fire(w, "Stop", stop_hook_active=False)
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, b"", b"")
