"""Kept tips after the git hook kept them (issue 15): the sweep lists them as recoverable, and
``prune`` expires them after ``branches.git_hook.keep_days`` only behind a verified bundle."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.errors import ConfigError
from branchkeeper.model.config_file import load_config
from tests.githookutil import install, kept, operations, set_mode, undo
from tests.gitrepo import NOW, GitRepo

DAY = 86400


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a.txt": "a\n"})
    repo.switch("gone", create=True)
    repo.commit("gone work", files={"g.txt": "g\n"})
    repo.switch("main")
    install(repo)
    return repo


def _sweep_json(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["-C", str(repo.path), "sweep", "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_the_sweep_lists_kept_tips_as_recoverable(repo: GitRepo,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    tip = repo.rev("gone")
    repo.git("branch", "-D", "gone")
    [(ref, _oid)] = kept(repo).items()
    stamp = int(ref.rsplit("/", 1)[1])
    restore = f"git update-ref refs/heads/gone {ref} ''"
    assert _sweep_json(repo, capsys)["kept_tips"] == [
        {"branch": "gone", "ref": ref, "tip": tip, "kept_at": stamp, "unique_commits": 1,
         "restore": restore}]
    assert main(["-C", str(repo.path), "sweep"]) == 0
    text = capsys.readouterr().out
    day = time.strftime("%Y-%m-%d", time.gmtime(stamp))
    assert (f"Kept by the git hook (1): recoverable tips of deleted or rewound branches\n"
            f"  gone  {tip[:10]}, kept {day}, 1 commit(s) in no other ref\n"
            f"    restore: {restore}\n") in text
    [op] = operations(repo)
    assert undo(repo, op["id"]) == 0
    capsys.readouterr()
    assert _sweep_json(repo, capsys)["kept_tips"] == [
        {"branch": "gone", "ref": ref, "tip": tip, "kept_at": stamp, "unique_commits": 0,
         "restore": restore}]


def test_prune_expires_old_kept_tips_behind_a_bundle(repo: GitRepo,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    now = NOW
    old_ref = f"refs/branchkeeper/kept/gone/{now - 31 * DAY}"
    young_ref = f"refs/branchkeeper/kept/gone/{now - 29 * DAY}"
    tip = repo.rev("gone")
    repo.git("update-ref", old_ref, tip)
    repo.git("update-ref", young_ref, tip)
    repo.git("branch", "-D", "gone")  # also held by the kept refs: nothing new kept
    assert set(kept(repo)) == {old_ref, young_ref}
    assert main(["-C", str(repo.path), "prune", "--no-fetch", "--dry-run"]) == 0
    assert "dry run: would expire 1 kept tip older than 30 days (behind a bundle)" in \
        capsys.readouterr().out
    assert set(kept(repo)) == {old_ref, young_ref}
    assert main(["-C", str(repo.path), "prune", "--no-fetch", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    expiry = next(n for n in notes if n.startswith("expired "))
    op = next(o for o in operations(repo) if o["op"] == "expire-kept")
    assert expiry == (f"expired 1 kept tip older than 30 days behind the bundle {op['bundle']} "
                      f"(undo: branchkeeper undo {op['id']})")
    assert set(kept(repo)) == {young_ref}
    assert (op["status"], op["results"]) == ("done", {old_ref: "deleted"})
    assert Path(op["bundle"]).is_file()
    repo.git("update-ref", "-d", young_ref)  # the commit is now in the bundle only
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", tip, check=False) == ""
    assert undo(repo, op["id"]) == 0
    assert kept(repo) == {old_ref: tip}


def test_prune_keeps_kept_tips_when_keep_days_is_longer(repo: GitRepo,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    set_mode(repo, "keep", keep_days=60)
    ref = f"refs/branchkeeper/kept/gone/{NOW - 31 * DAY}"
    repo.git("update-ref", ref, repo.rev("gone"))
    assert main(["-C", str(repo.path), "prune", "--no-fetch"]) == 0
    capsys.readouterr()
    assert set(kept(repo)) == {ref}


@pytest.mark.parametrize(("text", "error"), [
    ("mode: maybe", "branches.git_hook.mode: must be one of keep, block, off, got 'maybe'"),
    ("keep_days: 0", "branches.git_hook.keep_days: must be an integer >= 1, got 0"),
])
def test_git_hook_config_is_validated(repo: GitRepo, text: str, error: str) -> None:
    (repo.path / ".branchkeeper.yaml").write_text(f"branches:\n  git_hook:\n    {text}\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo.path)
    assert str(info.value) == f"{repo.path / '.branchkeeper.yaml'}: line 3: {error}"


def test_mode_off_unquoted_is_off(repo: GitRepo) -> None:
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  git_hook:\n    mode: off\n")
    assert load_config(repo.path).config.branches.git_hook.mode == "off"
