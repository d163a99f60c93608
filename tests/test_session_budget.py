"""SessionStart bounded at scale (issue 20; first document, section 2): past
``branches.sweep.session_inline_max`` branches it never runs the pass itself. It starts the
background pass (``sweep --finish-pass``), reports what the last sweep knows and "N branches
not yet classified", and the later calls report more until the pass is complete. Nothing here
asserts a time: the budgets are a millisecond (the pass cannot end inside it) or units of work.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from branchkeeper.actions.sweep_pass import PASS_LOG, finish_pass, pass_running
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config_file import load_config
from branchkeeper.state.routine import END
from tests.gitrepo import GitRepo
from tests.hookutil import pruned_now, run_hook

BACKGROUND = "branches:\n  sweep:\n    budget_ms: 1\n    session_inline_max: 0\n"


def _repo(remote_and_clone: tuple[GitRepo, GitRepo], config: str) -> GitRepo:
    """main, a merged branch, a squash-merged one and pushed live work; ``config`` committed."""
    _, w = remote_and_clone
    w.commit("config", files={".branchkeeper.yaml": config}, days_ago=50)
    w.switch("done", create=True)
    w.commit("done work", files={"d.txt": "d\n"}, days_ago=40)
    w.switch("main")
    w.merge("done", days_ago=39)
    w.switch("squashed", create=True)
    w.commit("squash work", files={"s.txt": "s\n"}, days_ago=30)
    w.switch("main")
    w.squash_merge("squashed", days_ago=29)
    w.git("push", "-q", "origin", "main")
    w.switch("wip", create=True)
    w.commit("live work", files={"w.txt": "w\n"}, days_ago=1)
    w.git("push", "-q", "-u", "origin", "wip")
    w.switch("main")
    pruned_now(w.path)
    return w


def _session_start(w: GitRepo) -> str:
    result = run_hook("SessionStart", {"session_id": "s", "cwd": str(w.path),
                                       "hook_event_name": "SessionStart", "source": "startup"})
    assert (result.returncode, result.stderr) == (0, b""), result
    text: str = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def _pass_ended(w: GitRepo, runs: int = 1) -> str:
    """Wait (polling, at most a minute) until ``runs`` background passes wrote their end line;
    the log."""
    log = w.path / ".git" / "branchkeeper" / PASS_LOG
    for _ in range(1200):
        text = log.read_text() if log.exists() else ""
        if text.count(END) >= runs:
            return text
        time.sleep(0.05)
    raise AssertionError(f"the background pass did not end: {text!r}")


DONE = ("3 branch(es) are merged but not deleted (done, squashed, ...); delete them with: "
        "branchkeeper sweep --clean (its --dry-run says which it deletes and what keeps the rest)")


def test_first_session_start_reports_not_yet_classified_then_the_pass_result(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone, BACKGROUND)
    assert _session_start(w) == (
        "branchkeeper: 4 branches not yet classified (the pass continues in the background; "
        "the next session start reports more).")
    log = _pass_ended(w)
    assert "round 1: 4 branches, 0 not yet classified" in log, log
    assert log.rstrip().endswith(": exit 0"), log
    assert _session_start(w) == (
        "2 branch(es) are merged but not deleted (done, squashed); delete them with: "
        "branchkeeper sweep --clean (its --dry-run says which it deletes and what keeps the rest)\n"
        "branchkeeper: 4 branches: 1 live, 1 merged, 1 rebase- or squash-merged.")
    assert not pass_running(w.path / ".git")


def test_a_partial_sweep_is_reported_for_what_it_knows(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone, BACKGROUND)
    facts = repo_facts(w.path)
    # no unit of proof work: ancestry alone (done is merged), the rest not reached
    build_inventory(facts, load_config(facts.main_root).config, budget_checks=0)
    assert _session_start(w) == (
        "1 branch(es) are merged but not deleted (done); delete them with: branchkeeper sweep "
        "--clean (its --dry-run says which it deletes and what keeps the rest)\n"
        "branchkeeper: 4 branches: 1 merged; 2 branches not yet classified (the pass continues "
        "in the background; the next session start reports more).")
    _pass_ended(w)


def test_rounds_of_work_units_converge_to_the_whole_pass(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone, "branches:\n  sweep:\n    session_inline_max: 0\n")
    facts = repo_facts(w.path)
    config = load_config(facts.main_root).config
    said: list[str] = []
    rounds = finish_pass(facts, config, round_checks=1, say=said.append)  # 1, 2, 4... units
    left = [int(line.split(", ")[1].split()[0]) for line in said]
    assert rounds == len(said) >= 2 and left[-1] == 0, said
    assert left == sorted(left, reverse=True) and left[0] > 0, said
    # what the rounds left is what one unbounded pass finds
    whole = build_inventory(facts, config, use_cache=False)
    assert [(r.name, r.state, r.proof) for r in build_inventory(facts, config).records] == \
        [(r.name, r.state, r.proof) for r in whole.records]
    # and SessionStart reads it whole: no pass to start
    assert _session_start(w).endswith("branchkeeper: 4 branches: 1 live, 1 merged, "
                                      "1 rebase- or squash-merged.")
    assert not (w.path / ".git" / "branchkeeper" / PASS_LOG).exists()


def test_inline_session_start_counts_what_the_budget_did_not_reach(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    # a small repository is classified inline: a millisecond reaches ancestry only
    w = _repo(remote_and_clone, "branches:\n  sweep:\n    budget_ms: 1\n")
    assert _session_start(w) == (
        "1 branch(es) are merged but not deleted (done); delete them with: branchkeeper sweep "
        "--clean (its --dry-run says which it deletes and what keeps the rest)\n"
        "branchkeeper: 4 branches: 1 merged; 2 branches not yet classified (the time budget "
        "was spent; the next pass continues from the cache).")
    assert not (w.path / ".git" / "branchkeeper" / PASS_LOG).exists()


def test_a_second_pass_waits_for_none_while_one_runs(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    from branchkeeper.state.lock import repo_lock

    w = _repo(remote_and_clone, BACKGROUND)
    facts = repo_facts(w.path)
    said: list[str] = []
    with repo_lock(facts.common_dir, "sweep-pass", wait_s=0):
        assert pass_running(facts.common_dir)
        assert finish_pass(facts, load_config(facts.main_root).config, say=said.append) == 0
        # SessionStart starts no second pass: it waits for the lock (a millisecond) and reports
        assert _session_start(w) == (
            "branchkeeper: 4 branches not yet classified (the pass continues in the background; "
            "the next session start reports more).")
    assert said == [f"another pass is running (the sweep-pass lock is held by pid "
                    f"{__import__('os').getpid()}); nothing to do"] or said[0].startswith(
        "another pass is running"), said
    assert not (w.path / ".git" / "branchkeeper" / PASS_LOG).exists()


def test_sweep_clean_after_a_partial_pass_finishes_the_pass_first(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """A cleanup never acts on a partial verdict: it runs its own unbounded pass, so the
    branch the partial pass left unclassified is judged (and deleted with its proof), and the
    live work is kept."""
    w = _repo(remote_and_clone, BACKGROUND)
    facts = repo_facts(w.path)
    build_inventory(facts, load_config(facts.main_root).config, budget_checks=0)
    ran = subprocess.run([sys.executable, "-m", "branchkeeper", "sweep", "--clean", "--json"],
                         cwd=w.path, capture_output=True, text=True)
    assert ran.returncode == 0, ran
    deleted = {i["name"]: i["proof"]["kind"] for i in json.loads(ran.stdout)["branches"]
               if i["action"] == "deleted"}
    assert deleted == {"done": "ancestor", "squashed": "patch_equivalent"}, ran.stdout
    assert w.has_ref("refs/heads/wip") and not w.has_ref("refs/heads/squashed")


def test_a_pass_that_cannot_start_is_said_and_the_hook_still_answers(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone, BACKGROUND)
    locks = w.path / ".git" / "branchkeeper" / "locks"
    shutil.rmtree(locks, ignore_errors=True)
    locks.parent.mkdir(parents=True, exist_ok=True)
    locks.write_text("not a directory\n")  # no lock can be taken under it
    assert _session_start(w) == (
        f"branchkeeper: 4 branches not yet classified (the background pass could not start "
        f"(File exists: {locks}); run: branchkeeper sweep).")
    assert not (locks.parent / PASS_LOG).exists()


def test_finish_pass_is_a_usage_error_with_other_modes(tmp_path: Path) -> None:
    w = GitRepo.init(tmp_path / "r")
    w.commit("c")
    ran = subprocess.run([sys.executable, "-m", "branchkeeper", "sweep", "--finish-pass",
                          "--json"], cwd=w.path, capture_output=True, text=True)
    assert (ran.returncode, ran.stdout) == (2, ""), ran
    assert ran.stderr == ("branchkeeper: error: --finish-pass takes none of --clean, --json, "
                          "--no-cache, --budget-ms\n"), ran.stderr
