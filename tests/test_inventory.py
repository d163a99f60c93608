"""The inventory on real repositories: every state, every containment class, the field cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import processes_started
from branchkeeper.model.config import Config
from branchkeeper.model.config_file import load_config
from tests.gitrepo import GitRepo


def sweep_json(repo: GitRepo, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:  # type: ignore[type-arg]
    capsys.readouterr()
    code = main(["-C", str(repo.path), "sweep", "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)  # type: ignore[no-any-return]


def table(doc: dict) -> dict[str, tuple]:  # type: ignore[type-arg]
    """name -> (state, proof kind, containment, stage)."""
    return {
        b["name"]: (b["state"], b["proof"]["kind"] if b["proof"] else None, b["containment"],
                    b["stage"])
        for b in doc["branches"]
    }


@pytest.fixture
def team_repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone with one branch in every state and containment class."""
    _, w = remote_and_clone
    w.commit("base work", files={"app.py": "print(1)\n"}, days_ago=50)
    w.git("push", "-q", "origin", "main")
    # merged with a merge commit, pushed, remote copy kept
    w.switch("merged-mc", create=True)
    w.commit("mc", files={"mc.txt": "mc\n"}, days_ago=45)
    w.git("push", "-q", "origin", "merged-mc")
    w.switch("main")
    w.merge("merged-mc", days_ago=44)
    # squash merged (C08 shape: later main commit edits the same file)
    w.switch("squashed", create=True)
    w.commit("sq1", files={"f.txt": "one\n"}, days_ago=40)
    w.commit("sq2", files={"f.txt": "one\ntwo\n"}, days_ago=39)
    w.switch("main")
    squash = w.squash_merge("squashed", days_ago=38)
    w.commit("later edit", files={"f.txt": "one\ntwo\nthree\n"}, days_ago=37)
    # rebase merged
    w.switch("rebased", create=True)
    w.commit("rb1", files={"rb.txt": "rb\n"}, days_ago=36)
    w.commit("rb2", files={"rb2.txt": "rb2\n"}, days_ago=36)
    w.switch("main")
    w.rebase_merge("rebased", days_ago=35)
    w.git("push", "-q", "origin", "main")
    # integration line and a branch merged only into it
    w.switch("release/1.x", create=True)
    w.git("push", "-q", "origin", "release/1.x")
    w.switch("fix-on-line", create=True)
    w.commit("line fix", files={"line.txt": "x\n"}, days_ago=20)
    w.switch("release/1.x")
    w.merge("fix-on-line", days_ago=19)
    w.git("push", "-q", "origin", "release/1.x")
    # work: live pushed, dormant stages, nowhere, in another remote ref, parked
    w.switch("main")
    w.switch("live-pushed", create=True)
    w.commit("lp", files={"lp.txt": "lp\n"}, days_ago=1)
    w.git("push", "-q", "-u", "origin", "live-pushed")
    w.switch("main")
    w.switch("old-nowhere", create=True, days_ago=46)
    w.commit("on", files={"on.txt": "on\n"}, days_ago=45)
    w.switch("main")
    w.switch("noisy-own", create=True, days_ago=21)
    w.commit("no", files={"no.txt": "no\n"}, days_ago=20)
    w.git("push", "-q", "origin", "noisy-own")
    w.switch("main")
    w.switch("advisory-in-other", create=True, days_ago=11)
    w.commit("ao", files={"ao.txt": "ao\n"}, days_ago=10)
    w.git("push", "-q", "origin", "advisory-in-other:carrier")
    w.switch("main")
    w.switch("parked-one", create=True, days_ago=61)
    w.commit("pk", files={"pk.txt": "pk\n"}, days_ago=60)
    w.git("commit", "-q", "--allow-empty", "-m", "park", "-m",
          "Parked-Reason: waiting for review\nParked-By: Someone", env=w.date_env(50))
    w.switch("main")
    w.git("push", "-q", "origin", "main")
    w.git("branch", "users/alice", "main")  # a human's branch, declared exempt below
    (w.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*"]\n  exempt: ["users/*"]\n')
    w.git("config", "test.squash", squash)
    return w


def test_every_state_and_containment(team_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    doc = sweep_json(team_repo, capsys)
    assert table(doc) == {
        "advisory-in-other": ("dormant", None, "in_remote_ref", "advisory"),
        "carrier": ("dormant", None, "own_remote_only", "advisory"),
        "fix-on-line": ("merged_into_line", "ancestor", None, None),
        "live-pushed": ("live", None, "own_remote_only", None),
        "main": ("default", None, None, None),
        "merged-mc": ("merged", "ancestor", None, None),
        "noisy-own": ("dormant", None, "own_remote_only", "noisy"),
        "old-nowhere": ("dormant", None, "nowhere", "block"),
        "parked-one": ("parked", None, "nowhere", None),
        "rebased": ("patch_equivalent", "patch_equivalent", None, None),
        "release/1.x": ("integration_line", None, None, None),
        "squashed": ("patch_equivalent", "squash_merged", None, None),
        "users/alice": ("exempt", None, None, None),
    }
    by = {b["name"]: b for b in doc["branches"]}
    squash = team_repo.git("config", "test.squash")
    assert by["squashed"]["proof"] == {"kind": "squash_merged", "base": "refs/remotes/origin/main",
                                       "landed_as": squash, "verified": "patch-id"}
    assert by["advisory-in-other"]["containing_ref"] == "origin/carrier"
    assert by["parked-one"]["parked"]["reason"] == "waiting for review"
    assert by["parked-one"]["parked"]["by"] == "Someone"
    assert by["parked-one"]["ahead"] == 1  # the park commit is not counted
    # the two branches, and the main worktree's untracked .branchkeeper.yaml: a file a person
    # wrote that exists only here (only the files the install writes are not work)
    assert doc["summary"]["lost_work_risk"] == 3
    assert doc["default_branch"] == "main"


def test_text_report_lists_lost_work_first(team_repo: GitRepo,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["-C", str(team_repo.path), "sweep"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[2] == ("LOST WORK RISK: 2 branch(es), 1 dirty worktree(s) exist only in this "
                        "clone")
    assert "secure it: git push -u origin old-nowhere" in out
    assert out.index("LOST WORK RISK") < out.index("Merged, not deleted")
    assert main(["-C", str(team_repo.path), "sweep", "--fail-on-risk"]) == 1
    assert "users/alice" not in out  # exempt: listed only with --all
    capsys.readouterr()
    assert main(["-C", str(team_repo.path), "sweep", "--all"]) == 0
    assert ("Not judged: main (default), release/1.x (integration line), users/alice (exempt)"
            in capsys.readouterr().out)


def test_strict_preset_changes_stages(team_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    (team_repo.path / ".branchkeeper.yaml").write_text(
        'branches:\n  integration_lines: ["release/*"]\n  exempt: ["users/*"]\n'
        '  dormancy:\n    preset: strict\n')
    doc = sweep_json(team_repo, capsys)
    stages = {b["name"]: b["stage"] for b in doc["branches"] if b["state"] == "dormant"}
    assert stages == {"advisory-in-other": "block", "carrier": "block", "noisy-own": "block",
                      "old-nowhere": "block"}
    assert doc["dormancy_days"] == {"advisory": 3, "noisy": 3, "block": 7}


def test_git_processes_do_not_grow_with_branches(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    def count(n: int) -> int:
        for i in range(n):
            w.git("branch", f"b{n}-{i}", "main")
            w.git("update-ref", f"refs/heads/u{n}-{i}",
                  w.git("commit-tree", "-p", "main", "-m", f"u{i}", "main^{tree}"))
        facts = repo_facts(w.path)
        before = processes_started()
        build_inventory(facts, Config(), use_cache=False)
        return processes_started() - before
    small = count(3)
    large = count(40)
    assert large == small


def test_c04_no_upstream_is_unknown_never_zero(remote_and_clone: tuple[GitRepo, GitRepo],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.worktree_add(w.path.parent / "wt-x", "-b", "wt/x")
    GitRepo(w.path.parent / "wt-x").commit("x", files={"x.txt": "x\n"})
    doc = sweep_json(w, capsys)
    rec = next(b for b in doc["branches"] if b["name"] == "wt/x")
    # No upstream: nothing is measured against one (no upstream field pretends a zero);
    # ahead/behind are against the default branch, where git answers.
    assert rec["upstream"] is None
    assert rec["upstream_gone"] is False
    assert rec["behind"] == 0
    assert (rec["state"], rec["containment"], rec["ahead"]) == ("live", "nowhere", 1)
    assert rec["worktree"] == str(w.path.parent / "wt-x")


def test_c06_unusual_names_and_no_origin_head(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    bare = GitRepo.init_bare(tmp_path / "o.git", branch="foo-1.0.x")
    seed = GitRepo.init(tmp_path / "seed", branch="foo-1.0.x")
    seed.commit("init", files={"a": "a\n"}, days_ago=3)
    for name in ("feature/alpha-beta", "-x", "ünïcødé"):
        seed.git("update-ref", f"refs/heads/{name}",
                 seed.git("commit-tree", "-p", "HEAD", "-m", name, "HEAD^{tree}"))
    seed.git("push", "-q", str(bare.path), "refs/heads/*:refs/heads/*")
    w = GitRepo.init(tmp_path / "w", branch="scratch")
    w.git("remote", "add", "origin", str(bare.path))
    w.git("fetch", "-q", "origin")
    doc = sweep_json(w, capsys)
    assert doc["default_branch"] is None
    assert doc["default_branch_reason"].startswith("no origin/HEAD and no local main or master")
    assert {b["name"]: b["state"] for b in doc["branches"]} == {
        "-x": "unknown", "feature/alpha-beta": "unknown", "foo-1.0.x": "unknown",
        "ünïcødé": "unknown"}
    assert all(b["proof"] is None for b in doc["branches"])
    (w.path / ".branchkeeper.yaml").write_text("branches:\n  default: foo-1.0.x\n")
    doc = sweep_json(w, capsys)
    assert table(doc) == {
        "-x": ("live", None, "own_remote_only", None),
        "feature/alpha-beta": ("live", None, "own_remote_only", None),
        "foo-1.0.x": ("default", None, None, None),
        "ünïcødé": ("live", None, "own_remote_only", None),
    }


def test_c07_new_branch_at_old_commit_is_not_dormant(remote_and_clone: tuple[GitRepo, GitRepo],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.commit("old", files={"o": "o\n"}, days_ago=40)
    w.git("push", "-q", "origin", "main")
    w.git("branch", "agent-task", "main")
    doc = sweep_json(w, capsys)
    rec = next(b for b in doc["branches"] if b["name"] == "agent-task")
    assert (rec["state"], rec["stage"], rec["proof"]) == ("unstarted", None, None)
    assert rec["reason"] == "unstarted: at the same tip as main"
    assert rec["same_tip_as"] == ["main"]
    assert rec["age_days"] < 1


def test_c07_unstarted_branch_made_long_ago_has_no_stage(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """Created 40 days ago at main's tip and never moved: no work, so not a dormant block
    branch, and the guard does not refuse a new branch over it."""
    _, w = remote_and_clone
    w.commit("old", files={"o": "o\n"}, days_ago=40)
    w.git("push", "-q", "origin", "main")
    w.branch("agent-task", "main", days_ago=40)
    doc = sweep_json(w, capsys)
    rec = next(b for b in doc["branches"] if b["name"] == "agent-task")
    assert (rec["state"], rec["stage"], rec["containment"], rec["proof"], rec["age_days"]) == (
        "unstarted", None, None, None, 40.0)
    assert {k: v for k, v in doc["summary"].items() if v and k != "lost_work_by_kind"} == {
        "default": 1, "unstarted": 1}
    capsys.readouterr()
    assert main(["-C", str(w.path), "sweep"]) == 0
    out = capsys.readouterr().out
    assert out.split("\n", 1)[1] == (
        "\n"
        "Unstarted: no commits of their own, no dormancy stage (1)                  \n"
        "branch     ┃ age ┃ containment ┃ ahead ┃ detail                            \n"
        "━━━━━━━━━━━╇━━━━━╇━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n"
        "agent-task │ 40d │             │ 0     │ unstarted: at the same tip as main\n"
        "\n"
        "2 branches: 1 unstarted; LOST WORK RISK: 0\n")
    assert main(["-C", str(w.path), "check", "--", "git switch -c next"]) == 0
    assert capsys.readouterr().out == "allow\n"


@pytest.mark.parametrize("user_settings", [False, True], ids=["C08", "C09"])
def test_c08_c09_squash_then_base_moves(remote_and_clone: tuple[GitRepo, GitRepo],
                                        capsys: pytest.CaptureFixture[str],
                                        user_settings: bool) -> None:
    _, w = remote_and_clone
    w.switch("feature", create=True)
    w.commit("f1", files={"f.txt": "a\nb\nc\nd\ne\nf\ng\n"})
    w.commit("f2", files={"f.txt": "a\nb\nC\nd\ne\nf\ng\n"})
    w.switch("main")
    squash = w.squash_merge("feature")
    w.commit("later", files={"f.txt": "a\nb\nC\nd\ne\nf\nG\n"})
    w.git("push", "-q", "origin", "main")
    if user_settings:
        w.git("config", "--global", "diff.context", "5")
        w.git("config", "--global", "diff.algorithm", "histogram")
        w.git("config", "--global", "diff.external", "false")
        w.git("config", "--global", "diff.noprefix", "true")
    doc = sweep_json(w, capsys, "--no-cache")
    rec = next(b for b in doc["branches"] if b["name"] == "feature")
    assert rec["state"] == "patch_equivalent"
    assert rec["proof"] == {"kind": "squash_merged", "base": "refs/remotes/origin/main",
                            "landed_as": squash, "verified": "patch-id"}


def test_c10_shallow_clone_is_unknown(remote_and_clone: tuple[GitRepo, GitRepo],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    for i in range(4):
        w.commit(f"m{i}", files={f"m{i}": "x\n"})
    w.git("push", "-q", "origin", "main")
    w.git("branch", "forked", "origin/main~3")
    w.commit("m-next", files={"n": "x\n"})
    w.git("push", "-q", "origin", "main")
    w.git("fetch", "-q", "--depth", "1", "origin", "main")
    doc = sweep_json(w, capsys)
    assert doc["shallow"] is True
    assert doc["notes"] == ["shallow clone: verdicts that rest on history below the graft are unknown"]
    rec = next(b for b in doc["branches"] if b["name"] == "forked")
    assert rec["state"] == "unknown"
    assert rec["reason"].startswith("shallow clone: the branch's history reaches the graft")
    assert rec["proof"] is None


def test_budget_unknown_then_cache_finishes(team_repo: GitRepo,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    facts = repo_facts(team_repo.path)
    config = load_config(team_repo.path).config
    partial = build_inventory(facts, config, budget_ms=0)
    unknown = {r.name for r in partial.records if r.state.value == "unknown"}
    assert unknown and all("budget" in r.reason for r in partial.records if r.name in unknown)
    full = build_inventory(facts, config, budget_ms=None)
    assert not [r for r in full.records if r.state.value == "unknown"]
    before = processes_started()
    warm = build_inventory(facts, config, budget_ms=0)
    warm_unknown = [r.name for r in warm.records if r.state.value == "unknown"]
    assert warm_unknown == []  # everything now comes from the cache
    assert processes_started() - before < 12


def test_corrupt_cache_is_ignored(team_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    first = sweep_json(team_repo, capsys)
    cache = Path(team_repo.git("rev-parse", "--git-common-dir"))
    if not cache.is_absolute():
        cache = team_repo.path / cache
    (cache / "branchkeeper" / "cache.json").write_text("{not json")
    assert table(sweep_json(team_repo, capsys)) == table(first)


def test_unchanged_cache_is_not_rewritten(team_repo: GitRepo,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A sweep that adds and drops no cache entry leaves cache.json as it was (same file, same
    bytes); a new branch adds its entries, and a deleted one's are dropped."""
    first = sweep_json(team_repo, capsys)
    path = team_repo.path / ".git" / "branchkeeper" / "cache.json"
    stat = path.stat()
    before = path.read_bytes()
    assert table(sweep_json(team_repo, capsys)) == table(first)
    assert (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes()) == (
        stat.st_ino, stat.st_mtime_ns, before)
    team_repo.switch("extra-work", create=True, start="main")
    tip = team_repo.commit("extra", files={"extra.txt": "x\n"})
    team_repo.switch("main")
    sweep_json(team_repo, capsys)
    grown = json.loads(path.read_text())
    assert any(tip in key for key in grown["counts"]), grown["counts"]
    team_repo.git("branch", "-D", "extra-work")
    sweep_json(team_repo, capsys)
    assert not [key for key in json.loads(path.read_text())["counts"] if tip in key]


def test_not_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "sweep"]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"branchkeeper: error: {tmp_path}: not inside a git repository")


def test_ahead_behind_match_git(team_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """Every count the sweep reports equals git's own rev-list --count; none is guessed."""
    doc = sweep_json(team_repo, capsys)
    checked = 0
    for b in doc["branches"]:
        tip = b["local_tip"] or b["remote_tip"]
        if b["behind"] is not None:
            assert b["behind"] == int(team_repo.git("rev-list", "--count",
                                                    f"{tip}..origin/main")), b["name"]
            checked += 1
        if b["ahead"] is not None and b["state"] in ("dormant", "live"):
            assert b["ahead"] == int(team_repo.git("rev-list", "--count",
                                                   f"origin/main..{tip}")), b["name"]
    assert checked >= 8


def test_whitespace_only_match_is_not_preserved(remote_and_clone: tuple[GitRepo, GitRepo],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A base commit whose patch differs from the branch's only in whitespace is not proof:
    the branch's bytes are not on the base (patch-id --verbatim)."""
    _, w = remote_and_clone
    w.switch("spacing", create=True)
    w.commit("add w", files={"w.txt": "x = 1\n"})
    w.switch("main")
    w.commit("add w differently", files={"w.txt": "x  =  1\n"})
    w.git("push", "-q", "origin", "main")
    doc = sweep_json(w, capsys, "--no-cache")
    rec = next(b for b in doc["branches"] if b["name"] == "spacing")
    assert (rec["state"], rec["proof"]) == ("live", None)


def test_unpushed_counts_only_commits_no_remote_holds(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.switch("feat", create=True)
    w.commit("pushed", files={"a.txt": "a\n"})
    w.git("push", "-q", "-u", "origin", "feat")
    w.commit("not pushed", files={"b.txt": "b\n"})
    w.switch("main")
    rec = next(b for b in sweep_json(w, capsys)["branches"] if b["name"] == "feat")
    assert (rec["containment"], rec["ahead"], rec["unpushed"]) == ("nowhere", 2, 1)
    assert int(w.git("rev-list", "--count", "feat", "--not", "--remotes")) == 1


def test_bare_server_has_no_lost_work_risk(remote_and_clone: tuple[GitRepo, GitRepo],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bare, w = remote_and_clone
    w.switch("feat", create=True)
    w.commit("f", files={"f.txt": "f\n"})
    w.git("push", "-q", "origin", "feat")
    assert (sweep_json(w, capsys)["remote"], sweep_json(w, capsys)["remote_configured"]) \
        == ("origin", True)
    doc = sweep_json(bare, capsys)
    assert (doc["remote"], doc["remote_configured"]) == ("origin", False)  # as the text says
    assert doc["notes"] == ["no remote 'origin' is configured: where unmerged work lives is "
                            "not judged (set branches.remote)"]
    assert doc["summary"]["lost_work_risk"] == 0
    rec = next(b for b in doc["branches"] if b["name"] == "feat")
    assert (rec["state"], rec["containment"], rec["unpushed"]) == ("live", None, None)
    capsys.readouterr()
    assert main(["-C", str(bare.path), "sweep"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head == (f"{bare.path}  default: main  remote: none ('origin' is not configured)  "
                    "dormancy: 7/14/30 days (standard)")


def test_local_default_ahead_of_its_remote_is_lost_work_risk(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """A merge into the local default branch that was never pushed exists only in this clone."""
    _, w = remote_and_clone
    w.switch("feat/a", create=True)
    w.commit("a", files={"a.txt": "a\n"})
    w.switch("main")
    w.merge("feat/a")
    doc = sweep_json(w, capsys)
    main_rec = next(b for b in doc["branches"] if b["name"] == "main")
    assert (main_rec["state"], main_rec["containment"], main_rec["unpushed"]) == (
        "default", "nowhere", 2)
    assert doc["summary"]["lost_work_risk"] == 1
    capsys.readouterr()
    assert main(["-C", str(w.path), "sweep"]) == 0
    assert "secure it: git push -u origin main" in capsys.readouterr().out


def test_fast_forward_merged_branch_is_merged_not_unstarted(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.switch("ff", create=True)
    w.commit("work", files={"ff.txt": "ff\n"})
    w.switch("main")
    w.git("merge", "-q", "--ff-only", "ff")
    w.git("push", "-q", "origin", "main")
    w.git("branch", "fresh")  # created at the same tip, nothing done on it
    recs = {b["name"]: b for b in sweep_json(w, capsys)["branches"]}
    assert (recs["ff"]["state"], recs["ff"]["proof"]["kind"]) == ("merged", "ancestor")
    assert (recs["fresh"]["state"], recs["fresh"]["reason"]) == (
        "unstarted", "unstarted: at the same tip as main")
