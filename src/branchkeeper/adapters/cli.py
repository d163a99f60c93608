"""The ``branchkeeper`` command: parse arguments, dispatch to one command module, map errors.

Each command lives in ``branchkeeper.adapters.commands.<name>`` and exposes
``register(subparsers) -> None`` (adds its parser and sets ``func``) and a typed function
returning an exit code. :data:`COMMANDS` names them in one static table whose entries import
their module only when called, so a run imports only the command it runs. This module only
parses and dispatches inside one error handler.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

from branchkeeper.clock import STARTED as STARTED  # set as the command line loads

#: A command module's ``register(subparsers)``.
Register = Callable[[Any], None]


# One loader per command: each imports its module only when that command runs.
def _sweep() -> Register:
    from branchkeeper.adapters.commands import sweep
    return sweep.register


def _demo() -> Register:
    from branchkeeper.adapters.commands import demo
    return demo.register


def _park() -> Register:
    from branchkeeper.adapters.commands import park
    return park.register


def _delete() -> Register:
    from branchkeeper.adapters.commands import delete
    return delete.register


def _prune() -> Register:
    from branchkeeper.adapters.commands import prune
    return prune.register


def _log() -> Register:
    from branchkeeper.adapters.commands import log
    return log.register


def _undo() -> Register:
    from branchkeeper.adapters.commands import undo
    return undo.register


def _worktree() -> Register:
    from branchkeeper.adapters.commands import worktree
    return worktree.register


def _report() -> Register:
    from branchkeeper.adapters.commands import report
    return report.register


def _check() -> Register:
    from branchkeeper.adapters.commands import check
    return check.register


def _hook() -> Register:
    from branchkeeper.adapters.commands import hook
    return hook.register


def _install() -> Register:
    from branchkeeper.adapters.commands import install
    return install.register


def _config() -> Register:
    from branchkeeper.adapters.commands import config
    return config.register


#: Every command and the loader of its ``register``, in the order their help is listed.
COMMANDS: dict[str, Callable[[], Register]] = {
    "sweep": _sweep,
    "demo": _demo,
    "park": _park,
    "delete": _delete,
    "prune": _prune,
    "log": _log,
    "undo": _undo,
    "worktree": _worktree,
    "report": _report,
    "check": _check,
    "hook": _hook,
    "install": _install,
    "config": _config,
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every available command registered.

    ``only`` registers just that command (the one on the command line), so a run imports only
    the modules it uses; ``None`` registers all of them (for ``--help``).
    """
    import argparse

    from branchkeeper import __version__
    parser = argparse.ArgumentParser(
        prog="branchkeeper",
        description=(
            "Keep a git repository worked on by coding agents free of stale branches and "
            "worktrees, without losing a commit or an uncommitted file."
        ),
    )
    parser.add_argument("--version", action="version", version=f"branchkeeper {__version__}")
    parser.add_argument(
        "-C", dest="directory", metavar="DIR", default=None,
        help="run as if started in DIR (like git -C)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, load in COMMANDS.items():
        if only is not None and name != only:
            continue
        load()(sub)
    return parser


#: What Ctrl-C prints: a cleanup stopped half-way is in the journal and can be undone.
_INTERRUPTED = ("branchkeeper: interrupted (after a cleanup, `branchkeeper log` shows what was "
                "done and `branchkeeper undo` restores it)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status.

    With ``BRANCHKEEPER_STATS=1`` the number of git processes started is printed to stderr
    at exit (benchmarks read it).
    """
    # A run started detached (actions.background) brackets its output in its log; the variable
    # goes no further (git hooks the run triggers are no background runs of their own).
    background = os.environ.pop("BRANCHKEEPER_BACKGROUND", None)
    if background:
        return _logged_run(list(sys.argv[1:] if argv is None else argv))
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before a command's own handler (while importing it)
        with contextlib.suppress(OSError, ValueError):
            print(_INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if os.environ.get("BRANCHKEEPER_STATS"):
            from branchkeeper.git.run import processes_started

            print(f"branchkeeper-stats: git_processes={processes_started()}", file=sys.stderr)


def _logged_run(argv: list[str]) -> int:
    """A background run: its header line, the command, its end line with the exit status
    (the completion marker; docs/cleanup.md)."""
    from branchkeeper import clock
    from branchkeeper.state.routine import end_line, header_line

    words = [a for a in argv if not a.startswith("-")]
    print(header_line(" ".join(words[1:3]) or "branchkeeper", argv, now=clock.now()), flush=True)
    code = 4
    try:
        code = main(argv)
    finally:
        sys.stderr.flush()
        print(end_line(code), flush=True)
    return code


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # The hook path must stay lean: dispatch it before building every parser.
    if args_list[:1] == ["hook"]:
        from branchkeeper.adapters.commands import hook

        return hook.main_fast(args_list[1:])  # it answers a closed stdout itself (exit 2)
    if args_list[:1] == ["git-hook"]:  # git's reference-transaction shim (hidden)
        from branchkeeper.adapters.commands import git_hook

        return git_hook.main_fast(args_list[1:])
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with the stream closed (`>&-`)
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
        elif getattr(sys, name) is getattr(sys, f"__{name}__"):
            # a name git gave in bytes that are not UTF-8 is held as surrogates: it is written
            # as those bytes (the real name) under any locale, never an encoding error
            with contextlib.suppress(AttributeError, ValueError, OSError):
                getattr(sys, name).reconfigure(errors="surrogateescape")
    from branchkeeper.errors import BranchkeeperError, ExitCode

    wanted = _command_word(args_list)
    if wanted is not None and ("-h" in args_list or "--help" in args_list) and \
            args_list.index(wanted) > min(
                args_list.index(h) for h in ("-h", "--help") if h in args_list):
        wanted = None  # "branchkeeper --help sweep": the general help
    parser = build_parser(wanted)
    args, extra = parser.parse_known_args(args_list)
    if extra:  # argparse would blame the top-level parser: the command's own usage says more
        innermost(parser, args_list).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "func", None) is None:
        parser.print_help()
        return int(ExitCode.OK) if args.command is None else int(ExitCode.DENY)
    try:
        return int(args.func(args))
    except SystemExit as exc:
        # rich ends a write to a closed pipe (`| head`) with SystemExit(1): keep the status the
        # command had decided (1 means findings), as for a BrokenPipeError below.
        hint = getattr(args, "exit_code_hint", None)
        if isinstance(hint, int):
            return hint
        return exc.code if isinstance(exc.code, int) else int(ExitCode.ERROR)
    except BranchkeeperError as exc:
        interrupted = exc.exit_code == ExitCode.INTERRUPTED
        print(f"branchkeeper: {'' if interrupted else 'error: '}{exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print(_INTERRUPTED, file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # The reader closed the pipe (``| head``). Keep the exit status the command had
        # decided before printing; otherwise 141, as a shell reports SIGPIPE. Never 0 by
        # accident: a deny must not turn into an allow.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        hint = getattr(args, "exit_code_hint", None)
        return int(hint) if isinstance(hint, int) else 141
    except OSError as exc:
        # Most often writing the result failed (a full disk, /dev/full). A status the command
        # had already decided that says something (a deny, a warning, findings) is kept; else
        # the lost output is an error.
        hint = getattr(args, "exit_code_hint", None)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            print(f"branchkeeper: error: {exc} (if the output could not be written, "
                  "`branchkeeper log` still shows what a cleanup did)", file=sys.stderr)
        return hint if isinstance(hint, int) and hint != 0 else int(ExitCode.ERROR)
    except Exception as exc:  # the last line of defence: no traceback reaches a user
        if os.environ.get("BRANCHKEEPER_DEBUG"):
            raise
        return _internal_error(exc)


def innermost(parser: argparse.ArgumentParser, args: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` name, deepest first (``worktree retire``), or
    ``parser`` itself: its usage is the one a wrong option should print."""
    import argparse

    current = parser
    for word in args:
        choices = next((a.choices for a in current._actions
                        if isinstance(a, argparse._SubParsersAction)), None)
        if isinstance(choices, dict) and word in choices:
            current = choices[word]
    return current


def _terminate_like_interrupt() -> None:
    """SIGTERM ends a read-only command as Ctrl-C does (exit 130, one line), not silently; a
    change defers both until it reaches a safe point (actions/interrupt.py)."""
    import signal

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (tests calling main())
        signal.signal(signal.SIGTERM, interrupt)


def _internal_error(exc: Exception) -> int:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(f"branchkeeper: internal error: {type(exc).__name__}: {exc}\n"
              "(set BRANCHKEEPER_DEBUG=1 to see the traceback)", file=sys.stderr)
    from branchkeeper.errors import ExitCode

    return int(ExitCode.ERROR)


def _command_word(args: list[str]) -> str | None:
    """The command named on the command line (skipping the value of ``-C``), if any."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "-C":
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg if arg in COMMANDS else None
    return None


def run() -> None:
    """Console-script wrapper: exit with :func:`main`'s status.

    Every command is a short process: it runs without cyclic garbage collection (the records
    it builds form no cycles, so memory is freed by reference counting as usual, and the
    collector's passes over thousands of records cost 5-10% of a sweep) and leaves with
    ``os._exit`` once its output is flushed, skipping the interpreter's teardown of a large
    heap. Together about 15-20 ms of the hook's ~100 ms at 5,000 branches and ~130 ms of a
    warm sweep. Every file a command writes is closed before it returns, and every worker
    thread it starts is joined.
    """
    import gc

    gc.disable()
    if sys.argv[1:2] != ["hook"]:  # the hook's path stays as lean as it is
        _terminate_like_interrupt()
    code = main()
    for stream in (sys.stdout, sys.stderr):
        # a closed pipe: the exit status still tells the verdict
        with contextlib.suppress(OSError, ValueError, AttributeError):  # None when closed
            stream.flush()
    os._exit(code)
