"""``branchkeeper install --host HOST`` / ``uninstall --host HOST`` for every host (issue 14,
point 3): the host's file and shape, idempotent, foreign entries kept, ``--dry-run``, scopes,
``--host auto``, and the plugin layouts kept true to the installer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from branchkeeper.adapters.codex.install import desired_groups as codex_groups
from branchkeeper.adapters.copilot.install import HOOK_SPECS as COPILOT_SPECS
from branchkeeper.adapters.cursor.install import HOOK_SPECS as CURSOR_SPECS
from branchkeeper.adapters.gemini.install import HOOK_SPECS as GEMINI_SPECS
from tests.gitrepo import GitRepo
from tests.hostutil import config_file

ROOT = Path(__file__).resolve().parents[1]


def bk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "branchkeeper", *args], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial")
    return repo


def test_codex_file_and_its_exact_content(repo: GitRepo) -> None:
    first = bk("install", "--host", "codex", cwd=repo.path)
    path = repo.path / ".codex" / "hooks.json"
    assert first.stdout.splitlines() == [
        "+ SessionStart: branchkeeper-hook codex SessionStart (timeout 15 s)",
        "+ PreToolUse [Bash|apply_patch]: branchkeeper-hook codex PreToolUse (timeout 10 s)",
        "+ PostToolUse [Bash|apply_patch]: branchkeeper-hook codex PostToolUse (timeout 30 s)",
        "+ UserPromptSubmit: branchkeeper-hook codex UserPromptSubmit (timeout 5 s)",
        "+ Stop: branchkeeper-hook codex Stop (timeout 15 s)",
        "+ SubagentStop: branchkeeper-hook codex SubagentStop (timeout 15 s)",
        f"wrote {path}",
        "Codex CLI asks you to review and trust new or changed hooks once (/hooks)."]
    data = json.loads(path.read_text())
    assert list(data) == ["hooks"]  # nothing Codex could reject at the top level
    assert data["hooks"]["PreToolUse"] == [{"matcher": "Bash|apply_patch", "hooks": [{
        "type": "command", "command": "branchkeeper-hook codex PreToolUse", "timeout": 10}]}]


def test_cursor_flat_entries(repo: GitRepo) -> None:
    assert bk("install", "--host", "cursor", cwd=repo.path).returncode == 0
    data = json.loads((repo.path / ".cursor" / "hooks.json").read_text())
    assert data["version"] == 1
    assert [(e, data["hooks"][e]) for e, _, _ in CURSOR_SPECS][:4] == [
        ("sessionStart", [{"command": "branchkeeper-hook cursor sessionStart", "timeout": 15}]),
        ("beforeShellExecution", [{"command": "branchkeeper-hook cursor beforeShellExecution",
                                   "timeout": 10}]),
        ("preToolUse", [{"command": "branchkeeper-hook cursor preToolUse", "matcher": "Write",
                         "timeout": 10}]),
        ("postToolUse", [{"command": "branchkeeper-hook cursor postToolUse", "matcher": "Shell",
                          "timeout": 30}])]


def test_gemini_timeouts_are_milliseconds(repo: GitRepo) -> None:
    out = bk("install", "--host", "gemini", cwd=repo.path).stdout.splitlines()
    assert out[1] == ("+ BeforeTool [run_shell_command|write_file|replace]: branchkeeper-hook "
                      "gemini BeforeTool (timeout 10000 ms)")
    data = json.loads((repo.path / ".gemini" / "settings.json").read_text())
    assert data["hooks"]["AfterAgent"] == [{"hooks": [{
        "name": "branchkeeper", "type": "command", "command": "branchkeeper-hook gemini AfterAgent",
        "timeout": 15000}]}]
    assert [t for _, _, t in GEMINI_SPECS] == [15000, 10000, 30000, 5000, 15000, 3000]


def test_copilot_file_of_its_own(repo: GitRepo) -> None:
    assert bk("install", "--host", "copilot", cwd=repo.path).returncode == 0
    data = json.loads((repo.path / ".github" / "hooks" / "branchkeeper.json").read_text())
    assert data["version"] == 1 and list(data["hooks"]) == [e for e, _, _ in COPILOT_SPECS]
    assert data["hooks"]["preToolUse"] == [{"type": "command",
                                            "bash": "branchkeeper-hook copilot preToolUse",
                                            "matcher": "bash|create|edit", "timeoutSec": 10}]


FOREIGN: dict[str, dict[str, Any]] = {
    "codex": {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./policy.sh", "statusMessage": "policy"}]}]}},
    "cursor": {"version": 1, "hooks": {"beforeShellExecution": [{"command": "./audit.sh"}],
                                       "afterFileEdit": [{"command": "./format.sh"}]}},
    "gemini": {"ui": {"theme": "dark"}, "hooks": {"BeforeTool": [{"matcher": "write_file",
                                                                  "hooks": [{
        "type": "command", "command": "./secrets.sh", "timeout": 2000}]}]}},
    "copilot": {"version": 1, "disableAllHooks": False, "hooks": {"preToolUse": [
        {"type": "command", "bash": "./lint.sh", "timeoutSec": 5}]}},
}


@pytest.mark.parametrize("host", list(FOREIGN))
def test_round_trip_keeps_foreign_entries_and_is_idempotent(repo: GitRepo, host: str) -> None:
    path = config_file(repo.path, host)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(FOREIGN[host]))
    dry = bk("install", "--host", host, "--dry-run", cwd=repo.path)
    assert dry.stdout.splitlines()[-1] == f"dry run: {path} was not written"
    assert json.loads(path.read_text()) == FOREIGN[host]
    assert bk("install", "--host", host, cwd=repo.path).returncode == 0
    before = path.read_bytes()
    again = bk("install", "--host", host, cwd=repo.path)
    assert again.stdout == f"{path}: already installed; nothing changed\n"
    assert path.read_bytes() == before
    merged = json.loads(before)
    for event, items in FOREIGN[host]["hooks"].items():
        assert merged["hooks"][event][:len(items)] == items
    removed = bk("uninstall", "--host", host, cwd=repo.path)
    assert removed.returncode == 0 and removed.stdout.startswith("- ")
    assert json.loads(path.read_text()) == FOREIGN[host]


def test_a_flat_file_left_with_only_its_version_is_removed(repo: GitRepo) -> None:
    assert bk("install", "--host", "copilot", cwd=repo.path).returncode == 0
    path = config_file(repo.path, "copilot")
    dry = bk("uninstall", "--host", "copilot", "--dry-run", cwd=repo.path)
    assert dry.stdout.splitlines()[-1] == (
        f"dry run: {path} would be removed (branchkeeper created it; it holds nothing else)")
    assert path.exists()
    gone = bk("uninstall", "--host", "copilot", cwd=repo.path)
    assert gone.stdout.splitlines()[-1] == f"removed {path} (branchkeeper created it; it held nothing else)"
    assert not path.exists()


def test_user_scope_and_scopes_a_host_lacks(repo: GitRepo) -> None:
    home = Path.home()
    assert bk("install", "--host", "codex", "--scope", "user", cwd=repo.path).returncode == 0
    assert (home / ".codex" / "hooks.json").is_file()
    local = bk("install", "--host", "cursor", "--scope", "local", cwd=repo.path)
    assert (local.returncode, local.stdout) == (4, "")
    assert local.stderr == ("branchkeeper: error: Cursor has no --scope local (project or "
                            "user)\n")


def test_auto_installs_every_host_present_and_uninstalls_them(repo: GitRepo) -> None:
    for d in (".codex", ".gemini"):
        (repo.path / d).mkdir()
    result = bk("install", "--host", "auto", cwd=repo.path)
    assert result.returncode == 0
    written = [line for line in result.stdout.splitlines() if line.startswith("wrote ")]
    assert written == [f"wrote {config_file(repo.path, h)}" for h in ("codex", "gemini")]
    none = bk("uninstall", "--host", "auto", cwd=repo.path)
    # the files held nothing but our entries (install made them): they go
    assert [line for line in none.stdout.splitlines() if line.startswith("removed ")] == [
        f"removed {config_file(repo.path, h)} (branchkeeper created it; it held nothing else)"
        for h in ("codex", "gemini")]
    assert not config_file(repo.path, "codex").exists()
    again = bk("uninstall", "--host", "auto", cwd=repo.path)
    assert (again.returncode, again.stderr) == (4, "branchkeeper: error: --host auto: no host "
                                                   "has branchkeeper hook entries; nothing to do\n")


def test_auto_without_any_host_directory_says_so(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "bare-repo")
    result = bk("install", "--host", "auto", cwd=repo.path)
    assert result.returncode == 4
    assert result.stderr == ("branchkeeper: error: --host auto: no agent host's configuration "
                             "directory was found (claude, codex, cursor, gemini, copilot); "
                             "name one with --host\n")


def test_codex_plugin_layout_matches_install() -> None:
    manifest = json.loads((ROOT / ".codex-plugin" / "plugin.json").read_text())
    assert (manifest["name"], manifest["hooks"]) == ("branchkeeper", "./hooks/codex.json")
    hooks = json.loads((ROOT / "hooks" / "codex.json").read_text())
    assert hooks == {"hooks": {e: [g] for e, g in codex_groups("branchkeeper-hook").items()}}


@pytest.mark.parametrize("host", ["claude", "codex", "cursor", "gemini", "copilot"])
def test_a_project_scope_in_a_bare_repository_says_it_has_no_work_tree(
        tmp_path: Path, host: str) -> None:
    """A bare repository is a git repository: the refusal says what it lacks (a work tree to
    hold the project's hook file), for every host alike, and changes nothing."""
    bare = GitRepo.init_bare(tmp_path / "server.git")
    before = sorted(p.name for p in bare.path.rglob("*"))
    result = bk("install", "--host", host, "--dry-run", cwd=bare.path)
    assert (result.returncode, result.stdout, result.stderr) == (
        4, "", "branchkeeper: error: --scope project needs a git repository with a work tree "
               "(a bare repository has none); or use --scope user\n")
    assert sorted(p.name for p in bare.path.rglob("*")) == before
