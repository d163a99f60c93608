"""A host file whose ``hooks`` block has an unexpected shape (trial finding F1): ``install`` and
``uninstall`` of every host give the one clear error naming the file and the key (exit 4),
never an internal error, and write nothing; a file either accepts is one the other can read,
and ``install`` then ``uninstall`` gives the file back as it was, byte for byte, or removes it
when install created it (F9)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.adapters.commands.install import _each
from branchkeeper.adapters.hosts import HOSTS
from branchkeeper.errors import ConfigError
from tests.gitrepo import GitRepo
from tests.hostutil import config_file

EXAMPLES = int(os.environ.get("BK_PROPERTY_EXAMPLES", "60"))
HOST_NAMES = list(HOSTS)


def bk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "branchkeeper", *args], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("initial")
    return repo


@pytest.mark.parametrize("host", HOST_NAMES)
@pytest.mark.parametrize(("hooks", "key"), [
    ({"PreToolUse": {"matcher": "Bash"}}, "hooks.PreToolUse must be a list of objects"),
    ("x", "hooks must be an object mapping each event to a list of objects"),
    ([], "hooks must be an object mapping each event to a list of objects"),
    ({"PreToolUse": [None]}, "hooks.PreToolUse must be a list of objects"),
    ({"Notification": ["x", 3]}, "hooks.Notification must be a list of objects"),
    ({"Stop": [{"hooks": "x"}]}, "hooks.Stop[0].hooks must be a list of objects"),
    ({"Stop": [{"hooks": [None]}]}, "hooks.Stop[0].hooks must be a list of objects"),
])
def test_f1_wrong_shape_is_a_clear_error_from_install_and_uninstall(
        repo: GitRepo, host: str, hooks: object, key: str) -> None:
    path = config_file(repo.path, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"hooks": hooks, "keep": 1})
    path.write_text(text)
    for verb in ("install", "uninstall"):
        done = bk(verb, "--host", host, cwd=repo.path)
        assert (done.returncode, done.stdout, done.stderr) == (
            4, "", f"branchkeeper: error: {path}: {key}; it was not changed\n"), verb
        assert path.read_text() == text


def test_f1_no_file_is_written_when_any_host_file_is_wrong(repo: GitRepo) -> None:
    """``--host auto`` checks every file before it writes one."""
    (repo.path / ".claude").mkdir()
    bad = repo.path / ".gemini" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{"hooks": {"BeforeTool": [null]}}')
    done = bk("install", "--host", "auto", cwd=repo.path)
    assert (done.returncode, done.stderr) == (
        4, f"branchkeeper: error: {bad}: hooks.BeforeTool must be a list of objects; it was "
           "not changed\n")
    assert not (repo.path / ".claude" / "settings.json").exists()


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["hooks", "matcher", "command", "x"]), inner, max_size=3)),
    max_leaves=8)
_EVENT = st.sampled_from(["PreToolUse", "Stop", "preToolUse", "stop", "Notification", "e v"])
_GROUP = st.one_of(_JSON, st.dictionaries(st.sampled_from(["matcher", "hooks", "command"]),
                                          _JSON, max_size=3))
_HOOKS = st.one_of(_JSON, st.dictionaries(_EVENT, st.one_of(_JSON, st.lists(_GROUP, max_size=3)),
                                          max_size=3))
_FILE = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "hooks": _HOOKS, "version": st.just(1), "other": _JSON}))


def _run(root: Path, host: str, verb: str) -> None:
    args = argparse.Namespace(host=host, scope="project", command=None, dry_run=False,
                              directory=str(root))
    with contextlib.redirect_stdout(io.StringIO()):
        _each(args, uninstall=verb == "uninstall")


@pytest.mark.parametrize("host", HOST_NAMES)
def test_f1_random_shapes_never_crash_and_round_trip(repo: GitRepo, host: str) -> None:
    path = config_file(repo.path, host)

    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(_FILE)
    def check(original: dict[str, Any] | None) -> None:
        path.unlink(missing_ok=True)
        if original is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(original))
        before = path.read_bytes() if original is not None else None
        try:
            _run(repo.path, host, "install")
        except ConfigError as exc:
            assert str(exc).startswith(f"{path}: hooks") and \
                str(exc).endswith("; it was not changed")
            assert (path.read_bytes() if path.exists() else None) == before
            with pytest.raises(ConfigError):
                _run(repo.path, host, "uninstall")
            assert (path.read_bytes() if path.exists() else None) == before
            return
        _run(repo.path, host, "uninstall")
        assert (path.read_bytes() if path.exists() else None) == before  # F9: as it was

    check()


@pytest.mark.parametrize("host", HOST_NAMES)
@pytest.mark.parametrize("text", ['{"hooks": {}}\n', '{"version": 1, "hooks": {}}\n', "{}",
                                  '{"other": 1}', '{"hooks": {"Stop": []}}', ""])
def test_f9_uninstall_gives_back_a_file_the_user_had(repo: GitRepo, host: str,
                                                     text: str) -> None:
    """A committed placeholder hooks file is neither deleted nor reformatted by install then
    uninstall; the message says what was done."""
    path = config_file(repo.path, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    repo.git("add", "-f", str(path))
    repo.git("commit", "-qm", "placeholder hook file")
    assert bk("install", "--host", host, cwd=repo.path).returncode == 0
    done = bk("uninstall", "--host", host, cwd=repo.path)
    assert (done.returncode, done.stdout.splitlines()[-1], done.stderr) == (0, f"wrote {path}", "")
    assert path.read_text() == text
    assert repo.git("status", "--porcelain") == ""


def test_f9_a_file_changed_since_install_is_kept_with_its_hooks_object(repo: GitRepo) -> None:
    """Without a record that still matches the file (edited since, or from another machine),
    uninstall keeps the file and its hooks object."""
    path = config_file(repo.path, "claude")
    assert bk("install", cwd=repo.path).returncode == 0
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data))  # the same content, reformatted by an editor
    assert bk("uninstall", cwd=repo.path).stdout.splitlines()[-1] == f"wrote {path}"
    assert json.loads(path.read_text()) == {"hooks": {}}
