"""The WIP count and the guard's lean ref table (first document section 3; issue 6 section 4).

The count is computed in one pass for speed (the hook runs it on every creation); these tests pin
it against the plain union-find over names and tips it replaced, and pin the lean
``for-each-ref`` (``<remote>/HEAD`` read from its loose file, ``%(symref)`` where the ref store
is not files) against git itself.
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from branchkeeper.analysis.guard_facts import LeanRefs, read_lean_refs, read_ref_table
from branchkeeper.analysis.refs import RefTable, resolve_default_branch
from branchkeeper.git.locate import locate
from branchkeeper.model.config import Config
from branchkeeper.policy.creation import (
    MAX_LINES,
    CreationView,
    OpenBranch,
    _duplicate,
    _line,
    branch_listing,
    open_branches,
)
from branchkeeper.policy.stem import number_tokens, stem
from branchkeeper.state.last_sweep import NO_SWEEP, LastSweep
from tests.gitrepo import GitRepo

NAMES = ["a", "b", "feat/x", "feat/y", "release/1", "keep-me", "main"]
TIPS = [c * 40 for c in "0123"]


def _reference_count(table: LeanRefs, config: Config, default: str | None) -> tuple[list[str], int]:
    """The union-find over name and tip nodes that open_branches replaced."""
    b = config.branches
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    names = set(table.local) | (set(table.remote) if b.wip.count_remote else set())
    at_default = {x for x in (table.local.get(default), table.remote.get(default)) if x} \
        if default is not None else set()
    kept: list[str] = []
    for name in sorted(names):
        if name == default or any(fnmatch.fnmatchcase(name, g) for g in
                                  [*b.integration_lines, *b.exempt]):
            continue
        loc = table.local.get(name)
        rem = table.remote.get(name) if b.wip.count_remote else None
        tip = loc if loc is not None else rem
        if tip in at_default and (rem is None or rem in at_default):
            continue  # unstarted: at the default branch's tip, no sweep row says otherwise
        kept.append(name)
        for oid in (loc, rem):
            if oid is not None:
                parent[find("t:" + oid)] = find("n:" + name)
    return kept, len({find("n:" + n) for n in kept})


@settings(max_examples=300, deadline=None)
@given(local=st.dictionaries(st.sampled_from(NAMES), st.sampled_from(TIPS)),
       remote=st.dictionaries(st.sampled_from(NAMES), st.sampled_from(TIPS)),
       count_remote=st.booleans(),
       exempt=st.lists(st.sampled_from(["keep-*", "feat/*", "*"]), max_size=2),
       lines=st.lists(st.sampled_from(["release/*", "b"]), max_size=2))
def test_count_matches_union_find(local: dict[str, str], remote: dict[str, str],
                                  count_remote: bool, exempt: list[str], lines: list[str]) -> None:
    config = Config.model_validate({"branches": {"wip": {"count_remote": count_remote},
                                                 "exempt": exempt, "integration_lines": lines}})
    table = LeanRefs("origin", local, remote, "", ())
    branches, count = open_branches(CreationView(table, "main", NO_SWEEP, config, 0.0))
    assert ([b.name for b in branches], count) == _reference_count(table, config, "main")


def test_count_shared_tips_and_diverged_copies(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """Two branches at one tip count once; a local branch ahead of its remote copy counts once;
    a remote-only branch counts; the default branch does not, nor an unstarted branch at its
    tip."""
    _, work = remote_and_clone
    work.switch("twin-a", create=True)
    work.commit("twin", files={"t.txt": "t\n"})
    work.git("branch", "twin-b")
    work.switch("main")
    work.switch("ahead", create=True)
    work.commit("one", files={"a.txt": "1\n"})
    work.git("push", "-q", "origin", "ahead")
    work.commit("two", files={"a.txt": "2\n"})
    work.switch("main")
    work.switch("remote-only", create=True)
    work.commit("r", files={"r.txt": "r\n"})
    work.git("push", "-q", "origin", "remote-only")
    work.switch("main")
    work.git("branch", "-D", "remote-only")
    work.git("branch", "unstarted")
    work.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 3}\n")
    proc = subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--", "git switch -c new"],
                          cwd=work.path, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("Creating new would exceed the WIP cap: 3 open work branches, cap 3 (branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not)."
            in proc.stdout), proc.stdout
    listing = proc.stdout.split("(merged ones are proven and cheapest):\n", 1)[1].split("\n(No sweep")[0]
    assert listing.splitlines() == [f"  - {name} (state unknown, age unknown)"
                                    for name in ("ahead", "remote-only", "twin-a", "twin-b")]


def _table_facts(table: RefTable) -> tuple[str, dict[str, str | None], dict[str, str | None]]:
    return (table.remote_head, {n: i.oid for n, i in table.local.items()},
            {n: i.oid for n, i in table.remote.items()})


def test_lean_refs_resolve_symrefs_as_git_does(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """origin/HEAD's target is git's own answer (also when written ``ref:`` without a space);
    a dangling origin/HEAD (the remote renamed its default) is no default; any other symref
    under the remote is no branch; the lean view equals the full table."""
    _, work = remote_and_clone
    work.git("branch", "topic")
    work.git("pack-refs", "--all")
    repo = locate(str(work.path))
    assert repo is not None
    lean = read_lean_refs(repo, "origin")
    assert _table_facts(lean.table()) == _table_facts(read_ref_table(repo, "origin")) == (
        "refs/remotes/origin/main", {"main": work.rev("main"), "topic": work.rev("main")},
        {"main": work.rev("main")})
    work.git("symbolic-ref", "refs/remotes/origin/trunk", "refs/remotes/origin/main")
    work.git("update-ref", "refs/remotes/origin/develop", "main")
    head = Path(repo.common_dir) / "refs" / "remotes" / "origin" / "HEAD"
    head.write_text("ref:refs/remotes/origin/develop\n")
    lean = read_lean_refs(repo, "origin")
    assert (lean.remote_head, sorted(lean.remote)) == ("refs/remotes/origin/develop",
                                                        ["develop", "main"])
    head.write_text("ref: refs/remotes/origin/gone\n")
    lean = read_lean_refs(repo, "origin")
    assert (lean.remote_head, sorted(lean.remote)) == ("", ["develop", "main"])
    assert resolve_default_branch("auto", lean).name == "main"


def test_stale_origin_head_keeps_the_real_default(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """The remote renamed master to main and a prune dropped origin/master: origin/HEAD still
    names it, a local master remains. The guard, like the sweep, takes main as the default:
    master is counted as work, main is not."""
    _, work = remote_and_clone
    work.git("branch", "master")
    work.git("update-ref", "refs/remotes/origin/master", "main")
    work.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/master")
    work.git("update-ref", "-d", "refs/remotes/origin/master")
    for n in ("f1", "f2"):
        work.switch(n, create=True, start="main")
        work.commit(n, files={f"{n}.txt": "x\n"})
    work.switch("master")
    work.commit("m", files={"m.txt": "m\n"})  # work of its own: not unstarted
    work.switch("main")
    work.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 3}\n")
    proc = subprocess.run([sys.executable, "-m", "branchkeeper", "check", "--", "git switch -c g"],
                          cwd=work.path, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    listing = proc.stdout.split("(merged ones are proven and cheapest):\n", 1)[1].split("\n(No sweep")[0]
    assert listing.splitlines() == [f"  - {name} (state unknown, age unknown)"
                                    for name in ("f1", "f2", "master")]


ROWS = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(TIPS), st.sampled_from(["merged", "dormant", "live", "squash"]),
              st.sampled_from([None, "noisy", 3]), st.sampled_from([None, "nowhere", 1]),
              st.sampled_from([None, 0, 12.5, 400.0, "old", float("inf"), float("nan"), -3,
                               10**400, 1e300]),
              st.sampled_from([None, "/w/x", 7])).map(list),
    st.lists(st.just("x"), max_size=7))


@settings(max_examples=300, deadline=None)
@given(local=st.dictionaries(st.sampled_from(NAMES), st.sampled_from(TIPS)),
       rows=st.dictionaries(st.sampled_from(NAMES), ROWS),
       elapsed=st.sampled_from([0.0, 2.5]))
def test_open_branches_reads_rows_like_entry(local: dict[str, str], rows: dict[str, object],
                                             elapsed: float) -> None:
    """The loop's inlined row check gives what LastSweep.entry gives, row by row."""
    sweep = LastSweep(rows, elapsed)
    view = CreationView(LeanRefs("origin", local, {}, "", ()), None, sweep, Config(), 0.0)
    for b in open_branches(view)[0]:
        assert b.age_days is None or 0 <= b.age_days < 1_000_000 + elapsed  # printable days
        e = sweep.entry(b.name, b.tip)
        assert (b.state, b.age_days, b.containment, b.worktree) == (
            (e.state, e.age_days, e.containment, e.worktree) if e else (None, None, None, None))


