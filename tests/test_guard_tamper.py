# ruff: noqa: E501  (case rows are long)
"""Issue 19: the guard cannot be switched off by the agent it guards. Every protected item
through each route (shell spellings, Claude Code's write tools) is asked of a person; reading
stays free; a Write that only tightens is allowed; a person's own change is never judged; the
two-command bypass is refused at its first step."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.adapters.hosts import HOSTS as HOSTS_BY_NAME
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.tamper import config_not_weaker, decide_write
from tests.gitrepo import GitRepo
from tests.hookutil import hook_in_process

TAMPER = "R-BRANCHKEEPER-TAMPER"
POLICY = "branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n"
SETTINGS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "branchkeeper hook PreToolUse", "timeout": 10}]}]},
    "permissions": {"allow": []}}


@pytest.fixture
def repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    _, clone = remote_and_clone
    (clone.path / ".claude").mkdir()
    (clone.path / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    clone.commit("policy", files={".branchkeeper.yaml": POLICY})
    clone.git("push", "-q", "origin", "main")
    clone.worktree_add(clone.path.parent / "wt", "-b", "wt")
    (clone.path.parent / "wt" / "wip.txt").write_text("uncommitted\n")
    return clone


ASKED = [
    # the policy
    "printf 'branches:\\n  force_removal:\\n    mode: off\\n' > .branchkeeper.yaml",
    "echo 'branches: {}' >> .branchkeeper.yaml", "tee .branchkeeper.yaml < /tmp/x",
    "sed -i s/block/off/ .branchkeeper.yaml", "cp /tmp/loose.yaml .branchkeeper.yaml",
    "mv .branchkeeper.yaml old.yaml", "rm .branchkeeper.yaml", "truncate -s0 .branchkeeper.yaml",
    "git checkout HEAD~1 -- .branchkeeper.yaml", "git rm -q .branchkeeper.yaml",
    "bash -c 'echo > .branchkeeper.yaml'", "sudo tee .branchkeeper.yaml </dev/null",
    "echo .branchkeeper.yaml | xargs rm", "vim -c ':wq' .branchkeeper.yaml",
    "python3 -c \"open('.branchkeeper.yaml', 'w').write('')\"", "cd ../wt && echo x > .branchkeeper.yaml",
    "echo x > ~/.config/branchkeeper/repos.json",
    # the hooks of the hosts, and install/uninstall
    "echo '{}' > .claude/settings.json", "rm .claude/settings.local.json", "mkdir -p .codex && echo '{}' > .codex/hooks.json",
    "echo '{}' > ~/.claude/settings.json", "echo > .git/hooks/reference-transaction", "branchkeeper uninstall",
    "branchkeeper install --scope user", "python3 -m branchkeeper uninstall", "git config core.hooksPath /dev/null",
    "mv .claude .claude.bak", "git mv .claude old-claude", "mv -f .claude/ /tmp/elsewhere",
    # the package and the programs every host's hooks run
    "pip uninstall -y branchkeeper", "python3 -m pip uninstall branchkeeper", "pipx uninstall branchkeeper",
    "uv tool uninstall branchkeeper", "uv pip uninstall branchkeeper==0.1", "chmod -x .venv/bin/branchkeeper-hook",
    "rm -f ~/.local/bin/branchkeeper", "mv /usr/local/bin/branchkeeper-hook /tmp/off",
    # the escape hatch
    "touch .git/branchkeeper/yield", "mkdir -p .git/branchkeeper && touch .git/branchkeeper/yield",
    # the records and the safety copies
    "git config branch.main.branchkeeperCreator x", "git config --unset branch.main.branchkeeperCreator",
    "git config --remove-section branch.main", "git update-ref -d refs/branchkeeper/undo/1",
    "git update-ref --stdin <<EOF\ndelete refs/branchkeeper/kept/x\nEOF", "rm -rf .git/branchkeeper",
    "rm .git/branchkeeper/journal.jsonl", "git gc --prune=now", "git prune",
    "git reflog expire --expire-unreachable=now --all", "git reflog delete HEAD@{1}",
    "echo > .git/packed-refs", "sed -i /branchkeeper/d .git/config",
    # spelled so that no protected name appears as such in the text
    "echo x > .cl''aude/settings.json", "echo x > .branch\\keeper.yaml",
]
FREE = ["cat .branchkeeper.yaml", "grep cap .branchkeeper.yaml", "git diff .branchkeeper.yaml",
        "git config --get branch.main.branchkeeperCreator", "git config user.name x", "git gc",
        "git reflog", "cat .claude/settings.json", "ls .git/branchkeeper", "git prune -n",
        "python3 -c \"print(open('.branchkeeper.yaml').read())\"", "git show HEAD:.branchkeeper.yaml",
        "pip uninstall -y requests", "pip install branchkeeper", "chmod +x build.sh", "which branchkeeper-hook"]


@pytest.mark.parametrize("command", ASKED)
def test_shell_routes_are_asked(repo: GitRepo, command: str) -> None:
    d = decide_command(command, cwd=str(repo.path))
    assert (d.verdict.value, d.rule_id) == ("ask", TAMPER), d.text


@pytest.mark.parametrize("command", ASKED)
def test_the_hook_never_skips_a_tamper_route(repo: GitRepo, command: str) -> None:
    """Neither of the hook's shortcuts (the raw-bytes fast path of every host, and
    ``needs_guard``) answers a protected route without the guard."""
    from branchkeeper.adapters.hooks.fast import silent
    from branchkeeper.adapters.hooks.glue import needs_guard
    from tests.hostutil import CASES

    assert needs_guard(command, cwd=str(repo.path))
    for case in CASES:
        event, payload = case.pre(str(repo.path), command)
        spec = HOSTS_BY_NAME[case.name]().FAST.get(event)
        if spec is not None:
            assert silent(json.dumps(payload).encode(), spec) is None, (case.name, event)


def test_a_relative_write_inside_a_protected_directory(repo: GitRepo) -> None:
    """Run inside ``.claude`` (or the common dir), a write names no protected word; the
    directory does, so the hook's shortcuts pass it on and the write is asked."""
    from branchkeeper.adapters.hooks.fast import silent
    from branchkeeper.adapters.hooks.glue import needs_guard
    from tests.hostutil import claude_pre

    for where, command in ((".claude", "echo x > settings.json"), (".git", "echo x > packed-refs")):
        cwd = str(repo.path / where)
        d = decide_command(command, cwd=cwd)
        assert (d.verdict.value, d.rule_id) == ("ask", TAMPER), where
        assert needs_guard(command, cwd=cwd)
        _, payload = claude_pre(cwd, command)
        assert silent(json.dumps(payload).encode(), HOSTS_BY_NAME["claude"]().FAST["PreToolUse"]) is None
    assert decide_command("echo x > notes.txt", cwd=str(repo.path)).verdict.value == "allow"


