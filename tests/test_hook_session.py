"""One scripted agent session through the real ``branchkeeper hook`` process (issue 6, s4).

The agent works in a clone of a bare ``origin``: it creates branches up to the WIP cap and is
denied with the right list, merges one (PostToolUse, ``cleanup_after_merge.mode: act``, deletes
it), creates again, leaves a dirty worktree and is refused at Stop, commits and pushes, and
stops cleanly. Then a sub-agent variant through SubagentStop, and the WorktreeCreate /
WorktreeRemove pair.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import pruned_now, run_hook

SESSION = "sess-42"
SHORT = 10
NAMES = {1: "alpha", 2: "bravo", 3: "charlie", 4: "delta"}
CONFIG = ("branches:\n  wip:\n    cap: 3\n  cleanup_after_merge:\n    mode: act\n")


class Agent:
    """Plays one Claude Code thread: runs commands in the clone and fires the hooks."""

    def __init__(self, repo: GitRepo, agent_id: str = "") -> None:
        self.repo = repo
        self.agent_id = agent_id

    def payload(self, **extra: Any) -> dict[str, Any]:
        base: dict[str, Any] = {"session_id": SESSION, "cwd": str(self.repo.path),
                                "transcript_path": "/dev/null"}
        if self.agent_id:
            base.update(agent_id=self.agent_id, agent_type="general-purpose")
        base.update(extra)
        return base

    def pre(self, command: str) -> subprocess.CompletedProcess[bytes]:
        return run_hook("PreToolUse", self.payload(
            hook_event_name="PreToolUse", tool_name="Bash", tool_input={"command": command}))

    def bash(self, command: str) -> subprocess.CompletedProcess[bytes]:
        """PreToolUse must be quiet; run the command; return the PostToolUse result."""
        pre = self.pre(command)
        assert (pre.returncode, pre.stdout, pre.stderr) == (0, b"", b""), pre
        ran = subprocess.run(["bash", "-c", command], cwd=self.repo.path, capture_output=True)
        assert ran.returncode == 0, ran.stderr
        return run_hook("PostToolUse", self.payload(
            hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": command},
            tool_response={"stdout": ran.stdout.decode(), "stderr": "", "interrupted": False}))

    def stop(self) -> subprocess.CompletedProcess[bytes]:
        event = "SubagentStop" if self.agent_id else "Stop"
        return run_hook(event, self.payload(hook_event_name=event, stop_hook_active=False))


def _quiet(result: subprocess.CompletedProcess[bytes]) -> None:
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), result


def _setup(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, work = remote_and_clone
    work.commit("policy", files={".branchkeeper.yaml": CONFIG})
    work.git("push", "-q", "origin", "main")
    return work


def _block(reason: str) -> bytes:
    return json.dumps({"decision": "block", "reason": reason}, separators=(",", ":")).encode()


def test_scripted_session(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    work = _setup(remote_and_clone)
    agent = Agent(work)
    pruned_now(work.path)  # the session-start prune has run: the routine has nothing to say
    _quiet(run_hook("SessionStart", agent.payload(hook_event_name="SessionStart",
                                                  source="startup")))
    _quiet(run_hook("UserPromptSubmit", agent.payload(prompt="build three features")))
    tips = {}
    for n in (1, 2, 3):
        _quiet(agent.bash(f"git switch -q -c {NAMES[n]} main"))
        _quiet(agent.bash(f"echo {n} > f{n}.txt && git add f{n}.txt && git commit -q -m f{n}"))
        tips[n] = work.rev(f"{NAMES[n]}")
        _quiet(agent.bash("git switch -q main"))
    records = work.git("config", "--get-regexp", r"^branch\.alpha\.branchkeeper")
    assert records.splitlines()[0] == f"branch.alpha.branchkeepercreator {SESSION}:"
    assert records.splitlines()[2:] == ["branch.alpha.branchkeeperroute bash",
                                        f"branch.alpha.branchkeepertouchedby {SESSION}:"]

    denied = agent.pre("git switch -c delta")
    assert denied.returncode == 0 and denied.stderr == b""
    # The hook answers exactly the guard's decision (its wording is the guard's, pinned in the
    # guard's own tests); the list names the three open branches, and the principle ends it.
    reason = decide_command("git switch -c delta", cwd=str(work.path)).text
    assert json.loads(denied.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}}
    assert reason.startswith("[R-BRANCH-WIP-CAP] Creating delta would exceed the WIP cap: 3 open "
                             "work branches, cap 3 (branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not).")
    assert [ln.split(" (")[0] for ln in reason.splitlines() if ln.startswith("  - ")] == [
        "  - alpha", "  - bravo", "  - charlie"]
    assert reason.endswith(BRANCH_LIMIT_PRINCIPLE)

    merged = agent.bash("git merge -q --no-ff -m 'merge alpha' alpha")
    assert (merged.returncode, merged.stderr) == (0, b"")
    assert json.loads(merged.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": f"deleted alpha (merged into main); restore: "
                             f"git branch alpha {tips[1]}"}}
    assert not work.has_ref("refs/heads/alpha")
    journal = (work.path / ".git/branchkeeper/journal.jsonl").read_text().splitlines()
    assert json.loads(journal[0])["op"] == "merge-cleanup"

    # the merge's cleanup read a fresh inventory, so the next creation names the branches
    # whose commits exist nowhere else (first document, section 4: loud in every creation)
    created = agent.pre("git switch -q -c delta")
    assert (created.returncode, created.stderr) == (0, b"")
    assert json.loads(created.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "additionalContext": "\n".join(
            f"LOST WORK RISK: branch {n} holds commits no remote-tracking ref contains (0d old); "
            f"secure them now: git push -u origin {n}" for n in ("bravo", "charlie"))}}
    work.git("switch", "-q", "-c", "delta")
    _quiet(run_hook("PostToolUse", agent.payload(
        hook_event_name="PostToolUse", tool_name="Bash",
        tool_input={"command": "git switch -q -c delta"},
        tool_response={"stdout": "", "stderr": "", "interrupted": False})))
    (work.path / "notes.txt").write_text("half done\n")
    stop = agent.stop()
    assert (stop.returncode, stop.stderr) == (0, b"")
    assert stop.stdout == _block(
        "branchkeeper: do not stop yet; finish the work on these branches first (the "
        "Stop guard):\n"
        f"- bravo: commits no remote holds (tip {tips[2][:SHORT]}: not on any origin branch nor "
        "in main); push them\n    git push -u origin bravo\n"
        f"- charlie: commits no remote holds (tip {tips[3][:SHORT]}: not on any origin branch nor "
        "in main); push them\n    git push -u origin charlie\n"
        f"- delta: uncommitted changes in {work.path} (notes.txt); commit and push them\n"
        f"    git -C {work.path} add -- notes.txt && git -C {work.path} commit -m '<what the "
        f"change does>' && git -C {work.path} push -u origin delta\n\n" + BRANCH_LIMIT_PRINCIPLE)

    _quiet(agent.bash("git add -A && git commit -q -m notes"))
    _quiet(agent.bash("git push -q -u origin bravo charlie delta"))
    _quiet(agent.stop())
    state = json.loads(next((work.path / ".git/branchkeeper/sessions").glob("*.json"))
                       .read_text())
    assert state["stop_blocks"] == {}


def test_subagent_stop(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    work = _setup(remote_and_clone)
    main, sub = Agent(work), Agent(work, "agent-7")
    _quiet(sub.bash("git switch -q -c sub-work main"))
    _quiet(sub.bash("echo x > s.txt && git add s.txt && git commit -q -m s"))
    tip = work.rev("sub-work")
    expected = _block(
        "branchkeeper: do not stop yet; finish the work on these branches first (the "
        "Stop guard):\n"
        f"- sub-work: commits no remote holds (tip {tip[:SHORT]}: not on any origin branch nor in "
        "main); push them\n    git push -u origin sub-work\n\n" + BRANCH_LIMIT_PRINCIPLE)
    assert sub.stop().stdout == expected
    # the coordinator answers for its sub-agents' unpushed work too
    assert main.stop().stdout == expected
    # advise: the sub-agent may stop; the message becomes a notice
    work.commit("advise", files={".branchkeeper.yaml": CONFIG + "  stop_guard:\n"
                                 "    unpushed_subagent: advise\n"})
    tip = work.rev("sub-work")  # the checkout is on sub-work: the config commit moved it
    advised = sub.stop()
    assert json.loads(advised.stdout) == {"systemMessage": (
        "branchkeeper: before you stop, these branches still need work:\n"
        f"- sub-work: commits no remote holds (tip {tip[:SHORT]}: not on any origin branch nor in "
        "main); push them\n    git push -u origin sub-work")}
    _quiet(sub.bash("git push -q -u origin sub-work"))
    _quiet(sub.stop())
    _quiet(main.stop())


def test_worktree_create_remove_pair(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    work = _setup(remote_and_clone)
    main = Agent(work)
    created = run_hook("WorktreeCreate", main.payload(hook_event_name="WorktreeCreate",
                                                      name="w1"))
    path = work.path / ".claude" / "worktrees" / "w1"
    assert (created.returncode, created.stdout, created.stderr) == (0, f"{path}\n".encode(), b"")
    sub = Agent(GitRepo(path), "agent-w")
    write = run_hook("PostToolUse", sub.payload(
        hook_event_name="PostToolUse", tool_name="Write",
        tool_input={"file_path": str(path / "w.txt"), "content": "w\n"}, tool_response={}))
    _quiet(write)
    assert work.git("config", "branch.worktree-w1.branchkeepercreator") == f"{SESSION}:agent-w"
    work.commit("w", files={"w.txt": "w\n"}, cwd=path)
    merged = main.bash("git merge -q --no-ff -m 'merge w1' worktree-w1")
    assert json.loads(merged.stdout)["hookSpecificOutput"]["additionalContext"] == (
        f"worktree-w1 is merged into main and checked out in a worktree; finish with: "
        f"git worktree remove {path} && git branch -d -- worktree-w1")
    removed = run_hook("WorktreeRemove", main.payload(hook_event_name="WorktreeRemove",
                                                      worktree_path=str(path)))
    assert (removed.returncode, removed.stdout) == (0, b"")
    assert removed.stderr.decode().startswith(
        "branchkeeper: deleted branch worktree-w1 (merged into main: every commit is on it); "
        "restore: git fetch ")
    assert not path.exists() and not work.has_ref("refs/heads/worktree-w1")


