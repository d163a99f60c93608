"""End to end: each SessionStart, Stop and cleanup-after-merge outcome of the real hook process."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook

S = "sess-o"


def _p(repo: GitRepo, **extra: Any) -> dict[str, Any]:
    return {"session_id": S, "cwd": str(repo.path), **extra}


def _post(repo: GitRepo, command: str, agent: str = "") -> subprocess.CompletedProcess[bytes]:
    ran = subprocess.run(["bash", "-c", command], cwd=repo.path, capture_output=True)
    assert ran.returncode == 0, ran.stderr
    extra = {"agent_id": agent} if agent else {}
    return run_hook("PostToolUse", _p(repo, tool_name="Bash", tool_input={"command": command},
                                      tool_response={"interrupted": False}, **extra))


def _ctx(event: str, text: str) -> bytes:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                      separators=(",", ":")).encode()


def _config(repo: GitRepo, text: str) -> None:
    repo.commit("config", files={".branchkeeper.yaml": text})
    repo.git("push", "-q", "origin", "main")


#: The due rule's line in a repository never pruned (issue 18).
DUE = "branchkeeper: the session-start prune is due (no prune recorded); run: branchkeeper prune"


def test_session_start_lost_work_every_source_dormancy_on_startup(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    work.switch("old-local", create=True, days_ago=40)
    work.commit("o", files={"o.txt": "o\n"}, days_ago=40)
    work.switch("pushed-idle", create=True, start="main", days_ago=9)
    work.commit("p", files={"p.txt": "p\n"}, days_ago=9)
    work.git("push", "-q", "-u", "origin", "pushed-idle")
    work.switch("main")
    startup = run_hook("SessionStart", _p(work, source="startup"))
    lost = ("LOST WORK RISK: 1 branch(es) hold commits no remote-tracking ref contains; push them "
            "now:\n  old-local (40 days idle): git push -u origin old-local\n")
    assert (startup.returncode, startup.stderr) == (0, b"")
    assert startup.stdout == _ctx("SessionStart", lost + (
        "Dormant branches: finish and merge, park with a reason, or delete:\n"
        "  [advisory] pushed-idle (9 days idle; pushed, not merged)\n"
        "branchkeeper: 3 branches: 2 dormant.\n" + DUE) )
    resume = run_hook("SessionStart", _p(work, source="resume"))
    assert resume.stdout == _ctx("SessionStart", lost + "branchkeeper: 3 branches: 2 dormant.\n"
                                 + DUE)


def test_session_start_quiet_when_nothing_to_say(remote_and_clone: tuple[GitRepo, GitRepo]
                                                 ) -> None:
    _, work = remote_and_clone
    result = run_hook("SessionStart", _p(work, source="compact"))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_merge_cleanup_advise_prints_commands(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    work.switch("topic", create=True)
    work.commit("t", files={"t.txt": "t\n"})
    work.git("push", "-q", "origin", "topic")
    work.switch("main")
    out = _post(work, "git merge -q --no-ff -m m topic")
    assert (out.returncode, out.stderr) == (0, b"")
    assert out.stdout == _ctx("PostToolUse", (
        "topic is merged into main; delete it with: git branch -d -- topic\n"
        "  after main is pushed, delete the remote branch: git push origin --delete topic"))
    assert work.has_ref("refs/heads/topic")
    # a merge on a work branch is not a merge into the default: quiet
    work.switch("side", create=True)
    work.switch("other", create=True, start="main")
    work.commit("x", files={"x.txt": "x\n"})
    work.switch("side")
    quiet = _post(work, "git merge -q -m m2 other")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")


def test_merge_cleanup_patch_equivalent_gets_sweep_command(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    _config(work, "branches:\n  cleanup_after_merge:\n    mode: act\n")
    work.switch("picked", create=True)
    work.commit("p", files={"p.txt": "p\n"})
    work.switch("main")
    out = _post(work, "git merge -q --squash picked && git commit -q -m squashed")
    assert out.stdout == _ctx("PostToolUse", (
        "picked: rebase-merged into main: every commit is on it as a copy (the tip's copy is "
        f"{work.rev('main')[:10]}); delete it with the bundle-backed cleanup: "
        "branchkeeper sweep --clean"))
    assert work.has_ref("refs/heads/picked")


def test_stop_merged_not_deleted_yield_and_off(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    work.switch("done", create=True)
    _post(work, "echo d > d.txt && git add d.txt && git commit -q -m d")
    work.git("push", "-q", "origin", "done")
    work.switch("main")
    work.merge("done")
    stop = run_hook("Stop", _p(work, stop_hook_active=False))
    reason = ("branchkeeper: do not stop yet; finish the work on these branches first (the "
              "Stop guard):\n- done: merged into main but not deleted (still locally, on origin); "
              "delete it\n    branchkeeper delete -- done\n    git push origin --delete done\n\n"
              + BRANCH_LIMIT_PRINCIPLE)
    assert (stop.returncode, stop.stderr) == (0, b"")
    assert stop.stdout == json.dumps({"decision": "block", "reason": reason},
                                     separators=(",", ":")).encode()
    # the yield marker (environment variable, then file) lets the session stop
    yielded = run_hook("Stop", _p(work, stop_hook_active=True), env={"BRANCHKEEPER_YIELD": "1"})
    assert (yielded.returncode, yielded.stdout, yielded.stderr) == (0, b"", b"")
    # issue 19: the yield file lives under the common dir, where only a person writes; one in
    # the work tree (which an agent could create) is not read
    (work.path / ".branchkeeper").mkdir()
    (work.path / ".branchkeeper" / "yield").write_text("")
    assert run_hook("Stop", _p(work, stop_hook_active=True)).stdout == stop.stdout
    state = work.path / ".git" / "branchkeeper"
    state.mkdir(exist_ok=True)
    (state / "yield").write_text("")
    assert run_hook("Stop", _p(work, stop_hook_active=True)).stdout == b""
    (state / "yield").unlink()
    (work.path / ".branchkeeper" / "yield").unlink()
    (work.path / ".branchkeeper").rmdir()
    _config(work, "branches:\n  stop_guard:\n    mode: off\n")
    assert run_hook("Stop", _p(work, stop_hook_active=False)).stdout == b""


def test_stop_gives_way_and_session_start_reports(remote_and_clone: tuple[GitRepo, GitRepo]
                                                  ) -> None:
    _, work = remote_and_clone
    _config(work, "branches:\n  stop_guard:\n    max_blocks: 2\n")
    work.switch("wip", create=True)
    _post(work, "echo w > w.txt && git add w.txt && git commit -q -m w")
    outs = [run_hook("Stop", _p(work, stop_hook_active=i > 0)).stdout for i in range(3)]
    assert [o.startswith(b'{"decision":"block"') for o in outs] == [True, True, False]
    assert outs[2] == b""
    start = run_hook("SessionStart", _p(work, source="resume"))
    text = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.splitlines()[2:4] == ["Abandoned at stop (the Stop guard gave way; finish them):",
                                      f"  wip: unpushed (thread {S}:)"]
    again = run_hook("SessionStart", _p(work, source="resume"))
    assert "Abandoned" not in again.stdout.decode()  # reported once


def test_stop_never_judges_unrecorded_branches(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    work.switch("human", create=True)
    work.commit("h", files={"h.txt": "h\n"})
    (work.path / "dirty.txt").write_text("x\n")
    result = run_hook("Stop", _p(work, stop_hook_active=False))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
