# ruff: noqa: E501  (whole answers are long)
"""Issue 19, the write tools: a whole-file write of a host's hook configuration that removes or
changes any entry ``install`` wrote (in every command form it writes: ``branchkeeper-hook HOST
EVENT``, its absolute path, the older ``branchkeeper hook EVENT``), or that sets
``disableAllHooks``, is asked of a person (denied with the words to ask a human where the host
has no ask); a write that keeps every entry stays allowed. Driven through the command each host's
install really wrote, on real repositories."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.claude.install import merge as claude_merge
from branchkeeper.adapters.codex.install import merge as codex_merge
from branchkeeper.adapters.copilot.install import merge as copilot_merge
from branchkeeper.adapters.cursor.install import merge as cursor_merge
from branchkeeper.adapters.gemini.install import merge as gemini_merge
from branchkeeper.policy.strictness import hooks_kept
from tests import hostutil as H
from tests.gitrepo import GitRepo

TAIL = (". An agent may not loosen or switch off the guard that keeps its work from being lost; "
        "a person decides.\n\nAsk a human to make this change (what a person runs outside the "
        "agent is never judged). A change that only adds protection can be written whole with "
        "the Write tool: the guard allows it when nothing weakens.")
ASK_HUMAN = {
    "codex": "Codex cannot put this to the person at the keyboard, so branchkeeper refuses it: ask a human to run it.",
    "cursor": "Cursor does not put this tool call to the person here, so branchkeeper refuses it: ask a human to run it.",
    "gemini": "Gemini CLI has no documented way to put this to the person at the keyboard, so branchkeeper refuses it: ask a human to run it.",
}
WHAT = {"claude": "Claude Code's settings (branchkeeper's hooks)", "codex": "Codex's hook file",
        "cursor": "Cursor's hook file", "gemini": "Gemini CLI's settings (its hooks)",
        "copilot": "Copilot's hook files"}


def _text(tool: str, path: str, what: str) -> str:
    return f"[R-BRANCHKEEPER-TAMPER] `{tool} {path}` would change {what} ({shlex.quote(path)}){TAIL}"


def _wire(host: str, text: str) -> Any:
    """The whole answer ``host`` reads back for an ask before a file-write tool."""
    if host == "claude":
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                       "permissionDecisionReason": text}}
    if host == "codex":
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": f"{text}\n\n{ASK_HUMAN[host]}"}}
    if host == "cursor":
        denied = f"{text}\n\n{ASK_HUMAN[host]}"
        return {"permission": "deny", "user_message": denied, "agent_message": denied}
    if host == "gemini":
        return {"decision": "deny", "reason": f"{text}\n\n{ASK_HUMAN[host]}"}
    return {"permissionDecision": "ask", "permissionDecisionReason": text}


def _write(host: str, cwd: str, path: str, content: str) -> tuple[str, str, dict[str, Any]]:
    """(tool name in the text, event, payload) of ``host``'s whole-file write of ``path``."""
    if host == "claude":
        event, p = H.claude_pre(cwd, "ignored")
        return "Write", event, {**p, "tool_name": "Write",
                                "tool_input": {"file_path": path, "content": content}}
    if host == "codex":
        event, p = H.codex_pre(cwd, "ignored")
        return "apply_patch", event, {**p, "tool_name": "apply_patch", "tool_input": {
            "command": f"*** Begin Patch\n*** Add File: {path}\n+{content}\n*** End Patch\n"}}
    if host == "cursor":
        _, p = H.cursor_pre(cwd, "ignored")
        p = {k: v for k, v in p.items() if k not in ("command", "sandbox")}
        return "Write", "preToolUse", {**p, "hook_event_name": "preToolUse", "tool_name": "Write",
                                       "tool_input": {"file_path": path, "content": content}}
    if host == "gemini":
        event, p = H.gemini_pre(cwd, "ignored")
        return "write_file", event, {**p, "tool_name": "write_file",
                                     "tool_input": {"file_path": path, "content": content}}
    event, p = H.copilot_pre(cwd, "ignored")
    return "create", event, {**p, "toolName": "create",
                             "toolArgs": {"path": path, "file_text": content}}


def _fire(repo: GitRepo, host: str, path: Path, content: str) -> tuple[str, Any]:
    """Fire ``host``'s installed pre-tool command for a write of ``content`` to ``path``:
    (tool name, the parsed answer, None for a silent one)."""
    tool, event, payload = _write(host, str(repo.path), str(path), content)
    done = H.fire(repo.path, host, event, payload)
    assert done.returncode == 0, done.stderr
    silent = next(c for c in H.CASES if c.name == host).silent
    return tool, None if done.stdout == silent else json.loads(done.stdout)


HOSTS = ["claude", "codex", "cursor", "gemini", "copilot"]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"a.txt": "a\n"})
    return repo


@pytest.mark.parametrize("host", HOSTS)
def test_tamper_write_emptying_the_hook_file_is_asked(repo: GitRepo, host: str) -> None:
    """The user's report: after ``install``, a write of ``{}`` over the host's hook file passed.
    It is asked (denied with the words to ask a human where the host has no ask), through the
    very command ``install`` wrote."""
    H.install(repo.path, host)
    path = H.config_file(repo.path, host)
    tool, answer = _fire(repo, host, path, "{}")
    assert answer == _wire(host, _text(tool, str(path), WHAT[host]))


