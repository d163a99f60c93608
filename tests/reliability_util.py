"""Shared builders and checks of the reliability suite (issue 7): one repository with every kind
of branch and worktree, snapshots of commits and uncommitted files, the subprocess runner, and
the figures recorder read by ``bench/reliability.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from branchkeeper.state.journal import Journal, Operation
from tests.gitrepo import GitRepo
from tests.reaputil import add_worktree, age_files, commit_in

#: Names of the branches the world holds (see :func:`build_world`).
MERGED = ("merged-a", "squashy")
LIVE = "live"


@dataclass
class World:
    """A clone ``repo`` of ``origin`` with: ``merged-a`` (merged, also on origin), ``squashy``
    (squash-merged), ``live`` (unique work, pushed), a linked worktree ``wt_done`` on the merged
    branch ``done`` (clean, aged: removable), a linked worktree ``wt_live`` on ``live`` with a
    dirty tracked file and an untracked file, a linked worktree ``wt_unpushed`` on ``unpushed``
    (unique commits, never pushed, aged: archivable), and uncommitted work in the main
    worktree."""

    tmp: Path
    origin: GitRepo
    repo: GitRepo
    wt_done: Path
    wt_live: Path
    wt_unpushed: Path


def build_world(tmp: Path) -> World:
    """Build the :class:`World` under ``tmp`` (about 40 git processes)."""
    origin = GitRepo.init_bare(tmp / "origin.git")
    seed = GitRepo.init(tmp / "seed")
    seed.commit("initial", files={"README.md": "hello\n"}, days_ago=60)
    seed.git("remote", "add", "origin", str(origin.path))
    seed.git("push", "-q", "origin", "main")
    repo = GitRepo.clone(origin.path, tmp / "work")
    repo.commit("ignore", files={".gitignore": "build/\n"}, days_ago=50)
    repo.switch("merged-a", create=True, days_ago=40)
    repo.commit("a", files={"a.txt": "a\n"}, days_ago=40)
    repo.git("push", "-q", "origin", "merged-a")
    repo.switch("main")
    repo.merge("merged-a", days_ago=39)
    repo.switch("squashy", create=True, days_ago=38)
    repo.commit("s1", files={"s.txt": "1\n"}, days_ago=38)
    repo.commit("s2", files={"s.txt": "2\n"}, days_ago=37)
    repo.switch("main")
    repo.squash_merge("squashy", days_ago=36)
    repo.switch("done", create=True, days_ago=35)
    repo.commit("d", files={"d.txt": "d\n"}, days_ago=35)
    repo.switch("main")
    repo.merge("done", days_ago=34)
    repo.git("push", "-q", "origin", "main")
    repo.switch("live", create=True, days_ago=3)
    repo.commit("live work", files={"live.txt": "live\n"}, days_ago=3)
    repo.git("push", "-q", "-u", "origin", "live")
    repo.switch("main")
    wt_done = tmp / "wt-done"
    add_worktree(repo, wt_done, hours=48, start="done")
    age_files(wt_done, 48)
    wt_live = tmp / "wt-live"
    add_worktree(repo, wt_live, hours=48, start=LIVE)
    (wt_live / "live.txt").write_text("dirty edit\n")
    (wt_live / "untracked.txt").write_text("untracked in a worktree\n")
    wt_unpushed = tmp / "wt-unpushed"
    w = add_worktree(repo, wt_unpushed, "-b", "unpushed", start="main", hours=48)
    commit_in(w, "unpushed one", {"u.txt": "1\n"}, hours=48)
    age_files(wt_unpushed, 48)
    (repo.path / "README.md").write_text("edited, not committed\n")
    (repo.path / "scratch.txt").write_text("untracked in main\n")
    return World(tmp, origin, repo, wt_done, wt_live, wt_unpushed)


def fake_gh_bin(tmp: Path) -> Path:
    """A directory holding a ``gh`` stand-in: authenticated, no PR for any branch."""
    bindir = tmp / "fakebin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "gh"
    script.write_text("#!/bin/sh\nif [ \"$1\" = auth ]; then exit 0; fi\n"
                      "if [ \"$1\" = pr ]; then echo '[]'; exit 0; fi\nexit 9\n")
    script.chmod(0o755)
    return bindir


def _fault_env(fault: str | None, signal: str | None) -> dict[str, str]:
    full = os.environ.copy()
    for var in ("BRANCHKEEPER_FAULT", "BRANCHKEEPER_FAULT_SIGNAL", "BRANCHKEEPER_DEBUG"):
        full.pop(var, None)
    if fault is not None:
        full["BRANCHKEEPER_FAULT"] = fault
    if signal is not None:
        full["BRANCHKEEPER_FAULT_SIGNAL"] = signal
    return full


def bk(repo: Path, *argv: str, fault: str | None = None, env: dict[str, str] | None = None,
       stdin: bytes | None = None, timeout: float = 120,
       signal: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m branchkeeper -C repo ARGV`` as a subprocess, ``BRANCHKEEPER_FAULT`` set to
    ``fault`` (or removed) and ``BRANCHKEEPER_FAULT_SIGNAL`` to ``signal`` (``INT``/``TERM``:
    the point signals the process group, so the process leads its own session)."""
    full = _fault_env(fault, signal)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "branchkeeper", "-C", str(repo), *argv],
                          input=stdin or b"", capture_output=True, env=full, timeout=timeout,
                          start_new_session=signal is not None)


