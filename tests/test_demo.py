"""The demo repository (issue 2, section 7) and the benchmark generator (section 8).

The demo is built once per module (it takes about a second) and inspected with git; the
generator is run small and its ground truth checked against git ancestry and patch-ids.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from branchkeeper.adapters.demo_repository import (
    DEMO_BRANCHES,
    DETACHED_WORKTREE,
    PARK_AFTER_DAYS,
    PARK_REASON,
    RELEASE_LINE,
    DemoBranch,
    build_demo_repository,
    triage_counts,
)
from branchkeeper.clock import NOW_ENV
from tests.gitrepo import NOW

ROOT = Path(__file__).resolve().parent.parent
BY_NAME = {b.name: b for b in DEMO_BRANCHES}


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          env=os.environ.copy())
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout.rstrip("\n")


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    code = subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=repo).returncode
    assert code in (0, 1), code  # 1 = no; anything else is an error
    return code == 0


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as patch:  # built before the per-test clock is pinned
        patch.setenv(NOW_ENV, str(NOW))
        return build_demo_repository(tmp_path_factory.mktemp("demo"))


def refs(repo: Path, prefix: str) -> set[str]:
    out = git(repo, "for-each-ref", "--format=%(refname)", prefix)
    return {line.removeprefix(prefix) for line in out.splitlines()}


def test_triage_mix_is_the_scaled_real_one() -> None:
    assert triage_counts() == {"merged": 27, "superseded": 4, "finished": 4, "stopped": 3,
                               "waiting": 1, "other": 2}
    assert len(BY_NAME) == len(DEMO_BRANCHES) == 41


def test_exact_branch_sets(demo: Path) -> None:
    local = {b.name for b in DEMO_BRANCHES if b.remote != "only"} | {"main", RELEASE_LINE}
    remote = {b.name for b in DEMO_BRANCHES if b.remote in ("kept", "only", "ahead")}
    assert refs(demo, "refs/heads/") == local
    assert refs(demo, "refs/remotes/origin/") == remote | {"HEAD", "main", RELEASE_LINE}
    assert git(demo, "symbolic-ref", "refs/remotes/origin/HEAD") == "refs/remotes/origin/main"
    assert refs(demo.parent / "origin.git", "refs/heads/") == remote | {"main", RELEASE_LINE}
    assert git(demo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(demo, "status", "--porcelain") == ""
    assert git(demo, "show", "main:.branchkeeper.yaml").splitlines()[-1] == (
        '  integration_lines: ["release/*"]')


def test_landed_branches_by_kind(demo: Path) -> None:
    for b in DEMO_BRANCHES:
        tip = f"refs/remotes/origin/{b.name}" if b.remote == "only" else f"refs/heads/{b.name}"
        in_main = is_ancestor(demo, tip, "refs/remotes/origin/main")
        if b.base == RELEASE_LINE:
            assert is_ancestor(demo, tip, f"refs/remotes/origin/{RELEASE_LINE}") == (
                b.kind == "merge"), b.name
            assert not in_main, b.name
            continue
        assert in_main == (b.kind in ("merge", "ff", "copy")), b.name
        if b.kind in ("rebase", "open", "park") or (b.kind == "squash" and b.commits > 1):
            cherry = git(demo, "cherry", "refs/remotes/origin/main", tip).splitlines()
            # rebase merges: every commit upstream by patch-id; the others: some commit unique
            assert (b.kind == "rebase") == all(c.startswith("- ") for c in cherry), b.name


def test_squash_commit_carries_the_whole_branch_diff(demo: Path) -> None:
    for b in DEMO_BRANCHES:
        if b.kind != "squash":
            continue
        tip = f"refs/remotes/origin/{b.name}" if b.remote == "only" else f"refs/heads/{b.name}"
        subject = b.name.rsplit("/", 1)[-1].replace("-", " ")
        squash = git(demo, "log", "--format=%H", "-F", f"--grep={subject} (#", "main")
        assert len(squash.split()) == 1, b.name
        base = git(demo, "merge-base", "main", tip)
        assert git(demo, "diff", base, tip) == git(demo, "diff", f"{squash}^", squash), b.name
        own = b.commits + (BY_NAME[b.on].commits if b.on else 0)  # a successor holds its
        assert len(git(demo, "rev-list", f"{base}..{tip}").split()) == own  # predecessor's


def test_parked_branch(demo: Path) -> None:
    (row,) = [b for b in DEMO_BRANCHES if b.kind == "park"]
    tip = f"refs/heads/{row.name}"
    assert git(demo, "rev-parse", f"{tip}^{{tree}}") == git(demo, "rev-parse", f"{tip}~1^{{tree}}")
    trailers = git(demo, "log", "-1", "--format=%(trailers:key=Parked-Reason,key=Parked-By)", tip)
    assert trailers == f"Parked-Reason: {PARK_REASON}\nParked-By: Demo Agent"
    assert git(demo, "rev-parse", tip) == git(demo, "rev-parse", f"refs/remotes/origin/{row.name}")
    age = (NOW - int(git(demo, "log", "-1", "--format=%ct", tip))) / 86400
    assert math.isclose(age, row.day - PARK_AFTER_DAYS, abs_tol=0.5)


def test_dates_give_every_dormancy_stage(demo: Path) -> None:
    ages = {}
    for b in DEMO_BRANCHES:
        if b.kind != "open":
            continue
        tip = f"refs/remotes/origin/{b.name}" if b.remote == "only" else f"refs/heads/{b.name}"
        ages[b.name] = (NOW - int(git(demo, "log", "-1", "--format=%ct", tip))) / 86400
        assert math.isclose(ages[b.name], b.day, abs_tol=0.5), (b.name, ages[b.name])
    stages = {sum(age >= d for d in (7, 14, 30)) for age in ages.values()}
    assert stages == {0, 1, 2, 3}  # live, advisory, noisy, block (standard preset)


def test_worktrees_dirty_clean_and_detached(demo: Path) -> None:
    base = demo / ".claude" / "worktrees"
    listing = git(demo, "worktree", "list", "--porcelain").split("\n\n")
    seen = {}
    for block in listing:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        seen[Path(fields["worktree"])] = fields.get("branch", "detached" if "detached" in fields
                                                    else "")
    assert seen == {
        demo: "refs/heads/main",
        base / "agent-a3f9e0c1": "refs/heads/worktree-agent-a3f9e0c1",
        base / "fix-login-4f3a9c21": "refs/heads/worktree-fix-login-4f3a9c21",
        base / DETACHED_WORKTREE: "detached",
    }
    assert git(base / "agent-a3f9e0c1", "status", "--porcelain") == (
        " M src/worktree-agent-a3f9e0c1.py\n?? notes/")
    assert git(base / "fix-login-4f3a9c21", "status", "--porcelain") == ""
    lone = git(base / DETACHED_WORKTREE, "rev-parse", "HEAD")
    assert git(demo, "for-each-ref", "--contains", lone) == ""
    assert git(demo, "rev-parse", "main") == git(base / DETACHED_WORKTREE, "rev-parse", "HEAD~1")


def test_remote_copies_unpushed_gone_and_same_tip(demo: Path) -> None:
    for b in DEMO_BRANCHES:
        if b.remote == "none" and b.kind == "open":  # LOST WORK RISK: on no remote ref
            assert git(demo, "branch", "-r", "--contains", f"refs/heads/{b.name}") == "", b.name
        if b.remote == "gone":  # upstream configured, remote copy deleted after landing
            assert git(demo, "config", f"branch.{b.name}.merge") == f"refs/heads/{b.name}"
            assert not refs(demo, f"refs/remotes/origin/{b.name}")
    ahead = "agent/issue-150-parser"
    assert git(demo, "rev-list", "--count", f"origin/{ahead}..{ahead}") == "1"
    assert git(demo, "rev-parse", "fix/retry-jitter") == git(
        demo, "rev-parse", "agent/issue-123-retry")


def test_superseded_share_their_successor_file(demo: Path) -> None:
    topics: dict[str, list[DemoBranch]] = {}
    for b in DEMO_BRANCHES:
        if b.topic:
            topics.setdefault(b.topic, []).append(b)
    for pair in topics.values():
        groups = sorted(x.group for x in pair)
        assert groups == ["merged", "superseded"]


#: The sweep's verdict on every demo branch: (state, proof kind, containment, stage).
DEMO_VERDICTS = {
    "agent/issue-101-cache-headers": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-104-healthcheck": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-110-i18n": ("merged", "ancestor", None, None),
    "agent/issue-110-i18n-draft": ("dormant", None, "own_remote_only", "noisy"),
    "agent/issue-112-timeouts": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-115-backport": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-118-metrics": ("patch_equivalent", "squash_merged", None, None),
    "agent/issue-120-pagination-fix": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-123-retry": ("merged", "ancestor", None, None),
    "agent/issue-125-upload-limit": ("merged", "ancestor", None, None),
    "agent/issue-129-csv-escape": ("patch_equivalent", "patch_equivalent", None, None),
    "agent/issue-131-error-pages": ("merged", "ancestor", None, None),
    "agent/issue-138-docs-search": ("dormant", None, "own_remote_only", "noisy"),
    "agent/issue-142-bulk-edit": ("dormant", None, "own_remote_only", "noisy"),
    "agent/issue-150-parser": ("live", None, "nowhere", None),
    "agent/issue-97-rate-limit": ("patch_equivalent", "squash_merged", None, None),
    "agent/issue-97-rate-limit-v1": ("superseded", None, "own_remote_only", "block"),
    "chore/bump-deps": ("merged", "ancestor", None, None),
    "claude/tidy-logging-2b7f": ("patch_equivalent", "patch_equivalent", None, None),
    "docs/api-examples": ("patch_equivalent", "patch_equivalent", None, None),
    "experiment/json-streaming": ("dormant", None, "own_remote_only", "block"),
    "feat/audit-log": ("patch_equivalent", "squash_merged", None, None),
    "feat/billing-webhooks": ("parked", None, "own_remote_only", None),
    "feat/dark-mode": ("patch_equivalent", "squash_merged", None, None),
    "feat/export-csv": ("dormant", None, "own_remote_only", "advisory"),
    "feat/search-v1": ("dormant", None, "own_remote_only", "noisy"),
    "feat/search-v2": ("merged", "ancestor", None, None),
    "feat/webhook-retries": ("merged", "ancestor", None, None),
    "fix/1.x-timezone": ("merged_into_line", "ancestor", None, None),
    "fix/flaky-ci": ("merged", "ancestor", None, None),
    "fix/null-config": ("merged", "ancestor", None, None),
    "fix/retry-jitter": ("merged", "ancestor", None, None),
    "fix/slow-query-index": ("dormant", None, "own_remote_only", "block"),
    "hotfix/1.x-null-deref": ("merged_into_line", "ancestor", None, None),
    "main": ("default", None, None, None),
    "release/1.x": ("integration_line", None, None, None),
    "tmp/debug-ci": ("dormant", None, "nowhere", "advisory"),
    "worktree-agent-a3f9e0c1": ("live", None, "nowhere", None),
    "worktree-fix-login-0c9d33aa": ("superseded", None, "in_remote_ref", "noisy"),
    "worktree-fix-login-4f3a9c21": ("patch_equivalent", "squash_merged", None, None),
    "worktree-refactor-auth-9e21c7d4": ("merged", "ancestor", None, None),
    "worktree-refactor-db-7c2d41e9": ("dormant", None, "nowhere", "noisy"),
    "worktree-typo-sweep-5d0e8a13": ("patch_equivalent", "patch_equivalent", None, None),
}


def test_demo_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    from branchkeeper.adapters.cli import main

    code = main(["demo", "--json"])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert code == 0
    assert out.err.startswith("branchkeeper demo: 41 branches")
    got = {b["name"]: (b["state"], b["proof"]["kind"] if b["proof"] else None,
                       b["containment"], b["stage"]) for b in report["branches"]}
    assert got == DEMO_VERDICTS
    # Every branch the story merged is proven preserved; nothing else is.
    merged = {b.name for b in DEMO_BRANCHES if b.group == "merged"}
    preserved = {n for n, v in got.items()
                 if v[0] in ("merged", "merged_into_line", "patch_equivalent")}
    assert preserved == merged
    # four unpushed branches, the detached worktree's lonely commit, the dirty agent worktree
    assert report["summary"]["lost_work_risk"] == 6
    # the successors that rewrote a predecessor's line before landing leave it superseded
    superseded = {b["name"]: {**b["superseded"], "holder_tip": None, "landed_as": None}
                  for b in report["branches"] if b["state"] == "superseded"}
    assert superseded == {
        b.on: {"by": [b.name], "holder_tip": None, "base": "refs/remotes/origin/main",
               "landed_as": None, "lines": 1, "conflicted": True,
               "changes": [{"path": f"src/{b.topic}.py", "added": 1, "deleted": 0}]}
        for b in DEMO_BRANCHES if b.on}
    assert report["summary"]["superseded"] == 2
    assert report["summary"]["lost_work_by_kind"] == {
        "unpushed_branch": 4, "detached_commit": 1, "worktree_ref": 0, "submodule_store": 0,
        "dirty_worktree": 1, "stash": 0,
        "kept_ref": 0, "ignored_files": 0}


def test_demo_keep_dir_must_be_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from branchkeeper.adapters.commands.demo import demo_main
    from branchkeeper.errors import BranchkeeperError

    (tmp_path / "junk").write_text("x")
    with pytest.raises(BranchkeeperError, match="not empty"):
        demo_main(keep=tmp_path, as_json=False, sweep=lambda work, as_json: 0)
    calls: list[tuple[Path, bool]] = []

    def fake_sweep(work: Path, *, as_json: bool) -> int:
        calls.append((work, as_json))
        return 7

    keep = tmp_path / "new"
    code = demo_main(keep=keep, as_json=False, sweep=fake_sweep)
    assert code == 7
    assert calls == [(keep.resolve() / "work", False)]
    assert (keep / "origin.git" / "HEAD").is_file()
    assert capsys.readouterr().out == (
        f"branchkeeper demo: 41 branches left by a team of coding agents (beside main and the "
        f"release/1.x line), clone at "
        f"{keep.resolve() / 'work'} with its bare remote origin.git beside it, kept in "
        f"{keep.resolve()}; sweeping it:\n")


def _genrepo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("genrepo", ROOT / "bench" / "genrepo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["genrepo"] = module
    spec.loader.exec_module(module)
    return module


def test_genrepo_ground_truth_matches_git(tmp_path: Path) -> None:
    repo = tmp_path / "bench"
    truth = _genrepo().generate(repo, 60, seed=3)
    assert truth == json.loads((repo / "ground-truth.json").read_text())
    cats = truth["categories"]
    assert sum(len(v) for v in cats.values()) == 60
    assert {k: len(v) for k, v in cats.items()} == truth["counts"]
    assert all(truth["counts"][k] > 0 for k in ("merged", "squash_merged", "rebase_merged",
                                                 "unmerged"))
    assert refs(repo, "refs/heads/") == {"main"} | {n for v in cats.values() for n in v}
    assert git(repo, "symbolic-ref", "refs/remotes/origin/HEAD") == "refs/remotes/origin/main"
    assert 20 <= len(refs(repo, "refs/remotes/origin/")) - 2 <= 40
    for kind, names in cats.items():
        for name in names:
            assert is_ancestor(repo, name, "main") == (kind == "merged"), (kind, name)
            if kind == "merged":
                continue
            cherry = git(repo, "cherry", "main", name).splitlines()
            assert cherry, name
            unique = [c for c in cherry if c.startswith("+ ")]
            if kind == "rebase_merged":
                assert unique == [], name
            elif kind == "unmerged":
                assert unique, name
    for name, landed in truth["squash_landed_as"].items():
        base = git(repo, "merge-base", "main", name)
        mine = subprocess.run(["git", "patch-id", "--stable"], input=git(repo, "diff", base, name)
                              + "\n", capture_output=True, text=True, cwd=repo).stdout.split()
        theirs = subprocess.run(["git", "patch-id", "--stable"],
                                input=git(repo, "show", "--format=", landed) + "\n",
                                capture_output=True, text=True, cwd=repo).stdout.split()
        assert mine[0] == theirs[0], name
        assert is_ancestor(repo, landed, "main")
    for name in truth["parked"]:
        assert git(repo, "log", "-1", "--format=%(trailers:key=Parked-Reason,valueonly)", name)
