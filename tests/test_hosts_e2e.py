"""Every agent host end to end (issue 14, point 4): the command ``branchkeeper install --host
HOST`` wrote, driven with that host's documented JSON (tests/hostutil.py, fixtures and sources),
in a real repository:

- a new branch past the WIP cap is refused, with the same text ``branchkeeper check`` gives;
- ``git branch -D`` of a branch whose commits no other ref holds is refused;
- a harmless command gets the host's silent answer;
- malformed input fails open in the host's sense (exit 0, the host's "no decision");
- a Stop that leaves a touched branch dirty is refused in the host's Stop format (all five
  hosts have a Stop event: Stop, stop, AfterAgent, agentStop).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.answer import dump
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests import hostutil
from tests.gitrepo import GitRepo
from tests.guardworld import hermetic_env
from tests.hostutil import CASES, HostCase, fire, install

IDS = [c.name for c in CASES]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``work``: a clone at the cap of 2 (``feat-a`` pushed, ``lonely`` with a commit no other
    ref holds), every host installed; ``wt-<host>`` a worktree per host on its own pushed
    branch, with one untracked file."""
    w = tmp_path_factory.mktemp("hosts")
    env = hermetic_env(tmp_path_factory.mktemp("hhome"))
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        bare = GitRepo.init_bare(w / "origin.git")
        work = GitRepo.clone(bare.path, w / "work")
        work.commit("initial", files={"README.md": "hi\n",
                                      ".branchkeeper.yaml": "branches:\n  wip:\n    cap: 2\n",
                                      ".gitignore": ".claude/\n.codex/\n.cursor/\n.gemini/\n"
                                                    ".github/\n"})
        work.git("push", "-q", "origin", "main")
        work.switch("feat-a", create=True)
        work.commit("a", files={"a.txt": "a\n"})
        work.git("push", "-q", "-u", "origin", "feat-a")
        work.switch("lonely", create=True, start="main")
        work.commit("l", files={"l.txt": "l\n"})
        work.switch("main")
        for case in CASES:
            install(work.path, case.name)
        return w


def _deny_text(world: Path, command: str) -> str:
    decision = decide_command(command, cwd=str(world / "work"))
    assert decision.verdict.value == "deny"
    return decision.text


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_creation_past_the_cap_is_refused(world: Path, case: HostCase) -> None:
    work = world / "work"
    event, payload = case.pre(str(work), "git switch -c x")
    result = fire(work, case.name, event, payload)
    text = _deny_text(world, "git switch -c x")
    assert text.startswith("[R-BRANCH-WIP-CAP] Creating x would exceed the WIP cap: "
                           "2 open work branches, cap 2 (branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not).")
    assert (result.returncode, result.stdout, result.stderr) == (0, case.deny(text), b"")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_force_delete_of_unpushed_work_is_refused(world: Path, case: HostCase) -> None:
    work = world / "work"
    event, payload = case.pre(str(work), "git branch -D lonely")
    result = fire(work, case.name, event, payload)
    text = _deny_text(world, "git branch -D lonely")
    assert text.startswith("[R-GIT-BRANCH-FORCE-DELETE] `git branch -D lonely` would lose work")
    assert (result.returncode, result.stdout, result.stderr) == (0, case.deny(text), b"")


