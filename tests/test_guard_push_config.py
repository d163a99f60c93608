"""A push that names a remote but no refspec pushes what the remote's configuration says
(``remote.<name>.push``, ``remote.<name>.mirror``, from the repository or ``-c``): it is judged
as the same push with those words on its command line (an outside trial, F15), so a configured
forced refspec, deletion or mirror is denied exactly as the command-line form is."""

from __future__ import annotations

import pytest

from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


@pytest.fixture
def remote_only(remote_and_clone: tuple[GitRepo, GitRepo]) -> tuple[GitRepo, str]:
    """A clone whose remote has branches r2 and r3 holding commits only the remote has."""
    _, w = remote_and_clone
    tips = []
    for name in ("r2", "r3"):
        w.switch(name, create=True, start="main")
        tips.append(w.commit(name, files={f"{name}.txt": "r\n"}, days_ago=1))
        w.git("push", "-q", "-u", "origin", name)
        w.switch("main")
        w.git("branch", "-q", "-D", name)
    return w, tips[0]


def _judged(w: GitRepo, command: str, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> tuple[str, str | None]:
    got = check_and_hook_alike(command, w.path, monkeypatch, capsys)
    return got["verdict"], got.get("rule_id")


def test_configured_push_refspecs_are_judged_as_written(
        remote_only: tuple[GitRepo, str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    w, r2 = remote_only
    forced = "git -c remote.origin.push=+HEAD:refs/heads/r2 push origin"
    got = check_and_hook_alike(forced, w.path, monkeypatch, capsys)
    assert got["verdict"] == "deny"
    assert got["text"].startswith(
        "[R-GIT-PUSH-FORCE-OVERWRITE] `git push origin +HEAD:refs/heads/r2` would overwrite "
        "origin/r2 and drop 1 commit that only the remote holds")
    assert f"  - {r2[:7]} r2\n" in got["text"]
    for command, rule in (
            ("git -c remote.origin.push=HEAD:refs/heads/r2 push -f origin",
             "R-GIT-PUSH-FORCE-OVERWRITE"),
            ("git -c remote.origin.push=:refs/heads/r3 push origin", "R-GIT-PUSH-DELETE-REMOTE"),
            ("git -c remote.origin.mirror=true push origin", "R-GIT-PUSH-DELETE-REMOTE")):
        assert _judged(w, command, monkeypatch, capsys) == ("deny", rule), command
    w.git("config", "remote.origin.push", "+HEAD:refs/heads/r2")
    for command in ("git push", "git push origin"):
        assert _judged(w, command, monkeypatch, capsys) == (
            "deny", "R-GIT-PUSH-FORCE-OVERWRITE"), command
    # a dry run, or the push of a refspec named on the command line, is judged as before
    assert _judged(w, "git push --dry-run", monkeypatch, capsys)[0] == "allow"
    assert _judged(w, "git push origin HEAD:refs/heads/fresh", monkeypatch, capsys)[0] == "allow"
    w.git("config", "--unset", "remote.origin.push")
    assert _judged(w, "git push origin", monkeypatch, capsys)[0] == "allow"
