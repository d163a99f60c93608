"""Hostile and broken input (issue 7, section 3): branch names of every legal shape, paths with
spaces, newlines and unicode, symlinked worktrees, config fuzz, hook input fuzz, and broken or
unusual repository states. Nothing executes a name, nothing outside a worktree is removed,
printed commands do what they say when pasted, and no traceback ever reaches the user."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.adapters.commands.hook import main_fast
from tests.gitrepo import GitRepo
from tests.reliability_util import bk, build_world, examples, git, hook, record, refs

CANARY = Path("/tmp/branchkeeper-reliability-canary")
HOSTILE_NAMES = [
    "feature/deep/slashes", "dots.in.name", "ünïcödé/ブランチ", "-leading-dash", "--force",
    "@", "at@{x", "x" * 200, f"$(touch {CANARY})", f";touch {CANARY}", f"`touch {CANARY}`",
    "quote'single", 'quote"double', "amp&&touch", "star*glob", "tilde~", "brace{x}",
    "pipe|touch", "space-less\\backslash", "hash#tag", "percent%s", "dollar$HOME",
]


def _legal(name: str) -> bool:
    return subprocess.run(["git", "check-ref-format", "--branch", name],
                          capture_output=True).returncode == 0 or name == "@"


@pytest.fixture(autouse=True)
def _no_canary() -> object:
    CANARY.unlink(missing_ok=True)
    yield
    assert not CANARY.exists(), "a branch name was executed"


def _hostile_repo(tmp: Path) -> tuple[GitRepo, list[str]]:
    """A clone where every hostile name is a merged branch (created with update-ref)."""
    w = build_world(tmp)
    base = w.repo.rev("merged-a")
    names = []
    for name in HOSTILE_NAMES:
        made = subprocess.run(["git", "update-ref", f"refs/heads/{name}", base], cwd=w.repo.path,
                              capture_output=True)
        if made.returncode == 0:
            names.append(name)
    return w.repo, names


def test_names_are_data_and_printed_commands_paste(tmp_path: Path) -> None:
    repo, names = _hostile_repo(tmp_path)
    assert len(names) >= 14, names
    for argv in (["sweep"], ["sweep", "--json"], ["sweep", "--clean", "--dry-run"],
                 ["prune", "--no-fetch", "--dry-run"], ["check", "--", "git branch -D x"]):
        res = bk(repo.path, *argv)
        assert res.returncode in (0, 1, 3, 5), (argv, res.stderr)
        assert b"Traceback" not in res.stderr + res.stdout
    tips = refs(repo.path)
    parked = bk(repo.path, "park", "--no-push", "--json", "--reason", "wait", "--", names[0])
    assert parked.returncode == 0, parked.stderr
    # delete every hostile name (one batch), then paste each printed restore command
    res = bk(repo.path, "delete", "--json", "--", *names[1:])
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    restores = {b["name"]: b["restore"] for b in data["branches"]}
    assert sorted(restores) == sorted(names[1:])
    copy = tmp_path / "copy"
    shutil.copytree(repo.path, copy, symlinks=True)
    for name, command in restores.items():
        ran = subprocess.run(["bash", "-c", command], cwd=repo.path, capture_output=True)
        assert ran.returncode == 0, (name, command, ran.stderr)
        assert refs(repo.path)[f"refs/heads/{name}"] == tips[f"refs/heads/{name}"]
    # the undo command printed by delete pastes too: delete again, paste `undo`
    res = bk(repo.path, "delete", "--json", "--", *names[1:])
    undo_cmd = json.loads(res.stdout)["undo"]
    cmd = undo_cmd["command"] if isinstance(undo_cmd, dict) else undo_cmd
    assert cmd.startswith("branchkeeper undo")
    ran = subprocess.run(["bash", "-c", cmd.replace("branchkeeper", f"{sys.executable} -m "
                                                     "branchkeeper", 1)],
                         cwd=repo.path, capture_output=True)
    assert ran.returncode == 0, ran.stderr
    assert all(refs(repo.path)[f"refs/heads/{n}"] == tips[f"refs/heads/{n}"] for n in names[1:])
    record("hostile", name="branch-names", tried=len(names), unexpected=0)


@pytest.mark.parametrize("dirname", ["with space", "new\nline", "ünï cödé", "-dash", "$(x)"])
def test_worktree_paths_with_odd_characters(dirname: str, tmp_path: Path) -> None:
    w = build_world(tmp_path)
    odd = tmp_path / dirname
    git(w.repo.path, "worktree", "add", "-q", "-b", "odd", str(odd), "merged-a")
    for argv in (["worktree", "list", "--json"], ["worktree", "reap", "--dry-run", "--no-gh"],
                 ["sweep", "--clean", "--json"]):
        res = bk(w.repo.path, *argv)
        assert b"Traceback" not in res.stderr, res.stderr
        assert res.returncode in (0, 5), (argv, res.stderr)
    assert not odd.exists()  # clean and proven: removed by sweep --clean, and only it
    assert (w.wt_live / "untracked.txt").is_file()
    record("hostile", name="worktree-path", tried=1, unexpected=0)


def test_symlinks_never_lead_outside(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text("keep me\n")
    # a worktree whose ignored build/ dir is a symlink to the outside directory
    (w.wt_done / "build").symlink_to(outside, target_is_directory=True)
    # a worktree reached through a symlinked directory
    real = tmp_path / "real-wt"
    git(w.repo.path, "worktree", "add", "-q", "-b", "linked", str(real), "merged-a")
    (tmp_path / "link-wt").symlink_to(real, target_is_directory=True)
    res = bk(w.repo.path, "worktree", "retire", str(tmp_path / "link-wt"))
    assert b"Traceback" not in res.stderr
    for argv in (["worktree", "retire", str(w.wt_done)], ["sweep", "--clean"],
                 ["worktree", "reap", "--no-gh"]):
        res = bk(w.repo.path, *argv)
        assert b"Traceback" not in res.stderr, res.stderr
    assert sentinel.read_text() == "keep me\n"
    assert outside.is_dir()
    record("hostile", name="symlinks", tried=2, unexpected=0)


# -- config fuzz -----------------------------------------------------------------------------------
BAD_CONFIGS = {
    "wrong-type": "branches:\n  wip_cap: [1, 2]\n",
    "unknown-key": "branches:\n  no_such_key: 1\n",
    "top-unknown": "surprise: true\n",
    "not-a-map": "- 1\n- 2\n",
    "python-tag": f"branches: !!python/object/apply:os.system ['touch {CANARY}']\n",
    "python-name": "branches: !!python/name:os.system\n",
    "yaml-bomb": "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                 "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                 "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                 "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n",
    "huge": "branches:\n  exempt:\n" + "".join(f"    - b{i}\n" for i in range(300_000)),
    "binary": "\x00\x01\x02\xff",
    "deep": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "tab-indent": "branches:\n\twip_cap: 3\n",
}


@pytest.mark.parametrize("kind", sorted(BAD_CONFIGS))
def test_config_fuzz_clear_error(kind: str, tmp_path: Path) -> None:
    w = build_world(tmp_path)
    (w.repo.path / ".branchkeeper.yaml").write_text(BAD_CONFIGS[kind], errors="surrogateescape")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = bk(w.repo.path, "sweep")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time, not the wall clock: a machine busy with other work must not fail this
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == 4, (kind, res.returncode, err)
    assert b"Traceback" not in res.stderr
    assert err.startswith("branchkeeper: ") and err.count("\n") == 1, err
    assert cpu < 2.5, cpu  # interpreter start included
    record("hostile", name=f"config-{kind}", tried=1, unexpected=0)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_config_fuzz_text(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from branchkeeper.errors import ConfigError
    from branchkeeper.model.config_file import load_config

    root = tmp_path_factory.mktemp("cfg")
    (root / ".branchkeeper.yaml").write_text(text, errors="surrogateescape")
    start = time.process_time()  # CPU time: a busy machine must not fail this
    with contextlib.suppress(ConfigError):
        load_config(root)
    assert time.process_time() - start < 2
    record("hostile", name="config-text", tried=1, unexpected=0)


# -- hook input fuzz -------------------------------------------------------------------------------
EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
          "SessionStart", "WorktreeRemove"]
BAD_INPUTS: list[bytes] = [
    b"", b"null", b"[]", b"42", b"{", b"\xff\xfe\xfd", b'{"session_id": 5}',
    b'{"session_id": "s", "cwd": 7}', b'{"session_id": "s", "cwd": "/nonexistent"}',
    b'{"session_id": "s", "tool_input": "ls"}', b'{"tool_input": {"command": ["ls"]}}',
    b"[" * 100_000 + b"]" * 100_000,
    json.dumps({"session_id": "s", "cwd": "/", "tool_name": "Bash",
                "tool_input": {"command": "echo " + "a" * 2_000_000}}).encode(),
]


def _hook_in_process(event: str, data: bytes) -> tuple[int, str, str]:
    stdin = io.TextIOWrapper(io.BytesIO(data))
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main_fast([event])
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("event", EVENTS)
def test_hook_bad_input_fails_open(event: str) -> None:
    for data in BAD_INPUTS:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = hook(event, None, raw=data)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the child's CPU time, not the wall clock: a busy machine must not fail this
        assert (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) < 5
        assert res.returncode == 0, (event, data[:40], res.stderr)
        assert b"Traceback" not in res.stdout + res.stderr
        assert b'"deny"' not in res.stdout
    record("hostile", name=f"hook-{event}", tried=len(BAD_INPUTS), unexpected=0)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                           lambda kids: st.lists(kids, max_size=4)
                           | st.dictionaries(st.text(max_size=10), kids, max_size=4),
                           max_leaves=20)


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event=st.sampled_from(["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"]),
       extra=st.dictionaries(st.sampled_from(["session_id", "cwd", "tool_name", "tool_input",
                                              "agent_id", "hook_event_name", "prompt"]),
                             json_values, max_size=6),
       command=st.sampled_from(["ls -la", "npm test", "cat README.md", "pytest -q"]))
def test_hook_fuzz_never_denies_unrelated(event: str, extra: dict[str, object],
                                          command: str) -> None:
    payload = {"session_id": "fuzz", "cwd": "/", "tool_name": "Bash",
               "tool_input": {"command": command}, **extra}
    code, out, err = _hook_in_process(event, json.dumps(payload).encode())
    assert code == 0 and "Traceback" not in out + err
    assert '"deny"' not in out and '"block"' not in out
    record("hostile", name="hook-fuzz", tried=1, unexpected=0)


# -- repository states -----------------------------------------------------------------------------
COMMANDS = [["sweep"], ["sweep", "--json"], ["sweep", "--clean", "--dry-run"],
            ["prune", "--no-fetch", "--dry-run"], ["worktree", "list"],
            ["worktree", "reap", "--dry-run", "--no-gh"], ["log"], ["check", "--", "ls"],
            ["delete", "--dry-run", "x"]]


def _no_traceback(path: Path, ok: tuple[int, ...] = (0, 1, 3, 4, 5)) -> list[int]:
    codes = []
    for argv in COMMANDS:
        res = bk(path, *argv, timeout=60)
        assert b"Traceback" not in res.stderr + res.stdout, (argv, res.stderr)
        assert res.returncode in ok, (argv, res.returncode, res.stderr)
        codes.append(res.returncode)
    return codes


def _states(tmp: Path) -> dict[str, Path]:
    w = build_world(tmp / "w")
    states: dict[str, Path] = {"world": w.repo.path, "bare": w.origin.path}
    empty = GitRepo.init(tmp / "empty")
    states["no-commits"] = empty.path
    det = GitRepo.clone(w.origin.path, tmp / "detached")
    git(det.path, "switch", "-q", "--detach", "HEAD")
    states["detached"] = det.path
    git(w.origin.path, "config", "uploadpack.allowFilter", "true")
    shallow = tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{w.origin.path}",
                    str(shallow)], check=True)
    states["shallow"] = shallow
    partial = tmp / "partial"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", f"file://{w.origin.path}",
                    str(partial)], check=True)
    states["partial"] = partial
    return states


def test_repository_states(tmp_path: Path) -> None:
    states = _states(tmp_path)
    for name, path in states.items():
        _no_traceback(path)
        record("hostile", name=f"state-{name}", tried=len(COMMANDS), unexpected=0)
    world = states["world"]
    # a corrupted cache, then a missing one
    cache_dir = world / ".git" / "branchkeeper"
    for f in cache_dir.rglob("*cache*"):
        if f.is_file():
            f.write_bytes(b"\x00garbage{")
    _no_traceback(world)
    for f in cache_dir.rglob("*cache*"):
        if f.is_file():
            f.unlink()
    _no_traceback(world)
    # held locks: the commands report, never crash, never delete behind a lock
    for lock in ("index.lock", "packed-refs.lock"):
        (world / ".git" / lock).write_text("")
        before = refs(world)
        _no_traceback(world)
        res = bk(world, "delete", "merged-a")
        assert b"Traceback" not in res.stderr
        if res.returncode != 0:
            assert refs(world) == before
        (world / ".git" / lock).unlink()
        record("hostile", name=f"lock-{lock}", tried=len(COMMANDS) + 1, unexpected=0)


def test_read_only_git_dir(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    runuser = shutil.which("setpriv")
    if os.geteuid() == 0 and runuser is None:
        pytest.skip("running as root and setpriv is unavailable: root ignores permissions")
    subprocess.run(["chmod", "-R", "a-w", str(w.repo.path / ".git")], check=True)
    subprocess.run(["chmod", "-R", "a+rX", str(tmp_path)], check=True)
    try:
        prefix = ([runuser, "--reuid=65534", "--regid=65534", "--clear-groups"]
                  if os.geteuid() == 0 else [])
        env = {**os.environ, "HOME": str(tmp_path)}
        for argv in (["sweep"], ["prune", "--no-fetch"], ["delete", "merged-a"]):
            res = subprocess.run([*prefix, sys.executable, "-m", "branchkeeper", "-C",
                                  str(w.repo.path), *argv], capture_output=True, env=env,
                                 timeout=60)
            assert b"Traceback" not in res.stderr, (argv, res.stderr)
            assert res.returncode in (0, 4, 5), (argv, res.returncode, res.stderr)
        assert "refs/heads/merged-a" in refs(w.repo.path)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(w.repo.path / ".git")], check=True)
    record("hostile", name="read-only", tried=3, unexpected=0)


def test_reftable_repository_is_refused_cleanly(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "rt")
    repo.commit("one", files={"a": "1\n"})
    git(repo.path, "config", "core.repositoryformatversion", "1")
    git(repo.path, "config", "extensions.refStorage", "reftable")
    supported = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.path,
                               capture_output=True).returncode == 0
    res = bk(repo.path, "sweep")
    assert b"Traceback" not in res.stderr
    if not supported:  # git 2.39: the extension is unknown; git's own error, exit 4
        assert res.returncode == 4 and res.stderr.startswith(b"branchkeeper: "), res.stderr
    record("hostile", name="reftable", tried=1, unexpected=0)


def test_git_too_old(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    real = shutil.which("git")
    bindir = tmp_path / "oldgit"
    bindir.mkdir()
    (bindir / "git").write_text(f'#!/bin/sh\nif [ "$1" = version ] || [ "$1" = --version ]; '
                                f'then echo "git version 2.20.0"; exit 0; fi\nexec {real} "$@"\n')
    (bindir / "git").chmod(0o755)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    res = bk(w.repo.path, "sweep", env=env)
    assert (res.returncode, res.stderr.decode()) == (
        4, "branchkeeper: error: git version 2.20.0 is too old: branchkeeper needs git 2.30.0 "
           "or newer\n")
    record("hostile", name="old-git", tried=1, unexpected=0)


def test_assumed_git_version_that_is_not_a_version(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    installed = subprocess.run(["git", "version"], capture_output=True, text=True,
                               check=True).stdout.strip()
    res = bk(w.repo.path, "sweep", env={"BRANCHKEEPER_ASSUME_GIT_VERSION": "abc"})
    assert (res.returncode, res.stdout, res.stderr.decode()) == (
        4, b"", "branchkeeper: error: BRANCHKEEPER_ASSUME_GIT_VERSION='abc' is not a git version "
                f"(expected one like 2.38.1); unset it to use the installed {installed}\n")
    res = bk(w.repo.path, "sweep", "--json", env={"BRANCHKEEPER_ASSUME_GIT_VERSION": ""})
    assert (res.returncode, res.stderr) == (0, b"")  # set but empty is unset