@pytest.mark.parametrize("command", FREE)
def test_reading_stays_free(repo: GitRepo, command: str) -> None:
    assert decide_command(command, cwd=str(repo.path)).verdict.value == "allow"


def test_text_and_check_exit_code(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = repo.path / ".branchkeeper.yaml"
    d = decide_command("rm .branchkeeper.yaml", cwd=str(repo.path))
    assert d.text == (
        f"[R-BRANCHKEEPER-TAMPER] `rm .branchkeeper.yaml` would change the branchkeeper policy "
        f"({cfg}). An agent may not loosen or switch off the guard that keeps its work from being "
        "lost; a person decides.\n\n"
        "Ask a human to make this change (what a person runs outside the agent is never judged). A "
        "change that only adds protection can be written whole with the Write tool: the guard allows "
        "it when nothing weakens.")
    assert main(["check", "--cwd", str(repo.path), "--", "rm .branchkeeper.yaml"]) == 3
    assert capsys.readouterr().out.startswith("ask: R-BRANCHKEEPER-TAMPER\n")


def test_bypass_refused_at_its_first_step(repo: GitRepo) -> None:
    """printf a looser policy, then force-remove a dirty worktree: the first step is asked;
    the second stays denied while the policy stands."""
    first = "printf 'branches:\\n  force_removal:\\n    mode: off\\n' > .branchkeeper.yaml"
    assert decide_command(first, cwd=str(repo.path)).verdict.value == "ask"
    second = decide_command("git worktree remove --force ../wt", cwd=str(repo.path))
    assert (second.verdict.value, second.rule_id) == ("deny", "R-GIT-WORKTREE-REMOVE-FORCE")


def test_a_persons_own_change_is_not_judged(repo: GitRepo) -> None:
    """The guard reads what a person wrote outside the agent (no hook ran for it)."""
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  force_removal:\n    mode: 'off'\n")
    assert decide_command("git worktree remove --force ../wt", cwd=str(repo.path)).verdict.value == "allow"


@pytest.mark.parametrize(("after", "ok"), [
    ("branches:\n  wip:\n    cap: 3\n  exempt: ['users/*']\n", True),
    ("branches:\n  wip:\n    cap: 5\n  exempt: []\n  protected_names: [main, master, develop, trunk, prod]\n", True),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n  dormancy:\n    preset: strict\n", True),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n  sweep:\n    budget_ms: 100\n", True),
    ("branches:\n  wip:\n    cap: 6\n  exempt: ['users/*']\n", False),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*', 'agent-*']\n", False),
    ("branches:\n  wip:\n    cap: 5\n    mode: warn\n  exempt: ['users/*']\n", False),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n  force_removal:\n    mode: 'off'\n", False),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n  stop_guard:\n    yield_env: OTHER\n", False),
    ("branches:\n  wip:\n    cap: 5\n  exempt: ['users/*']\n  cleanup_after_merge:\n    regenerable: ['*']\n", False),
    ("not: [valid", False), ("", False),
])
def test_config_not_weaker(after: str, ok: bool) -> None:
    assert config_not_weaker(POLICY, after) is ok


