"""``delete --allow-unproven`` asks a person at a real terminal (a pseudo-terminal here)."""

from __future__ import annotations

import os
import pty
import sys
import time

from tests.gitrepo import GitRepo


def _run_in_pty(argv: list[str], answer: bytes) -> tuple[int, str]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: its controlling terminal is the pty, so /dev/tty works
        os.execv(sys.executable, [sys.executable, "-m", "branchkeeper", *argv])
    out = b""
    deadline = time.monotonic() + 60
    sent = False
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if not sent and b"to delete: " in out:
            os.write(fd, answer)
            sent = True
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def _repo_with_unpushed_branch(remote_and_clone: tuple[GitRepo, GitRepo]) -> tuple[GitRepo, str]:
    """The clone, with branch ``wip`` holding one commit no other ref has; (repo, its tip)."""
    _, w = remote_and_clone
    w.switch("wip", create=True)
    tip = w.commit("unpushed work", files={"wip.txt": "w\n"})
    w.switch("main")
    return w, tip


def test_allow_unproven_confirmed_at_a_terminal_then_undone(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w, tip = _repo_with_unpushed_branch(remote_and_clone)
    code, out = _run_in_pty(["-C", str(w.path), "delete", "wip", "--allow-unproven",
                             "--reason", "abandoned experiment"], b"DELETE\n")
    assert code == 0, out
    assert "These branches have NO proof that their work is preserved:" in out
    assert not w.has_ref("refs/heads/wip")
    code, out = _run_in_pty(["-C", str(w.path), "undo"], b"")
    assert code == 0, out
    assert w.rev("wip") == tip


def test_allow_unproven_wrong_word_deletes_nothing(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w, tip = _repo_with_unpushed_branch(remote_and_clone)
    code, out = _run_in_pty(["-C", str(w.path), "delete", "wip", "--allow-unproven",
                             "--reason", "r"], b"yes\n")
    assert code == 5, out
    assert "branchkeeper: error: not confirmed; nothing was deleted" in out
    assert w.rev("wip") == tip
