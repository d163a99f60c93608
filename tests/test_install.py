"""``branchkeeper install`` / ``uninstall`` for Claude Code: merge into its settings, remove only
ours (the other hosts: tests/test_install_hosts.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from branchkeeper.adapters.claude.install import HOOK_SPECS, desired_groups
from branchkeeper.adapters.hooks.install import is_ours
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = {
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                      "command": "./lint.sh", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def bk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "branchkeeper", *args], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial")
    return repo


def test_install_fresh_then_idempotent_then_uninstall(repo: GitRepo) -> None:
    settings = repo.path / ".claude" / "settings.json"
    first = bk("install", cwd=repo.path)
    expected_lines = [
        f"+ {event}{f' [{matcher}]' if matcher else ''}: branchkeeper-hook claude {event} "
        f"(timeout {timeout} s)" for event, matcher, timeout in HOOK_SPECS
    ]
    assert (first.returncode, first.stdout, first.stderr) == (
        0, "\n".join([*expected_lines, f"wrote {settings}"]) + "\n", "")
    assert json.loads(settings.read_text()) == {
        "hooks": {event: [group] for event, group in desired_groups("branchkeeper-hook").items()}}
    before = settings.read_bytes()
    second = bk("install", cwd=repo.path)
    assert second.stdout == f"{settings}: already installed; nothing changed\n"
    assert settings.read_bytes() == before
    removed = bk("uninstall", cwd=repo.path)
    assert removed.returncode == 0
    assert removed.stdout.splitlines()[0] == (
        "- PreToolUse [Bash|Agent|Task|Write|Edit|MultiEdit|NotebookEdit]: branchkeeper-hook claude "
        "PreToolUse (timeout 10 s)")
    assert removed.stdout.splitlines()[-1] == (
        f"removed {settings} (branchkeeper created it; it held nothing else)")
    assert not settings.exists()  # install created it; nothing of anyone else's was in it
    again = bk("uninstall", cwd=repo.path)
    assert (again.returncode, again.stdout) == (0, f"{settings}: does not exist; nothing changed\n")


def test_foreign_settings_survive_a_round_trip(repo: GitRepo) -> None:
    settings = repo.path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(FOREIGN))
    assert bk("install", "--scope", "local", cwd=repo.path).returncode == 0
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == FOREIGN["permissions"]
    assert merged["hooks"]["PreToolUse"][0] == FOREIGN["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["PreToolUse"][1] == desired_groups("branchkeeper-hook")["PreToolUse"]
    assert merged["hooks"]["Notification"] == FOREIGN["hooks"]["Notification"]
    assert bk("uninstall", "--scope", "local", cwd=repo.path).returncode == 0
    assert json.loads(settings.read_text()) == FOREIGN


def test_dry_run_writes_nothing(repo: GitRepo) -> None:
    result = bk("install", "--dry-run", cwd=repo.path)
    settings = repo.path / ".claude" / "settings.json"
    assert result.stdout.endswith(f"dry run: {settings} was not written\n")
    assert not settings.exists()


def test_broken_file_is_an_error_and_kept(repo: GitRepo) -> None:
    settings = repo.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    for command in ("install", "uninstall"):
        result = bk(command, cwd=repo.path)
        assert result.returncode == 4 and result.stdout == ""
        assert result.stderr.startswith(f"branchkeeper: error: {settings}: not valid JSON")
        assert settings.read_text() == "{ not json"


def test_user_scope_and_changed_command_replaces_ours(repo: GitRepo) -> None:
    home = Path.home()
    assert bk("install", "--scope", "user", cwd=repo.path).returncode == 0
    result = bk("install", "--scope", "user", "--command", "absolute", cwd=repo.path)
    assert result.stdout.startswith("~ PreToolUse [Bash|Agent|Task|Write|Edit|MultiEdit|NotebookEdit]: ")
    data = json.loads((home / ".claude" / "settings.json").read_text())
    assert len(data["hooks"]["PreToolUse"]) == 1
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith("/") and is_ours(command, "claude", "PreToolUse")
    assert command.endswith("/bin/branchkeeper-hook claude PreToolUse")


@pytest.mark.parametrize(("command", "ours"), [
    ("branchkeeper-hook claude Stop", True),
    ("'/opt/my venv/bin/branchkeeper-hook' claude Stop", True),
    ("branchkeeper hook Stop", True),  # what earlier versions wrote
    ("branchkeeper hook --host claude Stop", True),
    ("/opt/venv/bin/branchkeeper hook Stop", True),
    ("/usr/bin/python3 -m branchkeeper hook Stop", True),
    ("branchkeeper-hook codex Stop", False),
    ("branchkeeper-hook claude PreToolUse", False),
    ("branchkeeper hook PreToolUse", False),
    ("./lint.sh hook Stop", False),
    ("echo branchkeeper hook Stop", False),
    ("'unbalanced", False),
])
def test_is_ours(command: str, ours: bool) -> None:
    assert is_ours(command, "claude", "Stop") is ours


def test_reinstall_replaces_the_entries_earlier_versions_wrote(repo: GitRepo) -> None:
    settings = repo.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "branchkeeper hook Stop",
                                          "timeout": 15}]}]}}
    settings.write_text(json.dumps(old))
    result = bk("install", cwd=repo.path)
    assert "~ Stop: branchkeeper-hook claude Stop (timeout 15 s)" in result.stdout.splitlines()
    assert json.loads(settings.read_text())["hooks"]["Stop"] == [
        desired_groups("branchkeeper-hook")["Stop"]]


def test_plugin_layout_matches_install() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["name"] == "branchkeeper"
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks == {event: [group] for event, group in
                     desired_groups("branchkeeper-hook").items()}


def test_command_path_with_spaces_is_quoted_and_uninstalls(tmp_path: Path) -> None:
    import json as _json
    import subprocess as _sp
    import sys as _sys

    repo = tmp_path / "repo"
    _sp.run(["git", "init", "-q", str(repo)], check=True)
    prog = tmp_path / "my tools" / "branchkeeper"
    prog.parent.mkdir()
    prog.write_text("#!/bin/sh\nexit 0\n")
    prog.chmod(0o755)
    run = [_sys.executable, "-m", "branchkeeper", "-C", str(repo)]
    assert _sp.run([*run, "install", "--command", str(prog)], capture_output=True).returncode == 0
    settings = _json.loads((repo / ".claude" / "settings.json").read_text())
    commands = {h["command"] for groups in settings["hooks"].values() for g in groups
                for h in g["hooks"]}
    assert f"'{prog}' hook PreToolUse" in commands
    assert _sp.run([*run, "uninstall"], capture_output=True).returncode == 0
    assert not (repo / ".claude" / "settings.json").exists()  # it held only our hooks


def test_install_byte_compiles_the_hook_path(repo: GitRepo, tmp_path: Path) -> None:
    """``install`` writes the package's bytecode (an editable install under
    PYTHONDONTWRITEBYTECODE has none), so no hook call compiles source; a dry run does not.
    The bytecode goes to a private PYTHONPYCACHEPREFIX so other test processes cannot write it."""
    prefix = tmp_path / "pyc"
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}

    def install(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "branchkeeper", "install", *extra],
                              cwd=repo.path, capture_output=True, text=True, env=env)

    assert install("--dry-run").returncode == 0
    assert list(prefix.rglob("creation.*.pyc")) == []
    assert install().returncode == 0
    assert [p.name for p in prefix.rglob("creation.*.pyc")] == [
        f"creation.{sys.implementation.cache_tag}.pyc"]


@pytest.mark.parametrize("argv", [["install"], ["uninstall"], ["config"], ["config", "check"],
                                  ["config", "show"], ["config", "init"]])
def test_help_has_a_description(argv: list[str], tmp_path: Path) -> None:
    out = bk(*argv, "--help", cwd=tmp_path).stdout
    usage, description = out.split("\n\n")[:2]
    assert usage.startswith(f"usage: branchkeeper {' '.join(argv)}")
    assert not description.startswith(("options:", "positional arguments:"))
    assert len(description.split()) >= 8, description
