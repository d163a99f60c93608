"""``install --git-hooks`` / ``uninstall --git-hooks`` (issue 15): where the shim goes, chaining a
hook that was there, removing only ours, git too old; and the hook's failure paths (it never
fails a git command by accident) and our own bundled deletes."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from branchkeeper.adapters.git_hooks import CHAINED, MARKER, shim_text
from tests.githookutil import PROGRAM, bk, hook_log, install, kept, operations, set_mode
from tests.gitrepo import GitRepo

FOREIGN = "#!/bin/sh\n{ echo \"$1\"; cat; } >> \"$FOREIGN_LOG\"\nexit 0\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a.txt": "a\n"})
    repo.git("branch", "side")
    repo.switch("side")
    repo.commit("side work", files={"b.txt": "b\n"})
    repo.switch("main")
    return repo


def hook_path(repo: GitRepo) -> Path:
    return repo.path / ".git" / "hooks" / "reference-transaction"


def test_install_writes_the_shim_then_nothing_then_uninstall_removes_it(repo: GitRepo) -> None:
    hook = hook_path(repo)
    first = bk(repo, "install", "--git-hooks")
    assert (first.returncode, first.stdout, first.stderr) == (
        0, f"+ {hook}: branchkeeper's reference-transaction hook\n", "")
    assert hook.read_text() == shim_text(shlex.quote(str(PROGRAM)))
    assert hook.read_text().splitlines()[1] == MARKER
    assert hook.stat().st_mode & stat.S_IXUSR
    again = bk(repo, "install", "--git-hooks")
    assert again.stdout == f"{hook.parent}: git hook already installed; nothing changed\n"
    dry = bk(repo, "uninstall", "--git-hooks", "--dry-run")
    assert dry.stdout == (f"- {hook}: branchkeeper's reference-transaction hook\n"
                          f"dry run: {hook.parent} was not changed\n")
    assert hook.exists()
    gone = bk(repo, "uninstall", "--git-hooks")
    assert (gone.returncode, gone.stdout) == (0, f"- {hook}: branchkeeper's reference-transaction "
                                                 "hook\n")
    assert not hook.exists()
    assert bk(repo, "uninstall", "--git-hooks").stdout == (
        f"{hook.parent}: git hook already uninstalled; nothing changed\n")


def test_a_foreign_hook_is_chained_first_and_restored(repo: GitRepo, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "foreign.log"
    monkeypatch.setenv("FOREIGN_LOG", str(log))
    hook = hook_path(repo)
    hook.parent.mkdir(parents=True)
    hook.write_text(FOREIGN)
    hook.chmod(0o755)
    res = bk(repo, "install", "--git-hooks")
    assert res.stdout == (f"> {hook.parent / CHAINED}: your existing hook, moved from "
                          f"reference-transaction; the shim runs it first\n"
                          f"+ {hook}: branchkeeper's reference-transaction hook\n")
    tip = repo.rev("side")
    repo.git("branch", "-D", "side")
    zero = "0" * 40
    [(ref, oid)] = kept(repo).items()  # ours kept the tip, after the foreign hook ran
    assert oid == tip
    # the foreign hook sees every transaction, ours (the kept ref) included, with git's lines
    assert log.read_text().splitlines() == [
        "prepared", f"{zero} {zero} refs/heads/side", "committed", f"{zero} {zero} refs/heads/side",
        "aborted", f"{zero} {zero} refs/heads/side", "prepared", f"{zero} {zero} refs/heads/side",
        "committed", f"{zero} {zero} refs/heads/side",
        "prepared", f"{zero} {tip} {ref}", "committed", f"{zero} {tip} {ref}"]
    res = bk(repo, "uninstall", "--git-hooks")
    assert res.stdout == (f"- {hook}: branchkeeper's reference-transaction hook\n"
                          f"> {hook}: your hook, moved back from {CHAINED}\n")
    assert hook.read_text() == FOREIGN and not (hook.parent / CHAINED).exists()


def test_a_failing_foreign_hook_still_aborts(repo: GitRepo) -> None:
    hook = hook_path(repo)
    hook.parent.mkdir(parents=True)
    hook.write_text('#!/bin/sh\ncat >/dev/null\n[ "$1" = prepared ] && exit 3\nexit 0\n')
    hook.chmod(0o755)
    bk(repo, "install", "--git-hooks")
    before = repo.rev("main")
    res = repo.git("commit", "-q", "--allow-empty", "-m", "refused", check=False)
    assert res == "" and repo.rev("main") == before
    assert kept(repo) == {}


def test_install_refuses_to_overwrite_a_chained_hook(repo: GitRepo) -> None:
    hook = hook_path(repo)
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    (hook.parent / CHAINED).write_text("#!/bin/sh\nexit 0\n")
    res = bk(repo, "install", "--git-hooks")
    assert (res.returncode, res.stdout, res.stderr) == (
        4, "", f"branchkeeper: error: {hook} is not branchkeeper's and {hook.parent / CHAINED} "
               "already exists; move one of them away first (nothing was changed)\n")


def test_core_hooks_path_is_where_the_hook_goes(repo: GitRepo, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    repo.git("config", "core.hooksPath", str(shared))
    res = bk(repo, "install", "--git-hooks")
    assert res.stdout == f"+ {shared / 'reference-transaction'}: branchkeeper's reference-transaction hook\n"
    tip = repo.rev("side")
    repo.git("branch", "-D", "side")
    assert list(kept(repo).values()) == [tip]
    repo.git("config", "core.hooksPath", "rel-hooks")
    res = bk(repo, "install", "--git-hooks")
    assert res.stdout.splitlines()[0] == (
        "note: core.hooksPath is relative (rel-hooks): each worktree runs hooks from its own "
        "rel-hooks; installed for this one")
    assert (repo.path / "rel-hooks" / "reference-transaction").exists()


def test_install_on_git_older_than_2_28_is_not_supported(repo: GitRepo, tmp_path: Path) -> None:
    real = shutil.which("git")
    bindir = tmp_path / "oldgit"
    bindir.mkdir()
    (bindir / "git").write_text('#!/bin/sh\nif [ "$1" = version ]; then echo "git version '
                                f'2.27.0"; exit 0; fi\nexec {real} "$@"\n')
    (bindir / "git").chmod(0o755)
    res = bk(repo, "install", "--git-hooks", env={"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    assert (res.returncode, res.stdout, res.stderr) == (
        4, "", "branchkeeper: error: install --git-hooks is not supported with git version "
               "2.27.0: the reference-transaction hook needs git 2.28.0 or newer\n")
    assert not hook_path(repo).exists()


# -- the hook never fails a git command by accident -------------------------------------------
def test_a_missing_program_lets_the_update_through_and_logs(repo: GitRepo, tmp_path: Path) -> None:
    install(repo, shlex.quote(str(tmp_path / "no-such-branchkeeper")))
    repo.git("branch", "-D", "side")
    assert not repo.has_ref("refs/heads/side")
    assert [(e["event"], e["message"]) for e in hook_log(repo)] == [
        ("prepared", "branchkeeper could not be started (exit 127); update let through")] * 2


def test_an_internal_error_lets_the_update_through_and_logs(repo: GitRepo) -> None:
    install(repo)
    state = repo.path / ".git" / "branchkeeper"
    state.mkdir(mode=0o700)
    (state / "git-hook").write_text("not a directory")  # the hand-off cannot be written
    repo.git("branch", "-D", "side")
    assert not repo.has_ref("refs/heads/side")
    assert [e["event"] for e in hook_log(repo)] == ["prepared", "prepared"]
    assert all(e["message"].endswith("; update let through") for e in hook_log(repo))


def test_a_broken_config_falls_back_to_keep(repo: GitRepo) -> None:
    install(repo)
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  git_hook:\n    mode: maybe\n")
    tip = repo.rev("side")
    repo.git("branch", "-D", "side")
    assert list(kept(repo).values()) == [tip]
    assert {e["message"].split(":")[0] for e in hook_log(repo)} == {
        "configuration ignored, defaults used"}


# -- our own deletes --------------------------------------------------------------------------
def _rebase_merged(repo: GitRepo) -> str:
    """``side`` rebase-merged into a moved main: proven patch-equivalent, not an ancestor."""
    repo.commit("main moves", files={"m.txt": "m\n"})
    repo.rebase_merge("side")
    assert subprocess.run(["git", "merge-base", "--is-ancestor", "side", "main"],
                          cwd=repo.path).returncode == 1
    return repo.rev("side")


@pytest.mark.parametrize("mode", ["keep", "block"])
def test_our_bundled_deletes_pass_without_a_second_keep(repo: GitRepo, mode: str) -> None:
    install(repo)
    set_mode(repo, mode)
    _rebase_merged(repo)
    res = bk(repo, "delete", "--", "side")
    assert res.returncode == 0, res.stdout + res.stderr
    assert not repo.has_ref("refs/heads/side")
    assert kept(repo) == {}
    assert [op["op"] for op in operations(repo)] == ["delete"]


def test_the_own_delete_variable_alone_bypasses_nothing(repo: GitRepo) -> None:
    install(repo)
    tip = _rebase_merged(repo)
    done = bk(repo, "delete", "--", "side")
    assert done.returncode == 0
    [op] = operations(repo)
    repo.git("branch", "side", tip)
    repo.git("branch", "-D", "side", env={"BRANCHKEEPER_OWN_DELETE": op["id"]})
    assert list(kept(repo).values()) == [tip]  # the operation is closed: no pass
    set_mode(repo, "block")
    repo.git("branch", "lone", repo.git("commit-tree", "-p", "main", "-m", "lone",
                                        repo.rev("main^{tree}")))
    with pytest.raises(AssertionError, match="refusing to delete branch lone"):
        repo.git("branch", "-D", "lone", env={"BRANCHKEEPER_OWN_DELETE": "forged"})
    assert repo.has_ref("refs/heads/lone")
