"""``branchkeeper delete`` end to end on real repositories: each proof kind, refusals of the batch,
names that look like options, raced tips, bundle failures, compact and full bundles, undo."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.actions import cleanup_exec
from branchkeeper.actions.bundle import BundleError
from branchkeeper.actions.cleanup import Plan
from tests.cleanuputil import all_reachable, branches, cli, cli_json, norm, short
from tests.gitrepo import GitRepo


def _base(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"README": "r\n", "f.txt": "base\n"}, days_ago=30)
    return repo


def _squashed(repo: GitRepo, name: str = "feature") -> str:
    """C08: two commits to f.txt, squash-merged, then main edits f.txt again."""
    repo.switch(name, create=True)
    repo.commit("f1", files={"f.txt": "one\n"}, days_ago=20)
    repo.commit("f2", files={"f.txt": "one\ntwo\n"}, days_ago=19)
    repo.switch("main")
    squash = repo.squash_merge(name, days_ago=18)
    repo.commit("later", files={"f.txt": "one\ntwo\nthree\n"}, days_ago=17)
    return squash


def test_squash_merged_c08_whole_output_and_undo(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = _base(tmp_path)
    squash = _squashed(repo)
    tip = short(repo, "feature")
    before = all_reachable(repo.path)
    code, out, err = cli(capsys, repo, "delete", "feature")
    assert (code, err) == (0, "")
    assert norm(out) == (
        "delete: 1 branch (default branch main)\n"
        f"  deleted        feature  {tip}  squash-merged into main as {squash[:10]}\n"
        "      restore: git fetch BUNDLE refs/heads/feature:refs/heads/feature\n"
        "bundle: BUNDLE (compact, N bytes, verified)\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n"
    )
    assert branches(repo) == ["main"]
    code, out, _ = cli(capsys, repo, "undo")
    assert code == 0
    assert branches(repo) == ["feature", "main"]
    assert all_reachable(repo.path) == before


def test_c09_hostile_diff_settings_same_verdict(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = _base(tmp_path)
    squash = _squashed(repo)
    home = Path(repo.git("config", "--global", "--list", "--show-origin").split("\t")[0]
                .removeprefix("file:"))
    with home.open("a") as fh:
        fh.write("[diff]\n\tcontext = 5\n\talgorithm = histogram\n\texternal = /bin/false\n"
                 "\tnoprefix = true\n")
    code, doc = cli_json(capsys, repo, "delete", "--dry-run", "feature")
    assert code == 0
    assert doc["branches"] == [{
        "name": "feature", "remote": None, "tip": repo.rev("feature"), "action": "delete",
        "reason": f"squash-merged into main as {squash[:10]}",
        "proof": {"kind": "squash_merged", "base": "refs/heads/main", "landed_as": squash,
                  "verified": "patch-id"},
        "worktree": None, "blocking": [], "restore": None, "archive_ignored": []}]
    assert (doc["operation"], doc["bundle"], doc["refused"], doc["exit"]) == (None, None, None, 0)


@pytest.mark.parametrize("kind", ["ancestor", "patch_equivalent", "tip_subsumed",
                                  "content_on_base"])
def test_each_proof_kind_deletes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 kind: str) -> None:
    repo = _base(tmp_path)
    if kind == "ancestor":
        repo.switch("x", create=True)
        repo.commit("x1", files={"x.txt": "x\n"}, days_ago=10)
        repo.switch("main")
        repo.merge("x", days_ago=9)
    elif kind == "patch_equivalent":
        repo.switch("x", create=True)
        repo.commit("x1", files={"x.txt": "x\n"}, days_ago=10)
        repo.commit("x2", files={"y.txt": "y\n"}, days_ago=10)
        repo.switch("main")
        repo.commit("other", files={"o.txt": "o\n"}, days_ago=9)
        repo.rebase_merge("x", days_ago=8)
    elif kind == "tip_subsumed":
        repo.switch("full", create=True)
        repo.commit("f1", files={"x.txt": "x\n"}, days_ago=20)
        repo.commit("f2", files={"f.txt": "one\n"}, days_ago=19)
        repo.switch("main")
        repo.squash_merge("full", days_ago=18)
        repo.commit("later", files={"f.txt": "one\nthree\n", "x.txt": "x\nlater\n"},
                    days_ago=17)
        repo.branch("x", "full~1")
    else:
        repo.switch("x", create=True)
        repo.commit("x1", files={"f.txt": "mid-x\n"}, days_ago=10)
        repo.commit("x2", files={"f.txt": "final\n"}, days_ago=10)
        repo.switch("main")
        repo.commit("m1", files={"f.txt": "mid-main\n"}, days_ago=9)
        repo.commit("m2", files={"f.txt": "final\n"}, days_ago=8)
    tip = repo.rev("x")
    code, doc = cli_json(capsys, repo, "delete", "x")
    assert code == 0, doc
    [item] = doc["branches"]
    assert (item["action"], item["proof"]["kind"], item["tip"]) == ("deleted", kind, tip)
    assert not repo.has_ref("refs/heads/x")
    assert doc["bundle"]["heads"] == {"refs/heads/x": tip}
    assert doc["undo"] == f"branchkeeper undo {doc['operation']}"
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and repo.rev("x") == tip


def test_unproven_refuses_whole_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _base(tmp_path)
    repo.branch("done")
    repo.switch("wip", create=True)
    repo.commit("w", files={"w.txt": "w\n"}, days_ago=1)
    repo.switch("main")
    main_tip = short(repo, "main")
    real = (
        "delete: 4 branches (default branch main)\n"
        f"  not deleted    done  {main_tip}  unstarted: at the same tip as main, nothing to lose\n"
        "  refused        ghost  -  no such local branch\n"
        f"  refused        main  {main_tip}  refused: the default branch\n"
        f"  SKIP_UNPROVEN  wip  {short(repo, 'wip')}  no proof holds: the branch has commits "
        "that are not on the base\n"
        "refused: 3 of 4 names cannot be deleted; nothing was deleted\n"
    )
    # the dry run prints the refusal the real run prints, with its exit code: no "would delete"
    code, out, err = cli(capsys, repo, "delete", "--dry-run", "done", "wip", "main", "ghost")
    assert (code, err, out) == (5, "", "dry run: " + real)
    code, out, err = cli(capsys, repo, "delete", "done", "wip", "main", "ghost")
    assert (code, err, out) == (5, "", real)
    assert branches(repo) == ["done", "main", "wip"]
    assert not (Path(repo.git("rev-parse", "--git-common-dir")).is_absolute())


def test_allow_unproven_needs_a_person(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _base(tmp_path)
    repo.switch("wip", create=True)
    repo.commit("w", files={"w.txt": "w\n"}, days_ago=1)
    repo.switch("main")
    code, out, err = cli(capsys, repo, "delete", "--allow-unproven", "wip")
    assert (code, out, err) == (2, "", "branchkeeper: error: --allow-unproven needs --reason "
                                       "TEXT\n")
    code, out, err = cli(capsys, repo, "delete", "--allow-unproven", "--reason", "scratch", "wip")
    assert (code, out) == (5, "")
    assert err == ("branchkeeper: error: --allow-unproven would delete 1 unproven branch and "
                   "needs a person to confirm at a terminal; an agent cannot consent for itself. "
                   "Nothing was deleted.\n")
    assert branches(repo) == ["main", "wip"]


def test_allow_unproven_confirmed_bundles_and_undoes(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from branchkeeper.adapters.commands import delete as delete_cmd
    repo = _base(tmp_path)
    repo.switch("wip", create=True)
    wip = repo.commit("w", files={"w.txt": "w\n"}, days_ago=1)
    repo.switch("main")
    asked: list[list[str]] = []
    monkeypatch.setattr(delete_cmd, "confirm_at_terminal",
                        lambda plan: asked.append([i.name for i in plan.deletions]))
    code, doc = cli_json(capsys, repo, "delete", "--allow-unproven", "--reason", "spike", "wip")
    assert code == 0 and asked == [["wip"]]
    assert doc["branches"][0]["action"] == "deleted"
    assert doc["notes"] == ["unproven branches deleted on request: spike"]
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", wip, check=False) == ""
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and repo.rev("wip") == wip


def test_names_are_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _base(tmp_path)
    tip = repo.rev("main")
    names = ["-f", "--force", "ünï/cödé", "a/b/c", "x;rm -rf ~"[:0] + "semi;colon"]
    for n in names:
        repo.git("update-ref", f"refs/heads/{n}", tip)
    repo.commit("more", files={"m.txt": "m\n"}, days_ago=1)
    code, out, _ = cli(capsys, repo, "delete", "--", *names)
    assert code == 0, out
    assert branches(repo) == ["main"]
    assert "restore: git fetch BUNDLE 'refs/heads/semi;colon:refs/heads/semi;colon'" in norm(out)
    assert "restore: git fetch BUNDLE refs/heads/-f:refs/heads/-f" in norm(out)
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and branches(repo) == sorted(["main", *names])


def test_raced_tip_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _base(tmp_path)
    repo.branch("a")
    repo.branch("b")
    repo.commit("more", files={"m.txt": "m\n"}, days_ago=1)
    old_b = repo.rev("b")

    def land_commit(plan: Plan) -> None:
        landed = repo.git("commit-tree", "-p", old_b, "-m", "landed", f"{old_b}^{{tree}}")
        repo.git("update-ref", "refs/heads/b", landed)

    monkeypatch.setattr(cleanup_exec, "before_delete_hook", land_commit)
    code, doc = cli_json(capsys, repo, "delete", "a", "b")
    assert code == 5
    assert [(i["name"], i["action"]) for i in doc["branches"]] == [("a", "deleted"),
                                                                  ("b", "raced")]
    assert doc["branches"][1]["reason"].startswith("moved to ")
    assert repo.rev("b") != old_b and not repo.has_ref("refs/heads/a")
    code, out, _ = cli(capsys, repo, "log")
    assert "partial" in out
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and repo.has_ref("refs/heads/a")


def test_bundle_verify_failure_aborts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from branchkeeper.actions import bundle as bundle_mod
    repo = _base(tmp_path)
    repo.branch("a")

    def broken(*_a: object, **_k: object) -> None:
        raise BundleError("recovery bundle failed git bundle verify: (test)")

    monkeypatch.setattr(bundle_mod, "verify_bundle", broken)
    code, out, err = cli(capsys, repo, "delete", "a")
    assert (code, out) == (4, "")
    assert err == "branchkeeper: error: recovery bundle failed git bundle verify: (test)\n"
    assert branches(repo) == ["a", "main"]
    assert list((Path(repo.git("rev-parse", "--absolute-git-dir")) / "branchkeeper" / "bundles")
                .iterdir()) == []
    code, out, _ = cli(capsys, repo, "log")
    assert "no operations" in out or out.count("\n") <= 1


def test_compact_and_full_bundles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"a": "1\n"}, days_ago=3)
    repo.commit("two", files={"a": "2\n"}, days_ago=3)
    repo.branch("a")
    repo.commit("more", files={"a": "3\n"}, days_ago=2)
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  default: nosuch\n")
    code, doc = cli_json(capsys, repo, "delete", "a")
    assert code == 5 and doc["bundle"] is None
    assert doc["branches"][0]["reason"] == ("unknown: default branch unresolved: branches.default "
                                           "names 'nosuch', which exists neither locally nor on "
                                           "'origin'")
    (repo.path / ".branchkeeper.yaml").unlink()
    code, doc = cli_json(capsys, repo, "delete", "a")
    assert code == 0
    assert (doc["bundle"]["compact"], doc["bundle"]["prerequisites"]) == (
        True, [repo.rev("main~2")])
    # A tip that is another tip's fork point cannot ride in a compact bundle: full, with a note.
    repo.branch("p", "main~1")
    _squashed(repo, "q")
    code, out, _ = cli(capsys, repo, "delete", "p", "q")
    assert code == 0
    assert "(full, N bytes, verified)\nnote: full bundle: a smaller bundle without the " \
        "default branch's history would have left out some branches\n" in norm(out)
    code, _out, _ = cli(capsys, repo, "undo")
    assert code == 0 and branches(repo) == ["main", "p", "q"]
