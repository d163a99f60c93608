"""A branch with no history in common with the default branch (``git switch --orphan``), in a
clone with a remote: the sweep judges it like any other work instead of failing whole (the
changed-paths tier had no diff to read for it and split an empty list)."""

from __future__ import annotations

import pytest

from tests.cleanuputil import cli
from tests.gitrepo import GitRepo


def test_orphan_branch_is_live_work(remote_and_clone: tuple[GitRepo, GitRepo],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.git("switch", "-q", "--orphan", "pages")
    w.commit("pages", files={"index.html": "<p>hi</p>\n"}, days_ago=2)
    w.git("push", "-q", "-u", "origin", "pages")
    w.switch("main")
    code, out, err = cli(capsys, w, "sweep")
    assert (code, err) == (0, "")
    assert out == (
        f"{w.path}  default: main  remote: origin  dormancy: 7/14/30 days (standard)\n\n"
        "Live (1)                                                                          \n"
        "branch ┃ age ┃ containment     ┃ ahead ┃ detail                                   \n"
        "━━━━━━━╇━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n"
        "pages  │ 2d  │ own_remote_only │ 1     │ no common history with the default branch\n\n"
        "2 branches: 1 live; LOST WORK RISK: 0\n")
