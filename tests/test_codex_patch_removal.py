"""Codex's ``apply_patch`` deletes files (``*** Delete File: P``) and moves them onto others
(``*** Move to: P``): each such path is judged exactly as ``rm P`` is (R-RM-WORK-AT-RISK, the
same facts and the same deny text), through the hook ``branchkeeper install --host codex``
wrote, driven with Codex's documented payload (trial finding F8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.policy.command import decide_command
from tests import hostutil
from tests.gitrepo import GitRepo
from tests.hostutil import fire, install

CODEX = next(c for c in hostutil.CASES if c.name == "codex")


@pytest.fixture
def work(tmp_path: Path) -> GitRepo:
    """A repository with the codex hook: ``a.txt`` edited and uncommitted, ``b.txt`` clean,
    ``notes.txt`` and ``dest.txt`` untracked (their only copies)."""
    repo = GitRepo.init(tmp_path / "work")
    repo.commit("init", files={"a.txt": "a\n", "b.txt": "b\n", ".gitignore": ".codex/\n"})
    install(repo.path, "codex")
    (repo.path / "a.txt").write_text("a\nedit\n")
    (repo.path / "notes.txt").write_text("only copy\n")
    (repo.path / "dest.txt").write_text("mine\n")
    return repo


def _patch(work: GitRepo, body: str) -> bytes:
    event, payload = hostutil.codex_pre(str(work.path), "")
    payload = {**payload, "tool_name": "apply_patch",
               "tool_input": {"command": f"*** Begin Patch\n{body}*** End Patch\n"}}
    result = fire(work.path, "codex", event, payload)
    assert (result.returncode, result.stderr) == (0, b"")
    return result.stdout


def _rm_text(work: GitRepo, path: str, how: str) -> str:
    """The deny ``rm PATH`` gets, with the command spelled as the patch tool's ``how``."""
    decision = decide_command(f"rm {path}", cwd=str(work.path))
    assert (decision.verdict.value, decision.rule_id) == ("deny", "R-RM-WORK-AT-RISK")
    return decision.text.replace(f"`rm {path}`", f"`{how}`")


@pytest.mark.parametrize("path", ["notes.txt", "a.txt"])
def test_f8_patch_delete_of_work_is_denied_as_rm_is(work: GitRepo, path: str) -> None:
    text = _rm_text(work, path, f"apply_patch: delete {path}")
    assert text.startswith(f"[R-RM-WORK-AT-RISK] `apply_patch: delete {path}` would delete "
                           f"work in the worktree {work.path} that exists nowhere else")
    assert _patch(work, f"*** Delete File: {path}\n") == CODEX.deny(text)
    assert (work.path / path).exists()


def test_f8_patch_delete_of_a_clean_or_missing_file_is_allowed(work: GitRepo) -> None:
    assert _patch(work, "*** Delete File: b.txt\n") == CODEX.silent
    assert _patch(work, "*** Delete File: no-such.txt\n") == CODEX.silent


def test_f8_patch_move_onto_an_untracked_file_is_denied(work: GitRepo) -> None:
    text = _rm_text(work, "dest.txt", "apply_patch: move a file onto dest.txt")
    body = "*** Update File: b.txt\n*** Move to: dest.txt\n@@\n-b\n+c\n"
    assert _patch(work, body) == CODEX.deny(text)


def test_f8_patch_move_of_an_edited_file_to_a_new_path_is_allowed(work: GitRepo) -> None:
    """The moved file's content lives on at its new path: nothing is lost."""
    body = "*** Update File: a.txt\n*** Move to: new.txt\n@@\n a\n-edit\n+edit2\n"
    assert _patch(work, body) == CODEX.silent
    assert _patch(work, "*** Update File: a.txt\n*** Move to: a.txt\n@@\n-a\n+z\n") == \
        CODEX.silent
