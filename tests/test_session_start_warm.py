"""SessionStart reads a current last sweep instead of running an inventory (issue 16,
"SessionStart at 5,000 branches <= 0.5 s warm"; analysis/session_summary.py).

A sweep is current when it was taken of these very refs, with this configuration, and the budget
left nothing unknown. Then the summary is its rows, brought forward to now: the text is the one
an inventory would give, with no inventory (no ref listing of its own, no proofs): one lean
``for-each-ref`` and one ``worktree list`` besides the survey of local-only work that both
paths run. Anything else runs the inventory as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.clock import NOW_ENV
from tests.gitrepo import NOW, GitRepo
from tests.hookutil import run_hook

DAY = 86400
#: A current sweep's SessionStart: find the repository, the lean for-each-ref, one worktree
#: list (the worktree column, the survey of local-only work, the routine's nudge count and the
#: due rule's branch all read it; the survey's default branch is the one resolved from that
#: for-each-ref); then the survey: the worktrees' HEAD times, one status, stashes, our refs.
WARM = ["version", "rev-parse", "for-each-ref", "worktree", "log", "status", "stash",
        "for-each-ref"]
DUE = "\nbranchkeeper: the session-start prune is due (no prune recorded); run: branchkeeper prune"


def _start(work: GitRepo, trace: Path, *, now: float = NOW, source: str = "startup") -> str:
    """The SessionStart text, and the git commands it ran written to ``trace``."""
    trace.unlink(missing_ok=True)
    result = run_hook("SessionStart", {"session_id": "s", "cwd": str(work.path),
                                       "hook_event_name": "SessionStart", "source": source},
                      env={"GIT_TRACE": str(trace), NOW_ENV: str(now)})
    assert (result.returncode, result.stderr) == (0, b"")
    text: str = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def _git_commands(trace: Path) -> list[str]:
    """The git subcommand of every git process in a GIT_TRACE file, in order."""
    return [line.split("built-in: git ", 1)[1].split()[0]
            for line in trace.read_text().splitlines() if "built-in: git " in line]


def _inventory_ran(trace: Path) -> bool:
    """Whether an inventory read the refs: its listing asks for upstreams, the hook's lean one
    never does (a warm inventory may run no other git process that tells it apart)."""
    return any("built-in: git for-each-ref" in line and "%(upstream)" in line
               for line in trace.read_text().splitlines())


def _cold(work: GitRepo, trace: Path, **kw: float) -> str:
    (work.path / ".git" / "branchkeeper" / "last-sweep.json").unlink(missing_ok=True)
    text = _start(work, trace, **kw)
    assert _inventory_ran(trace)
    return text


@pytest.fixture()
def work(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """``old-local`` (40 days, never pushed), ``pushed-idle`` (9 days, pushed), ``fresh``
    (1 day, pushed) and ``done`` (merged into main), on a clone of ``origin``."""
    _, work = remote_and_clone
    work.switch("old-local", create=True, days_ago=40)
    work.commit("o", files={"o.txt": "o\n"}, days_ago=40)
    for name, days in (("pushed-idle", 9), ("fresh", 1)):
        work.switch(name, create=True, start="main", days_ago=days)
        work.commit(name, files={f"{name}.txt": "x\n"}, days_ago=days)
        work.git("push", "-q", "-u", "origin", name)
    work.switch("done", create=True, start="main", days_ago=3)
    work.switch("main")
    work.commit("on main", files={"m.txt": "m\n"}, days_ago=2)
    work.git("push", "-q", "origin", "main")
    return work


def test_a_current_sweep_gives_the_inventorys_text_without_one(work: GitRepo,
                                                              tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    cold = _cold(work, trace)
    assert cold == (
        "LOST WORK RISK: 1 branch(es) hold commits no remote-tracking ref contains; push them "
        "now:\n  old-local (40 days idle): git push -u origin old-local\n"
        "Dormant branches: finish and merge, park with a reason, or delete:\n"
        "  [advisory] pushed-idle (9 days idle; pushed, not merged)\n"
        "1 branch(es) are merged but not deleted (done); delete them with: branchkeeper sweep "
        "--clean (its --dry-run says which it deletes and what keeps the rest)\n"
        "branchkeeper: 5 branches: 1 live, 2 dormant, 1 merged." + DUE)
    assert _start(work, trace) == cold
    assert _git_commands(trace) == WARM, repr(_git_commands(trace))


def test_ages_and_the_stages_they_decide_are_brought_forward(work: GitRepo,
                                                            tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    _cold(work, trace)  # the sweep, taken now
    later = NOW + 25 * DAY  # fresh: live at 1 day, dormant at 26
    warm = _start(work, trace, now=later)
    assert _git_commands(trace) == WARM, repr(_git_commands(trace))
    assert warm == (
        "LOST WORK RISK: 1 branch(es) hold commits no remote-tracking ref contains; push them "
        "now:\n  old-local (65 days idle): git push -u origin old-local\n"
        "Dormant branches: finish and merge, park with a reason, or delete:\n"
        "  [block] pushed-idle (34 days idle; pushed, not merged)\n"
        "  [noisy] fresh (26 days idle; pushed, not merged)\n"
        "1 branch(es) are merged but not deleted (done); delete them with: branchkeeper sweep "
        "--clean (its --dry-run says which it deletes and what keeps the rest)\n"
        "branchkeeper: 5 branches: 3 dormant, 1 merged." + DUE)
    assert warm == _cold(work, trace, now=later)


def _move_a_ref(work: GitRepo) -> None:
    work.git("branch", "-f", "done", "fresh")


def _change_config(work: GitRepo) -> None:
    (work.path / ".branchkeeper.yaml").write_text("branches:\n  wip:\n    cap: 3\n")


def _push(work: GitRepo) -> None:
    work.git("push", "-q", "origin", "old-local")


def _incomplete(work: GitRepo) -> None:
    path = work.path / ".git" / "branchkeeper" / "last-sweep.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "complete": False}))


def _older_file(work: GitRepo) -> None:
    path = work.path / ".git" / "branchkeeper" / "last-sweep.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({"time": data["time"], "branches": data["branches"]}))


@pytest.mark.parametrize("change", [_move_a_ref, _change_config, _push, _incomplete,
                                    _older_file])
def test_a_sweep_that_is_not_current_runs_the_inventory(work: GitRepo, tmp_path: Path,
                                                        change: object) -> None:
    trace = tmp_path / "trace"
    _cold(work, trace)
    assert callable(change)
    change(work)
    text = _start(work, trace)
    assert _inventory_ran(trace)
    assert text == _cold(work, trace)


def test_a_worktree_made_after_the_sweep_is_shown(work: GitRepo, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    _cold(work, trace)
    wt = tmp_path / "wt-idle"
    work.git("worktree", "add", "-q", str(wt), "pushed-idle")
    warm = _start(work, trace)
    commands = _git_commands(trace)  # the survey reads the new worktree too
    assert commands[:4] == WARM[:4] and not _inventory_ran(trace), commands
    assert f"  [advisory] pushed-idle (9 days idle; pushed, not merged, worktree {wt})\n" in warm
    assert warm == _cold(work, trace)


def test_a_malformed_row_runs_the_inventory(work: GitRepo, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    cold = _cold(work, trace)
    path = work.path / ".git" / "branchkeeper" / "last-sweep.json"
    data = json.loads(path.read_text())
    data["branches"]["fresh"][1] = "no-such-state"
    path.write_text(json.dumps(data))
    assert _start(work, trace) == cold
    assert _inventory_ran(trace)


def test_local_only_work_that_is_not_a_branch_is_read_on_both_paths(work: GitRepo,
                                                                    tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    _cold(work, trace)
    (work.path / "draft.txt").write_text("unsaved\n")
    warm = _start(work, trace)
    assert _git_commands(trace) == WARM, repr(_git_commands(trace))
    assert "1 uncommitted or untracked file(s): draft.txt" in warm, warm
    assert warm == _cold(work, trace)
