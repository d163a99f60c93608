"""A fetch that follows refspecs writing local branches is denied (an outside trial, F16 and
F17): ``remote.<name>.fetch`` into ``refs/heads/`` (from the configuration or ``-c``), a
mirror's ``+refs/*:refs/*`` and ``--refmap=`` into a branch let git move or delete branches that
hold work before any proof runs; the default refspec, an empty ``--refmap`` with an explicit
remote-tracking refspec and a dry run are allowed."""

from __future__ import annotations

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


def _text(how: str, spec: str) -> str:
    return (f"[R-GIT-BRANCH-OVERWRITE] `{how}` follows fetch refspecs that write local branches, "
            "so git may move them, or with --prune delete them, losing the commits only they "
            f"hold (from the configuration, -c or --refmap):\n  - `{spec}`\n\n"
            "Fetch into remote-tracking refs only, naming the refspec and an empty --refmap: "
            "`git fetch --refmap= origin '+refs/heads/*:refs/remotes/origin/*'` (what "
            "`branchkeeper prune` runs); or ask a human to change the remote's fetch refspec."
            "\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_the_default_refspec_fetches_freely(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    for command in ("git fetch", "git fetch --prune origin", "git pull", "git remote update",
                    "git remote prune origin", "git fetch origin main"):
        assert check_and_hook_alike(command, w.path, monkeypatch, capsys)["verdict"] == "allow"


@pytest.mark.parametrize("command", ["git fetch", "git fetch --prune origin", "git pull",
                                     "git fetch origin main", "git remote update"])
def test_a_configured_refspec_into_a_branch_is_denied(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], command: str) -> None:
    _, w = remote_and_clone
    w.git("config", "--add", "remote.origin.fetch", "+refs/heads/main:refs/heads/feat")
    got = check_and_hook_alike(command, w.path, monkeypatch, capsys)
    assert (got["verdict"], got["text"]) == (
        "deny", _text(command, "+refs/heads/main:refs/heads/feat"))


def test_mirror_c_and_refmap_routes_are_denied_and_the_way_out_is_allowed(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    mirror = "git -c remote.origin.fetch=+refs/*:refs/* fetch --prune"
    got = check_and_hook_alike(mirror, w.path, monkeypatch, capsys)
    assert (got["verdict"], got["text"]) == ("deny", _text(mirror, "+refs/*:refs/*"))
    refmap = "git fetch origin --refmap=+refs/heads/main:refs/heads/feat main"
    got = check_and_hook_alike(refmap, w.path, monkeypatch, capsys)
    assert (got["verdict"], got["text"]) == ("deny", _text(refmap, "+refs/heads/main:refs/heads/feat"))
    w.git("config", "--add", "remote.origin.fetch", "+refs/heads/*:refs/heads/*")
    for allowed in ("git fetch --refmap= origin '+refs/heads/*:refs/remotes/origin/*'",
                    "git fetch --dry-run"):
        assert check_and_hook_alike(allowed, w.path, monkeypatch, capsys)["verdict"] == "allow"
