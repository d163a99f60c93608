"""``branchkeeper git-hook reference-transaction STATE``: what the installed git hook runs (issue
15; docs/git-hook.md). Hidden: git's hook shim calls it, never a person.

The shim (:mod:`branchkeeper.adapters.git_hooks`) execs this only when a line of the
transaction may delete or rewind a ``refs/heads/*`` branch, with git's stdin lines on stdin, in
the environment and directory git gave the hook. Exit :data:`REFUSE_EXIT` refuses the
transaction (``prepared``, ``mode: block``; the shim turns it into git's non-zero); every other
outcome, including ANY internal error, exits 0 so the update goes through: the hook never fails
a git command by accident. An error is one line in ``<common dir>/branchkeeper/git-hook.log``.
The CLI calls :func:`main_fast` before it builds any parser; nothing here touches the network.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

#: The exit status that refuses a transaction (the shim maps it to 1 for git).
REFUSE_EXIT = 10
LOG_NAME = "git-hook.log"
HOOK_NAME = "reference-transaction"


def _git_argv(pid: int) -> tuple[str, ...]:
    """The command line of the git process that runs the hook (Linux ``/proc``; else empty)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ()
    words = [w.decode("utf-8", "surrogateescape") for w in raw.split(b"\0") if w]
    if words and os.path.basename(words[0]) == "git":
        words[0] = "git"
    return tuple(words[:64])


def _git_pid() -> int:
    """The git process that runs the hook: the shim passes its own parent's pid (this process
    is the shim's child, not git's)."""
    value = os.environ.get("BRANCHKEEPER_GIT_PID", "")
    return int(value) if value.isdigit() else os.getppid()


def _where() -> tuple[Path, Path, Path]:
    """(where git runs, common dir, main root): git exports ``GIT_DIR`` to a hook in a linked
    worktree or a push, else runs it at the top of the work tree (or in a bare git dir).
    Raises ``LookupError`` outside a repository."""
    from branchkeeper.git.locate import locate

    cwd = os.getcwd()
    git_dir = os.environ.get("GIT_DIR") or None
    repo = locate(cwd, git_dir=os.path.join(cwd, git_dir) if git_dir else None)
    if repo is None:
        raise LookupError(f"no repository at {cwd}")
    root = Path(os.path.abspath(os.path.join(cwd, git_dir))) if git_dir else Path(cwd)
    return root, Path(repo.common_dir), Path(repo.main_root)


def _settings(main_root: Path, common: Path) -> tuple[str, str, str]:
    """(mode, remote, problem): a broken configuration falls back to the defaults (keep is
    lossless) and says so."""
    from branchkeeper.errors import ConfigError
    from branchkeeper.state.config_cache import load_config_cached

    try:
        branches = load_config_cached(main_root, common).branches
    except ConfigError as exc:
        return "keep", "origin", f"configuration ignored, defaults used: {exc}"
    return str(branches.git_hook.mode), str(branches.remote), ""


def run_hook(state: str, data: bytes) -> int:
    """Do the hook's work for ``state`` with git's stdin ``data``; return the exit status.
    Raises on internal errors (:func:`main_fast` logs them and exits 0)."""
    from branchkeeper import clock
    from branchkeeper.actions import githook
    from branchkeeper.actions.refupdate import OWN_DELETE_ENV
    from branchkeeper.git.reftx import parse_updates
    from branchkeeper.state.hooklog import append_log

    updates = parse_updates(data)
    root, common, main_root = _where()
    mode, remote, problem = _settings(main_root, common)
    if problem:
        append_log(common, LOG_NAME, state, problem)
    pid = _git_pid()
    ctx = githook.HookContext(root, common, pid, mode, remote,
                              os.environ.get(OWN_DELETE_ENV) or None, _git_argv(pid),
                              int(clock.now()))
    if state == "prepared":
        refused = githook.on_prepared(ctx, updates)
        for losing in refused:
            print(githook.refusal_line(losing, remote), file=sys.stderr)
        return REFUSE_EXIT if refused else 0
    if state == "committed":
        reports = [r for r in (githook.on_committed(ctx, updates),) if r is not None]
        reports += githook.recover_stale(ctx)
        for report in reports:
            for line in githook.keep_lines(report):
                print(line, file=sys.stderr)
    elif state == "aborted":
        githook.on_aborted(ctx, updates)
    return 0


def _log_error(state: str, exc: BaseException) -> None:
    try:
        from branchkeeper.state.hooklog import append_log

        _root, common, _main = _where()
        first = (str(exc).strip().splitlines() or [""])[0]
        append_log(common, LOG_NAME, state, f"{type(exc).__name__}: {first}; update let through")
    except Exception:
        pass


def main_fast(argv: Sequence[str]) -> int:
    """``git-hook HOOK STATE`` with stdin: the exit status for the shim (0 or
    :data:`REFUSE_EXIT`). Never raises, never prints a traceback."""
    state = argv[1] if len(argv) == 2 and argv[0] == HOOK_NAME else ""
    try:
        data = sys.stdin.buffer.read() if sys.stdin is not None else b""
        if state not in ("prepared", "committed", "aborted"):
            return 0  # "preparing" (git 2.54+) and unknown states: nothing to do
        return run_hook(state, data)
    except BaseException as exc:  # the hook never fails a git command by accident
        if os.environ.get("BRANCHKEEPER_DEBUG"):
            raise
        _log_error(state or "?", exc)
        return 0
