"""Run the real ``branchkeeper hook EVENT`` entry point as a subprocess, or in this process
(shared by hook tests)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest


def run_hook(event: str, payload: Any, *, raw: bytes | None = None,
             env: dict[str, str] | None = None, cwd: Path | None = None,
             ) -> subprocess.CompletedProcess[bytes]:
    """Run the hook with ``payload`` (JSON-encoded) or ``raw`` bytes on stdin."""
    data = raw if raw is not None else json.dumps(payload).encode()
    full_env = os.environ.copy()
    full_env.pop("BRANCHKEEPER_DEBUG", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "branchkeeper", "hook", event], input=data,
                          capture_output=True, env=full_env, cwd=cwd or Path("/"), timeout=60)


class HookRun(NamedTuple):
    """What one in-process hook call left: exit status and both streams, as bytes."""

    returncode: int
    stdout: bytes
    stderr: bytes


def hook_in_process(event: str, payload: Any, *, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> HookRun:
    """Run ``branchkeeper hook EVENT`` through the CLI entry point in this process, with
    ``payload`` (JSON-encoded) on stdin, so a test can monkeypatch what the hook calls."""
    from branchkeeper.adapters.cli import main

    monkeypatch.delenv("BRANCHKEEPER_DEBUG", raising=False)
    capsys.readouterr()  # drop anything printed before
    with monkeypatch.context() as patch:
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
        code = main(["hook", event])
    out, err = capsys.readouterr()
    return HookRun(code, out.encode(), err.encode())


def check_and_hook_alike(command: str, cwd: Path | str, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``check --json`` of ``command`` in ``cwd``, asserted equal to the PreToolUse hook's
    answer for the same command (deny: exit 2 and the same text; allow: exit 0, no output)."""
    from branchkeeper.adapters.cli import main

    code = main(["check", "--json", "--cwd", str(cwd), "--", command])
    checked: dict[str, Any] = json.loads(capsys.readouterr().out)
    ran = hook_in_process("PreToolUse", {"session_id": "s", "cwd": str(cwd), "tool_name": "Bash",
                                         "tool_input": {"command": command}},
                          monkeypatch=monkeypatch, capsys=capsys)
    if checked["verdict"] == "deny":
        assert code == 2
        answer = json.loads(ran.stdout)["hookSpecificOutput"]
        assert (answer["permissionDecision"], answer["permissionDecisionReason"]) == \
            ("deny", checked["text"]), (cwd, command)
    else:
        assert (code, ran.stdout) == (0, b""), (cwd, command, ran.stdout)
    return checked


def pruned_now(repo_path: Path) -> None:
    """Record a prune of the checkout at ``repo_path`` at the suite's "now" (the SessionStart
    due rule then has nothing to say)."""
    from branchkeeper.actions.routine import record_prune
    from branchkeeper.clock import now

    branch = subprocess.run(["git", "symbolic-ref", "-q", "--short", "HEAD"], cwd=repo_path,
                            capture_output=True, text=True).stdout.strip() or None
    record_prune(repo_path / ".git", now=now(), branch=branch,
                 worktree=str(repo_path.resolve()))