BRANCH = st.builds(OpenBranch, st.sampled_from(["a", "b1", "agent-fix-login", "fix-login-v2",
                                                "issue-0152", "x-152", "Fix-Login", "c/d"]),
                   st.just(TIPS[0]), st.sampled_from([None, 0.0, 3.0, 40.0, 400.0]),
                   st.sampled_from([None, "merged", "patch_equivalent", "dormant", "live"]),
                   st.sampled_from([None, "advisory", "block"]), st.none(),
                   st.sampled_from([None, "/w"]))


@settings(max_examples=300, deadline=None)
@given(branches=st.lists(BRANCH, max_size=30, unique_by=lambda b: b.name).map(
    lambda bs: sorted(bs, key=lambda b: b.name)),
       name=st.sampled_from(["fix-login", "worktree-fix-login-3", "gh-152", "new", "x"]))
def test_listing_and_duplicates_match_plain_versions(branches: list[OpenBranch], name: str) -> None:
    """The partitioned listing equals one full sort; the filtered duplicate scan equals
    testing every branch."""
    ordered = sorted(branches, key=lambda b: (b.group, -(b.age_days or 0.0), b.name))
    more = [f"  ... and {len(branches) - MAX_LINES} more"] if len(branches) > MAX_LINES else []
    assert branch_listing(branches) == [_line(b) for b in ordered[:MAX_LINES]] + more
    expected = []
    for x in branches:
        if x.name == name:
            continue
        if stem(x.name) == stem(name) or number_tokens(x.name) & number_tokens(name):
            expected.append(x.name)
    found = _duplicate(name, branches, "origin")
    listed = [] if found is None else [line.split(" (")[0][4:] for line in found.reason.splitlines()[1:]]
    assert listed == expected[:MAX_LINES]


