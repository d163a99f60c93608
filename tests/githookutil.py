"""Helpers of the git-hook tests: install the real shim, read kept tips and the journal."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from branchkeeper.adapters import git_hooks
from branchkeeper.adapters.cli import main
from branchkeeper.adapters.commands.log import operation_json
from branchkeeper.analysis.kept import parse_kept_ref
from branchkeeper.state.journal import Journal
from tests.gitrepo import NOW, GitRepo

#: This installation's console script: what ``install --git-hooks`` writes by default.
PROGRAM = Path(sys.executable).parent / "branchkeeper"


def bk(repo: GitRepo, *args: str, env: dict[str, str] | None = None,
       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m branchkeeper -C repo ARGS`` as a separate process."""
    return subprocess.run([sys.executable, "-m", "branchkeeper", "-C", str(repo.path), *args],
                          cwd=cwd or repo.path, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def install(repo: GitRepo, program: str | None = None) -> None:
    """Write the real shim into the repository's hooks directory, in-process (the CLI route
    ``install --git-hooks`` has tests of its own)."""
    directory, _note = git_hooks.hooks_dir(repo.path)
    git_hooks.install(directory, program or shlex.quote(str(PROGRAM)), dry_run=False)


def set_mode(repo: GitRepo, mode: str, *, keep_days: int | None = None) -> None:
    extra = f"    keep_days: {keep_days}\n" if keep_days is not None else ""
    (repo.path / ".branchkeeper.yaml").write_text(
        f"branches:\n  git_hook:\n    mode: {mode}\n{extra}")


def counting_program(tmp: Path) -> tuple[str, Path]:
    """A program prefix that records each start of branchkeeper, and the file it writes."""
    log = tmp / "starts.log"
    script = tmp / "bk-counting"
    script.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {PROGRAM} "$@"\n')
    script.chmod(0o755)
    return str(script), log


def starts(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def kept(repo: GitRepo) -> dict[str, str]:
    """Every kept tip: ref -> oid."""
    out = repo.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/branchkeeper/kept")
    return dict(line.split(" ") for line in out.splitlines() if line)


def kept_by_branch(repo: GitRepo) -> dict[str, str]:
    """Kept tips as branch -> oid, checking each is named for the product's "now" (the suite
    pins it to ``NOW``)."""
    out: dict[str, str] = {}
    for ref, oid in kept(repo).items():
        parsed = parse_kept_ref(ref)
        assert parsed is not None, ref
        branch, _when = parsed
        assert ref == f"refs/branchkeeper/kept/{branch}/{NOW}", ref
        out[branch] = oid
    return out


def operations(repo: GitRepo) -> list[dict[str, Any]]:
    """The journal as ``branchkeeper log --json`` prints it, newest first."""
    journal = Journal(_common(repo))
    return [operation_json(o) for o in reversed(journal.operations())]


def undo(repo: GitRepo, op_id: str) -> int:
    """``branchkeeper undo OP_ID`` in-process; its exit code."""
    return main(["-C", str(repo.path), "undo", op_id])


def _common(repo: GitRepo) -> Path:
    path = Path(repo.git("rev-parse", "--git-common-dir"))
    return path if path.is_absolute() else repo.path / path


def hook_log(repo: GitRepo) -> list[dict[str, Any]]:
    log = _common(repo) / "branchkeeper" / "git-hook.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]
