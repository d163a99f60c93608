"""Branch routes an outside trial found the guard missed (issue 17): `git pull` refspecs, which
pull hands to fetch and which are judged as fetch's; `git symbolic-ref`, which turns a branch
into an alias (an overwrite) or HEAD into an unborn branch (a creation); a rename or copy
followed, in the same command, by a deletion of the new name. Each is decided
through `branchkeeper check` on real repositories, in the state where work is at risk and the
one where nothing is, the whole decision asserted, and the PreToolUse hook answers alike."""

from __future__ import annotations

import pytest

from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike


@pytest.fixture
def feat(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone on main; ``feat`` holds one commit, ``w``, that no other ref holds."""
    _, work = remote_and_clone
    work.switch("feat", create=True)
    work.commit("w", files={"w.txt": "w\n"})
    work.switch("main")
    return work


def _overwrite_deny(command: str, branch: str, tip: str) -> str:
    return (
        f"[R-GIT-BRANCH-OVERWRITE] `{command}` would overwrite an existing branch and lose work: "
        "no other branch, tag or remote-tracking ref contains the current tip of the branch "
        "below, and the new value does not contain it (1 commit would be reachable from no "
        f"ref):\n  - {branch} at {tip}\n\nKeep the work first: push it (git push -u origin "
        f"{branch}) or keep it on another branch (git branch {branch}-keep {branch}); then the "
        "overwrite is allowed. Or use a new branch name instead; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


PULL_OVERWRITES = ["git pull origin +main:feat", "git pull --force origin main:feat",
                   "git pull --no-rebase origin +main:refs/heads/feat",
                   "git pull --rebase -X ours origin +main:heads/feat"]


@pytest.mark.parametrize("cmd", PULL_OVERWRITES)
def test_f03_pull_force_moving_a_branch_is_denied_as_the_fetch(
        cmd: str, feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    tip = feat.rev("feat")[:10]
    fetch = "git fetch origin +main:feat"
    assert check_and_hook_alike(fetch, feat.path, monkeypatch, capsys)["text"] == \
        _overwrite_deny(fetch, "feat", tip)
    assert check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)["text"] == \
        _overwrite_deny(cmd, "feat", tip)


@pytest.mark.parametrize("cmd", [*PULL_OVERWRITES, "git pull origin main:feat",
                                 "git pull --dry-run origin +main:feat"])
def test_f03_pull_over_a_pushed_branch_is_allowed(
        cmd: str, feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Contrast: once feat is pushed nothing is lost; a plain (fast-forward only) refspec and a
    dry run never lose a commit."""
    feat.git("push", "-q", "origin", "feat")
    checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", "")


def test_f04_pull_creating_a_branch_past_the_cap_is_denied_as_the_fetch(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    feat.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 1}\n")
    fetch = check_and_hook_alike("git fetch origin main:new", feat.path, monkeypatch, capsys)
    assert fetch["rule_id"] == "R-BRANCH-WIP-CAP"
    for cmd in ("git pull origin main:new", "git pull --rebase origin main:new",
                "git pull origin +main:refs/heads/new"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["rule_id"], checked["text"]) == \
            ("deny", "R-BRANCH-WIP-CAP", fetch["text"]), cmd
    # contrasts: a pull into a remote-tracking ref, or one that creates nothing
    for cmd in ("git pull origin main", "git pull origin main:refs/remotes/origin/new"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("allow", ""), cmd
    feat.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 5}\n")
    checked = check_and_hook_alike("git pull origin main:new", feat.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", "")


# -- F19/F05: `git symbolic-ref` ------------------------------------------------------------

def test_f19_symbolic_ref_turning_a_branch_into_an_alias_is_an_overwrite(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    tip = feat.rev("feat")[:10]
    for cmd in ("git symbolic-ref refs/heads/feat refs/heads/main",
                "git symbolic-ref -m why refs/heads/feat refs/heads/nothing"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert checked["text"] == _overwrite_deny(cmd, "feat", tip), cmd
    feat.switch("feat")  # checked out: the same loss
    cmd = "git symbolic-ref refs/heads/feat refs/heads/main"
    assert check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)["text"] == \
        _overwrite_deny(cmd, "feat", tip)


def test_f19_symbolic_ref_losing_nothing_is_allowed(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Contrasts: reading or deleting a symbolic ref, a new alias name, an alias onto a branch
    that contains feat's tip, and (once feat is pushed) any alias."""
    feat.branch("ahead", "feat")
    feat.switch("ahead")
    feat.commit("more", files={"m.txt": "m\n"})
    feat.switch("main")
    for cmd in ("git symbolic-ref HEAD", "git symbolic-ref --short HEAD",
                "git symbolic-ref -d refs/heads/feat", "git symbolic-ref refs/heads/alias "
                "refs/heads/main", "git symbolic-ref refs/heads/feat refs/heads/ahead"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("allow", ""), cmd
    feat.git("branch", "-q", "-D", "ahead")
    feat.git("push", "-q", "origin", "feat")
    checked = check_and_hook_alike("git symbolic-ref refs/heads/feat refs/heads/main",
                                   feat.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", "")


def test_f05_symbolic_ref_head_to_a_new_branch_is_denied_at_the_cap_as_orphan(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    feat.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 1}\n")
    orphan = check_and_hook_alike("git checkout --orphan new", feat.path, monkeypatch, capsys)
    assert orphan["rule_id"] == "R-BRANCH-WIP-CAP"
    for cmd in ("git symbolic-ref HEAD refs/heads/new",
                "git symbolic-ref HEAD refs/heads/new && git commit -qm x --allow-empty"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["rule_id"], checked["text"]) == \
            ("deny", "R-BRANCH-WIP-CAP", orphan["text"]), cmd
    # contrasts: an existing branch is only checked out; a ref that is no branch; under the cap
    for cmd in ("git symbolic-ref HEAD refs/heads/feat", "git symbolic-ref HEAD refs/tags/v"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert (checked["verdict"], checked["text"]) == ("allow", ""), cmd
    feat.path.joinpath(".branchkeeper.yaml").write_text("branches:\n  wip: {cap: 5}\n")
    checked = check_and_hook_alike("git symbolic-ref HEAD refs/heads/new", feat.path,
                                   monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", "")


# -- F20: a rename or copy, then a deletion of the new name, in one command ---------------------

def _delete_deny(command: str, branch: str, tip: str) -> str:
    return (
        f"[R-GIT-BRANCH-FORCE-DELETE] `{command}` would lose work: no other branch, tag or "
        "remote-tracking ref contains the tip of the branch below (1 commit would be reachable "
        f"from no ref):\n  - {branch} at {tip}\n\nKeep the work first: merge it into the branch "
        f"of the lane it serves, or push it (git push -u origin {branch}). Then `branchkeeper "
        f"delete -- {branch}` proves the work is preserved, writes a recovery bundle and can be "
        "undone. If the work is truly unwanted, ask a human to delete it.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


RENAME_THEN_DELETE = ["git branch -m feat old && git branch -D old",
                      "git branch -m feat old; git branch -D old",
                      "git branch -M feat old && git branch -d -f old",
                      "git branch -m feat a && git branch -m a old && git branch -D old"]


@pytest.mark.parametrize("cmd", RENAME_THEN_DELETE)
def test_f20_rename_then_delete_is_judged_with_the_renamed_tip(
        cmd: str, feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    tip = feat.rev("feat")[:10]
    how = cmd.rpartition("&& " if "&&" in cmd else "; ")[2]  # the deny names the deleting part
    checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
    assert checked["text"] == _delete_deny(how, "old", tip)


def test_f20_rename_then_update_ref_delete_or_overwrite_is_denied(feat: GitRepo) -> None:
    from branchkeeper.policy.command import decide_command

    for cmd, rule in [("git branch -m feat old && git update-ref -d refs/heads/old",
                       "R-GIT-BRANCH-FORCE-DELETE"),
                      ("git branch -m feat old && git branch -f old main",
                       "R-GIT-BRANCH-OVERWRITE")]:
        d = decide_command(cmd, cwd=str(feat.path))
        assert (d.verdict.value, d.rule_id) == ("deny", rule), cmd
    feat.switch("feat")  # the current branch renamed without naming it
    cmd = "git branch -m old && git update-ref -d refs/heads/old"
    d = decide_command(cmd, cwd=str(feat.path))
    assert (d.verdict.value, d.rule_id) == ("deny", "R-GIT-BRANCH-FORCE-DELETE")


@pytest.mark.parametrize("cmd", [
    *RENAME_THEN_DELETE, "git branch -c feat old && git branch -D old",
    "git branch -c feat a && git branch -m a old && git branch -D old",
    "git branch -m feat old && git branch -D other"])
def test_f20_rename_then_delete_losing_nothing_is_allowed(
        cmd: str, feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Contrasts: a copy leaves feat holding the tip; once feat is pushed no rename loses it;
    deleting another name judges that name alone."""
    feat.branch("other", "main")
    if not cmd.startswith("git branch -c") and not cmd.endswith("other"):
        feat.git("push", "-q", "origin", "feat")
    checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", ""), cmd



def test_symbolic_ref_head_off_a_detached_head_is_judged_as_a_checkout(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``symbolic-ref HEAD REF`` moves a detached HEAD as ``checkout`` does: its commits no ref
    holds are left to the HEAD reflog (R-GIT-DETACHED-HEAD-MOVE, the same text)."""
    feat.git("checkout", "-q", "--detach", "main")
    feat.commit("d", files={"d.txt": "d\n"})
    checkout = check_and_hook_alike("git checkout main", feat.path, monkeypatch, capsys)
    assert checkout["rule_id"] == "R-GIT-DETACHED-HEAD-MOVE"
    for cmd in ("git symbolic-ref HEAD refs/heads/main", "git symbolic-ref HEAD refs/heads/new"):
        checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
        assert checked["text"] == checkout["text"].replace("`git checkout main`", f"`{cmd}`")
    feat.git("branch", "kept", "HEAD")  # contrast: a branch holds the commit
    checked = check_and_hook_alike("git symbolic-ref HEAD refs/heads/main", feat.path,
                                   monkeypatch, capsys)
    assert (checked["verdict"], checked["text"]) == ("allow", "")


def test_f20_a_rename_onto_a_taken_name_keeps_judging_that_name_s_own_tip(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`-m` onto an existing name fails, and after `;` the deletion deletes that name's own
    tip: both tips are judged (feat pushed, old's own commit held by nothing else)."""
    feat.git("push", "-q", "origin", "feat")
    feat.switch("old", create=True, start="main")
    feat.commit("o", files={"o.txt": "o\n"})
    feat.switch("main")
    cmd = "git branch -m feat old; git branch -D old"
    checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
    assert checked["text"] == _delete_deny("git branch -D old", "old", feat.rev("old")[:10])