def test_a_denial_reads_the_creator_records_once(remote_and_clone: tuple[GitRepo, GitRepo]
                                                 ) -> None:
    """Every branch at the dormancy block stage gets its ways out, which ask who created it:
    one ``git config`` for all of them, so the denial costs two git processes however many
    branches it lists (issue 16: git calls per hook call stay few)."""
    from branchkeeper.analysis.inventory import build_inventory
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.git.run import processes_started
    from branchkeeper.model.config_file import load_config
    from branchkeeper.policy.command import decide_command

    _, work = remote_and_clone
    for name in ("old-a", "old-b", "old-c"):
        work.switch(name, create=True, start="main", days_ago=40)
        work.commit(name, files={f"{name}.txt": "x\n"}, days_ago=40)
        work.git("push", "-q", "origin", name)
    work.switch("main")
    facts = repo_facts(work.path)
    build_inventory(facts, load_config(facts.main_root).config)  # the sweep the guard reads
    before = processes_started()
    decision = decide_command("git switch -c x", cwd=str(work.path))
    assert processes_started() - before == 2  # one lean for-each-ref, one config
    assert decision.text.count("declare it exempt in .branchkeeper.yaml") == 3


def test_a_branch_at_the_default_tip_counts_only_when_the_sweep_says_work_was_done() -> None:
    """At the default branch's tip: ``unstarted`` (or no row) is not counted, as the sweep
    counts it nowhere; ``merged`` (a fast-forward merge left it there) is, as merged branches
    are."""
    main, other = TIPS[0], TIPS[1]
    table = LeanRefs("origin", {"main": main, "fresh": main, "ff": main, "nosweep": main,
                                "work": other}, {}, "", ())
    rows: dict[str, object] = {"fresh": [main, "unstarted", None, None, 1.0, None],
                               "ff": [main, "merged", None, None, 2.0, None]}
    branches, count = open_branches(CreationView(table, "main", LastSweep(rows, 0.0), Config(),
                                                 0.0))
    assert ([(b.name, b.state) for b in branches], count) == ([("ff", "merged"), ("work", None)], 2)
