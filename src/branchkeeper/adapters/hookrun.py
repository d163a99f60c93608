"""The hook process: ``branchkeeper-hook HOST EVENT`` with the host's event JSON on stdin
(issue 14; issue 16, "a hook that costs about one interpreter start").

The installed command runs ``bin/branchkeeper-hook``, a plain script (not the console-script
wrapper pip generates, which imports ``re``) that calls :func:`main`. This module imports only
``os`` and ``sys`` (already loaded by every interpreter) at module level. In order:

1. the host's module (:data:`branchkeeper.adapters.hosts.HOSTS`, constants only) and stdin;
2. the no-git fast path (:mod:`branchkeeper.adapters.hooks.fast`): a shell command the guard
   has nothing to judge in is answered from the raw bytes, before ``json`` is imported;
3. everything else: decode, find who really ran us (another host may run our Claude Code
   entries), parse into the host-neutral event, :func:`~branchkeeper.adapters.hooks.handlers.handle`,
   render in the host's format, print.

Robustness: malformed input, a wrong type, a missing field, an unknown host or event, or ANY
internal error answers the host's fail-open (:meth:`~branchkeeper.adapters.hooks.host.Host.fail_open`:
never a deny by accident, never a traceback to the agent), one line on stderr and one line in
``<common git dir>/branchkeeper/hook.log``; except before a tool, where malformed input whose
recoverable command (or, none recoverable, whose bytes) mentions git or rm is denied
(:mod:`branchkeeper.adapters.hooks.unreadable`). Input over the size read before a tool is not
malformed: it is judged on what was read (:mod:`branchkeeper.adapters.hooks.oversized`), and
denied where the cut may hide what the guard judges. When stdout cannot carry a refusal (a deny, a Stop
block, a created worktree's path), the refusal goes to stderr with exit 2 instead. A change
the hook makes (WorktreeRemove) that SIGINT or SIGTERM stopped at a safe point says so on
stderr and exits 130.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TextIO

    from branchkeeper.adapters.hooks.answer import HookResponse
    from branchkeeper.adapters.hooks.host import Host

#: Largest stdin read, in bytes (one more than the parser accepts, so it can say "too large").
MAX_READ = 4 * 1024 * 1024 + 1
#: Exit status of a change stopped at a safe point by SIGINT or SIGTERM (``ExitCode.INTERRUPTED``).
INTERRUPTED = 130


def _write(stream: "TextIO | None", text: str) -> bool:
    """Write and flush ``text``; False when the stream is closed or failing (never raises)."""
    if stream is None:
        return False
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


def emit(response: "HookResponse") -> int:
    """Print the answer; return the exit status. When stdout cannot carry it and it refuses
    something, say so on stderr with exit 2 instead: a closed stdout must never turn a deny
    into an allow."""
    if response.stderr:
        _write(sys.stderr, response.stderr.rstrip("\n") + "\n")
    if response.stdout and not _write(sys.stdout, response.stdout) and response.blocking:
        _write(sys.stderr, response.blocking.rstrip("\n") + "\n")
        return 2
    return response.exit_code


def _launch_dir() -> "Path | None":
    """Where the host started the hook, for the log when the event names no ``cwd`` (its JSON
    is malformed): ``$CLAUDE_PROJECT_DIR`` (Claude Code, Cursor and Gemini set it) when it is
    absolute, else the process's directory (a project hook runs in the project)."""
    from pathlib import Path  # a failure path: the fast path never loads pathlib

    project = os.environ.get("CLAUDE_PROJECT_DIR", "")
    if project.startswith("/"):
        return Path(project)
    try:
        return Path(os.getcwd())
    except OSError:  # the directory was removed under us
        return None


def _fail(host: "Host | None", event: str, message: str, where: "Path | None" = None) -> int:
    from branchkeeper.adapters.hooks.log import log

    log(where if where is not None else _launch_dir(), event, message)
    if host is None:
        return emit_text(f"branchkeeper-hook: ignored: {message}")
    return emit(host.fail_open(event, message))


def emit_text(message: str) -> int:
    """A usage problem: one line on stderr, exit 0 (a hook never blocks by accident)."""
    _write(sys.stderr, message + "\n")
    return 0


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None:
        return b""
    return stream.buffer.read(MAX_READ)


def run(host_name: str, event: str) -> int:
    """Answer one ``event`` of ``host_name`` with the event JSON on stdin; return the exit
    status (see the module docstring)."""
    from branchkeeper.adapters.hosts import HOSTS

    load = HOSTS.get(host_name)
    if load is None:
        return emit_text(f"branchkeeper-hook: ignored: unknown host {host_name!r} "
                         f"(one of {', '.join(HOSTS)})")
    host = load()
    if event not in host.EVENTS:
        return _fail(host, event, f"unknown hook event {event!r}")
    try:
        data = _read_stdin()
    except Exception as exc:
        return _fail(host, event, f"could not read hook input: {type(exc).__name__}: {exc}")
    spec = host.FAST.get(event)
    if spec is not None:
        from branchkeeper.adapters.hooks.fast import silent

        quiet = silent(data, spec)
        if quiet is not None:
            if quiet:
                _write(sys.stdout, quiet.decode())
            return 0
    return _full(host, event, data)


