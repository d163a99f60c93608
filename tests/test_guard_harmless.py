# ruff: noqa: F811  (the `world` fixture is imported)
"""Issue 17, section 2: harmless commands the guard stopped, now judged by what they would lose
in this repository state, each beside the matching deny where work is at risk; on the real
repositories of tests/guardworld.py (``kinds/``: work that exists nowhere else; ``kinds-clean/``:
everything committed and pushed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.guardworld import world  # noqa: F401 (fixture)

A, D = ("allow", ""), "deny"
RMW = "R-RM-WORK-AT-RISK"
GONE = ("deny", "R-RM-REPOSITORY")

#: (command, decision in kinds/, decision in kinds-clean/): rm skips `/` (POSIX; GNU's default
#: --preserve-root) and every operand whose last component is `.` or `..`, removing nothing.
ROOT_AND_DOT: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    ("rm -rf /", A, A), ("sudo rm -rf /", A, A), ("rm -rf -- /", A, A), ("rm -fr //", A, A),
    ("rm -rf /.", A, A), ("/usr/bin/env rm -rf /", A, A), ("echo / | xargs rm -rf", A, A),
    ("rm -rf .", A, A), ("rm -rf ./", A, A), ("rm -rf ..", A, A), ("rm -rf src/..", A, A),
    ("rm -rf src/.", A, A), ("cd src && rm -rf .", A, A), ("rm -r ./.", A, A),
    ("rm -rf -- --no-preserve-root /", A, A),  # after `--` it is a file name, not the option
    # ... but what rm does remove is judged as before: the other operands, --no-preserve-root
    # (any abbreviation), busybox's rm (no such check), and code, which removes what it is told
    ("rm -rf / src", (D, RMW), A), ("rm -rf . src", (D, RMW), A), ("rm -rf ./src", (D, RMW), A),
    # (`/` takes the remote, a directory on this machine, with it: nothing holds the commits)
    ("rm -rf --no-preserve-root /", (D, RMW), GONE), ("rm -rf --no-pres /", (D, RMW), GONE),
    ("busybox rm -rf /", (D, RMW), GONE), ("rm -rf --no-preserve-root .", (D, RMW), A),
    ("python3 -c 'import shutil; shutil.rmtree(\"/\")'", (D, RMW), GONE),
    ("python3 -c 'import shutil; shutil.rmtree(\".\")'", (D, RMW), A),
    ("node -e 'require(\"fs\").rmSync(\".\", {recursive: true})'", (D, RMW), A),
]


@pytest.mark.parametrize(("command", "at_risk", "clean"), ROOT_AND_DOT,
                         ids=[c[:60] for c, _, _ in ROOT_AND_DOT])
def test_rm_root_and_dot(world: Path, command: str, at_risk: tuple[str, str],
                         clean: tuple[str, str]) -> None:
    for repo, want in (("kinds", at_risk), ("kinds-clean", clean)):
        cwd = str(world / repo)
        d = decide_command(command, cwd=cwd)
        assert (d.verdict.value, d.rule_id) == want, (repo, d.text)
        assert d.text.endswith(BRANCH_LIMIT_PRINCIPLE) == (d.verdict.value == "deny")
        if d.verdict.value != "allow":
            assert needs_guard(command, cwd=cwd), "the hook's fast path would skip it"


def test_rm_root_needs_no_git(world: Path) -> None:
    """What rm skips is known from the text and the filesystem: no git process."""
    before = processes_started()
    for command in ("rm -rf /", "rm -rf .", "cd src && rm -rf ./"):
        assert decide_command(command, cwd=str(world / "kinds")).verdict.value == "allow"
    assert processes_started() == before


def test_rm_root_through_busybox_on_path(world: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the ``rm`` on PATH is busybox (a link to it, as on Alpine), ``rm -rf /`` removes
    everything: judged as such; a ``.`` operand busybox skips too."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "busybox").write_text("#!/bin/sh\n")
    (bin_dir / "busybox").chmod(0o755)
    os.symlink("busybox", bin_dir / "rm")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    k = str(world / "kinds")
    assert decide_command("rm -rf /", cwd=k).rule_id == RMW
    assert decide_command("rm -rf .", cwd=k).verdict.value == "allow"
    git_only = tmp_path / "git-only"  # no rm on PATH at all: cannot tell
    git_only.mkdir()
    os.symlink(shutil.which("git") or "git", git_only / "git")
    monkeypatch.setenv("PATH", str(git_only))
    assert decide_command("rm -rf /", cwd=k).rule_id == RMW
    assert decide_command("/bin/rm -rf /", cwd=k).verdict.value == "allow"


def test_text_code_deleting_dot(world: Path) -> None:
    """Code that empties its directory is judged as the rm it amounts to, named in the text."""
    k = f"{world}/kinds"
    d = decide_command("python3 -c 'import shutil; shutil.rmtree(\".\")'", cwd=k)
    assert (d.verdict.value, d.rule_id) == (D, RMW)
    assert f"{d.reason}\n\n{d.way_out}" == (
        f"`rm -rf --no-preserve-root -- .` would delete work in the worktree {k} "
        "that exists nowhere else (no commit holds it):\n"
        "  - file.txt (uncommitted changes)\n  - src/app.py (uncommitted changes)\n"
        "  - notes.txt (untracked)\n  - src/new.py (untracked)\n"
        "  - .env (ignored, matches protected glob '.env*')\n\n"
        f"Keep the work first: commit it (git -C {k} add -A && git -C {k} commit) or stash it (git -C {k} "
        "stash push --include-untracked); move an ignored file you need somewhere it is kept. Then "
        "delete what is left, naming it exactly; or ask a human.")
