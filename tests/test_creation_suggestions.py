"""The WIP-cap denial prints, for each merged branch, what the last sweep's record says
``delete`` does with it (issue 11, section 5: one verdict): the command only where ``delete``
succeeds, otherwise what keeps the branch and what lifts it. Its count and its texts agree with
``sweep --json`` on the same repository, and every command it prints is run and succeeds. A
last-sweep file of the old format (no ``version``, no ``cleanup``) is read as before."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo

CONFIG = """\
branches:
  wip: {cap: 3, mode: block}
  protected_names: [main, master, develop, trunk, release]
"""


def _merged(w: GitRepo, name: str, days_ago: float) -> None:
    w.switch(name, create=True, start="main")
    w.commit(f"{name} work", files={f"{name}.txt": f"{name}\n"}, days_ago=days_ago + 1)
    w.switch("main")
    w.merge(name, days_ago=days_ago)


def _at_cap(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> tuple[GitRepo, Path]:
    """Three merged branches that ``delete`` treats three ways (deleted; refused as a protected
    name; refused while checked out in a clean linked worktree), one merged branch that
    exists only on origin, and one live branch: five open branches, cap 3."""
    _, w = remote_and_clone
    w.commit("policy", files={".branchkeeper.yaml": CONFIG}, days_ago=30)
    for n, name in enumerate(("release", "done", "held", "gone")):
        _merged(w, name, 20 - n)
    w.git("push", "-q", "origin", "main", "gone")
    w.git("branch", "-q", "-D", "gone")
    wt = tmp_path / "wt-held"
    w.git("worktree", "add", "-q", str(wt), "held")
    w.switch("live", create=True, start="main")
    w.commit("live work", files={"live.txt": "live\n"}, days_ago=1)
    w.switch("main")
    return w, wt


def _listing(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("  - ")]


def test_the_cap_denial_prints_what_delete_does(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    w, wt = _at_cap(remote_and_clone, tmp_path)
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    text = decide_command("git switch -c more", cwd=str(w.path)).text
    assert text == (
        "[R-BRANCH-WIP-CAP] Creating more would exceed the WIP cap: 5 open work branches, cap 3 "
        "(branches.wip.cap).\n\n"
        "Finish or clear an open branch first (merged ones are proven and cheapest):\n"
        "  - release (merged, 21d old): not deleted: a protected name "
        "(branches.protected_names): kept whatever its proof (a person may list it in "
        "branches.exempt, so it no longer counts as open work)\n"
        "  - done (merged, 20d old): branchkeeper delete -- done\n"
        f"  - held (merged, 19d old, worktree {wt}): not deleted: checked out in worktree {wt}: "
        "`branchkeeper sweep --clean` removes the worktree (unless it holds work) and then the "
        f"branch; or `branchkeeper worktree retire {wt}` first, then delete it\n"
        "  - gone (merged, 18d old): branchkeeper delete --remote -- gone\n"
        "  - live (live, 1d old)\n"
        "`branchkeeper sweep --clean` deletes every proven branch nothing refuses, in one "
        "lossless step; or continue the work on one of the branches above instead of a new one. "
        "A human's branch can be declared in branches.exempt.\n\n"
        "LOST WORK RISK: branch live holds commits no remote-tracking ref contains (1d old); "
        "secure them now: git push -u origin live\n\n" + BRANCH_LIMIT_PRINCIPLE)
    # The count is the sweep's open branches (every tip distinct here), and each merged line
    # is what the sweep's record says `delete` does with that branch.
    records = {b["name"]: b for b in doc["branches"]}
    assert len([b for b in doc["branches"] if b["state"] not in (
        "default", "integration_line", "exempt")]) == 5
    for line in _listing(text):
        name = line[4:].split(" ", 1)[0]
        rec = records[name]
        if rec["state"] != "merged":
            assert ": " not in line.split(")", 1)[1]
            continue
        act = rec["actions"]["delete_remote" if rec["local_tip"] is None else "delete"]
        said = line.split("): ", 1)[1]
        if act["action"] == "delete":
            assert said.startswith("branchkeeper delete ")
        else:
            assert said.startswith(f"not deleted: {act['reason']}")
    # Every printed command succeeds; every refusal is one `delete` really makes.
    for name, expect in (("done", 0), ("gone", 0), ("release", 5), ("held", 5)):
        line = next(ln for ln in _listing(text) if ln.startswith(f"  - {name} "))
        said = line.split("): ", 1)[1]
        argv = shlex.split(said)[1:] if said.startswith("branchkeeper ") else ["delete", "--",
                                                                               name]
        assert cli(capsys, w, *argv)[0] == expect, (name, said)
    assert not w.has_ref("refs/heads/done")
    assert not w.has_ref("refs/remotes/origin/gone")


def test_an_old_format_sweep_file_is_read_as_before(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A file without ``version`` (format 1) has no ``cleanup``: each merged line gets the
    plain ``delete`` (``--remote`` for a branch only on the remote; the command judges
    again); a ``cleanup`` that is not an
    object, or a text of the wrong type, reads the same way. Never a crash."""
    w, _wt = _at_cap(remote_and_clone, tmp_path)
    assert cli(capsys, w, "sweep")[0] == 0
    path = w.path / ".git" / "branchkeeper" / "last-sweep.json"
    data = json.loads(path.read_text())
    assert data["version"] == 2
    assert data["cleanup"] == {
        "release": "not deleted: a protected name (branches.protected_names): kept whatever its "
                   "proof (a person may list it in branches.exempt, so it no longer counts as "
                   "open work)",
        "done": "branchkeeper delete -- done",
        "held": f"not deleted: checked out in worktree {_wt}: `branchkeeper sweep --clean` "
                "removes the worktree (unless it holds work) and then the branch; or "
                f"`branchkeeper worktree retire {_wt}` first, then delete it",
        "gone": "branchkeeper delete --remote -- gone"}
    plain = ["  - release (merged, 21d old): branchkeeper delete -- release",
             "  - done (merged, 20d old): branchkeeper delete -- done",
             f"  - held (merged, 19d old, worktree {_wt}): branchkeeper delete -- held",
             "  - gone (merged, 18d old): branchkeeper delete --remote -- gone",
             "  - live (live, 1d old)"]
    old = {k: v for k, v in data.items() if k not in ("version", "cleanup")}
    for written in (old, {**data, "cleanup": ["x"]}, {**data, "version": 1},
                    {**data, "cleanup": {"release": 5, "done": None, "held": "", "gone": []}}):
        path.write_text(json.dumps(written))
        assert _listing(decide_command("git switch -c more", cwd=str(w.path)).text) == plain