def _pre(repo: GitRepo, tool: str, tool_input: dict[str, object], *,
         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, object] | None:
    ran = hook_in_process("PreToolUse", {"session_id": "s", "cwd": str(repo.path), "tool_name": tool,
                                         "tool_input": tool_input}, monkeypatch=monkeypatch, capsys=capsys)
    assert ran.returncode == 0
    return json.loads(ran.stdout)["hookSpecificOutput"] if ran.stdout else None


def test_write_tools_through_the_hook(repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    cfg = str(repo.path / ".branchkeeper.yaml")
    kw = {"monkeypatch": monkeypatch, "capsys": capsys}
    tighter = POLICY.replace("cap: 5", "cap: 4")
    assert _pre(repo, "Write", {"file_path": cfg, "content": tighter}, **kw) is None
    asked = _pre(repo, "Write", {"file_path": cfg, "content": "branches:\n  wip:\n    mode: 'off'\n"}, **kw)
    assert asked is not None and asked["permissionDecision"] == "ask"
    assert str(asked["permissionDecisionReason"]).startswith(f"[R-BRANCHKEEPER-TAMPER] `Write {cfg}` would change")
    # an edit shows no whole new content, so nothing is proven to tighten: asked
    for tool, args in (("Edit", {"old_string": "cap: 5", "new_string": "cap: 2"}),
                       ("MultiEdit", {"edits": [{"old_string": "cap: 5", "new_string": "cap: 4"}]})):
        edit = _pre(repo, tool, {"file_path": cfg, **args}, **kw)
        assert edit is not None and edit["permissionDecision"] == "ask", tool
    settings = str(repo.path / ".claude" / "settings.json")
    kept = dict(SETTINGS, permissions={"allow": ["Bash(ls)"]})
    assert _pre(repo, "Write", {"file_path": settings, "content": json.dumps(kept)}, **kw) is None
    dropped = _pre(repo, "Write", {"file_path": settings, "content": json.dumps({"hooks": {}})}, **kw)
    assert dropped is not None and dropped["permissionDecision"] == "ask"
    note = _pre(repo, "NotebookEdit", {"notebook_path": str(repo.path / ".git" / "branchkeeper" / "x.ipynb"),
                                       "new_source": "x"}, **kw)
    assert note is not None and note["permissionDecision"] == "ask"
    assert _pre(repo, "Write", {"file_path": str(repo.path / "src.py"), "content": "x"}, **kw) is None


def test_decide_write_paths(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(Path.home())
    assert decide_write("notes.md", cwd=str(repo.path), content="x", home=home).verdict.value == "allow"
    for path in (".git/branchkeeper/yield", "../wt/.branchkeeper.yaml", ".codex/config.toml",
                 ".claude-plugin/plugin.json", ".github/hooks/x.json", f"{home}/.config/branchkeeper/r.json"):
        d = decide_write(path, cwd=str(repo.path), content="{}", home=home, env=os.environ)
        assert (d.verdict.value, d.rule_id) == ("ask", TAMPER), path
    # a host's hook settings: a new file, or one that keeps branchkeeper's entries, weakens nothing
    assert decide_write(".cursor/hooks.json", cwd=str(repo.path), content="{}", home=home).verdict.value == "allow"
    (repo.path / ".cursor").mkdir()
    (repo.path / ".cursor" / "hooks.json").write_text(json.dumps(SETTINGS))
    d = decide_write(".cursor/hooks.json", cwd=str(repo.path), content="{}", home=home)
    assert (d.verdict.value, d.rule_id) == ("ask", TAMPER)


def test_patch_tools(repo: GitRepo) -> None:
    """Codex's apply_patch names the paths it writes; a protected one is asked."""
    from branchkeeper.policy.decision import ALLOW
    from branchkeeper.policy.tamper import decide_patch, patch_paths

    patch = ("*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: .branchkeeper.yaml\n"
             "+branches: {}\n*** End Patch\n")
    assert patch_paths(patch) == ["src/a.py", ".branchkeeper.yaml"]
    asked = decide_patch(patch, cwd=str(repo.path))
    assert (asked.verdict.value, asked.rule_id) == ("ask", TAMPER)
    assert decide_patch("*** Update File: src/a.py\n", cwd=str(repo.path)) is ALLOW


#: Each host's file-write tool event before it runs: (tool name in the text, payload changes).
def _write_event(host: str, cwd: str, cfg: str) -> tuple[str, str, dict[str, object]]:
    from tests import hostutil as H

    body = "branches: {}\n"
    if host == "claude":
        event, p = H.claude_pre(cwd, "ignored")
        return "Write", event, {**p, "tool_name": "Write",
                                "tool_input": {"file_path": cfg, "content": body}}
    if host == "codex":
        event, p = H.codex_pre(cwd, "ignored")
        return "apply_patch", event, {**p, "tool_name": "apply_patch", "tool_input": {
            "command": f"*** Begin Patch\n*** Update File: {cfg}\n@@\n-x\n+y\n*** End Patch\n"}}
    if host == "cursor":
        _, p = H.cursor_pre(cwd, "ignored")
        p = {k: v for k, v in p.items() if k not in ("command", "sandbox")}
        return "Write", "preToolUse", {**p, "hook_event_name": "preToolUse", "tool_name": "Write",
                                       "tool_input": {"file_path": cfg, "content": body}}
    if host == "gemini":
        event, p = H.gemini_pre(cwd, "ignored")
        return "write_file", event, {**p, "tool_name": "write_file",
                                     "tool_input": {"file_path": cfg, "content": body}}
    event, p = H.copilot_pre(cwd, "ignored")
    return "create", event, {**p, "toolName": "create",
                             "toolArgs": {"path": cfg, "file_text": body}}


def _wire(host: str, event: str, text: str) -> object:
    """What ``host`` must read back for an ask whose text is ``text`` on ``event``: the question
    itself where the host puts it to the person, else a deny that says to ask a human."""
    from branchkeeper.adapters.codex.wire import ASK_NOTE as CODEX
    from branchkeeper.adapters.cursor.wire import ASK_NOTE as CURSOR
    from branchkeeper.adapters.gemini.wire import ASK_NOTE as GEMINI

    if host == "claude":
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                       "permissionDecisionReason": text}}
    if host == "codex":
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": f"{text}\n\n{CODEX}"}}
    if host == "cursor":
        if event == "beforeShellExecution":
            return {"permission": "ask", "user_message": text, "agent_message": text}
        denied = f"{text}\n\n{CURSOR}"
        return {"permission": "deny", "user_message": denied, "agent_message": denied}
    if host == "gemini":
        return {"decision": "deny", "reason": f"{text}\n\n{GEMINI}"}
    return {"permissionDecision": "ask", "permissionDecisionReason": text}


