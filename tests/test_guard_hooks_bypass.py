"""``R-GIT-HOOKS-BYPASS`` (issue 15): the command guard denies what switches git's own safety net
off for one call or for good, and leaves everything else alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.fast import silent
from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.hooks_bypass import bypass_decisions
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from branchkeeper.shell.parse import parse_command
from tests.githookutil import install
from tests.gitrepo import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a.txt": "a\n"})
    install(repo)
    (tmp_path / "evil.gitconfig").write_text("[core]\n\thooksPath = /dev/null\n")
    (tmp_path / "plain.gitconfig").write_text("[user]\n\tname = x\n")
    return repo


#: One-call switches: denied outright.
DENIED = {
    "git -c core.hooksPath=/dev/null branch -D x": "`git -c core.hooksPath=...` runs git without its hooks",
    "git -c CORE.HOOKSPATH=/tmp status": "`git -c core.hooksPath=...` runs git without its hooks",
    "git --config-env=core.hooksPath=H branch -D x":
        "`git --config-env core.hooksPath=...` runs git without its hooks",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git branch -D x":
        "`GIT_CONFIG_KEY_0` names core.hooksPath",
    "export GIT_CONFIG_PARAMETERS=\"'core.hookspath'='/x'\"; git branch -D x":
        "`GIT_CONFIG_PARAMETERS` sets core.hooksPath",
    "GIT_CONFIG_GLOBAL=../evil.gitconfig git branch -D x":
        "`GIT_CONFIG_GLOBAL` points git at a configuration that may set core.hooksPath",
}
#: Lasting changes of the installed hook: asked of a person (as every change that weakens
#: branchkeeper is, R-BRANCHKEEPER-TAMPER), never decided by the agent.
ASKED = {
    "git config core.hooksPath /dev/null": "`git config core.hooksPath` moves git's hooks away",
    "git config --unset core.hooksPath": "`git config core.hooksPath` moves git's hooks away",
    "echo 'exit 0' > .git/hooks/reference-transaction":
        "`echo` changes {repo}/.git/hooks/reference-transaction, the git hook (or what holds it)",
    "chmod -x .git/hooks/reference-transaction":
        "`chmod` changes {repo}/.git/hooks/reference-transaction, the git hook (or what holds it)",
    "mv .git/hooks /tmp/h": "`mv` changes {repo}/.git/hooks, the git hook (or what holds it)",
    "rm -rf .git/hooks": "`rm` changes {repo}/.git/hooks, the git hook (or what holds it)",
    "cp /bin/true .git/hooks/reference-transaction":
        "`cp` changes {repo}/.git/hooks/reference-transaction, the git hook (or what holds it)",
    "sed -i s/x/y/ .git/hooks/reference-transaction":
        "`sed` changes {repo}/.git/hooks/reference-transaction, the git hook (or what holds it)",
    "branchkeeper uninstall --git-hooks": "`branchkeeper uninstall --git-hooks` removes the hook",
    "branchkeeper install --git-hooks --command true":
        "`branchkeeper install --git-hooks --command ...` makes the hook run another program",
}
ALLOWED = [
    "git config --get core.hooksPath",
    "cat .git/hooks/reference-transaction",
    "ls .git/hooks",
    "GIT_CONFIG_GLOBAL=../plain.gitconfig git status",
    "git -c user.name=x commit --allow-empty -m hooks",
    "branchkeeper install --git-hooks",
    "cp .git/hooks/reference-transaction /tmp/copy",
]


#: A Claude Code PreToolUse shell event, as the raw-bytes fast path reads it.
FAST = ("tool_name", frozenset({"Bash"}), ("tool_input", "command"), "pre", b"", frozenset())


def _raw(command: str) -> bytes:
    return json.dumps({"tool_name": "Bash", "cwd": "/srv/work",
                       "tool_input": {"command": command}}).encode()


@pytest.mark.parametrize("command", ["export BRANCHKEEPER_OWN_DELETE=x",
                                     "chmod -x /shared/hooks/reference-transaction",
                                     "cp /bin/true /opt/HOOKS/reference-transaction"])
def test_the_raw_fast_path_sends_bypass_words_to_the_guard(command: str) -> None:
    assert silent(_raw(command), FAST) is None
    assert silent(_raw("chmod -x /shared/tools/run"), FAST) == b""


@pytest.mark.parametrize("command", list(DENIED))
def test_denied(repo: GitRepo, command: str) -> None:
    assert needs_guard(command, cwd=str(repo.path))  # the hook's fast path sends it on
    decision = decide_command(command, cwd=str(repo.path))
    why = DENIED[command].format(repo=repo.path)
    assert (decision.verdict.value, decision.rule_id, decision.reason) == (
        "deny", "R-GIT-HOOKS-BYPASS",
        f"{why[0].upper()}{why[1:]}: that switches off git's safety net (the "
        "reference-transaction hook that keeps the commits a branch deletion or rewind would "
        "lose).")


@pytest.mark.parametrize("command", list(ASKED))
def test_asked(repo: GitRepo, command: str) -> None:
    assert needs_guard(command, cwd=str(repo.path))
    why = ASKED[command].format(repo=repo.path)
    reason = (f"{why[0].upper()}{why[1:]}: that changes git's safety net (the "
              "reference-transaction hook that keeps the commits a branch deletion or rewind "
              "would lose). An agent may not switch it off; a person decides.")
    [own] = bypass_decisions(command, parse_command(command, cwd=str(repo.path)))
    assert (own.verdict.value, own.rule_id, own.reason) == ("ask", "R-GIT-HOOKS-BYPASS", reason)
    decision = decide_command(command, cwd=str(repo.path))
    # the tamper rule may ask about the same change first; ours is then one of its lines
    assert decision.verdict.value == "ask"
    if decision.rule_id == "R-GIT-HOOKS-BYPASS":
        assert decision.reason == reason
    else:
        assert decision.rule_id == "R-BRANCHKEEPER-TAMPER"
        assert f"Also [R-GIT-HOOKS-BYPASS]: {reason}" in decision.context


def test_a_one_call_switch_outranks_the_question(repo: GitRepo) -> None:
    command = "git -c core.hooksPath=/dev/null config core.hooksPath /dev/null"
    decision = decide_command(command, cwd=str(repo.path))
    assert (decision.verdict.value, decision.rule_id) == ("deny", "R-GIT-HOOKS-BYPASS")


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(repo: GitRepo, command: str) -> None:
    assert decide_command(command, cwd=str(repo.path)).rule_id != "R-GIT-HOOKS-BYPASS"


def test_the_own_delete_variable_is_denied_whole_text(repo: GitRepo) -> None:
    command = "export BRANCHKEEPER_OWN_DELETE=20261202T000000Z-abcd"
    assert needs_guard(command, cwd=str(repo.path))
    decision = decide_command(command, cwd=str(repo.path))
    assert decision.text == (
        "[R-GIT-HOOKS-BYPASS] The command sets `BRANCHKEEPER_OWN_DELETE`, which only "
        "branchkeeper's own bundled deletes carry: that switches off git's safety net (the "
        "reference-transaction hook that keeps the commits a branch deletion or rewind would "
        "lose).\n\nRun the command without it. To delete a branch whose work is not merged, "
        "save it first (`git push -u <remote> NAME`) or use `branchkeeper delete -- NAME`, "
        "which bundles it; changing the hook is for a human (`branchkeeper uninstall "
        f"--git-hooks`).\n\n{BRANCH_LIMIT_PRINCIPLE}")


def test_a_foreign_hook_directory_is_not_ours(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "plain")
    repo.commit("initial")
    (repo.path / ".git" / "hooks").mkdir(exist_ok=True)
    assert decide_command("rm -rf .git/hooks", cwd=str(repo.path)).rule_id != "R-GIT-HOOKS-BYPASS"
