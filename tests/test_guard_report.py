# ruff: noqa: F811  (the `world` fixture is imported)
"""Messages and costs of the routes a tester's report found (issue 5 follow-up, items 1-7)."""

from __future__ import annotations

from pathlib import Path

from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.guardworld import world  # noqa: F401 (fixture)


def test_text_detached_remove_without_force(world: Path) -> None:
    d = decide_command("git worktree remove ../wt/detached", cwd=str(world / "under"))
    p = f"{world}/wt/detached"
    head = GitRepo(world / "wt/detached").rev("HEAD")[:10]
    assert d.text == (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree remove {p}` would lose work:\n"
        f"HEAD {head} is contained in no branch, tag or remote-tracking ref (a detached HEAD, or "
        "its branch is deleted too)\n\n"
        f"First put HEAD on a branch and push it (git -C {p} switch -c '<name>', then git push "
        f"-u); then remove the worktree without --force (git worktree remove {p}), or let "
        f"`branchkeeper worktree retire {p}` check it for you.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_consent(world: Path) -> None:
    before = processes_started()
    d = decide_command('echo DELETE | script -qec "branchkeeper delete --allow-unproven '
                       '--reason r X" /dev/null', cwd=str(world / "under"))
    assert processes_started() == before
    assert d.text == (
        "[R-BRANCHKEEPER-CONSENT] The command holds `--allow-unproven`: deleting work that "
        "branchkeeper cannot prove is preserved needs the consent of a person at a terminal, and "
        "an agent may not give it (directly, or through `script`, `expect`, a pseudo-terminal or "
        "a piped answer).\n\n"
        "Prove the work is preserved instead: merge or push it, then `branchkeeper delete -- "
        "NAME`. If it is truly unwanted, ask a human to run the delete at their terminal. A "
        "command that only mentions the flag (a commit message) must not hold it literally: "
        "write the text to a file (`git commit -F FILE`).\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_rm_expansion(world: Path) -> None:
    before = processes_started()
    d = decide_command("rm -rf $X", cwd=str(world / "atcap"))
    # one status of the one worktree, and what the repository holds that no remote does (its
    # targets unknown, no remote is read)
    assert processes_started() - before == 3
    assert d.reason == (
        "`rm -rf $X` deletes '$X', but the guard cannot tell exactly what it would destroy: the "
        "target comes from an expansion, xargs or a command's output, and the repository it can "
        "reach holds work that exists nowhere else (.branchkeeper.yaml (untracked); 2 unpushed "
        f"commit(s) in {world}/atcap/.git).")


def test_text_stash_then_drop(world: Path) -> None:
    p = f"{world}/wt/dirty"
    d = decide_command("git stash -u && git stash clear", cwd=p)
    assert d.text == (
        f"[R-GIT-DISCARD-CHANGES] `git stash -u` then `git stash clear` in one command would "
        f"discard uncommitted work in {p}: the stash takes it and the drop leaves it reachable "
        "from no ref:\n  - README.md\n  - new.txt\n\n"
        f"Commit the work first (git -C {p} add -A && git -C {p} commit), or keep the stash "
        "(drop nothing); or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_reset_moves_branch(world: Path) -> None:
    tip = GitRepo(world / "resets").rev("ahead")[:10]
    d = decide_command("git reset --hard origin/main", cwd=str(world / "resets"))
    assert d.reason == (
        "`git reset --hard origin/main` would overwrite an existing branch and lose work: no "
        "other branch, tag or remote-tracking ref contains the current tip of the branch below, "
        "and the new value does not contain it (1 commit would be reachable from no ref):\n"
        f"  - ahead at {tip}")


def test_alias_costs_one_lookup(world: Path) -> None:
    before = processes_started()
    assert decide_command("git st", cwd=str(world / "resets")).verdict.value == "allow"
    assert processes_started() - before == 1  # `config --get alias.st`; `status` is not judged
    before = processes_started()
    d = decide_command("git zap", cwd=str(world / "resets"))
    assert (d.rule_id, processes_started() - before) == ("R-GIT-UNPARSED-DESTRUCTIVE", 1)
    assert "shell alias" in d.reason


def test_known_commands_need_no_lookup(world: Path) -> None:
    before = processes_started()
    for c in ["git status", "git log --oneline", "git -c alias.l=log log", "git stash list",
              "git commit -m x", "npm test", "ls -la", "rm -rf ../nothing-here-*"]:
        assert decide_command(c, cwd=str(world / "resets")).verdict.value == "allow"
    assert processes_started() == before