HOSTS = ["claude", "codex", "cursor", "gemini", "copilot"]


@pytest.mark.parametrize("host", HOSTS)
def test_every_host_shell_route(repo: GitRepo, host: str) -> None:
    """The bypass's first step through each installed host's shell-tool event: asked where the
    host asks a person (Claude Code, Cursor before a shell command, Copilot), else denied with
    the words to ask a human; and the same command text as ``check`` gives."""
    from tests.hostutil import CASES, fire, install

    install(repo.path, host)
    command = "printf 'branches:\\n  force_removal:\\n    mode: off\\n' > .branchkeeper.yaml"
    text = decide_command(command, cwd=str(repo.path)).text
    case = next(c for c in CASES if c.name == host)
    event, payload = case.pre(str(repo.path), command)
    done = fire(repo.path, host, event, payload)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == _wire(host, event, text)


@pytest.mark.parametrize("host", HOSTS)
def test_every_host_file_write(repo: GitRepo, host: str) -> None:
    """Each host's file-write tool (Claude Code's Write, Codex's apply_patch, Cursor's Write,
    Gemini's write_file, Copilot's create) reaches the tamper rule through the entry
    ``install`` wrote, before the write runs; a write elsewhere stays silent."""
    from tests.hostutil import CASES, fire, install

    install(repo.path, host)
    cfg = str(repo.path / ".branchkeeper.yaml")
    tool, event, payload = _write_event(host, str(repo.path), cfg)
    text = decide_write(cfg, cwd=str(repo.path), content=None, tool=tool, home=str(Path.home()),
                        env=os.environ).text
    done = fire(repo.path, host, event, payload)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == _wire(host, event, text)
    elsewhere = json.loads(json.dumps(payload).replace(".branchkeeper.yaml", "notes.md"))
    quiet = fire(repo.path, host, event, elsewhere)
    silent = next(c for c in CASES if c.name == host).silent
    assert (quiet.returncode, quiet.stdout) == (0, silent), quiet.stderr