def _full(host: "Host", event: str, data: bytes) -> int:
    from branchkeeper.adapters.hooks.event import MAX_INPUT_BYTES, PRE_TOOL, InputError, decode
    from branchkeeper.adapters.hooks.log import describe, log

    # Over the size read, a tool call is not malformed but read in part: judged on what was
    # read, never let through unjudged (adapters/hooks/oversized.py).
    cut = len(data) > MAX_INPUT_BYTES and host.EVENTS.get(event) == PRE_TOOL
    try:
        if cut:
            from branchkeeper.adapters.hooks.event import decode_prefix

            payload = decode_prefix(data)
        else:
            payload = decode(data)
        other = host.caller(payload, os.environ)
        if other != host.NAME:
            handed = _hand_over(host, other, event, payload)
            if handed is None:
                return 0
            host, event = handed
        parsed = host.parse(event, payload)
    except InputError as exc:
        if cut:
            return _refuse_cut(host, event, f"what it read is not a whole event ({exc})")
        if host.EVENTS.get(event) == PRE_TOOL:
            return _refuse_unreadable(host, event, data, str(exc))
        return _fail(host, event, f"malformed hook input: {exc}")
    except Exception as exc:
        return _fail(host, event, f"could not read hook input: {describe(exc)}")
    if cut:
        from branchkeeper.adapters.hooks.oversized import judgeable

        judged = judgeable(parsed)
        if isinstance(judged, str):
            return _refuse_cut(host, event, judged)
    if parsed.hook_event_name and parsed.hook_event_name != event:
        log(parsed.cwd, event, f"hook_event_name {parsed.hook_event_name!r} differs; "
                               f"answering as {event}")
    try:
        from branchkeeper.adapters.hooks.handlers import handle

        answer = handle(parsed)
    except Exception as exc:
        if getattr(exc, "exit_code", None) == INTERRUPTED:
            # a change stopped at a safe point on SIGINT/SIGTERM (actions/interrupt.py)
            _write(sys.stderr, f"branchkeeper: {exc}\n")
            return INTERRUPTED
        if os.environ.get("BRANCHKEEPER_DEBUG"):
            raise
        if getattr(exc, "exit_code", None) is not None:  # a BranchkeeperError: its own words
            return _fail(host, event, str(exc), parsed.cwd)
        return _fail(host, event, f"internal error: {describe(exc)}", parsed.cwd)
    return emit(host.render(parsed, answer))


def _refuse_cut(host: "Host", event: str, why: str) -> int:
    """Deny a tool call whose input was larger than the hook reads (``why``: what was cut)."""
    from branchkeeper.adapters.hooks.log import log
    from branchkeeper.adapters.hooks.oversized import refusal

    bare, answer = refusal(host.NAME, event, why)
    log(_launch_dir(), event, f"input larger than the hook reads; denied: {why}")
    return emit(host.render(bare, answer))


def _refuse_unreadable(host: "Host", event: str, data: bytes, error: str) -> int:
    """A tool call whose input could not be read (``error``): denied when what can be
    recovered from ``data`` may hold a route the guard judges (adapters/hooks/unreadable.py),
    else the fail-open of malformed input."""
    from branchkeeper.adapters.hooks.log import log
    from branchkeeper.adapters.hooks.unreadable import refusal, refusal_reason

    why = refusal_reason(data, host.FAST.get(event))
    if why is None:
        return _fail(host, event, f"malformed hook input: {error}")
    bare, answer = refusal(host.NAME, event, error, why)
    log(_launch_dir(), event, f"malformed hook input: {error}; denied: {why}")
    return emit(host.render(bare, answer))


def _hand_over(host: "Host", other: str, event: str, payload: "dict[str, object]"
               ) -> "tuple[Host, str] | None":
    """Another host ran our ``host`` entry: None (stay quiet) when that host has branchkeeper
    entries of its own, which answer instead, or when it has no such event; else that host
    and its name for ``event``, so the answer is in its format."""
    from pathlib import Path

    from branchkeeper.adapters.hooks.log import log
    from branchkeeper.adapters.hosts import HOSTS
    from branchkeeper.git.locate import locate

    load = HOSTS.get(other)
    target = load() if load is not None else None
    cwd = payload.get("cwd")
    repo = locate(cwd) if isinstance(cwd, str) and cwd.startswith("/") else None
    root = Path(repo.toplevel or repo.main_root) if repo is not None else None
    where = Path(cwd) if isinstance(cwd, str) and cwd.startswith("/") else None
    if target is None or target.installed(project_root=root, home=Path.home()):
        log(where, event, f"{host.NAME} entry run by {other}, which has its own entries: quiet")
        return None
    mapped = target.CLAUDE_EVENTS.get(event) if host.NAME == "claude" else None
    if mapped is None:
        log(where, event, f"{host.NAME} entry run by {other}: no such {other} event; quiet")
        return None
    return target, mapped


def main() -> None:
    """The ``branchkeeper-hook`` script: ``branchkeeper-hook HOST EVENT``. Runs without cyclic
    garbage collection and leaves with ``os._exit`` once its answer is flushed (see
    ``branchkeeper.adapters.cli.run``)."""
    import gc

    gc.disable()
    argv = sys.argv[1:]
    if len(argv) != 2 or argv[0].startswith("-"):
        code = emit_text("usage: branchkeeper-hook HOST EVENT (installed by `branchkeeper "
                         "install --host HOST`; not meant to be run by hand)")
    else:
        code = run(argv[0], argv[1])
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