def hook(event: str, payload: Any, *, fault: str | None = None,
         raw: bytes | None = None, timeout: float = 60,
         signal: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m branchkeeper hook EVENT`` with ``payload`` as JSON (or ``raw``)."""
    full = _fault_env(fault, signal)
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run([sys.executable, "-m", "branchkeeper", "hook", event], input=data,
                          capture_output=True, env=full, cwd="/", timeout=timeout,
                          start_new_session=signal is not None)


def git(path: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=path, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args} failed: {proc.stderr}")
    return proc.stdout


def lock_files(path: Path) -> list[Path]:
    """Every ``*.lock`` file git could have left in the repository at ``path`` (branchkeeper's
    own flock files under ``branchkeeper/locks/`` are permanent by design and left out)."""
    common = Path(git(path, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    return sorted(p for p in common.rglob("*.lock")
                  if "branchkeeper" not in p.relative_to(common).parts[:1])


# -- snapshots ------------------------------------------------------------------------------------
def reachable(path: Path) -> set[str]:
    """Every commit reachable from any ref or any worktree's HEAD."""
    return set(git(path, "rev-list", "--all").split())


def refs(path: Path) -> dict[str, str]:
    """Every ref -> its oid."""
    out = git(path, "for-each-ref", "--format=%(refname)%00%(objectname)")
    return dict(line.split("\0") for line in out.splitlines())  # type: ignore[misc]


def worktree_paths(path: Path) -> list[Path]:
    out = git(path, "worktree", "list", "--porcelain", "-z")
    return [Path(f[len("worktree "):]) for f in out.split("\0") if f.startswith("worktree ")]


def uncommitted(path: Path) -> dict[Path, bytes]:
    """Every modified tracked file and every untracked (not ignored) file in every worktree of
    the repository at ``path``: absolute path -> content."""
    out: dict[Path, bytes] = {}
    for wt in worktree_paths(path):
        if not wt.is_dir():
            continue
        status = git(wt, "status", "--porcelain", "-z", "--untracked-files=all")
        for rec in status.split("\0"):
            if len(rec) > 3 and rec[:2] != "D " and rec[1] != "D":
                f = wt / rec[3:]
                if f.is_file():
                    out[f] = f.read_bytes()
    return out


@dataclass
class Snapshot:
    commits: set[str]
    refs: dict[str, str]
    files: dict[Path, bytes]


def snapshot(path: Path) -> Snapshot:
    return Snapshot(reachable(path), refs(path), uncommitted(path))


def journal_ops(path: Path) -> list[Operation]:
    common = Path(git(path, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    return Journal(common).operations()


def lost_commits(path: Path, before: Snapshot, scratch: Path) -> set[str]:
    """Commits reachable before that are neither reachable now nor restorable from a bundle the
    journal lists (each bundle is fetched into a mirror copy at ``scratch`` to prove it)."""
    missing = before.commits - reachable(path)
    if not missing:
        return set()
    bundles = [op.bundle.path for op in journal_ops(path) if op.bundle is not None]
    subprocess.run(["git", "clone", "-q", "--mirror", str(path), str(scratch)], check=True,
                   capture_output=True)
    for n, bundle in enumerate(bundles):
        subprocess.run(["git", "fetch", "-q", str(bundle), f"refs/*:refs/restored/{n}/*"],
                       cwd=scratch, check=False, capture_output=True)
    return missing - reachable(scratch)


def lost_files(before: Snapshot) -> list[Path]:
    """Uncommitted files of ``before`` that are gone or changed."""
    return [p for p, data in before.files.items()
            if not p.is_file() or p.read_bytes() != data]


# -- figures --------------------------------------------------------------------------------------
def record(kind: str, **fields: Any) -> None:
    """Append one JSON line to the file named by ``BK_RELIABILITY_REPORT`` (if set)."""
    target = os.environ.get("BK_RELIABILITY_REPORT")
    if not target:
        return
    line = json.dumps({"kind": kind, **fields}, default=str) + "\n"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def examples(default: int) -> int:
    """How many hypothesis examples a reliability property runs (``BK_RELIABILITY_EXAMPLES``)."""
    return int(os.environ.get("BK_RELIABILITY_EXAMPLES", default))


def rounds(default: int) -> int:
    """How many rounds a race test runs (``BK_RACE_ROUNDS``)."""
    return int(os.environ.get("BK_RACE_ROUNDS", default))
