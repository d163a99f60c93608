"""The default branch is resolved once per session (issue 18, "resolve the base branch once per
session and reuse it"): SessionStart keeps what it resolved from the refs it read anyway, and a
later hook call of that session that needs only the default branch's name (WorktreeRemove's
protection of the default branch's checkout) reads it instead of listing every ref, while the
configuration and the remote HEAD it came from are unchanged (state/session_base.py)."""

from __future__ import annotations

import json
from pathlib import Path

from branchkeeper.analysis.refs import DefaultBranch, session_default
from branchkeeper.git.locate import loose_symref_target
from branchkeeper.state.session_base import base_path
from tests.gitrepo import GitRepo
from tests.hookutil import run_hook

MAIN = {"default": "auto", "remote": "origin", "remote_head": "refs/remotes/origin/main",
        "name": "main", "refs": ["refs/remotes/origin/main", "refs/heads/main"],
        "how": "origin/HEAD", "reason": ""}


def _commands(trace: Path) -> list[str]:
    return [line.split("built-in: git ", 1)[1].split()[0]
            for line in trace.read_text().splitlines() if "built-in: git " in line]


def _hook(event: str, payload: dict[str, str], trace: Path) -> list[str]:
    trace.unlink(missing_ok=True)
    result = run_hook(event, {"hook_event_name": event, **payload},
                      env={"GIT_TRACE": str(trace)})
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return _commands(trace)


def _start(work: GitRepo, session: str, trace: Path) -> None:
    _hook("SessionStart", {"session_id": session, "cwd": str(work.path), "source": "startup"},
          trace)


def _remove(work: GitRepo, session: str, wt: Path, trace: Path) -> list[str]:
    return _hook("WorktreeRemove", {"session_id": session, "cwd": str(work.path),
                                    "worktree_path": str(wt)}, trace)


def test_session_start_keeps_the_default_it_resolved(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, work = remote_and_clone
    _start(work, "S1", tmp_path / "trace")
    stored = json.loads(base_path(work.path / ".git", "S1").read_text())
    assert stored == MAIN
    assert session_default(work.path / ".git", "S1", "auto", "origin") == DefaultBranch(
        "main", ("refs/remotes/origin/main", "refs/heads/main"), "origin/HEAD", "")
    assert session_default(work.path / ".git", "S2", "auto", "origin") is None  # another session


def test_worktree_remove_reads_the_sessions_default_instead_of_the_refs(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, work = remote_and_clone
    trace = tmp_path / "trace"
    _start(work, "S1", trace)
    for name in ("one", "two"):
        work.git("worktree", "add", "-q", "-b", name, str(tmp_path / name), "main")
    # the same removal in a session that resolved nothing lists the refs for the default
    unknown = _remove(work, "S9", tmp_path / "one", trace)
    known = _remove(work, "S1", tmp_path / "two", trace)
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()
    assert unknown == ["version", "rev-parse", "worktree", "rev-parse", "for-each-ref", "log",
                       "status", "log", "status", "rev-parse", "symbolic-ref", "for-each-ref",
                       "worktree", "config"], unknown
    assert known == [*unknown[:4], *unknown[5:]], known  # the same, less the ref listing


def test_a_moved_remote_head_or_another_default_is_resolved_again(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, work = remote_and_clone
    common = work.path / ".git"
    _start(work, "S1", tmp_path / "trace")
    assert session_default(common, "S1", "auto", "origin") is not None
    assert session_default(common, "S1", "trunk", "origin") is None  # branches.default changed
    assert session_default(common, "S1", "auto", "upstream") is None  # branches.remote changed
    work.git("switch", "-q", "-c", "trunk")
    work.git("push", "-q", "origin", "trunk")
    work.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert session_default(common, "S1", "auto", "origin") is None
    work.git("remote", "set-head", "origin", "-d")
    assert session_default(common, "S1", "auto", "origin") is None
    _start(work, "S1", tmp_path / "trace")  # the next SessionStart resolves it again
    assert json.loads(base_path(common, "S1").read_text()) == {
        **MAIN, "remote_head": "", "how": "local main", "refs": MAIN["refs"]}


def test_a_hostile_session_id_stays_in_the_sessions_directory(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, work = remote_and_clone
    _start(work, "../../x y", tmp_path / "trace")
    path = base_path(work.path / ".git", "../../x y")
    assert path.parent == work.path / ".git" / "branchkeeper" / "sessions"
    assert json.loads(path.read_text()) == MAIN


def test_loose_symref_target(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, work = remote_and_clone
    common = work.path / ".git"
    work.git("pack-refs", "--all")  # git never packs a symbolic ref
    assert loose_symref_target(common, "refs/remotes/origin/HEAD") == "refs/remotes/origin/main"
    assert loose_symref_target(common, "refs/remotes/origin/main") == ""  # packed, not symbolic
    work.git("update-ref", "refs/remotes/origin/loose", "HEAD")
    assert loose_symref_target(common, "refs/remotes/origin/loose") == ""  # an object id
    assert loose_symref_target(common, "refs/remotes/nowhere/HEAD") == ""
    (common / "refs" / "remotes" / "origin" / "odd").write_text("garbage\n")
    assert loose_symref_target(common, "refs/remotes/origin/odd") is None
    (common / "reftable").mkdir()
    assert loose_symref_target(common, "refs/remotes/origin/HEAD") is None
