"""Property: no cleanup command ever loses a commit it cannot give back.

Random small histories (merge commits, squash merges, rebase merges, commits added after a
merge, files later deleted on the base, stacks, worktrees) then a random cleanup command
(``delete`` with random names and flags, ``sweep --clean``, ``prune``). Invariant: every commit
reachable from any ref before is reachable from some ref after, or comes back when ``undo``
restores the journal's operation from its verified bundle (actually restored and checked).

Worktrees may hold untracked files, regenerable ignored files (``__pycache__/``) and protected
ignored files (``.env``); commands include ``worktree retire`` and ``worktree reap``. Second
invariant: no uncommitted or untracked file disappears unless it matched a regenerable glob.

Examples: ``BK_PROPERTY_EXAMPLES`` (default 300).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.adapters.cli import main
from branchkeeper.state.journal import Journal
from branchkeeper.state.statedir import common_dir_of
from tests.cleanuputil import all_reachable, branches
from tests.gitrepo import GitRepo

EXAMPLES = int(os.environ.get("BK_PROPERTY_EXAMPLES", "300"))

_STEP = st.tuples(st.sampled_from(["branch", "merge", "squash", "rebase", "extend",
                                   "delete_on_base", "stack", "worktree", "main_commit"]),
                  st.integers(0, 7))
_COMMAND = st.one_of(
    st.tuples(st.just("delete"), st.lists(st.integers(0, 7), min_size=1, max_size=3),
              st.booleans()),
    st.tuples(st.just("sweep"), st.just([]), st.booleans()),
    st.tuples(st.just("prune"), st.just([]), st.booleans()),
    st.tuples(st.just("retire"), st.lists(st.integers(0, 7), min_size=1, max_size=1),
              st.booleans()),
    st.tuples(st.just("reap"), st.just([]), st.booleans()),
)


def _files(root: Path) -> dict[str, bytes]:
    """Every file that is NOT committed, in every worktree under ``root`` (path -> content).

    Committed files are covered by the commit invariant; these exist nowhere else.
    """
    out: dict[str, bytes] = {}
    for wt in [root / "repo", *sorted(p for p in root.iterdir() if p.name.startswith("wt-"))]:
        if not wt.is_dir():
            continue
        tracked = set(subprocess.run(["git", "ls-files", "-z"], cwd=wt, capture_output=True,
                                     check=True).stdout.decode().split("\0"))
        for path in wt.rglob("*"):
            rel = path.relative_to(wt)
            if ".git" in rel.parts or not path.is_file() or str(rel) in tracked:
                continue
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def _build(root: Path, steps: list[tuple[str, int]]) -> GitRepo:
    repo = GitRepo.init(root / "repo")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("__pycache__/\n.env\n")
    repo.commit("init", files={"base.txt": "0\n", "keep.txt": "k\n"}, days_ago=40)
    names: list[str] = []
    checked: set[str] = set()
    day = 39.0
    for n, (op, k) in enumerate(steps):
        day -= 0.5
        pick = names[k % len(names)] if names else None
        if op == "branch" or (pick is None and op != "main_commit"):
            name = f"b{n}"
            repo.git("branch", name, "main")
            wt = repo.path
            repo.switch(name)
            repo.commit(f"{name}-1", files={f"{name}.txt": "1\n"}, days_ago=day)
            if k % 2:
                repo.commit(f"{name}-2", files={f"{name}.txt": "2\n", "base.txt": f"{n}\n"},
                            days_ago=day)
            repo.switch("main")
            del wt
            names.append(name)
        elif op == "stack" and pick is not None and pick not in checked:
            name = f"s{n}"
            repo.git("branch", name, pick)
            repo.git("config", f"branch.{name}.remote", ".")
            repo.git("config", f"branch.{name}.merge", f"refs/heads/{pick}")
            repo.switch(name)
            repo.commit(name, files={f"{name}.txt": "s\n"}, days_ago=day)
            repo.switch("main")
            names.append(name)
        elif op == "worktree" and pick is not None and pick not in checked:
            repo.git("worktree", "add", "-q", str(root / f"wt-{pick}"), pick)
            checked.add(pick)
            wt_dir = root / f"wt-{pick}"
            if k % 3 == 0:
                (wt_dir / "scratch.txt").write_text("dirty\n")
            elif k % 3 == 1:
                (wt_dir / "__pycache__").mkdir()
                (wt_dir / "__pycache__" / "m.pyc").write_bytes(b"\0regenerable")
            else:
                (wt_dir / ".env").write_text("SECRET=1\n")
        elif op in ("merge", "squash", "rebase") and pick is not None:
            try:
                if op == "merge":
                    repo.merge(pick, days_ago=day)
                elif op == "squash":
                    repo.squash_merge(pick, days_ago=day)
                else:
                    repo.rebase_merge(pick, days_ago=day)
            except AssertionError:
                repo.git("merge", "--abort", check=False)
                repo.git("cherry-pick", "--abort", check=False)
                repo.git("reset", "-q", "--hard", "HEAD")
        elif op == "extend" and pick is not None and pick not in checked:
            repo.switch(pick)
            repo.commit(f"extra {n}", files={f"x{n}.txt": "x\n"}, days_ago=day)
            repo.switch("main")
        elif op == "delete_on_base" and pick is not None:
            target = repo.path / f"{pick}.txt"
            if target.exists():
                repo.commit(f"drop {pick}", files={f"{pick}.txt": None}, days_ago=day)
        else:
            repo.commit(f"main {n}", files={"keep.txt": f"{n}\n"}, days_ago=day)
    return repo


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=1, max_size=8), command=_COMMAND)
def test_no_commit_is_ever_lost(steps: list[tuple[str, int]],
                                command: tuple[str, list[int], bool],
                                capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = _build(root, steps)
        before = all_reachable(repo.path)
        files_before = _files(root)
        worktrees = sorted(p for p in root.iterdir() if p.name.startswith("wt-"))
        names = [n for n in branches(repo) if n]
        kind, picks, flag = command
        if kind == "delete":
            chosen = [names[p % len(names)] for p in picks]
            argv = ["delete", *(["--dry-run"] if flag else []), "--", *chosen]
        elif kind == "sweep":
            argv = ["sweep", "--clean", *(["--dry-run"] if flag else [])]
        elif kind == "prune":
            argv = ["prune", "--no-fetch", *(["--dry-run"] if flag else [])]
        elif kind == "reap":
            argv = ["worktree", "reap", "--no-gh", *(["--dry-run"] if flag else [])]
        elif worktrees:
            argv = ["worktree", "retire", *(["--pin"] if flag else []),
                    str(worktrees[picks[0] % len(worktrees)])]
        else:
            argv = ["worktree", "list"]
        code = main(["-C", str(repo.path), *argv])
        out, err = capsys.readouterr()
        assert code in (0, 3, 5), (argv, out, err)
        assert "Traceback" not in err
        files_after = _files(root)
        for rel, content in files_before.items():
            if "__pycache__" in Path(rel).parts:
                continue  # regenerable: may go with its worktree
            assert files_after.get(rel) == content, (argv, rel, out)
        after = all_reachable(repo.path)
        lost = before - after
        ops = Journal(common_dir_of(repo.path)).operations()
        if not lost:
            return
        assert ops, (argv, out)
        assert ops[-1].bundle is not None
        code = main(["-C", str(repo.path), "undo"])
        capsys.readouterr()
        assert code == 0
        assert before <= all_reachable(repo.path), (argv, out)
