# ruff: noqa: F811
"""``branchkeeper check``: exit codes and --json (issue 5 section 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.guardworld import world  # noqa: F401 (fixture)


def test_exit_codes(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    under = str(world / "under")
    assert main(["check", "--cwd", under, "--", "git status"]) == 0
    assert capsys.readouterr().out == "allow\n"
    assert main(["check", "--cwd", under, "--", "git switch -c fix-login-2"]) == 1
    assert capsys.readouterr().out.startswith("warn: R-BRANCH-DUPLICATE-STEM\n")
    assert main(["check", "--cwd", under, "--", "git branch -D lonely"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("deny: R-GIT-BRANCH-FORCE-DELETE\n")
    assert out.endswith(BRANCH_LIMIT_PRINCIPLE + "\n")


def test_global_C_and_json(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(world / "atcap"), "check", "--json", "--", "git switch -c x"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert (data["verdict"], data["rule_id"]) == ("deny", "R-BRANCH-WIP-CAP")
    assert sorted(data) == ["context", "reason", "rule_id", "text", "verdict", "way_out"]
    assert data["text"].endswith(BRANCH_LIMIT_PRINCIPLE)


def test_creation_route(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--cwd", str(world / "dormant"), "--creation", ""]) == 2
    assert capsys.readouterr().out.startswith("deny: R-BRANCH-DORMANCY-BLOCK\n")
    assert main(["check", "--cwd", str(world / "under"), "--creation", "brand-new"]) == 0


def test_nothing_to_check(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--cwd", str(world / "under")]) == 4
    assert "nothing to check" in capsys.readouterr().err


def test_help_lists_every_rule_id(capsys: pytest.CaptureFixture[str]) -> None:
    # Every rule id spelled anywhere in the guard's sources, found by reading them: a rule added
    # later is missing from the help only if it is missing from the rule families too.
    import re

    source = Path(__file__).resolve().parent.parent / "src" / "branchkeeper" / "policy"
    spelled = {m for f in source.glob("*.py")
               for m in re.findall(r'"(R-[A-Z][A-Z-]*[A-Z])"', f.read_text())}
    assert len(spelled) >= 11
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    epilog = capsys.readouterr().out.split("exit status:", 1)[1]
    listed = set(re.findall(r"R-[A-Z][A-Z-]*[A-Z]", epilog.replace("\n", " ")))
    assert listed == spelled