@pytest.mark.parametrize("command", ["ls -la", "git status", 'echo "done"'])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_harmless_command_gets_the_silent_answer(world: Path, case: HostCase,
                                                 command: str) -> None:
    work = world / "work"
    for event, payload in (case.pre(str(work), command), case.post(str(work), command)):
        result = fire(work, case.name, event, payload)
        assert (result.returncode, result.stdout, result.stderr) == (0, case.silent, b"")


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'{"cwd": 5}', b""])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_malformed_input_fails_open(world: Path, case: HostCase, raw: bytes) -> None:
    work = world / "work"
    event, _ = case.pre(str(work), "ls")
    result = fire(work, case.name, event, raw=raw)
    assert (result.returncode, result.stdout) == (0, case.silent)
    prefix = "branchkeeper hook PreToolUse" if case.name == "claude" else \
        f"branchkeeper hook {case.name} {event}"
    assert result.stderr.decode().startswith(f"{prefix}: ignored: malformed hook input: ")
    assert result.stderr.count(b"\n") == 1 and b"Traceback" not in result.stderr


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stop_with_a_dirty_touched_branch_is_refused(world: Path, case: HostCase) -> None:
    work = GitRepo(world / "work")
    wt = world / f"wt-{case.name}"
    branch = f"stop-{case.name}"
    work.git("branch", branch, "feat-a")
    work.git("push", "-q", "origin", branch)
    work.git("worktree", "add", "-q", str(wt), branch)
    # the agent checks the branch out in its worktree (a touch, recorded after the tool ran)
    event, payload = case.post(str(wt), f"git checkout {branch}")
    recorded = fire(work.path, case.name, event, payload)
    assert (recorded.returncode, recorded.stdout, recorded.stderr) == (0, case.silent, b"")
    stop_event, stop_payload = case.stop(str(wt))
    clean = fire(work.path, case.name, stop_event, stop_payload)
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, case.silent, b"")
    (wt / "notes.txt").write_text("unsaved\n")
    refused = fire(work.path, case.name, stop_event, stop_payload)
    reason = ("branchkeeper: do not stop yet; finish the work on these branches first (the "
              f"Stop guard):\n- {branch}: uncommitted changes in {wt} (notes.txt); commit and "
              f"push them\n    git -C {wt} add -- notes.txt && git -C {wt} commit -m '<what the "
              f"change does>' && git -C {wt} push -u origin {branch}\n\n{BRANCH_LIMIT_PRINCIPLE}")
    assert (refused.returncode, refused.stdout, refused.stderr) == (0, case.block(reason), b"")


def test_copilot_tool_args_as_a_json_string(world: Path) -> None:
    """The older Copilot reference sends ``toolArgs`` as a JSON string."""
    work = world / "work"
    payload = {"sessionId": "85a696df-0000-4000-8000-000000000002", "timestamp": 1788992290306,
               "cwd": str(work), "toolName": "bash",
               "toolArgs": json.dumps({"command": "git branch -D lonely",
                                       "description": "Clean up"})}
    result = fire(work, "copilot", "preToolUse", payload)
    text = _deny_text(world, "git branch -D lonely")
    assert result.stdout == json.dumps({"permissionDecision": "deny",
                                        "permissionDecisionReason": text},
                                       separators=(",", ":")).encode()


def test_cursor_sub_agent_on_a_new_branch_past_the_cap_is_refused(world: Path) -> None:
    """https://cursor.com/docs/hooks, "subagentStart": ``git_branch`` is the branch the
    sub-agent will operate on; ``permission: "deny"`` blocks its creation."""
    from branchkeeper.policy.creation import decide_creation

    work = world / "work"
    base = {"conversation_id": "child-1", "generation_id": "g-1", "model": "claude-sonnet-4",
            "hook_event_name": "subagentStart", "cursor_version": "2.0.77",
            "workspace_roots": [str(work)], "user_email": None, "transcript_path": None,
            "subagent_id": "abc-123", "subagent_type": "generalPurpose",
            "task": "Explore the authentication flow", "parent_conversation_id": "conv-456",
            "tool_call_id": "tc-789", "subagent_model": "claude-sonnet-4",
            "is_parallel_worker": False}
    refused = fire(work, "cursor", "subagentStart", {**base, "git_branch": "feature/auth"})
    text = decide_creation("feature/auth", cwd=str(work), route="worktree_create").text
    assert text.startswith("[R-BRANCH-WIP-CAP] Creating feature/auth would exceed the WIP cap")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        0, json.dumps({"permission": "deny", "user_message": text},
                      separators=(",", ":")).encode(), b"")
    bound = fire(work, "cursor", "subagentStart", {**base, "git_branch": "feat-a"})
    assert (bound.returncode, bound.stdout, bound.stderr) == (0, b"{}", b"")
    touched = GitRepo(work).git("config", "--get-all", "branch.feat-a.branchkeepertouchedby")
    assert touched.splitlines() == ["conv-456:abc-123"]


