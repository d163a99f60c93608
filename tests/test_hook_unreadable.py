"""Hook input before a tool that cannot be read (docs/guard.md, ``R-GIT-UNPARSED-DESTRUCTIVE``):
a payload nested too deeply in a field nothing reads, or malformed, is denied when its command
(or, none recoverable, its bytes) mentions git or rm, and still fails open otherwise; a command
given as an argv list is read for every host. Through the real hook entry, for two hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.fast import silent
from branchkeeper.adapters.hooks.unreadable import refusal_reason
from branchkeeper.adapters.hosts import HOSTS
from tests.gitrepo import GitRepo

PRINCIPLE_START = "\n\nThe limit exists so work FINISHES"
DEEP = "[" * 1000 + "]" * 1000
#: How each host names its fail-open on stderr.
PREFIX = {"claude": "branchkeeper hook PreToolUse", "codex": "branchkeeper hook codex PreToolUse"}


@pytest.fixture
def work(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone with ``x``: one commit no other ref holds."""
    _, clone = remote_and_clone
    clone.switch("x", create=True)
    clone.commit("x work", files={"x.txt": "x\n"})
    clone.switch("main")
    return clone


def _hook(host: str, data: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = os.environ.copy()
    env.pop("BRANCHKEEPER_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "branchkeeper", "hook", "--host", host,
                           "PreToolUse"], input=data, capture_output=True, env=env, cwd=cwd,
                          timeout=60)


def _payload(cwd: Path, tool_input: str) -> bytes:
    where = json.dumps(str(cwd))
    return (f'{{"session_id": "s", "turn_id": "t", "cwd": {where}, '
            f'"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {tool_input}}}'
            ).encode()


def _denial(out: bytes) -> str:
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    reason: str = answer["permissionDecisionReason"]
    return reason.split(PRINCIPLE_START)[0]


WAY_OUT = ("Run the command again as a plain tool call (the command a string or a list of "
           "strings, no deeply nested or malformed field); or ask a human.")


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_deep_junk_beside_a_destructive_command_is_denied(work: GitRepo, host: str) -> None:
    data = _payload(work.path, f'{{"command": "git branch -D x", "junk": {DEEP}}}')
    ran = _hook(host, data, work.path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert _denial(ran.stdout) == (
        "[R-GIT-UNPARSED-DESTRUCTIVE] The hook input could not be read (input JSON is nested "
        "too deeply) and its command `git branch -D x` may hold a route the guard judges, so "
        "the tool call cannot be judged.\n\n" + WAY_OUT)
    assert work.has_ref("refs/heads/x")


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_deep_junk_without_a_recoverable_command_that_mentions_git(work: GitRepo,
                                                                   host: str) -> None:
    data = _payload(work.path, f'{{"cmd": "git branch -D x", "junk": {DEEP}}}')
    ran = _hook(host, data, work.path)
    assert _denial(ran.stdout) == (
        "[R-GIT-UNPARSED-DESTRUCTIVE] The hook input could not be read (input JSON is nested "
        "too deeply) and no command could be recovered from it, and it mentions git or rm, so "
        "the tool call cannot be judged.\n\n" + WAY_OUT)


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_deep_junk_beside_a_harmless_command_fails_open(work: GitRepo, host: str) -> None:
    data = _payload(work.path, f'{{"command": "ls -la", "junk": {DEEP}}}')
    ran = _hook(host, data, work.path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (
        0, b"", f"{PREFIX[host]}: ignored: malformed hook input: input JSON is nested too "
                "deeply\n".encode())


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_malformed_scalar_beside_a_destructive_command_is_denied(work: GitRepo,
                                                                 host: str) -> None:
    """Not JSON (``tru``), though the fast path's reader reads it: its command is the one
    the fast path would have read, and it is judged."""
    data = _payload(work.path, '{"command": "git branch -D x", "flag": tru}')
    reason = _denial(_hook(host, data, work.path).stdout)
    assert reason.startswith("[R-GIT-UNPARSED-DESTRUCTIVE] The hook input could not be read "
                             "(input is not valid JSON (Expecting value: ")
    assert "its command `git branch -D x` may hold a route the guard judges" in reason


def test_argv_list_command_is_judged_alike_by_every_host(work: GitRepo) -> None:
    data = _payload(work.path, '{"command": ["git", "branch", "-D", "x"]}')
    reasons = {host: _denial(_hook(host, data, work.path).stdout) for host in ("claude", "codex")}
    assert reasons["claude"] == reasons["codex"]
    assert reasons["claude"].startswith(
        "[R-GIT-BRANCH-FORCE-DELETE] `git branch -D x` would lose work: no other branch, tag "
        "or remote-tracking ref contains the tip of the branch below")


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_harmless_argv_list_is_allowed(work: GitRepo, host: str) -> None:
    ran = _hook(host, _payload(work.path, '{"command": ["ls", "-la"]}'), work.path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")


def test_the_fast_path_answers_nothing_the_full_path_would_deny() -> None:
    """The fast path reads a payload only where its reader does; for one JSON refuses there
    (``tru``), the full path recovers that same command: a harmless one fails open there too,
    whatever the other fields say. A payload nested past the reader's depth is never
    answered fast."""
    spec = HOSTS["claude"]().FAST["PreToolUse"]
    harmless = _payload(Path("/tmp"), '{"command": "ls", "note": "git branch -D x", "f": tru}')
    assert silent(harmless, spec) == spec[4]
    assert refusal_reason(harmless, spec) is None
    deep = _payload(Path("/tmp"), f'{{"command": "ls", "junk": {DEEP}}}')
    assert silent(deep, spec) is None
    assert refusal_reason(deep, spec) is None
    listed = _payload(Path("/tmp"), f'{{"command": ["rm", "-rf", "x"], "junk": {DEEP}}}')
    assert silent(listed, spec) is None
    assert refusal_reason(listed, spec) == "its command `rm -rf x` may hold a route the guard " \
                                           "judges"


def test_bytes_without_a_command_are_read_after_their_escapes() -> None:
    """No command recoverable: a word spelled through a JSON escape or a shell quote counts,
    an escaped control character or ``permission_mode`` does not."""
    deny = "no command could be recovered from it, and it mentions git or rm"
    for raw, want in [(rb'{"x": "g\u0069t branch -D x", "tool_input": 1', deny),
                      (rb'{"x": "g\\it branch -D x", "tool_input": 1', deny),
                      (rb'{"x": "a\nrm -rf y", "tool_input": 1', deny),
                      (rb'{"x": "\u0007", "permission_mode": "x", "tool_input": 1', None)]:
        assert refusal_reason(raw, None) == want, raw
