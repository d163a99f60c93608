"""End to end: the real ``branchkeeper hook EVENT`` process against real repositories; where a
test replaces what the hook decides, the same entry point runs in this process."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace as V

import pytest

from branchkeeper.adapters.hooks import glue as events
from branchkeeper.adapters.hooks import stopping
from branchkeeper.adapters.hooks.event import HookEvent
from branchkeeper.state.session import state_filename
from tests.gitrepo import GitRepo
from tests.hookutil import HookRun, hook_in_process, pruned_now, run_hook


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial", files={"README.md": "hi\n"})
    return repo


def _state(repo: GitRepo, session: str) -> dict[str, object]:
    path = repo.path / ".git" / "branchkeeper" / "sessions" / state_filename(session)
    data: dict[str, object] = json.loads(path.read_text())
    return data


def _records(repo: GitRepo) -> str:
    return repo.git("config", "--get-regexp", r"^branch\..*\.branchkeeper", check=False)


BAD_INPUTS = [
    (b"not json", "malformed hook input: input is not valid JSON"),
    (b'["a"]', "malformed hook input: input must be a JSON object, not list"),
    (b'{"session_id": 1, "cwd": "/"}', "malformed hook input: field 'session_id' must be"),
    (b'{"session_id": "s", "cwd": "/", "tool_name": "Bash", "tool_input": []}',
     "malformed hook input: field 'tool_input' must be a JSON object"),
    (b'{"session_id": "s\xff\xfe", "cwd": "\xff"}', "malformed hook input: field 'cwd' must"),
    (b"{" * 100_000, "malformed hook input: input"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_INPUTS)
def test_bad_input_fails_open(raw: bytes, message: str) -> None:
    result = run_hook("PreToolUse", None, raw=raw)
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.decode().startswith(f"branchkeeper hook PreToolUse: ignored: {message}")
    assert result.stderr.count(b"\n") == 1 and b"Traceback" not in result.stderr


def test_malformed_input_is_logged_in_the_repository_it_ran_in(repo: GitRepo) -> None:
    # The event JSON is unreadable, so it names no cwd: the log goes to the repository the host
    # started the hook in (docs/claude-code-hooks.md).
    result = run_hook("PreToolUse", None, raw=b"not json", cwd=repo.path)
    assert (result.returncode, result.stdout) == (0, b"")
    (line,) = (repo.path / ".git" / "branchkeeper" / "hook.log").read_text().splitlines()
    entry = json.loads(line)
    assert (entry["event"], entry["message"]) == (
        "PreToolUse",
        "malformed hook input: input is not valid JSON (Expecting value: line 1 column 1 (char 0))")
    elsewhere = run_hook("PreToolUse", None, raw=b"[]", cwd=repo.path,
                         env={"CLAUDE_PROJECT_DIR": str(repo.path)})
    assert elsewhere.returncode == 0
    log = (repo.path / ".git" / "branchkeeper" / "hook.log").read_text().splitlines()
    assert json.loads(log[-1])["message"] == (
        "malformed hook input: input must be a JSON object, not list")


def test_unknown_event_fails_open() -> None:
    result = run_hook("Bogus", {"session_id": "s", "cwd": "/"})
    assert (result.returncode, result.stdout, result.stderr) == (
        0, b"", b"branchkeeper hook Bogus: ignored: unknown hook event 'Bogus'\n")


def test_internal_error_fails_open_and_is_logged(repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # A guard that raises, compiled under its own file name: the log names where it failed.
    code: dict[str, object] = {}
    exec(compile("def bash_verdict(event):\n    raise KeyError('x')\n", "bad_plugin.py", "exec"),
         code)
    monkeypatch.setattr(events, "bash_verdict", code["bash_verdict"])
    payload = {"session_id": "s", "cwd": str(repo.path), "tool_name": "Bash",
               "tool_input": {"command": "git status"}}
    result = hook_in_process("PreToolUse", payload, monkeypatch=monkeypatch, capsys=capsys)
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.decode().startswith(
        "branchkeeper hook PreToolUse: ignored: internal error: KeyError: 'x' at bad_plugin.py:2")
    log = (repo.path / ".git" / "branchkeeper" / "hook.log").read_text().splitlines()
    assert json.loads(log[-1])["message"] == "internal error: KeyError: 'x' at bad_plugin.py:2"


def test_verdicts_map_to_the_wire(repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    def bash_verdict(event: HookEvent) -> V:
        c = event.command
        if "deny" in c:
            return V(verdict="deny", reason="over the cap")
        if "warn" in c:
            return V(verdict="warn", reason="same stem as x")
        return V(verdict="allow", reason="")

    def creation_verdict(name: str | None, *, cwd: Path) -> V:
        return V(verdict="deny", reason=f"cap reached for {name}")

    monkeypatch.setattr(events, "bash_verdict", bash_verdict)
    monkeypatch.setattr(events, "creation_verdict", creation_verdict)

    def pre(tool: str, tool_input: dict[str, object]) -> HookRun:
        return hook_in_process("PreToolUse", {"session_id": "s", "cwd": str(repo.path),
                                              "tool_name": tool, "tool_input": tool_input},
                               monkeypatch=monkeypatch, capsys=capsys)

    assert pre("Bash", {"command": "git switch -c deny"}).stdout == (
        b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
        b'"permissionDecisionReason":"over the cap"}}')
    assert pre("Bash", {"command": "git switch -c warn"}).stdout == (
        b'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
        b'"additionalContext":"same stem as x"}}')
    assert pre("Bash", {"command": "ls"}).stdout == b""
    assert pre("Agent", {"prompt": "p", "isolation": "worktree"}).stdout == (
        b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
        b'"permissionDecisionReason":"cap reached for None"}}')
    assert pre("Agent", {"prompt": "p"}).stdout == b""
    create = hook_in_process("WorktreeCreate", {"session_id": "s", "cwd": str(repo.path),
                                                "name": "n"}, monkeypatch=monkeypatch, capsys=capsys)
    assert (create.returncode, create.stdout, create.stderr) == (
        2, b"", b"cap reached for worktree-n\n")
    assert not (repo.path / ".claude").exists()


def test_no_plugin_means_quiet(repo: GitRepo) -> None:
    pruned_now(repo.path)  # the session-start prune has run: the routine has nothing to say
    for event, extra in [("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}}),
                         ("SessionStart", {"source": "startup"}),
                         ("Stop", {"stop_hook_active": False}),
                         ("SubagentStop", {"agent_id": "a", "stop_hook_active": False})]:
        result = run_hook(event, {"session_id": "s", "cwd": str(repo.path), **extra})
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_user_prompt_submit_counts_turns(repo: GitRepo) -> None:
    payload = {"session_id": "sess-1", "cwd": str(repo.path), "prompt": "hi"}
    for _ in range(2):
        result = run_hook("UserPromptSubmit", payload)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert _state(repo, "sess-1")["turn"] == 2


def test_parallel_writers_keep_state_exact(repo: GitRepo) -> None:
    payload = {"session_id": "par", "cwd": str(repo.path), "prompt": "hi"}
    with ThreadPoolExecutor(max_workers=10) as pool:
        results = list(pool.map(lambda _: run_hook("UserPromptSubmit", payload), range(10)))
    assert [(r.returncode, r.stdout, r.stderr) for r in results] == [(0, b"", b"")] * 10
    assert _state(repo, "par")["turn"] == 10


def test_corrupt_state_is_replaced(repo: GitRepo) -> None:
    path = repo.path / ".git" / "branchkeeper" / "sessions" / state_filename("c")
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    result = run_hook("UserPromptSubmit", {"session_id": "c", "cwd": str(repo.path)})
    assert (result.returncode, result.stdout) == (0, b"")
    assert _state(repo, "c")["turn"] == 1
    assert "corrupt session state" in (repo.path / ".git/branchkeeper/hook.log").read_text()


def test_hostile_session_id_stays_in_sessions_dir(repo: GitRepo) -> None:
    result = run_hook("UserPromptSubmit", {"session_id": "../../../../evil", "cwd": str(repo.path)})
    assert result.returncode == 0
    files = sorted(p.name for p in (repo.path / ".git/branchkeeper/sessions").iterdir())
    assert files == [".expiry-mark", state_filename("../../../../evil"),
                     state_filename("../../../../evil")[:-5] + ".lock"]
    assert files[1].startswith("evil.")


def test_touch_records_once_per_branch_per_session(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "feature.v2/ü")
    bash = {"session_id": "s1", "cwd": str(repo.path), "tool_name": "Bash",
            "tool_input": {"command": "git commit -q --allow-empty -m x"},
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    write = {"session_id": "s1", "cwd": str(repo.path), "tool_name": "Write",
             "tool_input": {"file_path": str(repo.path / "new" / "f.txt"), "content": "x"}}
    for payload in (bash, bash, write):
        result = run_hook("PostToolUse", payload)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    sub = {**write, "agent_id": "a7"}
    assert run_hook("PostToolUse", sub).returncode == 0
    assert _records(repo) == (
        "branch.feature.v2/ü.branchkeepertouchedby s1:\n"
        "branch.feature.v2/ü.branchkeepertouchedby s1:a7")
    assert _state(repo, "s1")["touched"] == {"": ["feature.v2/ü"], "a7": ["feature.v2/ü"]}
    # not a touch: a read-only git command, and a failed one
    repo.git("switch", "-q", "main")
    for command, response in [("git status", {}), ("git commit -m x", {"interrupted": True})]:
        payload = {**bash, "tool_input": {"command": command}, "tool_response": response}
        assert run_hook("PostToolUse", payload).returncode == 0
    assert "branch.main" not in _records(repo)


def test_creator_record_after_bash_creation(repo: GitRepo) -> None:
    repo.git("branch", "made-here")
    payload = {"session_id": "s2", "agent_id": "ag", "cwd": str(repo.path), "tool_name": "Bash",
               "tool_input": {"command": "git branch made-here && git branch -D gone; "
                                         "git switch -c never-made"}}
    result = run_hook("PostToolUse", payload)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    lines = _records(repo).splitlines()
    assert lines[0] == "branch.made-here.branchkeepercreator s2:ag"
    assert lines[1].startswith("branch.made-here.branchkeepercreated ")
    # switch is a touch subcommand: the checkout's branch afterwards (main) is touched
    assert lines[2:] == ["branch.made-here.branchkeeperroute bash",
                         "branch.main.branchkeepertouchedby s2:ag"]


def test_worktree_create_and_remove(repo: GitRepo) -> None:
    payload = {"session_id": "s3", "cwd": str(repo.path), "name": "feat-1"}
    path = repo.path / ".claude" / "worktrees" / "feat-1"
    first = run_hook("WorktreeCreate", payload)
    assert (first.returncode, first.stdout, first.stderr) == (0, f"{path}\n".encode(), b"")
    assert repo.git("-C", str(path), "symbolic-ref", "HEAD") == "refs/heads/worktree-feat-1"
    assert repo.rev("worktree-feat-1") == repo.rev("main")
    again = run_hook("WorktreeCreate", payload)
    assert (again.returncode, again.stdout, again.stderr) == (0, f"{path}\n".encode(), b"")
    lines = _records(repo).splitlines()
    assert lines[0] == "branch.worktree-feat-1.branchkeepercreator s3:"
    assert lines[2] == "branch.worktree-feat-1.branchkeeperroute worktree_create"
    assert repo.git("status", "--porcelain") == ""  # .claude/worktrees/ is excluded

    (path / "dirty.txt").write_text("work\n")
    remove = {"session_id": "s3", "cwd": str(repo.path), "worktree_path": str(path)}
    refused = run_hook("WorktreeRemove", remove)
    assert (refused.returncode, refused.stdout) == (0, b"")
    assert refused.stderr.decode().startswith(f"branchkeeper: kept worktree {path}: git refused")
    assert (path / "dirty.txt").read_text() == "work\n"

    (path / "dirty.txt").unlink()
    removed = run_hook("WorktreeRemove", remove)
    assert (removed.returncode, removed.stdout) == (0, b"")
    # created by WorktreeCreate and never moved from main: unstarted, nothing to lose, so the
    # delete the hook runs removes it (behind a bundle)
    assert removed.stderr.decode().startswith(
        "branchkeeper: deleted branch worktree-feat-1 (unstarted: at the same tip as main, "
        "nothing to lose); restore: git fetch ")
    assert not path.exists()
    assert not repo.has_ref("refs/heads/worktree-feat-1")


@pytest.mark.parametrize("name", ["../escape", "-x", "a/b", "", "x.lock", "a..b"])
def test_worktree_create_refuses_bad_names(repo: GitRepo, name: str) -> None:
    result = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(repo.path), "name": name})
    assert result.returncode != 0 and result.stdout == b""
    assert not (repo.path / ".claude").exists()


def test_worktree_create_outside_a_repository_aborts(tmp_path: Path) -> None:
    result = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(tmp_path), "name": "x"})
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr == (b"branchkeeper: WorktreeCreate failed, the worktree was not created: "
                             + str(tmp_path).encode() + b": not inside a git repository (fatal: "
                             b"not a git repository (or any of the parent directories): .git)\n")


def test_stop_gives_way_after_three_blocks(repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    def stop_verdict(event: HookEvent) -> V:
        return V(verdict="deny", reason="commit dirty.txt on x")

    def abandoned_at_stop(event: HookEvent, verdict: object) -> None:
        with open(event.cwd / "abandoned", "a") as handle:
            handle.write(event.thread + "\n")

    monkeypatch.setattr(stopping, "stop_verdict", stop_verdict)
    monkeypatch.setattr(stopping, "abandoned_at_stop", abandoned_at_stop)
    payload = {"session_id": "s4", "cwd": str(repo.path), "stop_hook_active": False}
    outs = [hook_in_process("Stop", payload, monkeypatch=monkeypatch, capsys=capsys).stdout
            for _ in range(4)]
    block = b'{"decision":"block","reason":"commit dirty.txt on x"}'
    assert outs == [block, block, block, b""]
    assert (repo.path / "abandoned").read_text() == "s4:\n"
    sub = hook_in_process("SubagentStop", {**payload, "agent_id": "a1"}, monkeypatch=monkeypatch,
                          capsys=capsys)
    assert sub.stdout == block
    assert _state(repo, "s4")["stop_blocks"] == {"agent:a1": 1}


#: What the installed hook entry point imports to answer a command that can touch no git and
#: no rm: its own few modules, and nothing of the standard library that ``python -c pass``
#: does not load already (no json, re, typing, pathlib, enum...).
PLAIN_COMMAND_MODULES = [
    "branchkeeper", "branchkeeper.adapters", "branchkeeper.adapters.claude",
    "branchkeeper.adapters.claude.host", "branchkeeper.adapters.hookrun",
    "branchkeeper.adapters.hooks", "branchkeeper.adapters.hooks.fast",
    "branchkeeper.adapters.hooks.host", "branchkeeper.adapters.hosts"]
_LIST_IMPORTS = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "from branchkeeper.adapters.hookrun import run\n"
    "code = run(sys.argv[1], sys.argv[2])\n"
    "sys.stderr.write(repr([code, sorted(set(sys.modules) - before)]))\n")


@pytest.mark.parametrize(("host", "event", "payload", "silent"), [
    ("claude", "PreToolUse", {"session_id": "s", "cwd": "/r", "permission_mode": "default",
                              "tool_name": "Bash", "tool_input": {"command": "ls -la"}}, b""),
    ("claude", "PostToolUse", {"session_id": "s", "cwd": "/r", "tool_name": "Bash",
                               "tool_input": {"command": "make test"},
                               "tool_response": {"stdout": "ok"}}, b""),
    ("codex", "PreToolUse", {"session_id": "s", "turn_id": "1", "cwd": "/r", "model": "m",
                             "tool_name": "Bash", "tool_input": {"command": "ls -la"}}, b""),
    ("cursor", "beforeShellExecution", {"conversation_id": "c", "cwd": "/r",
                                        "command": "ls -la", "sandbox": False}, b"{}"),
    ("gemini", "BeforeTool", {"session_id": "s", "cwd": "/r", "tool_name": "run_shell_command",
                              "tool_input": {"command": "ls -la"}}, b"{}"),
    ("copilot", "preToolUse", {"sessionId": "s", "cwd": "/r", "toolName": "bash",
                               "toolArgs": {"command": "ls -la"}}, b""),
])
def test_plain_command_imports_stay_lean(tmp_path: Path, host: str, event: str,
                                         payload: dict[str, object], silent: bytes) -> None:
    """The hook runs before every tool call: ``ls -la`` is answered from the raw stdin bytes,
    loading the entry point's few modules, the host's constants (with the Delegate class its
    members are), and no standard-library module
    at all (docs/claude-code-hooks.md, Speed; issue 16)."""
    proc = subprocess.run([sys.executable, "-c", _LIST_IMPORTS, host, event],
                          input=json.dumps(payload).encode(), capture_output=True, check=True,
                          timeout=60)
    code, loaded = eval(proc.stderr.decode())  # a repr of a list of strings
    assert (code, proc.stdout) == (0, silent)
    mine = [m for m in loaded if m.startswith("branchkeeper")]
    assert mine == [m.replace(".claude", f".{host}") for m in PLAIN_COMMAND_MODULES]
    assert [m for m in loaded if not m.startswith("branchkeeper")] == []


def test_help_lists_hook() -> None:
    out = subprocess.run([sys.executable, "-m", "branchkeeper", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "hook" in out and "install" in out and "uninstall" in out
    sub = subprocess.run([sys.executable, "-m", "branchkeeper", "hook", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert sub.startswith("usage: branchkeeper hook [-h]")


def _hook_modules(command: str) -> tuple[int, bytes, set[str]]:
    payload = {"session_id": "s", "cwd": "/r", "permission_mode": "default",
               "tool_name": "Bash", "tool_input": {"command": command}}
    proc = subprocess.run([sys.executable, "-c", _LIST_IMPORTS, "claude", "PreToolUse"],
                          input=json.dumps(payload).encode(), capture_output=True, check=True,
                          timeout=60)
    code, loaded = eval(proc.stderr.decode())  # a repr of a list of strings
    return code, proc.stdout, set(loaded)


def test_parsed_command_imports_the_code_reader_only_for_an_interpreter() -> None:
    """A command the hook must parse (it names git) loads the shell reader but not the
    interpreter-code reader (``shell.interp`` and :mod:`ast`); the same command with a
    ``python -c`` in it loads exactly those (and the shell quoting the code reader writes
    commands back with) more (issue 17, lean hook path). Likewise the readers of ``find`` and
    ``parallel`` load only for a command that runs them."""
    plain = _hook_modules("git status")
    with_code = _hook_modules('python -c "print(1)" && git status')
    assert plain[:2] == (0, b"") and with_code[:2] == (0, b"")
    assert "branchkeeper.shell.parse" in plain[2]
    assert {"branchkeeper.shell.interp", "ast"} & plain[2] == set()
    assert with_code[2] - plain[2] == {"_ast", "ast", "branchkeeper.shell.interp",
                                       "branchkeeper.shell.quoting"}
    assert plain[2] - with_code[2] == set()
    readers = {"branchkeeper.shell.find", "branchkeeper.shell.parallel"}
    assert readers & plain[2] == set()
    with_find = _hook_modules("find . -name x -print && git status")
    with_parallel = _hook_modules("parallel echo ::: a && git status")
    assert with_find[2] - plain[2] == {"branchkeeper.shell.find"}
    assert with_parallel[2] - plain[2] == {"branchkeeper.shell.parallel",
                                           "branchkeeper.shell.quoting",
                                           "branchkeeper.shell.pipetext"}
    assert "branchkeeper.shell.pipetext" not in with_find[2]


#: The guard's rule families (branchkeeper.policy.*): each loads only for a command that holds
#: work for it.
_FAMILIES = ("creation", "deletion", "discard", "evacuation", "push", "removal", "rm")


@pytest.mark.parametrize(("command", "families"), [
    ("git status", []),
    ("git switch -c x", ["creation"]),
    ("git branch -D x", ["removal"]),
    ("git push --force origin x", ["push"]),
    ("git checkout -- .", ["discard"]),
    ("git reset --hard HEAD~1", ["discard", "removal"]),
    ("rm -rf build", ["deletion", "removal", "rm"]),  # rm judges a worktree as removal does
])
def test_a_command_loads_only_the_rule_families_it_needs(command: str,
                                                         families: list[str]) -> None:
    """The creation deny that runs on every ``git switch -c`` at the WIP cap loads the
    creation family alone; each other family loads for its own commands (issue 16: the
    deny's imports)."""
    code, out, loaded = _hook_modules(command)
    assert (code, out) == (0, b"")
    assert [f for f in _FAMILIES if f"branchkeeper.policy.{f}" in loaded] == families
