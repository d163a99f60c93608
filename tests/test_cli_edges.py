"""Command-line rough edges (issue 11, the outside trial): a wrong option names the command it
was given to, ``check`` says when the config was not read, ``config show`` into a pipe is plain
text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from branchkeeper.adapters.cli import build_parser, innermost, main
from branchkeeper.errors import ConfigError
from branchkeeper.model.config_file import load_config
from tests.gitrepo import GitRepo


def _run(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "branchkeeper", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("argv", [
    ["worktree", "retire", "--bogus", "x"],
    ["sweep", "--no-such-option"],
    ["config", "show", "--tabel"],
    ["undo", "--dryrun"],
])
def test_a_wrong_option_prints_that_commands_usage(tmp_path: Path, argv: list[str]) -> None:
    words = [a for a in argv if not a.startswith("-")]
    usage = innermost(build_parser(words[0]), argv).format_usage()
    prog = "branchkeeper " + " ".join(w for w in words if w != "x")
    wrong = " ".join(a for a in argv if a.startswith("-"))
    assert usage.startswith(f"usage: {prog} ")
    assert _run(*argv, cwd=tmp_path) == (
        2, "", f"{usage}{prog}: error: unrecognized arguments: {wrong}\n")


def test_a_wrong_top_level_option_keeps_the_top_level_usage(tmp_path: Path) -> None:
    usage = build_parser().format_usage()
    rc, out, err = _run("--bogus", cwd=tmp_path)
    assert (rc, out, err) == (2, "", f"{usage}branchkeeper: error: unrecognized arguments: "
                                     "--bogus\n")


def test_check_says_when_the_config_was_not_read(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("one", files={"a.txt": "a\n"})
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  wip:\n    cap: ten\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo.path)
    reason = str(info.value).splitlines()[0]
    assert main(["-C", str(repo.path), "check", "--", "git status"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("allow\n", (
        f"branchkeeper: warning: {repo.path}/.branchkeeper.yaml was not read ({reason}); "
        "decided with the default settings instead (see: branchkeeper config check)\n"))
    (repo.path / ".branchkeeper.yaml").write_text("branches:\n  wip:\n    cap: 3\n")
    assert main(["-C", str(repo.path), "check", "--", "git status"]) == 0
    assert capsys.readouterr() == ("allow\n", "")


def test_config_show_into_a_pipe_is_one_plain_line_per_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    path = repo.path / ".branchkeeper.yaml"
    path.write_text('branches:\n  exempt: ["[ab]*"]\n  wip:\n    cap: 4\n')
    assert main(["-C", str(repo.path), "config", "show", "--json"]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    assert main(["-C", str(repo.path), "config", "show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    width = max(len(k) for k in values)
    assert lines[0] == f"# {path}"
    assert len(lines) == len(values) + 1
    for line, (key, entry) in zip(lines[1:], values.items(), strict=True):
        shown, _, source = line.partition("  # ")
        assert shown[:width + 3] == f"{key:<{width}} = " and source == entry["source"], line
        assert yaml.safe_load(shown[width + 3:]) == entry["value"], line
    assert f"{'branches.wip.cap':<{width}} = 4  # file" in lines
    assert f'{"branches.exempt":<{width}} = ["[ab]*"]  # file' in lines
    assert not [line for line in lines if line != line.rstrip()]  # no padding to a width


def test_a_git_config_git_cannot_parse_is_named_by_every_command(tmp_path: Path) -> None:
    """An unterminated section in ``.git/config``: every command names the file git cannot
    read (not "not a git repository"), and the guard's denial says to mend it."""
    repo = GitRepo.init(tmp_path / "r")
    with (repo.path / ".git" / "config").open("a") as fh:
        fh.write("[core\n")
    lines = (repo.path / ".git" / "config").read_text().count("\n")
    said = (f"branchkeeper: error: {repo.path.resolve()}: git cannot read the repository's "
            f"configuration (fatal: bad config line {lines} in file .git/config); fix that "
            "file, then run again\n")
    for argv in (["sweep"], ["log"], ["undo"], ["worktree", "list"], ["prune", "--dry-run"]):
        assert _run(*argv, cwd=repo.path) == (4, "", said), argv
    code, out, _ = _run("check", "--", "git reset --hard", cwd=repo.path)
    assert code == 2
    assert out.startswith("deny: R-GIT-UNPARSED-DESTRUCTIVE\n")
    assert "git itself failed in this repository: run `git status` to see what it reports" in out
