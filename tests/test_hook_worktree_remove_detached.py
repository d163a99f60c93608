"""WorktreeRemove never loses a detached HEAD that no ref holds: it is pinned first."""

from __future__ import annotations

import json

from branchkeeper.state.journal import Journal
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook


def test_detached_unreferenced_commit_is_pinned_before_removal(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    created = run_hook("WorktreeCreate", {"session_id": "S5", "cwd": str(w.path),
                                          "hook_event_name": "WorktreeCreate",
                                          "name": "agent-3"})
    assert created.returncode == 0, created.stderr
    path = created.stdout.decode().strip().splitlines()[-1]
    wt = GitRepo(w.path / ".claude" / "worktrees" / "agent-3")
    assert str(wt.path) == path
    wt.git("checkout", "-q", "--detach")
    precious = wt.commit("precious", files={"p.txt": "p\n"})
    removed = run_hook("WorktreeRemove", {"session_id": "S5", "cwd": str(w.path),
                                          "hook_event_name": "WorktreeRemove",
                                          "worktree_path": path})
    assert (removed.returncode, removed.stdout) == (0, b"")
    assert not wt.path.exists()
    pin = f"refs/branchkeeper/pinned/agent-3-{precious[:10]}"
    assert w.rev(pin) == precious
    op = Journal(common_dir_of(w.path)).operations()[-1]
    assert (op.op, [i.ref for i in op.items], op.status.value) == (
        "worktree-remove", [pin], "done")
    assert json.loads(json.dumps(op.items[0].to_json()))["old"] == precious


def test_worktree_create_in_a_repository_without_commits(tmp_path: object) -> None:
    from pathlib import Path

    repo = GitRepo.init(Path(str(tmp_path)) / "empty")
    out = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(repo.path),
                                      "hook_event_name": "WorktreeCreate", "name": "a1"})
    assert (out.returncode, out.stdout) == (1, b"")
    assert out.stderr.decode() == ("branchkeeper: the repository has no commit yet, so there "
                                   "is nothing to start a worktree from; make a first commit\n")


def test_pre_tool_use_without_session_id_is_still_judged(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    w.switch("wip", create=True)
    w.commit("unpushed", files={"u.txt": "u\n"})
    w.switch("main")
    out = run_hook("PreToolUse", {"cwd": str(w.path), "hook_event_name": "PreToolUse",
                                  "tool_name": "Bash",
                                  "tool_input": {"command": "git branch -D wip"}})
    assert out.returncode == 0
    decision = json.loads(out.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("[R-GIT-BRANCH-FORCE-DELETE] ")
