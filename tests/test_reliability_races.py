"""Races (issue 7, section 2): a commit landing during a cleanup, two cleanups at once, hooks of
two sessions and two sub-agents in parallel, a file appearing between the reaper's check and its
removal. ``BK_RACE_ROUNDS`` repeats the concurrent ones (``bench/reliability.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from branchkeeper.actions import cleanup_exec
from branchkeeper.actions import reap as reap_mod
from branchkeeper.actions.cleanup import Plan
from branchkeeper.adapters.cli import main
from branchkeeper.git.repo import Worktree
from branchkeeper.state.journal import Journal
from tests.reliability_util import (
    build_world,
    git,
    lost_commits,
    lost_files,
    record,
    refs,
    rounds,
    snapshot,
    worktree_paths,
)

COMMANDS = {"delete": ["delete", "--json", "merged-a", "squashy"],
            "sweep-clean": ["sweep", "--clean", "--json"],
            "prune": ["prune", "--no-fetch", "--json"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_commit_during_cleanup_is_kept_and_reported_raced(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    w = build_world(tmp_path)
    before = snapshot(w.repo.path)
    landed: dict[str, str] = {}

    def agent_commits(plan: Plan) -> None:
        # an agent commits on merged-a (in its own scratch worktree) right before the delete
        scratch = tmp_path / "agent"
        git(w.repo.path, "worktree", "add", "-q", "--detach", str(scratch), "merged-a")
        (scratch / "agent.txt").write_text("agent work\n")
        git(scratch, "add", "agent.txt")
        git(scratch, "commit", "-q", "-m", "agent work")
        tip = git(scratch, "rev-parse", "HEAD").strip()
        git(w.repo.path, "update-ref", "refs/heads/merged-a", tip)
        landed["merged-a"] = tip

    monkeypatch.setattr(cleanup_exec, "before_delete_hook", agent_commits)
    code = main(["-C", str(w.repo.path), *COMMANDS[command]])
    out = json.loads(capsys.readouterr().out)
    by_name = {b["name"]: b for b in out["branches"]}
    assert code == 5
    assert (by_name["merged-a"]["action"], by_name["merged-a"]["reason"]) == (
        "raced", f"moved to {landed['merged-a']}; kept")
    assert by_name["squashy"]["action"] == "deleted"
    assert refs(w.repo.path)["refs/heads/merged-a"] == landed["merged-a"]
    lost = lost_commits(w.repo.path, before, tmp_path / "mirror")
    record("race", name=f"commit-during-{command}", commits_lost=len(lost),
           files_lost=len(lost_files(before)))
    assert not lost and not lost_files(before)


def test_two_cleanups_at_once(tmp_path: Path) -> None:
    for n in range(rounds(2)):
        w = build_world(tmp_path / f"r{n}")
        before = snapshot(w.repo.path)
        procs = [subprocess.Popen([sys.executable, "-m", "branchkeeper", "-C", str(w.repo.path),
                                   *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for argv in (COMMANDS["prune"], COMMANDS["sweep-clean"],
                              COMMANDS["prune"])]
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        deleted: Counter[str] = Counter()
        for code, out, err in results:
            assert code in (0, 5), err
            assert b"Traceback" not in err
            deleted.update(b["name"] for b in json.loads(out)["branches"]
                           if b["action"] == "deleted")
        assert set(deleted) == {"merged-a", "squashy", "done"} - (
            set() if w.wt_done not in worktree_paths(w.repo.path) else {"done"})
        assert all(v == 1 for v in deleted.values()), deleted
        common = w.repo.path / ".git"
        contents = Journal(common).load()
        assert contents.skipped == ()
        journaled: Counter[str] = Counter(
            r.ref for o in contents.operations for r in o.results.values()
            if r.outcome.value == "deleted")
        assert journaled == Counter(f"refs/heads/{n}" for n in deleted)
        git(w.repo.path, "config", "--list")  # config still parses
        assert git(w.repo.path, "fsck", "--no-progress", "--connectivity-only",
                   check=False) is not None
        lost = lost_commits(w.repo.path, before, tmp_path / f"mirror{n}")
        record("race", name="two-cleanups", commits_lost=len(lost),
               files_lost=len(lost_files(before)))
        assert not lost and not lost_files(before)


def _hook_proc(event: str, payload: dict[str, object], tmp: Path) -> subprocess.Popen[bytes]:
    source = tmp / f"in-{len(list(tmp.iterdir()))}.json"
    source.write_text(json.dumps(payload))
    with source.open("rb") as stdin:
        return subprocess.Popen([sys.executable, "-m", "branchkeeper", "hook", event],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd="/")


def test_parallel_hooks_two_sessions_two_agents(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    repo = str(w.repo.path)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for n in range(rounds(1)):
        procs = []
        prompts: Counter[str] = Counter()
        for i in range(20):
            session = f"sess-{(i // 4) % 2}"
            agent = f"agent-{i % 4}" if i % 3 == 0 else ""
            base = {"session_id": session, "agent_id": agent, "cwd": repo}
            kind = i % 4
            if kind == 0:
                procs.append(_hook_proc("UserPromptSubmit", {**base, "prompt": "go"}, inputs))
                prompts[session] += 1
            elif kind == 1:
                procs.append(_hook_proc("PreToolUse", {**base, "tool_name": "Bash",
                                                       "tool_input": {"command": "ls -la"}},
                                        inputs))
            elif kind == 2:
                procs.append(_hook_proc("PostToolUse", {
                    **base, "tool_name": "Bash",
                    "tool_input": {"command": f"git branch race-{n}-{i}"}}, inputs))
            else:
                procs.append(_hook_proc("Stop", base, inputs))
        for p in procs:
            assert p.wait(timeout=120) == 0
            out, err = p.communicate()
            assert b"Traceback" not in out + err
        sessions = Path(repo) / ".git" / "branchkeeper" / "sessions"
        states = {json.loads(f.read_text())["session_id"]: json.loads(f.read_text())
                  for f in sessions.glob("*.json")}
        assert set(states) == {"sess-0", "sess-1"}
        git(w.repo.path, "config", "--list")
        record("race", name="parallel-hooks", commits_lost=0, files_lost=0)
    for session, count in prompts.items():
        assert states[session]["turn"] == count * rounds(1), session  # no lost update


def test_new_file_between_reap_check_and_removal(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    w = build_world(tmp_path)

    def drop_file(wt: Worktree) -> None:
        (wt.path / "late.txt").write_text("written after the check\n")

    monkeypatch.setattr(reap_mod, "DEFAULT_HOOKS", reap_mod.ReapHooks(before_remove=drop_file))
    code = main(["-C", str(w.repo.path), "worktree", "reap", "--no-gh", "--json"])
    data = json.loads(capsys.readouterr().out)
    entry = {e["path"]: e for e in data["worktrees"]}[str(w.wt_done)]
    assert code == 0
    assert entry["outcome"] == "failed" and entry["detail"].startswith("git refused, kept: ")
    assert (w.wt_done / "late.txt").read_text() == "written after the check\n"
    record("race", name="reap-late-file", commits_lost=0,
           files_lost=int(not (w.wt_done / "late.txt").is_file()))
