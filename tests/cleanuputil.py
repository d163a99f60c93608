"""Shared helpers of the cleanup tests: run the CLI in-process, normalise variable output."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo

_BUNDLE = re.compile(r"/\S*/branchkeeper/bundles/\d{8}T\d{6}Z-[0-9a-f]{4}-[A-Za-z0-9._-]+\.bundle")
_OPID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{4}\b")
_SIZE = re.compile(r"\(\b(compact|full), \d+ bytes")


def cli(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, str, str]:
    """Run ``branchkeeper -C repo ARGV`` in-process: (exit code, stdout, stderr)."""
    code = main(["-C", str(repo.path), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def norm(text: str) -> str:
    """Replace bundle paths, operation ids and sizes by placeholders."""
    text = _BUNDLE.sub("BUNDLE", text)
    text = _OPID.sub("OPID", text)
    return _SIZE.sub(r"(\1, N bytes", text)


def cli_json(capsys: pytest.CaptureFixture[str], repo: GitRepo, *argv: str) -> tuple[int, Any]:
    code, out, err = cli(capsys, repo, *argv, "--json")
    assert out, err
    return code, json.loads(out)


def short(repo: GitRepo, rev: str) -> str:
    return repo.rev(rev)[:10]


def all_reachable(path: Path) -> set[str]:
    """Every commit reachable from any ref (and HEAD of every worktree)."""
    out = subprocess.run(["git", "rev-list", "--all"], cwd=path, capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


def branches(repo: GitRepo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads").split("\n")
