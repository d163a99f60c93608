"""Issue 17: a shell script run by name (``./cleanup.sh``, ``bash scripts/x.sh``, ``sh x.sh``,
``source x.sh``, ``. x.sh``) is read from disk and judged as the commands it holds, with its
positional parameters and, for ``source``, in the caller's shell; a script that runs itself,
one too large to walk, or too many in one command are unread; a file that is not there, not
executable (run by its path), or a program in another language runs as before. On two real
repositories holding the same committed scripts: ``risk`` (``notes.txt`` has uncommitted
changes) and ``clean`` (nothing uncommitted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from branchkeeper.shell.scriptfile import MAX_SCRIPT_BYTES
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike

A, D = ("allow", ""), "deny"
RMW, DISC, UNP = "R-RM-WORK-AT-RISK", "R-GIT-DISCARD-CHANGES", "R-GIT-UNPARSED-DESTRUCTIVE"

#: name -> (text, executable)
SCRIPTS = {
    "cleanup.sh": ("#!/bin/sh\nset -e\nrm -f notes.txt\n", True),
    "tidy.sh": ("#!/usr/bin/env bash\necho tidy\nrm -rf build\n", True),
    "scripts/reset.sh": ("git reset --hard\n", False),
    "scripts/args.sh": ('rm -f "$1"\n', False),
    "scripts/up.sh": ("cd ..\nrm -f notes.txt\n", False),
    "scripts/nested.sh": ("bash scripts/reset.sh\n", False),
    "env.sh": ("TARGET=notes.txt\n", False),
    "self.sh": ("#!/bin/sh\n./self.sh\necho again\n", True),
    "tool.py.sh": ("#!/usr/bin/env python3\nimport os\nos.system('rm -f notes.txt')\n", True),
    "noexec.sh": ("rm -f notes.txt\n", False),
    "big.sh": ("#" * MAX_SCRIPT_BYTES + "\nrm -f notes.txt\n", False),
    "bigsafe.sh": ("#" * MAX_SCRIPT_BYTES + "\necho fine\n", False),
    "bin/tool": ("\x7fELF\x00" + "rm -f notes.txt\n" * 5000, True),  # a program, not text
}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("scripts")
    for name in ("risk", "clean"):
        r = GitRepo.init(w / name)
        for path, (text, executable) in SCRIPTS.items():
            (r.path / path).parent.mkdir(parents=True, exist_ok=True)
            (r.path / path).write_text(text)
            (r.path / path).chmod(0o755 if executable else 0o644)
        r.commit("initial", files={"notes.txt": "n\n", "README.md": "r\n"})
    (w / "risk" / "notes.txt").write_text("mine\n")
    return w


#: (command, decision in risk/, decision in clean/)
CASES: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    ("./cleanup.sh", (D, RMW), A), ("sh cleanup.sh", (D, RMW), A), ("sudo ./cleanup.sh", (D, RMW), A),
    ("./tidy.sh", A, A), ("bash scripts/reset.sh", (D, DISC), A), ("sh ./scripts/reset.sh", (D, DISC), A),
    ("bash scripts/args.sh notes.txt", (D, RMW), A), ("bash scripts/args.sh README.md", A, A),
    ("cd scripts && bash up.sh", (D, RMW), A), ("bash scripts/nested.sh", (D, DISC), A),
    ("source env.sh && rm -f $TARGET", (D, RMW), A), (". env.sh; rm -f $TARGET", (D, RMW), A),
    # a new shell: its variable does not come back (unknown; the commits here are on no remote)
    ("bash env.sh; rm -f $TARGET", (D, UNP), (D, UNP)),
    # a script that runs itself: unread, and it names rm
    ("./self.sh", A, A), ("bash -c './self.sh; rm -f x'", (D, UNP), (D, UNP)),
    ("./big.sh", A, A),  # not executable: it does not run
    ("bash big.sh", (D, UNP), (D, UNP)), ("bash bigsafe.sh", A, A),
    # programs the guard does not read, as before
    ("./tool.py.sh", A, A), ("./bin/tool", A, A), ("bash bin/tool", A, A),
    ("./noexec.sh", A, A), ("./missing.sh", A, A), ("bash missing.sh", A, A),
    ("source missing.sh", A, A),
]


@pytest.mark.parametrize(("command", "risk", "clean"), CASES, ids=[c for c, _, _ in CASES])
def test_scripts_both_states(repos: Path, command: str, risk: tuple[str, str],
                             clean: tuple[str, str]) -> None:
    for repo, want in (("risk", risk), ("clean", clean)):
        cwd = str(repos / repo)
        d = decide_command(command, cwd=cwd)
        assert (d.verdict.value, d.rule_id) == want, (repo, d.text)
        if d.verdict.value != "allow":
            assert needs_guard(command, cwd=cwd), "the hook's fast path would skip it"


def test_text_script(repos: Path) -> None:
    """The deny names the command the script runs."""
    r = f"{repos}/risk"
    assert decide_command("./cleanup.sh", cwd=r).text == (
        f"[R-RM-WORK-AT-RISK] `rm -f notes.txt` would delete work in the worktree {r} that exists "
        "nowhere else (no commit holds it):\n  - notes.txt (uncommitted changes)\n\n"
        f"Keep the work first: commit it (git -C {r} add -A && git -C {r} commit) or stash it "
        f"(git -C {r} stash push --include-untracked); move an ignored file you need somewhere it "
        "is kept. Then delete what is left, naming it exactly; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_self_call_reason(repos: Path) -> None:
    d = decide_command("bash -c './self.sh; rm -f x'", cwd=f"{repos}/clean")
    assert d.text.startswith(
        "[R-GIT-UNPARSED-DESTRUCTIVE] The guard could not read the whole command (a script "
        f"runs itself ({repos}/clean/self.sh))")


def test_check_and_hook_answer_alike(repos: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("./cleanup.sh", "bash scripts/reset.sh", "./tidy.sh"):
        for repo in ("risk", "clean"):
            check_and_hook_alike(command, repos / repo, monkeypatch, capsys)
