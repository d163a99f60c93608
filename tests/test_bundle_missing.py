"""One missing object keeps only the branches whose recovery bundle needs it (issue 11,
section 4): ``sweep --clean`` names the object, keeps those branches and deletes the rest behind
one bundle, in a repository with one loose blob deleted and in a partial clone that never
fetched a blob (nothing is fetched)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from branchkeeper.git.objects import tips_missing_objects
from branchkeeper.git.run import processes_started
from tests.cleanuputil import branches, cli, cli_json, norm, short
from tests.gitrepo import GitRepo


def _damaged(oid: str) -> str:
    return (f"its bundle needs object {oid}, missing from this repository (a damaged object "
            "store: run git fsck); nothing is deleted without its bundle")


def _partial(oid: str) -> str:
    return (f"its bundle needs object {oid}, missing from this clone (a partial clone of "
            f"origin: branchkeeper never fetches); fetch it first (git cat-file -e {oid} "
            "fetches it from the promisor remote), then delete the branch")


def _merged(w: GitRepo, branches: dict[str, dict[str, str]], days_ago: float) -> None:
    """Each of ``branches`` (name -> files) made from main's tip, then each merged into main."""
    start = w.rev("main")
    for name, files in branches.items():
        w.switch(name, create=True, start=start)
        w.commit(name, files=files, days_ago=days_ago + 1)
    w.switch("main")
    for name in branches:
        w.merge(name, days_ago=days_ago)


