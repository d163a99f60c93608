"""Helpers for the reaper and report tests: in-process CLI calls, aged worktrees, a fake gh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import NOW, GitRepo

HOUR = 3600


def bk(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def reap_json(capsys: pytest.CaptureFixture[str], repo: GitRepo, *extra: str) -> dict[str, Any]:
    rc, out, err = bk(capsys, "-C", str(repo.path), "worktree", "reap", "--json", *extra)
    assert rc == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def by_path(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["path"]: w for w in data["worktrees"]}


def hours_env(hours: float) -> dict[str, str]:
    stamp = f"@{int(NOW - hours * HOUR)} +0000"
    return {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}


def add_worktree(repo: GitRepo, path: Path, *args: str, start: str | None = None,
                 hours: float = 10) -> GitRepo:
    """``git worktree add ARGS PATH [START]`` with the HEAD reflog dated ``hours`` back."""
    repo.git("worktree", "add", "-q", *args, str(path), *([start] if start else []),
             env=hours_env(hours))
    return GitRepo(path)


def commit_in(w: GitRepo, message: str, files: dict[str, str], *, hours: float = 10) -> str:
    """A commit (and its reflog entry) dated ``hours`` back."""
    for name, content in files.items():
        (w.path / name).parent.mkdir(parents=True, exist_ok=True)
        (w.path / name).write_text(content)
    w.git("add", "-A")
    w.git("commit", "-q", "-m", message, env=hours_env(hours))
    return w.rev("HEAD")


def age_files(path: Path, hours: float = 10) -> None:
    """Set every file and directory under ``path`` to ``hours`` ago (os.utime)."""
    stamp = NOW - hours * HOUR
    for dirpath, dirnames, filenames in os.walk(path):
        for name in [*dirnames, *filenames]:
            os.utime(Path(dirpath) / name, (stamp, stamp), follow_symlinks=False)
    os.utime(path, (stamp, stamp))


def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, auth_rc: int = 0,
            bodies: dict[str, str] | None = None, default: str = "[]",
            list_rc: int = 0) -> Path:
    """A stand-in ``gh`` first on PATH: ``auth status`` exits ``auth_rc``; ``pr list --head B``
    prints ``bodies[B]`` (recorded JSON) or ``default`` and exits ``list_rc``."""
    bindir = tmp_path / "fakebin"
    data = tmp_path / "fakegh"
    bindir.mkdir(exist_ok=True)
    data.mkdir(exist_ok=True)
    for branch, body in (bodies or {}).items():
        (data / branch.replace("/", "%")).write_text(body)
    (data / "_default").write_text(default)
    script = bindir / "gh"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = auth ]; then exit {auth_rc}; fi\n'
        'if [ "$1" = pr ]; then\n'
        '  b=$(printf %s "$4" | tr / %)\n'
        f'  echo "$4" >> "{data}/asked"\n'
        f'  if [ {list_rc} != 0 ]; then echo "HTTP 502" >&2; exit {list_rc}; fi\n'
        f'  if [ -f "{data}/$b" ]; then cat "{data}/$b"; else cat "{data}/_default"; fi\n'
        "  exit 0\n"
        "fi\n"
        "exit 9\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return data


def no_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with git but without any gh."""
    import shutil

    bindir = tmp_path / "nogh"
    bindir.mkdir(exist_ok=True)
    git = shutil.which("git")
    assert git is not None
    (bindir / "git").symlink_to(git)
    monkeypatch.setenv("PATH", str(bindir))
