"""Refusals that no proof overrides (issue 3, section 2), field case C05, the stack rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from branchkeeper.analysis.refusal_facts import CheckedOut, RefusalContext
from branchkeeper.analysis.refusals import refuse_batch
from branchkeeper.model.records import RefusalKind
from tests.cleanuputil import branches, cli_json
from tests.gitrepo import GitRepo


def test_refuse_batch_stack_fixed_point() -> None:
    ctx = RefusalContext(default_name="main", protected_names=frozenset({"main"}),
                         integration_lines=("release/*",), exempt=("users/*",),
                         checked_out={"wt": CheckedOut("/w", False)},
                         dependents={"base": ("mid",), "mid": ("top",)})
    assert refuse_batch(["base", "mid", "top"], ctx) == {}
    got = refuse_batch(["base", "mid"], ctx)
    assert {k: v.kind for k, v in got.items()} == {"base": RefusalKind.STACK,
                                                   "mid": RefusalKind.STACK}
    assert got["mid"].reason == "the upstream of surviving branch top (a stack)"
    got = refuse_batch(["release/1", "users/me/x", "main", "wt"], ctx)
    assert {k: v.kind for k, v in got.items()} == {
        "release/1": RefusalKind.INTEGRATION_LINE, "users/me/x": RefusalKind.EXEMPT,
        "main": RefusalKind.DEFAULT, "wt": RefusalKind.CHECKED_OUT}
    assert refuse_batch(["wt"], ctx, ignore_checked_out=frozenset({"wt"})) == {}


def test_c05_two_remotes_and_every_refusal(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    upstream = GitRepo.init_bare(tmp_path / "upstream.git")
    fork = GitRepo.init_bare(tmp_path / "fork.git")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("initial", files={"README": "r\n"}, days_ago=30)
    seed.git("push", "-q", str(fork.path), "main")
    seed.commit("upstream moves", files={"u": "u\n"}, days_ago=20)
    seed.git("branch", "trunk-next")
    seed.git("push", "-q", str(upstream.path), "main", "trunk-next")
    upstream.git("symbolic-ref", "HEAD", "refs/heads/trunk-next")
    work = GitRepo.clone(fork.path, tmp_path / "work")
    work.git("remote", "add", "upstream", str(upstream.path))
    work.git("fetch", "-q", "upstream")
    work.git("remote", "set-head", "upstream", "--auto")
    base = work.rev("main")
    # Every one of these is an ancestor of main (proven), yet each is refused.
    for name in ("trunk-next", "master", "develop", "release/2", "users/me/x", "in-wt",
                 "stack-base", "stack-top"):
        work.branch(name, base)
    work.git("config", "branch.stack-top.remote", ".")
    work.git("config", "branch.stack-top.merge", "refs/heads/stack-base")
    work.git("worktree", "add", "-q", str(tmp_path / "wt"), "in-wt")
    work.commit("local work", files={"l": "l\n"}, days_ago=1)
    work.git("push", "-q", "origin", "main")
    work.git("switch", "-q", "-c", "current")
    (work.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*"]\n  exempt: ["users/*"]\n')
    names = ["main", "trunk-next", "master", "develop", "release/2", "users/me/x", "in-wt",
             "current", "stack-base"]
    code, doc = cli_json(capsys, work, "delete", *names)
    assert code == 5
    assert {i["name"]: i["reason"] for i in doc["branches"]} == {
        "main": "refused: the default branch",
        "trunk-next": "refused: the default branch of a remote",
        "master": "refused: a protected name (branches.protected_names)",
        "develop": "refused: a protected name (branches.protected_names)",
        "release/2": "refused: an integration line",
        "users/me/x": "refused: exempt (branches.exempt)",
        "in-wt": f"refused: checked out in worktree {tmp_path / 'wt'}: `branchkeeper sweep "
                 "--clean` removes the worktree (unless it holds work) and then the branch; or "
                 f"`branchkeeper worktree retire {tmp_path / 'wt'}` first, then delete it",
        "current": "refused: the current branch",
        "stack-base": "refused: the upstream of surviving branch stack-top (a stack); "
                      "deleting them together is allowed: branchkeeper delete -- stack-base "
                      "stack-top",
    }
    # The sweep takes the clean proven worktree and the whole stack, never the refused ones.
    code, doc = cli_json(capsys, work, "sweep", "--clean")
    assert code == 0
    assert sorted(i["name"] for i in doc["branches"] if i["action"] == "deleted") == [
        "in-wt", "stack-base", "stack-top"]
    # what keeps the rest, in words: no state identifier ("integration_line")
    assert {i["name"]: (i["action"], i["reason"]) for i in doc["branches"]
            if i["name"] in ("main", "release/2", "users/me/x")} == {
        "main": ("kept", "default"), "release/2": ("kept", "integration line"),
        "users/me/x": ("kept", "exempt")}
    assert not (tmp_path / "wt").exists()
    code, doc = cli_json(capsys, work, "prune", "--no-fetch")
    assert code == 0
    assert [i["name"] for i in doc["branches"] if i["action"] == "deleted"] == []
    assert branches(work) == ["current", "develop", "main", "master", "release/2",
                              "trunk-next", "users/me/x"]


def test_refusals_are_in_the_record_and_every_command_does_what_it_says(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11, section 5: the record carries the refusals over each command's batch."""
    _, w = remote_and_clone
    for name in ("base", "top", "base2", "top2", "wtb"):
        w.switch(name, create=True, start="main" if name in ("base", "base2", "wtb")
                 else {"top": "base", "top2": "base2"}[name])
        w.commit(f"{name} work", files={f"{name}.txt": f"{name}\n"}, days_ago=3)
        w.switch("main")
        if name != "top2":
            w.merge(name, days_ago=2)
    w.git("config", "branch.top.remote", ".")
    w.git("config", "branch.top.merge", "refs/heads/base")
    w.git("config", "branch.top2.remote", ".")
    w.git("config", "branch.top2.merge", "refs/heads/base2")
    w.git("push", "-q", "origin", "main")
    wt = tmp_path / "wt-wtb"
    w.git("worktree", "add", "-q", str(wt), "wtb")
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    recs = {b["name"]: b for b in doc["branches"]}
    merged = "merged into origin/main: every commit is on it"

    def act(action: str, reason: str, refusal: str | None = None) -> dict[str, Any]:
        return {"action": action, "reason": reason, "refusal": refusal}

    stack2 = "the upstream of surviving branch top2 (a stack)"
    # prune and delete refuse what sweep --clean does, and say so
    wtb_refused = (f"checked out in worktree {wt}: `branchkeeper sweep --clean` removes the "
                   "worktree (unless it holds work) and then the branch; or `branchkeeper "
                   f"worktree retire {wt}` first, then delete it")
    assert {n: (r["refusal"], r["actions"]) for n, r in recs.items()} == {
        "base": (None, {
            "sweep_clean": act("delete", merged), "prune": act("delete", merged),
            "delete": act("refused", "the upstream of surviving branch top (a stack); deleting "
                                     "them together is allowed: branchkeeper delete -- base top",
                          "stack"),
            "delete_remote": None}),
        "base2": (None, {
            "sweep_clean": act("refused", stack2, "stack"),
            "prune": act("refused", stack2, "stack"),
            "delete": act("refused", f"{stack2}; the stack cannot be deleted together: "
                                     "top2 has no proof", "stack"),
            "delete_remote": None}),
        "main": ({"kind": "default", "reason": "the default branch"}, {
            "sweep_clean": act("kept", "default"),
            "prune": act("refused", "the default branch", "default"),
            "delete": act("refused", "the default branch", "default"),
            "delete_remote": act("refused", "the default branch", "default")}),
        "top": (None, {
            "sweep_clean": act("delete", merged), "prune": act("delete", merged),
            "delete": act("delete", merged), "delete_remote": None}),
        "top2": (None, {
            "sweep_clean": recs["top2"]["actions"]["sweep_clean"],
            "prune": act("SKIP_UNPROVEN", recs["top2"]["actions"]["prune"]["reason"]),
            "delete": act("SKIP_UNPROVEN", recs["top2"]["actions"]["delete"]["reason"]),
            "delete_remote": None}),
        "wtb": ({"kind": "checked_out", "reason": f"checked out in worktree {wt}"}, {
            "sweep_clean": act("delete", f"{merged}; its worktree {wt} is removed first unless "
                                         "it holds work"),
            "prune": act("refused", wtb_refused, "checked_out"),
            "delete": act("refused", wtb_refused, "checked_out"),
            "delete_remote": None}),
    }
    assert recs["top2"]["state"] == "live"
    code, doc = cli_json(capsys, w, "prune", "--no-fetch", "--dry-run")
    assert {b["name"]: (b["action"], b["reason"]) for b in doc["branches"]} == {
        "base": ("delete", merged), "base2": ("refused", f"refused: {stack2}"),
        "main": ("refused", "refused: the default branch"), "top": ("delete", merged),
        "top2": ("SKIP_UNPROVEN", recs["top2"]["actions"]["prune"]["reason"]),
        "wtb": ("refused", f"refused: {wtb_refused}")}
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert {b["name"]: (b["action"], b["reason"]) for b in doc["branches"]} == {
        "base": ("delete", merged), "base2": ("refused", f"refused: {stack2}"),
        "main": ("kept", "default"), "top": ("delete", merged),
        "top2": ("kept", recs["top2"]["actions"]["sweep_clean"]["reason"]),
        "wtb": ("delete", merged)}
    # delete of the base alone is refused as its record says; with its top, both go
    code, doc = cli_json(capsys, w, "delete", "--dry-run", "base")
    assert code == 5 and [(b["action"], b["reason"]) for b in doc["branches"]] == [
        ("refused", "refused: " + recs["base"]["actions"]["delete"]["reason"])]
    code, doc = cli_json(capsys, w, "delete", "--dry-run", "base", "top")
    assert code == 0 and [(b["name"], b["action"]) for b in doc["branches"]] == [
        ("base", "delete"), ("top", "delete")]
    # the unproven top keeps its base: the record never suggests a delete that would refuse
    code, doc = cli_json(capsys, w, "delete", "--dry-run", "base2", "top2")
    assert code == 5 and [(b["name"], b["action"]) for b in doc["branches"]] == [
        ("base2", "refused"), ("top2", "SKIP_UNPROVEN")]
    # a worktree that holds work blocks its branch: only the command reads it
    (wt / "notes.txt").write_text("mine\n")
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert {b["name"]: b["action"] for b in doc["branches"]}["wtb"] == "blocked"
