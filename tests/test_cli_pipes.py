"""A reader that closes the pipe early (``| head``) never turns a verdict into success."""

from __future__ import annotations

import subprocess
import sys

from tests.gitrepo import GitRepo


def _first_byte_then_close(argv: list[str]) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "branchkeeper", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()  # like `| head -c1`
    err = proc.stderr.read().decode()
    return proc.wait(), err


def test_exit_status_survives_a_closed_pipe(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    # 400 unpushed branches: the JSON is far larger than a pipe buffer, so writing it fails.
    tree = w.rev("main^{tree}")
    lines = []
    for i in range(400):
        commit = w.git("commit-tree", "-p", "main", "-m", f"work {i}", tree)
        lines.append(f"create refs/heads/agent/unpushed-{i:03d} {commit}")
    subprocess.run(
        ["git", "update-ref", "--stdin"], cwd=w.path, input="\n".join(lines) + "\n",
        text=True, check=True)
    for _ in range(2):
        code, err = _first_byte_then_close(["-C", str(w.path), "sweep", "--json",
                                            "--fail-on-risk"])
        assert code == 1, err  # LOST WORK RISK found; the closed pipe does not hide it
        assert "Traceback" not in err