def test_codex_apply_patch_is_a_touch_the_stop_guard_judges(world: Path) -> None:
    """Codex's file-edit tool (https://developers.openai.com/codex/hooks, "PostToolUse";
    openai/codex#18391: the raw patch in ``tool_input.command``) touches the branch of the
    worktree it writes in, as Claude Code's Edit does: a Stop that leaves the patched file
    uncommitted is refused, where before the patch the thread answered for nothing there."""
    work = GitRepo(world / "work")
    wt = world / "wt-codex-patch"
    work.git("branch", "patched", "feat-a")
    work.git("push", "-q", "origin", "patched")
    work.git("worktree", "add", "-q", str(wt), "patched")
    (wt / "added.txt").write_text("hi\n")  # what the patch wrote, before PostToolUse runs
    session = {"session_id": "019a0000-0000-7000-8000-00000000patch"}  # a session of its own
    stop_event, stop_payload = hostutil.codex_stop(str(wt))
    stop_payload = {**stop_payload, **session}
    untouched = fire(work.path, "codex", stop_event, stop_payload)
    assert (untouched.returncode, untouched.stdout, untouched.stderr) == (0, b"", b"")
    event, payload = hostutil.codex_post(str(wt), "")
    payload = {**payload, **session, "tool_name": "apply_patch", "tool_input": {
        "command": "*** Begin Patch\n*** Add File: added.txt\n+hi\n*** End Patch\n"}}
    recorded = fire(work.path, "codex", event, payload)
    assert (recorded.returncode, recorded.stdout, recorded.stderr) == (0, b"", b"")
    refused = fire(work.path, "codex", stop_event, stop_payload)
    reason = ("branchkeeper: do not stop yet; finish the work on these branches first (the "
              f"Stop guard):\n- patched: uncommitted changes in {wt} (added.txt); commit and "
              f"push them\n    git -C {wt} add -- added.txt && git -C {wt} commit -m '<what the "
              f"change does>' && git -C {wt} push -u origin patched\n\n{BRANCH_LIMIT_PRINCIPLE}")
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        0, dump({"decision": "block", "reason": reason}).encode(), b"")


def test_codex_argv_command_is_judged_as_the_command_it_runs(world: Path) -> None:
    """Codex's shell tool may give the command as an argv list: it is read, never let through
    unread."""
    work = world / "work"
    case = next(c for c in CASES if c.name == "codex")
    event, payload = case.pre(str(work), "git branch -D lonely")
    payload["tool_input"]["command"] = ["bash", "-lc", "git branch -D lonely"]
    result = fire(work, "codex", event, payload)
    text = _deny_text(world, "bash -lc 'git branch -D lonely'")
    assert text.startswith("[R-GIT-BRANCH-FORCE-DELETE] `git branch -D lonely` would lose work")
    assert (result.returncode, result.stdout, result.stderr) == (0, case.deny(text), b"")


def test_cursor_empty_cwd_is_judged_in_the_first_workspace_root(world: Path) -> None:
    work = world / "work"
    case = next(c for c in CASES if c.name == "cursor")
    payload = {"conversation_id": "c", "hook_event_name": "beforeShellExecution", "cwd": "",
               "workspace_roots": [str(work)], "command": "git branch -D lonely"}
    result = fire(work, "cursor", "beforeShellExecution", payload)
    text = _deny_text(world, "git branch -D lonely")
    assert (result.returncode, result.stdout, result.stderr) == (0, case.deny(text), b"")
