"""patch-id without ``--verbatim`` (git < 2.39) ignores whitespace: a branch whose only
difference from a base commit is indentation must not be proven landed by patch-id."""

from __future__ import annotations

import pytest

from branchkeeper.analysis.inventory import Inventory, build_inventory
from branchkeeper.git import repo as gitrepo
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config import Config
from tests.cleanuputil import cli
from tests.gitrepo import NOW, GitRepo

BASE = "def f():\n    if x:\n        pass\n"
INSIDE = "def f():\n    if x:\n        pass\n        do_it()\n"
OUTSIDE = "def f():\n    if x:\n        pass\n    do_it()\n"


def _indentation_only(w: GitRepo) -> None:
    w.commit("init", files={"p.py": BASE}, days_ago=5)
    w.git("push", "-q", "origin", "main")
    w.switch("ws", create=True, days_ago=4)
    w.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    w.git("push", "-q", "origin", "ws")
    w.switch("main")
    w.commit("add do_it", files={"p.py": OUTSIDE}, days_ago=3)
    w.git("push", "-q", "origin", "main")


def _inventory(w: GitRepo, version: str, monkeypatch: pytest.MonkeyPatch) -> Inventory:
    monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, version)
    gitrepo.git_version.cache_clear()
    try:
        return build_inventory(repo_facts(w.path), Config(), now=NOW, use_cache=False)
    finally:
        monkeypatch.delenv(gitrepo.ASSUME_VERSION_ENV)
        gitrepo.git_version.cache_clear()


def _states(inv: Inventory) -> dict[str, tuple[str, str | None, str | None]]:
    return {r.name: (r.state.value, r.proof.kind.value if r.proof else None,
                     r.proof.verified if r.proof else None) for r in inv.records}


@pytest.mark.parametrize("version", ["2.38.0", "2.30.0"])
def test_patch_id_whitespace_indentation_only_branch_is_live(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        version: str) -> None:
    _, w = remote_and_clone
    _indentation_only(w)
    inv = _inventory(w, version, monkeypatch)
    assert _states(inv) == {"main": ("default", None, None), "ws": ("live", None, None)}
    label = ".".join(version.split(".")[:2])
    assert inv.notes == [f"git {label}: patch-id ignores whitespace; "
                         "1 branches not proven by patch-id"]


def test_patch_id_whitespace_sweep_clean_keeps_it(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    _indentation_only(w)
    monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, "2.38.0")
    gitrepo.git_version.cache_clear()
    code, out, err = cli(capsys, w, "sweep", "--clean", "--dry-run")
    gitrepo.git_version.cache_clear()
    main, ws = w.rev("main")[:10], w.rev("ws")[:10]
    assert (code, out, err) == (0, "dry run: sweep-clean: 2 branches (default branch main)\n"
                                   f"  kept           main  {main}  default\n"
                                   f"  kept           ws  {ws}  live\n", "")


def test_patch_id_whitespace_verbatim_git_needs_no_confirmation(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    _indentation_only(w)
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW, use_cache=False)
    assert _states(inv) == {"main": ("default", None, None), "ws": ("live", None, None)}
    assert inv.notes == []


def test_patch_id_whitespace_real_rebase_merge_still_proven_on_old_git(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    w.commit("init", files={"p.py": BASE}, days_ago=5)
    w.switch("feat", create=True, days_ago=4)
    w.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    w.switch("main")
    w.commit("other", files={"q.py": "q = 1\n"}, days_ago=3)
    w.rebase_merge("feat", days_ago=2)
    w.git("push", "-q", "origin", "main")
    inv = _inventory(w, "2.38.0", monkeypatch)
    # git 2.38 has no merge-tree --stdin here, so the patch-id tier proves nothing; the
    # branch's content is on main, which the content tier still proves.
    assert _states(inv) == {"feat": ("patch_equivalent", "content_on_base", "content"),
                            "main": ("default", None, None)}
    assert inv.notes == ["git 2.38: patch-id ignores whitespace; "
                         "1 branches not proven by patch-id"]


def _whitespace_blind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patch-ids as git < 2.39 computes them (``--stable``) on a git that has merge-tree
    ``--stdin``: the content confirmation by merge runs."""
    from branchkeeper.analysis import diffstreams, inventory, proofs
    for module in (diffstreams, inventory, proofs):
        monkeypatch.setattr(module, "patch_id_mode", lambda: "stable")


def test_patch_id_whitespace_merge_confirmation_rejects_indentation_change(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    _indentation_only(w)
    _whitespace_blind(monkeypatch)
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW, use_cache=False)
    assert _states(inv) == {"main": ("default", None, None), "ws": ("live", None, None)}
    assert inv.notes == []


def test_patch_id_whitespace_merge_confirmation_keeps_real_rebase_merge(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    _, w = remote_and_clone
    w.commit("init", files={"p.py": BASE}, days_ago=5)
    w.switch("feat", create=True, days_ago=4)
    w.commit("add do_it", files={"p.py": INSIDE}, days_ago=4)
    w.switch("main")
    w.commit("other", files={"q.py": "q = 1\n"}, days_ago=3)
    w.rebase_merge("feat", days_ago=2)
    w.git("push", "-q", "origin", "main")
    _whitespace_blind(monkeypatch)
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW, use_cache=False)
    assert _states(inv) == {"feat": ("patch_equivalent", "patch_equivalent", "patch-id"),
                            "main": ("default", None, None)}
    assert inv.notes == []
