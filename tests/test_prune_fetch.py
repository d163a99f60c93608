"""``prune``'s own fetch writes only ``refs/remotes/<remote>/`` (F16, F17 of an outside trial):
a configured fetch refspec into ``refs/heads/``, a mirror remote's ``+refs/*:refs/*`` or
``fetch.pruneTags`` made the fetch move or delete local branches and tags holding work before
any proof ran, and the branch was then "merged" or gone with no bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cleanuputil import cli
from tests.gitrepo import GitRepo


def _unpushed(w: GitRepo) -> str:
    w.switch("feat", create=True)
    tip = w.commit("unpushed work", files={"w.txt": "w\n"}, days_ago=1)
    w.switch("main")
    return tip


@pytest.mark.parametrize("config", [
    ("remote.origin.fetch", "+refs/heads/main:refs/heads/feat"),  # F16: force-moves feat
    ("remote.origin.fetch", "+refs/*:refs/*"),  # F17: a mirror; --prune deleted feat
    ("remote.origin.mirror", "true"),
], ids=["refspec-into-heads", "mirror-refspec", "mirror-flag"])
def test_prune_fetch_never_writes_a_local_branch(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str],
        config: tuple[str, str]) -> None:
    _, w = remote_and_clone
    tip = _unpushed(w)
    w.git("config", "--add", *config)
    w.git("switch", "-q", "--detach", "main")  # else git refuses to fetch into the checkout
    code, out, err = cli(capsys, w, "prune", "--no-reap")
    assert (code, err) == (0, ""), err
    assert w.rev("feat") == tip
    assert "note: fetched origin (--prune)\n" in out
    assert "  SKIP_UNPROVEN  feat" in out and "deleted" not in out


def test_prune_fetch_prunes_remote_tracking_refs_and_keeps_local_tags(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    bare, w = remote_and_clone
    w.git("push", "-q", "origin", "main:refs/heads/gone-upstream")
    w.git("fetch", "-q", "origin")
    bare.git("update-ref", "-d", "refs/heads/gone-upstream")
    w.git("tag", "local-only-tag")
    w.git("config", "fetch.pruneTags", "true")
    w.git("config", "fetch.recurseSubmodules", "yes")
    code, out, err = cli(capsys, w, "prune", "--no-reap")
    assert (code, err) == (0, ""), err
    assert "note: fetched origin (--prune)\n" in out
    assert not w.has_ref("refs/remotes/origin/gone-upstream")  # the fetch still prunes
    assert w.has_ref("refs/tags/local-only-tag")
