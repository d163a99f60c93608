# ruff: noqa: F811, E501  (the `world` fixture is imported; case rows are long)
"""Issue 17, what docs/guard.md listed as not judged: plumbing that writes over work-tree edits
(``read-tree --reset -u``, ``checkout-index -f``) and ``git restore``/``git checkout`` fed paths
by ``xargs``; judged by what they would lose, on the real repositories of tests/guardworld.py
(``kinds/``: uncommitted work; ``kinds-clean/``: nothing at risk), each deny beside its allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.guardworld import world  # noqa: F401 (fixture)

A, D = ("allow", ""), "deny"
DISC = "R-GIT-DISCARD-CHANGES"

#: (command, decision in kinds/, decision in kinds-clean/)
PLUMBING: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    ("git read-tree -u --reset HEAD", (D, DISC), A), ("git read-tree --reset -u HEAD", (D, DISC), A),
    ("git read-tree --reset -u -q HEAD~1", (D, DISC), A),
    # the index alone, a merge git refuses over local changes, a dry run
    ("git read-tree --reset HEAD", A, A), ("git read-tree -m -u HEAD", A, A),
    ("git read-tree -n --reset -u HEAD", A, A),
    ("git checkout-index -f -a", (D, DISC), A), ("git checkout-index -af", (D, DISC), A),
    ("git checkout-index --force --all", (D, DISC), A), ("git checkout-index -f file.txt", (D, DISC), A),
    ("git checkout-index -f -- src/app.py", (D, DISC), A),
    ("git ls-files -m | git checkout-index -f --stdin", (D, DISC), A),
    # a clean file, no --force (git keeps an existing file), written elsewhere
    ("git checkout-index -f README.md", A, A), ("git checkout-index -a", A, A),
    ("git checkout-index -f -a --prefix=../export/", A, A), ("git checkout-index -f --temp file.txt", A, A),
    # paths from xargs: the guard cannot know them, the whole worktree counts
    ("echo file.txt | xargs git restore", (D, DISC), A), ("git ls-files -m | xargs git checkout --", (D, DISC), A),
    ("git diff --name-only | xargs git checkout", (D, DISC), A), ("cat list | xargs git restore", (D, DISC), A),
    ("echo README.md | xargs git restore", A, A),
    ("echo file.txt | xargs git restore --staged", A, A),
]


@pytest.mark.parametrize(("command", "at_risk", "clean"), PLUMBING, ids=[c[:60] for c, _, _ in PLUMBING])
def test_plumbing(world: Path, command: str, at_risk: tuple[str, str], clean: tuple[str, str]) -> None:
    for repo, want in (("kinds", at_risk), ("kinds-clean", clean)):
        cwd = str(world / repo)
        d = decide_command(command, cwd=cwd)
        assert (d.verdict.value, d.rule_id) == want, (repo, d.text)
        assert d.text.endswith(BRANCH_LIMIT_PRINCIPLE) == (d.verdict.value == "deny")
        if d.verdict.value != "allow":
            assert needs_guard(command, cwd=cwd), "the hook's fast path would skip it"


def test_plumbing_one_status(world: Path) -> None:
    """Each plumbing discard is read with ONE `git status`; one that writes no work-tree file
    starts no git process."""
    before = processes_started()
    decide_command("git checkout-index -f -a", cwd=f"{world}/kinds")
    assert processes_started() - before == 1
    before = processes_started()
    decide_command("git read-tree -m -u HEAD", cwd=f"{world}/kinds")
    assert processes_started() == before


def test_text_checkout_index(world: Path) -> None:
    k = f"{world}/kinds"
    d = decide_command("git checkout-index -f -a", cwd=k)
    assert (d.verdict.value, d.rule_id) == (D, DISC)
    assert f"{d.reason}\n\n{d.way_out}" == (
        f"`git checkout-index -f -a` would discard uncommitted work in {k} (changes to tracked "
        "files):\n  - docs/guide.md\n  - file.txt\n  - src/app.py\n\n"
        f"Commit the work first (git -C {k} add -A && git -C {k} commit) or stash it (git -C {k} "
        "stash push --include-untracked), then run the command again; or ask a human.")
