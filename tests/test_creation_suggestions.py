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
from branchkeeper.policy.creation import decide_creation
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.cleanuputil import branches, cli, cli_json
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
        "(branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not).\n\n"
        "Finish or clear an open branch first (merged ones are proven and cheapest):\n"
        "  - release (merged, 21d old): not deleted: a protected name "
        "(branches.protected_names): kept whatever its proof (a person may list it in "
        "branches.exempt, so it no longer counts as open work)\n"
        "  - done (merged, 20d old): branchkeeper delete -- done\n"
        f"  - held (merged, 19d old, worktree {wt}): branchkeeper worktree retire {wt} && "
        "branchkeeper delete -- held\n"
        "  - gone (merged, 18d old): branchkeeper delete --remote -- gone\n"
        "  - live (live, 1d old)\n"
        "`branchkeeper sweep --clean` deletes every proven branch nothing refuses, in one "
        "lossless step; or continue the work on one of the branches above instead of a new one. "
        "A human's branch can be declared in branches.exempt.\n\n"
        "LOST WORK RISK: branch live holds commits no remote-tracking ref contains (1d old); "
        "secure them now: git push -u origin live\n\n" + BRANCH_LIMIT_PRINCIPLE)
    # The count is the sweep's open branches (every tip distinct here), and each merged line
    # is what the sweep says deletes that branch (its `cleanup` field).
    records = {b["name"]: b for b in doc["branches"]}
    assert len([b for b in doc["branches"] if b["state"] not in (
        "default", "integration_line", "exempt")]) == 5
    for line in _listing(text):
        name = line[4:].split(" ", 1)[0]
        rec = records[name]
        if rec["state"] != "merged":
            assert ": " not in line.split(")", 1)[1]
            continue
        said = line.split("): ", 1)[1]
        assert said == (rec["cleanup"]["command"] or rec["cleanup"]["why"])
    # Every printed command succeeds; every refusal is one `delete` really makes.
    for name, expect in (("done", 0), ("gone", 0), ("release", 5), ("held", 0)):
        line = next(ln for ln in _listing(text) if ln.startswith(f"  - {name} "))
        said = line.split("): ", 1)[1]
        steps = said.split(" && ") if said.startswith("branchkeeper ") else [
            f"branchkeeper delete -- {name}"]
        assert [cli(capsys, w, *shlex.split(step)[1:])[0] for step in steps] == \
            [0] * (len(steps) - 1) + [expect], (name, said)
    assert not w.has_ref("refs/heads/done")
    assert not w.has_ref("refs/heads/held")
    assert not wt.exists()
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
        "held": f"branchkeeper worktree retire {_wt} && branchkeeper delete -- held",
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


def _four_worktrees(remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path
                     ) -> tuple[GitRepo, dict[str, Path]]:
    """Four merged branches, each checked out in a linked worktree: ``clean`` holds nothing,
    ``ignored`` only an ignored file an archive can hold, ``dirty`` an uncommitted edit,
    ``kept`` an untracked file; plus one live branch, pushed: five open branches, cap 3."""
    _, w = remote_and_clone
    w.commit("policy", files={".branchkeeper.yaml": CONFIG, ".gitignore": "*.log\n"},
             days_ago=30)
    wts = {}
    for n, name in enumerate(("clean", "ignored", "dirty", "kept")):
        _merged(w, name, 20 - n)
        wts[name] = tmp_path / f"wt-{name}"
        w.git("worktree", "add", "-q", str(wts[name]), name)
    (wts["ignored"] / "build.log").write_text("log\n")
    (wts["dirty"] / "dirty.txt").write_text("an edit not committed\n")
    (wts["kept"] / "notes.txt").write_text("untracked\n")
    w.switch("live", create=True, start="main")
    w.commit("live work", files={"live.txt": "live\n"}, days_ago=1)
    w.git("push", "-q", "-u", "origin", "live")
    w.switch("main")
    return w, wts


