"""Team repositories (issue 12, section 5): an old branch of someone else's, never checked out
here, must not trap an agent. ``park`` works on a branch that exists only on the remote, the
creation denial prints ways out that work (``delete --remote``, the ``exempt`` line), and the
sweep suggests declaring shared branches named like lines until the config declares or
dismisses them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo

NAME = "human/old-experiment"


@pytest.fixture
def team(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> tuple[GitRepo, GitRepo]:
    """``origin`` holds a teammate's 62-day-old branch; the clone only fetched it."""
    origin, clone = remote_and_clone
    other = GitRepo.clone(origin.path, tmp_path / "teammate")
    other.switch(NAME, create=True, days_ago=62)
    other.commit("an idea", files={"idea.txt": "maybe\n"}, days_ago=62)
    other.git("push", "-q", "origin", NAME)
    clone.git("fetch", "-q", "origin")
    return origin, clone


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_park_a_branch_that_exists_only_on_the_remote(team: tuple[GitRepo, GitRepo],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    origin, clone = team
    before = origin.rev(NAME)
    rc, out, err = run(capsys, "-C", str(clone.path), "park", "--no-push", "--reason", "r", "--",
                       NAME)
    assert (rc, out, err) == (5, "", (
        f"branchkeeper: error: {NAME} exists only on origin: its park marker is a commit on the "
        "remote branch, so it has to be pushed; with --no-push it would be on no branch at "
        "all. Nothing changed.\n"))
    rc, out, err = run(capsys, "-C", str(clone.path), "park", "--reason", "waiting on Ana",
                       "--by", "me", "--", NAME)
    marker = origin.rev(NAME)
    op_id = out.splitlines()[0].rpartition("(journal ")[2].rstrip(")")
    assert (rc, err, out) == (0, "", (
        f"parked {NAME} on origin (it exists only there): {before[:10]} -> {marker[:10]} "
        f"(journal {op_id})\npushed to origin\nundo: branchkeeper undo {op_id}\n"))
    assert origin.git("log", "-1", "--format=%P%n%B", NAME) == (
        f"{before}\nPark {NAME}\n\nParked-Reason: waiting on Ana\nParked-By: me")
    assert origin.rev(f"{NAME}^{{tree}}") == origin.rev(f"{before}^{{tree}}")
    assert clone.rev(f"refs/remotes/origin/{NAME}") == marker
    assert not clone.has_ref(f"refs/heads/{NAME}")  # no local branch was made
    rc, out, _ = run(capsys, "-C", str(clone.path), "sweep", "--json")
    rec = next(b for b in json.loads(out)["branches"] if b["name"] == NAME)
    assert (rec["state"], rec["parked"]["reason"]) == ("parked", "waiting on Ana")
    rc, out, _ = run(capsys, "-C", str(clone.path), "undo", "--json")
    (item,) = json.loads(out)["items"]
    lease = shlex.join(["git", "push", f"--force-with-lease=refs/heads/{NAME}:{marker}", "origin",
                        f"{before}:refs/heads/{NAME}"])
    assert (rc, item["outcome"], item["command"]) == (0, "push", lease)


def _deny_text(capsys: pytest.CaptureFixture[str], clone: GitRepo) -> tuple[int, str]:
    assert run(capsys, "-C", str(clone.path), "sweep", "--json")[0] == 0  # the labels
    rc, out, _ = run(capsys, "check", "--cwd", str(clone.path), "--", "git switch -c new-work")
    return rc, out


def test_the_denial_prints_ways_out_that_work(team: tuple[GitRepo, GitRepo],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _origin, clone = team
    rc, out = _deny_text(capsys, clone)
    assert rc == 2 and out.startswith("deny: R-BRANCH-DORMANCY-BLOCK\n")
    way = (f"For {NAME}:\n"
           "  finish and merge it; or park it: branchkeeper park --reason '<why it waits>' -- "
           f"{NAME}; or a person deletes it deliberately (bundle kept): "
           "branchkeeper delete --remote --allow-unproven --reason '<why it may go>' -- "
           f"{NAME}; or, when it is "
           "someone else's (no session here created it), declare it exempt in "
           '.branchkeeper.yaml: branches: {exempt: ["human/*"]}')
    assert way in out
    # following the exempt line lets the new branch through
    (clone.path / ".branchkeeper.yaml").write_text('branches: {exempt: ["human/*"]}\n')
    rc, out = _deny_text(capsys, clone)
    assert (rc, out) == (0, "allow\n")
    # parking it works too, from a clone that never had the branch checked out
    (clone.path / ".branchkeeper.yaml").unlink()
    assert run(capsys, "-C", str(clone.path), "park", "--reason", "later", "--", NAME)[0] == 0
    rc, out = _deny_text(capsys, clone)
    assert (rc, out) == (0, "allow\n")


def test_a_branch_made_here_gets_no_exempt_line(remote_and_clone: tuple[GitRepo, GitRepo],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, clone = remote_and_clone
    clone.switch("mine", create=True, days_ago=40)
    clone.commit("m", files={"m.txt": "m\n"}, days_ago=40)
    clone.git("push", "-q", "origin", "mine")
    clone.switch("main")
    clone.git("config", "branch.mine.branchkeepercreator", "s1:")
    rc, out = _deny_text(capsys, clone)
    assert rc == 2
    assert ("For mine:\n  finish and merge it; or park it: branchkeeper park --reason '<why it "
            "waits>' -- mine; or a person deletes it deliberately (bundle kept): "
            "branchkeeper delete --allow-unproven --reason '<why it may go>' -- mine\n") in out


def _suggestion(capsys: pytest.CaptureFixture[str], clone: GitRepo) -> Any:
    rc, out, _ = run(capsys, "-C", str(clone.path), "sweep", "--json")
    assert rc == 0
    return json.loads(out)["suggestions"]["integration_lines"]


def test_the_sweep_suggests_lines_until_declared_or_dismissed(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, clone = remote_and_clone
    for name in ("release/1.x", "hotfix-2.0.1", "epic/payments", "Develop", "releases-notes"):
        clone.git("branch", name, "main")
        if name != "releases-notes":
            clone.git("push", "-q", "origin", name)  # shared: a line lives on the remote
    clone.git("branch", "feature/release-me", "main")
    clone.git("push", "-q", "origin", "feature/release-me")
    clone.git("fetch", "-q", "origin")
    assert _suggestion(capsys, clone) == {
        "branches": ["Develop", "epic/payments", "hotfix-2.0.1", "release/1.x"],
        "globs": ["Develop", "epic/*", "hotfix-2.0.1", "release/*"],
        "declare": 'branches: {integration_lines: ["Develop", "epic/*", "hotfix-2.0.1", '
                   '"release/*"]}',
        "dismiss": 'branches: {not_integration_lines: ["Develop", "epic/*", "hotfix-2.0.1", '
                   '"release/*"]}'}
    _rc, out, _ = run(capsys, "-C", str(clone.path), "sweep")
    assert ("Declare these as integration lines? 4 shared branch(es) are named like lines and "
            "would otherwise count as work (and be deleted once merged): Develop, "
            "epic/payments, hotfix-2.0.1, release/1.x\n"
            '  set in .branchkeeper.yaml (the key under branches:): branches: {integration_lines: '
            '["Develop", "epic/*", "hotfix-2.0.1", "release/*"]}\n'
            "  or, if they are work branches, stop this suggestion: branches: "
            '{not_integration_lines: ["Develop", "epic/*", "hotfix-2.0.1", "release/*"]}\n') in out
    # a key the file already sets is given whole: its globs first, then the new ones
    (clone.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*"]\n  not_integration_lines: ["x/*"]\n')
    assert _suggestion(capsys, clone) == {
        "branches": ["Develop", "epic/payments", "hotfix-2.0.1"],
        "globs": ["Develop", "epic/*", "hotfix-2.0.1"],
        "declare": 'branches: {integration_lines: ["release/*", "Develop", "epic/*", '
                   '"hotfix-2.0.1"]}',
        "dismiss": 'branches: {not_integration_lines: ["x/*", "Develop", "epic/*", '
                   '"hotfix-2.0.1"]}'}
    (clone.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*", "epic/*"]\n'
        '  not_integration_lines: ["hotfix-*", "Develop"]\n')
    assert _suggestion(capsys, clone) is None
    _rc, out, _ = run(capsys, "-C", str(clone.path), "sweep")
    assert "Declare these" not in out


#: Runs the installed hook entry point and reports the modules it loaded (stderr).
_LIST_IMPORTS = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "from branchkeeper.adapters.hookrun import run\n"
    "code = run('claude', 'PreToolUse')\n"
    "sys.stderr.write(repr([code, sorted(set(sys.modules) - before)]))\n")


def _hook_deny(clone: GitRepo, trace: Path) -> tuple[int, dict[str, Any], list[str], set[str]]:
    """One PreToolUse of ``git switch -c new-work``: exit code, the answer, the git subcommands
    it ran (GIT_TRACE) and the modules it imported."""
    import os
    import subprocess
    import sys

    trace.unlink(missing_ok=True)
    payload = {"session_id": "s", "cwd": str(clone.path), "permission_mode": "default",
               "tool_name": "Bash", "tool_input": {"command": "git switch -c new-work"}}
    proc = subprocess.run([sys.executable, "-c", _LIST_IMPORTS], input=json.dumps(payload).encode(),
                          capture_output=True, check=True, timeout=60, cwd=clone.path,
                          env={**os.environ, "GIT_TRACE": str(trace)})
    code, loaded = eval(proc.stderr.decode())  # a repr of a list of strings
    commands = [line.split("built-in: git ", 1)[1].split()[0]
                for line in trace.read_text().splitlines() if "built-in: git " in line]
    return code, json.loads(proc.stdout), commands, set(loaded)


def test_the_hook_denial_reads_only_the_creator_records(
        team: tuple[GitRepo, GitRepo], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The dormancy denial's ways out ask which blocked branches a session here created: the
    hook reads the creator records alone, in one ``git config`` beside its one
    ``for-each-ref``, and loads neither the full records' module nor dataclasses (issue 16:
    the creation decision's path stays lean)."""
    _origin, clone = team
    clone.switch("mine", create=True, days_ago=40)
    clone.commit("m", files={"m.txt": "m\n"}, days_ago=40)
    clone.switch("main")
    clone.git("config", "branch.mine.branchkeepercreator", "s1:")
    assert run(capsys, "-C", str(clone.path), "sweep", "--json")[0] == 0  # the labels
    _hook_deny(clone, tmp_path / "trace")  # the first call stores the parsed config
    code, answer, commands, loaded = _hook_deny(clone, tmp_path / "trace")
    assert (code, commands) == (0, ["for-each-ref", "config"])
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["hookSpecificOutput"]["permissionDecisionReason"] == (
        "[R-BRANCH-DORMANCY-BLOCK] No new branch while a branch has been idle 30+ days (dormancy "
        f"block stage):\n  - {NAME} (62d old)\n  - mine (40d old)\n\n"
        f"For {NAME}:\n  finish and merge it; or park it: branchkeeper park --reason '<why it "
        f"waits>' -- {NAME}; or a person deletes it deliberately (bundle kept): "
        f"branchkeeper delete --remote --allow-unproven --reason '<why it may go>' -- {NAME}; or, when it is "
        "someone else's (no session here created it), declare it exempt in .branchkeeper.yaml: "
        'branches: {exempt: ["human/*"]}\n'
        "For mine:\n  finish and merge it; or park it: branchkeeper park --reason '<why it "
        "waits>' -- mine; or a person deletes it deliberately (bundle kept): "
        "branchkeeper delete --allow-unproven --reason '<why it may go>' -- mine\n"
        "Commits, merges, pushes and deletes stay open; only new branches wait.\n\n"
        "LOST WORK RISK: branch mine holds commits no remote-tracking ref contains (40d old); "
        "secure them now: git push -u origin mine\n\n"
        "The limit exists so work FINISHES, never so it disappears. Finish a branch (merge it), "
        "park it with a reason, or delete it only when the guard proves nothing is lost. Work "
        "that serves another lane goes on that lane's branch, not a new one. A patch or copy "
        "saved under an ignored or untracked directory is lost work, not compliance. If the "
        "limit seems to force a choice between losing work and exceeding it, stop and ask a "
        "human.")
    assert "branchkeeper.state.creators" in loaded
    assert {"branchkeeper.state.branch_records", "dataclasses"} & loaded == set()