@pytest.mark.parametrize("host", ["claude", "cursor", "gemini"])
def test_tamper_write_keeping_every_entry_is_allowed(repo: GitRepo, host: str) -> None:
    """Adding a setting (and a hook of someone else's) while keeping every entry of ours as
    ``install`` wrote it weakens nothing: silent."""
    H.install(repo.path, host)
    path = H.config_file(repo.path, host)
    data = json.loads(path.read_text())
    event = next(iter(data["hooks"]))
    data["hooks"][event] = [*data["hooks"][event], {"command": "./audit.sh"}]
    data["extra"] = {"theme": "dark"}
    assert _fire(repo, host, path, json.dumps(data))[1] is None


@pytest.mark.parametrize("host", ["claude", "cursor", "gemini"])
def test_tamper_write_changing_one_entry_is_asked(repo: GitRepo, host: str) -> None:
    """Our entry with another matcher or timeout no longer guards what it did: asked."""
    H.install(repo.path, host)
    path = H.config_file(repo.path, host)
    data = json.loads(path.read_text())
    items = next(iter(data["hooks"].values()))
    entry = items[0]["hooks"][0] if "hooks" in items[0] else items[0]
    entry["timeout"] = entry.get("timeout", 0) + 1
    tool, answer = _fire(repo, host, path, json.dumps(data))
    assert answer == _wire(host, _text(tool, str(path), WHAT[host]))


@pytest.mark.parametrize("host", ["codex", "copilot"])
def test_tamper_write_without_whole_content_stays_asked(repo: GitRepo, host: str) -> None:
    """Codex's patch shows no whole new content, and Copilot's hooks directory is asked whole:
    even a write that keeps every entry goes to a person."""
    H.install(repo.path, host)
    path = H.config_file(repo.path, host)
    tool, answer = _fire(repo, host, path, path.read_text())
    assert answer == _wire(host, _text(tool, str(path), WHAT[host]))


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_tamper_write_claude_disable_all_hooks_is_asked(repo: GitRepo, name: str) -> None:
    """``disableAllHooks: true`` switches every hook off without touching an entry: asked, in
    the project's settings and in the local ones (which hold no entry of ours)."""
    H.install(repo.path, "claude")
    path = repo.path / ".claude" / name
    kept = json.loads((repo.path / ".claude" / "settings.json").read_text()) \
        if name == "settings.json" else {}
    tool, answer = _fire(repo, "claude", path, json.dumps({**kept, "disableAllHooks": True}))
    what = "Claude Code's local settings (branchkeeper's hooks)" if "local" in name else WHAT["claude"]
    assert answer == _wire("claude", _text(tool, str(path), what))
    # switching it off again, or keeping it false, weakens nothing
    assert _fire(repo, "claude", path, json.dumps({**kept, "disableAllHooks": False}))[1] is None


def test_tamper_write_claude_user_settings(repo: GitRepo) -> None:
    """The user-level ``~/.claude/settings.json`` (a temporary HOME here): the switch, and
    removing a user-scope install's entries, are asked; a write that keeps them is not."""
    H.install(repo.path, "claude")
    home = Path.home()
    path = home / ".claude" / "settings.json"
    tool, answer = _fire(repo, "claude", path, '{"disableAllHooks": true}')
    what = "Claude Code's user settings (branchkeeper's hooks)"
    assert answer == _wire("claude", _text(tool, str(path), what))
    done = subprocess.run([sys.executable, "-m", "branchkeeper", "install", "--scope", "user"],
                            cwd=repo.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    assert _fire(repo, "claude", path, json.dumps({**data, "model": "x"}))[1] is None
    tool, answer = _fire(repo, "claude", path, json.dumps({"model": "x"}))
    assert answer == _wire("claude", _text(tool, str(path), what))


MERGES = {"claude": claude_merge, "codex": codex_merge, "cursor": cursor_merge,
          "gemini": gemini_merge, "copilot": copilot_merge}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("program", ["branchkeeper-hook", "/opt/bk/bin/branchkeeper-hook",
                                     "'/opt/my tools/branchkeeper-hook'", "branchkeeper",
                                     "/usr/bin/python3 -m branchkeeper"])
def test_tamper_write_recognises_every_installed_form(host: str, program: str) -> None:
    """Whatever ``install --command`` wrote (the entry point by name or absolute path, the
    command-line program's older ``branchkeeper hook`` form), each installed entry is ours:
    removing any single one is weakening, adding a foreign entry is not."""
    installed, _ = MERGES[host]({"version": 1} if host in ("cursor", "copilot") else {}, program)
    before = json.dumps(installed)
    for event in installed["hooks"]:
        without = json.loads(before)
        del without["hooks"][event]
        assert not hooks_kept(before, json.dumps(without)), (program, event)
    extra = json.loads(before)
    extra["hooks"]["Other"] = [{"command": "./lint.sh"}]
    assert hooks_kept(before, json.dumps(extra))
    assert not hooks_kept(before, json.dumps({**installed, "disableAllHooks": True}))
    assert not hooks_kept(before, "not json")
