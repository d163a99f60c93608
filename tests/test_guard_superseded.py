"""The guard and the sweep give one verdict on a superseded branch (issue 11, section 1): its
commits are inside a branch that was squash-merged without one of its lines, so `git branch -D`
of it is denied although another branch contains its tip."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo


def _redone(path: Path, first: str, second: str, second_files: dict[str, str]) -> GitRepo:
    """``first`` adds x1 and x2; ``second``, built on it, writes ``second_files`` and is
    squash-merged."""
    w = GitRepo.init(path)
    w.commit("initial", files={"f": "a\n"}, days_ago=10)
    w.switch(first, create=True)
    w.commit(first, files={"x.txt": "x1\nx2\n"}, days_ago=5)
    w.switch(second, create=True)
    w.commit(second, files=second_files, days_ago=4)
    w.switch("main")
    w.squash_merge(second, days_ago=3)
    return w


def test_branch_delete_of_a_superseded_branch_is_denied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = _redone(tmp_path / "w", "sup/v1", "sup/v2", {"x.txt": "x1\n"})  # v2 drops x2
    # before any sweep the guard knows only containment: sup/v2 holds the tip
    assert decide_command("git branch -D sup/v1", cwd=str(w.path)).verdict.value == "allow"
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    assert {b["name"]: b["state"] for b in doc["branches"]} == {
        "main": "default", "sup/v1": "superseded", "sup/v2": "patch_equivalent"}
    d = decide_command("git branch -D sup/v1", cwd=str(w.path))
    tip = w.rev("sup/v1")[:10]
    assert (d.verdict.value, d.rule_id) == ("deny", "R-GIT-BRANCH-FORCE-DELETE")
    assert d.text == (
        "[R-GIT-BRANCH-FORCE-DELETE] `git branch -D sup/v1` would lose work: the last sweep "
        "found the branch below superseded: their commits are inside a branch that landed as a "
        "squash, but changed lines of theirs did not land (`branchkeeper sweep` lists them):\n"
        f"  - sup/v1 at {tip}\n\n"
        "Keep the work: park it (branchkeeper park --reason '<why it waits>' -- sup/v1), or "
        "delete it deliberately with its bundle (branchkeeper delete --allow-unproven --reason "
        "'<why>' -- sup/v1); or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)
    # the sound case: the successor kept every line, so the containment proof holds
    w2 = _redone(tmp_path / "w2", "b1", "b2", {"y.txt": "y\n"})
    code, doc = cli_json(capsys, w2, "sweep")
    assert {b["name"]: b["state"] for b in doc["branches"]}["b1"] != "superseded"
    assert decide_command("git branch -D b1", cwd=str(w2.path)).verdict.value == "allow"


def test_branch_delete_of_a_squash_merged_branch_is_denied_in_the_sweeps_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A squash-merged branch: its content is on the base, but `git branch -D` leaves its
    commits in no ref. Before a sweep the guard says only that; after one, it names the state
    the sweep found and the command the sweep suggests, which deletes it behind a bundle."""
    w = GitRepo.init(tmp_path / "w")
    w.commit("initial", files={"f": "a\n"}, days_ago=10)
    w.switch("feat", create=True)
    w.commit("feat", files={"x.txt": "x\n"}, days_ago=5)
    w.switch("main")
    w.squash_merge("feat", days_ago=3)
    tip = w.rev("feat")[:10]
    before = decide_command("git branch -D feat", cwd=str(w.path))
    assert (before.verdict.value, before.rule_id) == ("deny", "R-GIT-BRANCH-FORCE-DELETE")
    assert before.text.startswith("[R-GIT-BRANCH-FORCE-DELETE] `git branch -D feat` would lose "
                                  "work: no other branch, tag or remote-tracking ref contains")
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    assert {b["name"]: b["state"] for b in doc["branches"]}["feat"] == "patch_equivalent"
    d = decide_command("git branch -D feat", cwd=str(w.path))
    assert (d.verdict.value, d.rule_id) == ("deny", "R-GIT-BRANCH-FORCE-DELETE")
    assert d.text == (
        "[R-GIT-BRANCH-FORCE-DELETE] `git branch -D feat` would leave commits in no ref: the "
        "last sweep found the branch below rebase- or squash-merged (the work is on the base), "
        "but no other branch, tag or remote-tracking ref contains the tip (1 commit would be "
        f"reachable from no ref):\n  - feat at {tip}\n\n"
        "Delete it the proven way instead: `branchkeeper delete -- feat` proves the work is "
        "preserved again, writes a recovery bundle and can be undone. If git must delete it, "
        "ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)
    code, _, err = cli(capsys, w, "delete", "--", "feat")
    assert (code, err) == (0, "") and not w.has_ref("refs/heads/feat")