def test_the_listing_follows_refs_and_worktrees_gone_since_the_sweep(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A local branch deleted since the last sweep (its remote copy left) is listed with the
    delete that reaches it, ``--remote``; a branch whose worktree was removed since is listed
    without that worktree and with the plain ``delete``. Each printed command succeeds."""
    w, wt = _at_cap(remote_and_clone, tmp_path)
    w.git("push", "-q", "origin", "done")
    assert cli(capsys, w, "sweep")[0] == 0
    w.git("branch", "-q", "-D", "done")
    w.git("worktree", "remove", str(wt))
    listing = _listing(decide_command("git switch -c more", cwd=str(w.path)).text)
    assert listing == [
        "  - release (merged, 21d old): not deleted: a protected name "
        "(branches.protected_names): kept whatever its proof (a person may list it in "
        "branches.exempt, so it no longer counts as open work)",
        "  - done (merged, 20d old): branchkeeper delete --remote -- done",
        "  - held (merged, 19d old): branchkeeper delete -- held",
        "  - gone (merged, 18d old): branchkeeper delete --remote -- gone",
        "  - live (live, 1d old)"]
    for name in ("done", "held"):
        said = next(ln for ln in listing if ln.startswith(f"  - {name} ")).split("): ", 1)[1]
        assert cli(capsys, w, *shlex.split(said)[1:])[0] == 0, said
    assert not w.has_ref("refs/remotes/origin/done")
    assert not w.has_ref("refs/heads/held")