def test_a_deleted_blob_keeps_only_the_branch_that_needs_it(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    _merged(w, {n: {f"{n}.txt": f"{n}\n"} for n in ("alpha", "needs", "omega")}, 10)
    w.git("push", "-q", "origin", "main")
    blob = w.rev("needs:needs.txt")
    (w.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    tips = {n: short(w, n) for n in ("alpha", "needs", "omega", "main")}
    code, out, err = cli(capsys, w, "sweep", "--clean")
    assert (code, err) == (0, ""), err
    assert norm(out) == (
        "sweep-clean: 4 branches (default branch main)\n"
        f"  deleted        alpha  {tips['alpha']}  merged into origin/main: every commit is on it\n"
        "      restore: git fetch BUNDLE refs/heads/alpha:refs/heads/alpha\n"
        f"  deleted        omega  {tips['omega']}  merged into origin/main: every commit is on it\n"
        "      restore: git fetch BUNDLE refs/heads/omega:refs/heads/omega\n"
        f"  kept           main  {tips['main']}  default\n"
        f"  kept           needs  {tips['needs']}  {_damaged(blob)}\n"
        "bundle: BUNDLE (compact, N bytes, verified)\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n")
    assert branches(w) == ["main", "needs"]


def test_the_isolation_is_a_bisection_not_a_process_per_branch(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    names = [f"b{i:02d}" for i in range(16)]
    _merged(w, {n: {f"{n}.txt": f"{n}\n"} for n in names}, 30)
    blob = w.rev("b05:b05.txt")
    (w.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    tips = [w.rev(n) for n in names]
    parents = [w.rev(f"{n}~1") for n in names]
    before = processes_started()
    assert tips_missing_objects(w.path, tips, parents) == {w.rev("b05"): blob}
    assert processes_started() - before == 9  # 1 + 2 per halving of 16 tips
    before = processes_started()
    assert tips_missing_objects(w.path, [t for t in tips if t != w.rev("b05")], parents) == {}
    assert processes_started() - before == 1


def test_a_partial_clone_keeps_the_branch_whose_blob_it_never_fetched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = GitRepo.init_bare(tmp_path / "src.git")
    bare.git("config", "uploadpack.allowFilter", "true")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("x", files={"x.txt": "v1\n"}, days_ago=30)
    _merged(seed, {"old": {"x.txt": "old\n"}, "fine": {"f.txt": "f\n"}}, 20)
    seed.commit("x again", files={"x.txt": "v2\n"}, days_ago=18)
    seed.git("push", "-q", str(bare.path), "main", "old", "fine")
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-local",
                    f"file://{bare.path}", str(tmp_path / "clone")], check=True)
    clone = GitRepo(tmp_path / "clone")
    for name in ("old", "fine"):
        clone.git("branch", "-q", name, f"origin/{name}")
    blob = seed.rev("old:x.txt")
    have = clone.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    assert blob not in have.split()
    tips = {n: short(clone, n) for n in ("fine", "old", "main")}
    code, out, err = cli(capsys, clone, "sweep")
    assert (code, err) == (0, ""), err
    assert out == (
        f"{clone.path}  default: main  remote: origin  dormancy: 7/14/30 days (standard)\n"
        "note: partial clone (promisor remote origin): branchkeeper never fetches the objects "
        "it lacks; 1 proven branch(es) kept: their recovery bundle needs objects missing here\n"
        "\n"
        "Merged, not deleted (2): cleanup candidates\n"
        "  fine  merged into origin/main: every commit is on it, 21d old\n"
        "    branchkeeper delete -- fine\n"
        "  old  merged into origin/main: every commit is on it, 21d old\n"
        f"    not deleted: {_partial(blob)}\n"
        "\n"
        "3 branches: 2 merged; LOST WORK RISK: 0\n"
        "clean up every proven local branch at once: branchkeeper sweep --clean (add --dry-run "
        "to see the plan)\n")
    code, doc = cli_json(capsys, clone, "sweep")
    assert {b["name"]: (b["cleanup"], b["actions"]["sweep_clean"]["action"],
                        b["actions"]["delete"]["action"])
            for b in doc["branches"] if b["name"] != "main"} == {
        "fine": ({"command": "branchkeeper delete -- fine", "why": None}, "delete", "delete"),
        "old": ({"command": None, "why": f"not deleted: {_partial(blob)}"}, "kept", "refused")}
    plan = (
        "sweep-clean: 3 branches (default branch main)\n"
        f"  {{:<15}}fine  {tips['fine']}  merged into origin/main: every commit is on it\n"
        "{}"
        f"  kept           main  {tips['main']}  default\n"
        f"  kept           old  {tips['old']}  {_partial(blob)}\n")
    code, out, err = cli(capsys, clone, "sweep", "--clean", "--dry-run")
    assert (code, err, out) == (0, "", "dry run: " + plan.format("would delete", "")), err
    code, out, err = cli(capsys, clone, "delete", "--dry-run", "--", "old")
    assert (code, err, out) == (5, "", (
        "dry run: delete: 1 branch (default branch main)\n"
        f"  refused        old  {tips['old']}  refused: {_partial(blob)}\n"
        "refused: 1 of 1 name cannot be deleted; nothing was deleted\n")), out
    code, out, err = cli(capsys, clone, "sweep", "--clean")
    assert (code, err) == (0, ""), err
    assert norm(out) == plan.format(
        "deleted", "      restore: git fetch BUNDLE refs/heads/fine:refs/heads/fine\n") + (
        "bundle: BUNDLE (compact, N bytes, verified)\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n")
    assert branches(clone) == ["main", "old"]
    # nothing was fetched
    assert clone.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)") == have


def _bundle_checks(w: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                   trace: Path) -> int:
    """The ``rev-list --missing=print`` walks of one in-process ``sweep --json`` (git's own
    trace; the stored result is bypassed by a ref change before each call)."""
    trace.write_text("")
    monkeypatch.setenv("GIT_TRACE", str(trace))
    code, _ = cli_json(capsys, w, "sweep")
    monkeypatch.delenv("GIT_TRACE")
    assert code in (0, 1)
    return sum(1 for line in trace.read_text().splitlines()
               if " rev-list " in line and "--missing=print" in line)


def test_a_warm_pass_checks_the_bundles_of_new_tips_only(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each proven tip found complete is remembered: a pass after a ref change that brings no
    new proven tip walks no bundle range (in a full repository, even once the default branch
    moved), one that brings a merged branch walks once."""
    _, w = remote_and_clone
    _merged(w, {n: {f"{n}.txt": f"{n}\n"} for n in ("alpha", "omega")}, 10)
    w.git("push", "-q", "origin", "main")
    trace = tmp_path / "trace"
    assert _bundle_checks(w, capsys, monkeypatch, trace) == 1
    w.switch("unmerged", create=True, start="main")
    w.commit("u", files={"u.txt": "u\n"}, days_ago=1)  # new, but not proven: nothing to bundle
    w.switch("main")
    assert _bundle_checks(w, capsys, monkeypatch, trace) == 0
    w.commit("on main", files={"m.txt": "m\n"}, days_ago=1)  # the base moves, no tip is new:
    w.git("push", "-q", "origin", "main")  # in a full repository a complete tip stays complete
    assert _bundle_checks(w, capsys, monkeypatch, trace) == 0
    _merged(w, {"beta": {"beta.txt": "b\n"}}, 2)  # a proven tip is new
    w.git("push", "-q", "origin", "main")
    assert _bundle_checks(w, capsys, monkeypatch, trace) == 1
    w.git("branch", "-D", "unmerged")
    assert _bundle_checks(w, capsys, monkeypatch, trace) == 0
