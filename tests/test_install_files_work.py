"""The untracked files ``branchkeeper install`` writes are its own output, not work, judged by
their content: one with anything of the user's in it is work (F07); any other
file under a host's directory (``.claude/``, ``.codex/``, ...) is work for every reader: the
sweep's LOST WORK RISK, --fail-on-risk, retire, the guard and the Stop guard (real
repositories)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from branchkeeper.actions.worktree_removal import git_worktree_remove
from branchkeeper.adapters.cli import main
from branchkeeper.analysis.hidden_edits import install_written
from branchkeeper.model.hook_command import INSTALL_FILES, install_output
from tests.cleanuputil import cli, cli_json
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike, run_hook
from tests.reaputil import add_worktree, age_files

HOSTS = ("claude", "codex", "cursor", "gemini", "copilot")


def _merged_worktree(tmp_path: Path) -> tuple[GitRepo, Path]:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("init", files={"README.md": "hello\n"}, days_ago=9)
    repo.switch("feat", create=True)
    repo.commit("feat", files={"feat.txt": "f\n"}, days_ago=8)
    repo.switch("main")
    repo.merge("feat", days_ago=7)
    wt = tmp_path / "wt"
    add_worktree(repo, wt, start="feat", hours=400)
    return repo, wt


def _install_everywhere(wt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for host in HOSTS:
        assert main(["-C", str(wt), "install", "--host", host]) == 0
    assert main(["-C", str(wt), "install", "--host", "claude", "--scope", "local"]) == 0
    capsys.readouterr()


def _untracked(wt: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=wt, capture_output=True,
                         text=True, check=True).stdout
    return sorted(line[3:] for line in out.splitlines() if line.startswith("?? "))


def test_the_install_files_are_not_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _install_everywhere(wt, capsys)
    assert _untracked(wt) == sorted(INSTALL_FILES)  # what the install wrote, exactly
    age_files(wt, 400)
    code, out, _ = cli(capsys, repo, "sweep")
    assert (code, out.count("LOST WORK RISK"), "LOST WORK RISK: 0" in out) == (0, 1, True)
    assert cli(capsys, repo, "sweep", "--fail-on-risk")[0] == 0
    code, doc = cli_json(capsys, repo, "worktree", "list")
    (row,) = [w for w in doc["worktrees"] if w["path"] == str(wt)]
    assert (code, row["dirty"], row["retire"]["disposition"]) == (
        0, {"tracked": 0, "untracked": 0}, "REMOVABLE")
    # (the tamper rule still asks a person about deleting the hooks' settings file: another
    # rule; the removal rule finds nothing a removal would lose)
    checked = check_and_hook_alike(f"git worktree remove --force {wt}", repo.path, monkeypatch,
                                   capsys)
    assert checked["verdict"] == "allow"
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[0]) == (0, f"removed worktree {wt}")
    assert not wt.exists()


def test_other_files_under_host_directories_are_work(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _install_everywhere(wt, capsys)
    (wt / ".claude" / "agents").mkdir()
    (wt / ".claude" / "agents" / "reviewer.md").write_text("a reviewer agent\n")
    (wt / ".codex" / "config.toml").write_text("model = 'x'\n")
    age_files(wt, 400)
    work = ".claude/agents/reviewer.md .codex/config.toml"
    code, out, _ = cli(capsys, repo, "sweep")
    block = out[out.index("LOST WORK RISK:"):].split("\n\n")[0]
    assert (code, block) == (
        0, "LOST WORK RISK: 1 dirty worktree(s) exist only in this clone\n"
           f"  worktree {wt}  2 uncommitted or untracked file(s): {work.replace(' ', ', ')}\n"
           f"    secure it: git -C {wt} add -- {work} && git -C {wt} commit -m 'WIP: save work'")
    assert cli(capsys, repo, "sweep", "--fail-on-risk")[0] == 1
    code, out, _ = cli(capsys, repo, "worktree", "retire", str(wt))
    assert (code, out.splitlines()[:2]) == (3, [f"kept worktree {wt}: SKIP_DIRTY",
                                               "  blocker: SKIP_DIRTY: 2 untracked file(s): "
                                               ".claude/agents/reviewer.md, .codex/config.toml"])
    checked = check_and_hook_alike(f"rm -rf {wt}", repo.path, monkeypatch, capsys)
    assert checked["verdict"] == "deny"
    assert ("uncommitted changes or untracked files:\n  - .claude/agents/reviewer.md\n"
            "  - .codex/config.toml\n") in checked["text"]


def test_a_refused_removal_puts_the_install_files_back(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _install_everywhere(wt, capsys)
    before = {f: (wt / f).read_bytes() for f in INSTALL_FILES}
    (wt / "notes.txt").write_text("work\n")
    refused = git_worktree_remove(repo.path, wt)
    assert "contains modified or untracked files" in refused
    assert {f: (wt / f).read_bytes() for f in INSTALL_FILES} == before
    assert _untracked(wt) == sorted([*INSTALL_FILES, "notes.txt"])


def test_report_counts_the_host_directory_file_and_not_the_install_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, wt = _merged_worktree(tmp_path)
    _install_everywhere(wt, capsys)

    def report() -> tuple[int, int]:
        assert main(["report", "--json", "--repo", str(repo.path)]) == 0
        (row,) = json.loads(capsys.readouterr().out)["repositories"]
        return row["lost_work"], row["dirty_worktrees"]

    assert report() == (0, 0)
    (wt / ".claude" / "commands").mkdir()
    (wt / ".claude" / "commands" / "ship.md").write_text("ship it\n")
    assert report() == (1, 1)


_USER_FILES = {
    # Claude Code's own local settings ("always allow" rules); install never ran
    "claude-local": (".claude/settings.local.json",
                     '{"permissions":{"allow":["Bash(npm test:*)","Bash(make deploy)"]}}\n'),
    # a hand-written Gemini CLI configuration (an MCP server)
    "gemini-hand-written": (".gemini/settings.json",
                            '{"mcpServers":{"db":{"command":"my-db-server"}}}\n'),
}


def _user_file(wt: Path, case: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, bytes]:
    if case == "claude-installed-then-edited":
        assert main(["-C", str(wt), "install", "--host", "claude"]) == 0
        capsys.readouterr()
        name = ".claude/settings.json"
        data = json.loads((wt / name).read_text())
        (wt / name).write_text(json.dumps({**data, "model": "opus"}, indent=2) + "\n")
    else:
        name, text = _USER_FILES[case]
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
    return name, (wt / name).read_bytes()


@pytest.mark.parametrize("case", [*_USER_FILES, "claude-installed-then-edited"])
def test_an_install_named_file_holding_the_users_content_is_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        case: str) -> None:
    repo, wt = _merged_worktree(tmp_path)
    name, data = _user_file(wt, case, capsys)
    age_files(wt, 400)
    code, out, _ = cli(capsys, repo, "sweep")
    block = out[out.index("LOST WORK RISK:"):].split("\n\n")[0]
    assert (code, block) == (
        0, "LOST WORK RISK: 1 dirty worktree(s) exist only in this clone\n"
           f"  worktree {wt}  1 uncommitted or untracked file(s): {name}\n"
           f"    secure it: git -C {wt} add -- {name} && git -C {wt} commit -m 'WIP: save work'")
    code, doc = cli_json(capsys, repo, "worktree", "list")
    (row,) = [w for w in doc["worktrees"] if w["path"] == str(wt)]
    assert (row["dirty"], row["retire"]["disposition"]) == (
        {"tracked": 0, "untracked": 1}, "SKIP_DIRTY")
    checked = check_and_hook_alike(f"git worktree remove --force {wt}", repo.path, monkeypatch,
                                   capsys)
    assert checked["verdict"] == "deny"
    assert f"uncommitted changes or untracked files:\n  - {name}\n" in checked["text"]
    assert cli(capsys, repo, "sweep", "--clean")[0] == 0
    assert (wt / name).read_bytes() == data
    removed = run_hook("WorktreeRemove", {"session_id": "S7", "cwd": str(repo.path),
                                          "hook_event_name": "WorktreeRemove",
                                          "worktree_path": str(wt)})
    assert removed.returncode == 0, removed.stderr
    assert (wt / name).read_bytes() == data
    assert git_worktree_remove(repo.path, wt) == (
        f"fatal: '{wt}' contains modified or untracked files, use --force to delete it")
    assert (wt / name).read_bytes() == data


@pytest.mark.parametrize(("text", "ours"), [
    ("{}", True),
    ('{"hooks": {}}', True),
    ('{"version": 1, "hooks": {"stop": [{"command": "branchkeeper-hook cursor stop"}]}}', True),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": '
     '"branchkeeper-hook claude Stop", "timeout": 5}]}]}}', True),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": '
     '"branchkeeper-hook claude Stop"}, {"type": "command", "command": "make lint"}]}]}}', False),
    ('{"hooks": {"stop": [{"command": "branchkeeper-hook cursor stop"}, '
     '{"command": "notify-send done"}]}}', False),
    ('{"hooks": {"Stop": [{"matcher": "", "note": "mine", "hooks": []}]}}', False),
    ('{"version": 2, "hooks": {}}', False),
    ('{"version": true}', False),
    ('{"hooks": {}, "model": "opus"}', False),
    ('{"hooks": []}', False),
    ("[]", False),
    ("{not json", False),
    ("", False),
    ("{}" + " " * (1 << 20), False),  # longer than what is read: work
])
def test_install_output_is_only_our_hook_entries(text: str, ours: bool) -> None:
    assert install_output(".claude/settings.json", text.encode()) is ours


def test_install_written_reads_only_install_files_as_regular_files(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / "other.json").write_text("{}")
    (tmp_path / ".claude" / "settings.local.json").symlink_to(tmp_path / "other.json")
    (tmp_path / ".claude" / "settings.json").mkdir()
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_bytes(b"\xff{}")
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "hooks.json").write_text("{}")
    assert [install_written(tmp_path, p) for p in (
        "other.json", ".claude/settings.local.json", ".claude/settings.json",
        ".gemini/settings.json", ".codex/hooks.json", ".cursor/hooks.json")] == [
        False, False, False, False, True, False]