def test_a_denial_says_what_the_sweep_says_of_a_worktree_holding_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """For a merged branch checked out in a linked worktree, the WIP-cap denial (PreToolUse
    and WorktreeCreate alike) prints the sweep's own ``cleanup`` for it, read with what that
    worktree holds: the retire and the delete when nothing is in the way, the archive of its
    ignored files first when only those are, and "yours to decide" when it holds work; never
    ``delete``'s "sweep --clean removes the worktree unless it holds work"."""
    w, wts = _four_worktrees(remote_and_clone, tmp_path)
    code, doc = cli_json(capsys, w, "sweep")
    assert code == 0
    cleanup = {b["name"]: b["cleanup"] for b in doc["branches"] if b["cleanup"] is not None}
    held = ("which retire keeps ({}): that is yours to decide (LOST WORK RISK lists what it "
            "holds); once the worktree is retired, delete the branch")
    assert cleanup == {
        "clean": {"command": f"branchkeeper worktree retire {wts['clean']} && branchkeeper "
                             "delete -- clean", "why": None},
        "ignored": {"command": f"branchkeeper worktree retire --archive-ignored "
                               f"{wts['ignored']} && branchkeeper delete -- ignored",
                    "why": None},
        "dirty": {"command": None,
                  "why": f"not deleted: checked out in worktree {wts['dirty']}, "
                         + held.format("1 tracked change(s): dirty.txt")},
        "kept": {"command": None,
                 "why": f"not deleted: checked out in worktree {wts['kept']}, "
                        + held.format("1 untracked file(s): notes.txt")}}
    said = {name: c["command"] or c["why"] for name, c in cleanup.items()}
    # below each, what its worktree holds, in the words of the sweep's LOST WORK RISK section
    risk = {i["worktree"]: f"\n    LOST WORK RISK: worktree {i['subject']}  {i['detail']}; "
                           + ("keep them" if i["kind"] == "ignored_files" else "secure it")
                           + f": {i['secure']}"
            for i in doc["lost_work"] if i["kind"] != "unpushed_branch"}
    assert sorted(risk) == sorted(str(wts[n]) for n in ("ignored", "dirty", "kept"))
    code, text, _ = cli(capsys, w, "sweep")
    for line in risk.values():
        head, _, action = line.removeprefix("\n    LOST WORK RISK: ").partition("; ")
        assert f"\n  {head}\n    {action}\n" in text
    listing = [f"  - clean (merged, 21d old, worktree {wts['clean']}): {said['clean']}",
               f"  - ignored (merged, 20d old, worktree {wts['ignored']}): {said['ignored']}"
               + risk[str(wts["ignored"])],
               f"  - dirty (merged, 19d old, worktree {wts['dirty']}): {said['dirty']}"
               + risk[str(wts["dirty"])],
               f"  - kept (merged, 18d old, worktree {wts['kept']}): {said['kept']}"
               + risk[str(wts["kept"])],
               "  - live (live, 1d old)"]
    denial = (
        "[R-BRANCH-WIP-CAP] Creating more would exceed the WIP cap: 5 open work branches, cap 3 "
        "(branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not).\n\n"
        "Finish or clear an open branch first (merged ones are proven and cheapest):\n"
        + "".join(line + "\n" for line in listing)
        + "`branchkeeper sweep --clean` deletes every proven branch nothing refuses, in one "
        "lossless step; or continue the work on one of the branches above instead of a new one. "
        "A human's branch can be declared in branches.exempt.\n\n" + BRANCH_LIMIT_PRINCIPLE)
    assert decide_command("git switch -c more", cwd=str(w.path)).text == denial
    assert decide_creation("more", cwd=str(w.path), route="worktree_create").text == denial
    assert json.loads((w.path / ".git" / "branchkeeper" / "last-sweep.json").read_text()
                      )["cleanup"] == said
    # Each command runs to the end; the branches whose worktree holds work stay.
    for name in ("clean", "ignored"):
        for step in said[name].split(" && "):
            assert cli(capsys, w, *shlex.split(step)[1:])[0] == 0, step
    assert branches(w) == ["dirty", "kept", "live", "main"]
    assert (wts["dirty"] / "dirty.txt").read_text() == "an edit not committed\n"


def test_passes_that_read_no_worktree_write_only_what_they_know(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``report``, ``prune`` and ``sweep --finish-pass`` read no worktree: for a merged branch
    checked out in one they keep the sweep's text while the branch is at the same tip, and
    otherwise say only what they know, never ``delete``'s own refusal."""
    w, wts = _four_worktrees(remote_and_clone, tmp_path)
    sweep_file = w.path / ".git" / "branchkeeper" / "last-sweep.json"

    def cleanup() -> dict[str, str]:
        return dict(json.loads(sweep_file.read_text())["cleanup"])

    def lost() -> dict[str, list[str]]:
        return dict(json.loads(sweep_file.read_text())["lost"])

    assert cli_json(capsys, w, "sweep")[0] == 0
    said, risks = cleanup(), lost()
    assert said["clean"] == (f"branchkeeper worktree retire {wts['clean']} && branchkeeper "
                             "delete -- clean")
    assert sorted(risks) == sorted(str(wts[n]) for n in ("dirty", "ignored", "kept"))
    for argv in (("report", "--repo", str(w.path)), ("prune", "--dry-run", "--no-fetch"),
                 ("sweep", "--finish-pass")):
        assert cli(capsys, w, *argv)[0] in (0, 1), argv
        assert (cleanup(), lost()) == (said, risks), argv
    # no sweep before: what the pass knows, for each branch its worktree keeps
    sweep_file.unlink()
    assert cli(capsys, w, "prune", "--dry-run", "--no-fetch")[0] == 0
    assert cleanup() == {
        name: f"not deleted: checked out in worktree {wts[name]}; whether retiring that "
              "worktree loses anything is not known yet (branchkeeper sweep says, and what "
              "deletes the branch)"
        for name in ("clean", "dirty", "ignored", "kept")}


def test_the_sweep_prints_the_count_the_cap_denial_reads(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One count: ``sweep`` (text and ``wip`` in ``--json``) and the denial read the guard's
    own count, an unstarted branch at the default branch's tip counted by neither."""
    w, _ = _at_cap(remote_and_clone, tmp_path)
    w.git("branch", "fresh", "main")
    counted = ("counted: distinct tips of the branches that are not the default, an "
               "integration line or exempt, merged and parked ones included; unstarted ones, "
               "still at the default branch's tip, are not")
    code, doc = cli_json(capsys, w, "sweep")
    assert (code, doc["wip"]) == (0, {"open": 5, "cap": 3, "mode": "block", "counted": counted})
    assert doc["summary"]["unstarted"] == 1
    code, text, _ = cli(capsys, w, "sweep")
    assert (f"\nWIP cap reached: 5 open work branches, cap 3 (branches.wip.cap; {counted}); a "
            "new branch is refused until one is finished or cleared\n") in text
    text = decide_command("git switch -c new", cwd=str(w.path)).text
    assert text.startswith("[R-BRANCH-WIP-CAP] Creating new would exceed the WIP cap: 5 open "
                           f"work branches, cap 3 (branches.wip.cap; {counted}).\n"), text
