"""``branchkeeper hook EVENT``: answer one Claude Code hook event (issue 6, section 1).

Claude Code runs this with the event JSON on stdin. The CLI calls :func:`main_fast` before it
builds any parser, and this module imports only json/os/sys and the small wire module at import
time; everything heavier is imported inside the handler that needs it.

Robustness: malformed input, a wrong type, a missing field, an unknown event or ANY internal
error exits 0 with nothing on stdout (fail open: never a deny by accident, never a traceback to
the agent), one line on stderr, and one line in ``<common git dir>/branchkeeper/hook.log``
(rotated to ``hook.log.1`` past :data:`LOG_MAX_BYTES`). WorktreeCreate is the exception: the
creation is our job there, so an error exits 1 with the reason on stderr and Claude Code aborts
the creation.

Decisions come from :mod:`branchkeeper.adapters.claude.events`, imported inside the handler
that needs it (it imports only the standard library itself). A *verdict* is ``None`` or an
object with ``verdict`` (``allow|warn|ask|deny``, a string or an Enum of strings), ``reason``
(str) and optionally ``context`` (str):

- ``bash_verdict(event)``: PreToolUse on Bash (the command guard);
- ``creation_verdict(new_name: str | None, *, cwd: Path)``: PreToolUse on Agent/Task with
  ``isolation: "worktree"`` (name None) and WorktreeCreate (``worktree-<name>``);
- ``git_invocations(command) -> list[list[str]]`` and ``created_branches(command) -> list[str]``:
  the tree-sitter parser;
- ``post_tool_use_context(event) -> str | None`` (cleanup after merge) and
  ``evacuations(event) -> list[dict]`` (stored for the same-turn rule);
- ``session_start_context(event) -> str | None``;
- ``stop_verdict(event)`` (deny = block) and ``abandoned_at_stop(event, verdict)``;
- ``force_removal_safe(path, *, cwd) -> bool`` and ``delete_if_proven(branch, *, cwd)``
  (WorktreeRemove, through :mod:`branchkeeper.adapters.claude.worktrees`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from branchkeeper.adapters.claude import wire
from branchkeeper.adapters.claude.wire import HookEvent, HookResponse

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path

    from branchkeeper.state.session import SessionStore

LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1024 * 1024
#: Stop blocks in a row after which the guard gives way (section 6).
MAX_STOP_BLOCKS = 3
#: Bash git subcommands that count as a touch of the checkout's branch (section 6).
TOUCH_SUBCOMMANDS = frozenset({"commit", "merge", "rebase", "cherry-pick", "am", "revert",
                               "reset", "switch", "checkout", "pull"})
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
_COMMON: dict[str, Path | None] = {}


# -- plumbing -------------------------------------------------------------------------------------
def _common_dir(where: Path) -> Path | None:
    """The common git dir of the repository at ``where``, or None outside a repository."""
    key = str(where)
    if key not in _COMMON:
        from branchkeeper.errors import NotARepositoryError
        from branchkeeper.state.statedir import find_common_dir

        try:
            _COMMON[key] = find_common_dir(where)
        except NotARepositoryError:
            _COMMON[key] = None
    return _COMMON[key]


def _log(where: Path | None, event: str, message: str) -> None:
    """Append one JSON line to the repository's hook log; never raises."""
    try:
        common = _common_dir(where) if where is not None else None
        if common is None:
            return
        directory = common / "branchkeeper"
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = directory / LOG_NAME
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, directory / (LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        import time

        line = json.dumps({"time": int(time.time()), "pid": os.getpid(), "event": event,
                           "message": message[:4000]}, ensure_ascii=True)
        with open(path, "a", encoding="ascii") as handle:
            handle.write(line + "\n")
    except Exception:  # logging must never turn into a failure of its own
        pass


def _describe(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}" if tb else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}{where}"


def _session(common: Path, event: HookEvent) -> SessionStore:
    from branchkeeper.state.session import SessionStore

    return SessionStore(common, event.session_id)


def _flush_problems(store: SessionStore, event: HookEvent) -> None:
    for problem in store.problems:
        _log(event.cwd, event.event, problem)


def _verdict(obj: Any) -> tuple[str, str, str]:
    """(kind, reason, context) of a verdict; kind is "" for None."""
    if obj is None:
        return "", "", ""
    kind = getattr(obj, "verdict", "")
    kind = str(getattr(kind, "value", kind)).lower()
    return kind, str(getattr(obj, "reason", "") or ""), str(getattr(obj, "context", "") or "")


def _pre_answer(obj: Any) -> HookResponse:
    kind, reason, context = _verdict(obj)
    if kind in ("deny", "ask"):
        return wire.pre_tool_use(kind, reason, context)
    if kind == "warn":
        return wire.pre_tool_use(None, context="\n".join(t for t in (reason, context) if t))
    return wire.pre_tool_use(None, context=context)


# -- events ---------------------------------------------------------------------------------------
def handle_pre_tool_use(event: HookEvent) -> HookResponse:
    """Bash: the command guard's verdict. Agent/Task with worktree isolation: the creation
    verdict. Never answers ``allow`` (that would skip the user's permission prompt)."""
    if event.tool_name == "Bash":
        from branchkeeper.adapters.claude import events

        return _pre_answer(events.bash_verdict(event))
    if event.tool_name in ("Agent", "Task") and event.tool_input.get("isolation") == "worktree":
        from branchkeeper.adapters.claude import events

        return _pre_answer(events.creation_verdict(None, cwd=event.cwd))
    return wire.quiet()


def _succeeded(event: HookEvent) -> bool:
    response = event.tool_response
    if not isinstance(response, dict):
        return True
    if response.get("interrupted") is True or response.get("is_error") is True:
        return False
    for key in ("exit_code", "exitCode", "returncode"):
        code = response.get(key)
        if isinstance(code, int) and code != 0:
            return False
    return True


def _current_branch(where: Path) -> str | None:
    """Short name of the branch checked out at ``where`` (one ``symbolic-ref -q HEAD``)."""
    from branchkeeper.git.run import run_git

    result = run_git(["symbolic-ref", "-q", "HEAD"], cwd=where, check=False, timeout=10)
    ref = result.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    # exit 1: detached HEAD, no branch to record
    if result.returncode != 0 or not ref.startswith("refs/heads/"):
        return None
    return ref[len("refs/heads/"):]


def _touch(event: HookEvent, where: Path, common: Path) -> None:
    """Record a touch of the branch at ``where``: once per branch per thread per session."""
    from branchkeeper.state import branch_records as records

    branch = _current_branch(where)
    if branch is None:
        return
    store = _session(common, event)
    if store.read().is_touched(event.agent_id, branch):
        return
    with store.update() as state:
        if state.mark_touched(event.agent_id, branch):
            records.add_touch(where, branch, session_id=event.session_id,
                              agent_id=event.agent_id)
            records.bind_creator_agent(where, branch, session_id=event.session_id,
                                       agent_id=event.agent_id)
    _flush_problems(store, event)


def _existing_dir(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate
    return None


def handle_post_tool_use(event: HookEvent) -> HookResponse:
    """Creator records, touch records, evacuation records, and cleanup after merge."""
    if not _succeeded(event):
        return wire.quiet()
    from branchkeeper.adapters.claude import events

    if event.tool_name == "Bash":
        command = event.command
        calls = events.git_invocations(command)
        common = _common_dir(event.cwd) if calls else None
        if common is not None:
            from branchkeeper.state import branch_records as records

            names = events.created_branches(command, cwd=event.cwd)
            for name in dict.fromkeys(names):
                records.write_creator(event.cwd, name, session_id=event.session_id,
                                      agent_id=event.agent_id, route=records.ROUTE_BASH)
            if any(call[0] in TOUCH_SUBCOMMANDS for call in calls):
                _touch(event, event.cwd, common)
    elif event.tool_name in WRITE_TOOLS:
        target = event.tool_input.get("file_path") or event.tool_input.get("notebook_path")
        if isinstance(target, str) and target.startswith("/"):
            from pathlib import Path

            where = _existing_dir(Path(target).parent)
            common = _common_dir(where) if where is not None else None
            if where is not None and common is not None:
                _touch(event, where, common)
    found = events.evacuations(event)
    if found:
        common = _common_dir(event.cwd)
        if common is not None:
            store = _session(common, event)
            with store.update() as state:
                for record in found:
                    state.add_evacuation(event.agent_id, dict(record))
            _flush_problems(store, event)
    return wire.context("PostToolUse", events.post_tool_use_context(event) or "")


def handle_user_prompt_submit(event: HookEvent) -> HookResponse:
    """Advance the main thread's turn counter (the same-turn evacuation rule's clock)."""
    common = _common_dir(event.cwd)
    if common is not None:
        store = _session(common, event)
        with store.update() as state:
            state.advance_turn()
        _flush_problems(store, event)
    return wire.quiet()


def handle_session_start(event: HookEvent) -> HookResponse:
    """The sweep summary, as SessionStart ``additionalContext``."""
    from branchkeeper.adapters.claude import events

    return wire.context("SessionStart", events.session_start_context(event) or "")


def handle_stop(event: HookEvent) -> HookResponse:
    """Stop and SubagentStop: block with the Stop guard's reason, giving way after the
    verdict's ``max_blocks`` (default :data:`MAX_STOP_BLOCKS`) blocks in a row (then
    ``abandoned_at_stop`` records the branches). A warn verdict, or an allow with context, is a
    non-blocking ``systemMessage``."""
    from branchkeeper.adapters.claude import events

    verdict = events.stop_verdict(event)
    kind, reason, context = _verdict(verdict)
    max_blocks = getattr(verdict, "max_blocks", MAX_STOP_BLOCKS)
    common = _common_dir(event.cwd)
    blocking = kind in ("deny", "block") and bool(reason)
    notice = "" if blocking else "\n".join(t for t in (reason, context) if t)
    if common is None:
        # No place to count blocks: block once, never twice in a row.
        if blocking and not event.stop_hook_active:
            return wire.stop_block(reason)
        return wire.stop_notice(notice)
    store = _session(common, event)
    key = store.read().thread_key(event.agent_id)
    if not blocking:
        if key in store.read().stop_blocks:
            with store.update() as state:
                state.reset_stop_blocks(event.agent_id)
        return wire.stop_notice(notice)
    with store.update() as state:
        give_way = state.stop_blocks.get(key, 0) >= max_blocks
        if give_way:
            state.reset_stop_blocks(event.agent_id)
        else:
            state.bump_stop_blocks(event.agent_id)
    _flush_problems(store, event)
    if give_way:
        _log(event.cwd, event.event, f"gave way after {max_blocks} blocks: {reason[:500]}")
        events.abandoned_at_stop(event, verdict)
        return wire.quiet()
    return wire.stop_block(reason)


def handle_subagent_stop(event: HookEvent) -> HookResponse:
    """SubagentStop: the same guard as Stop, judged for the stopping sub-agent."""
    return handle_stop(event)


def handle_worktree_create(event: HookEvent) -> HookResponse:
    """Create ``<project>/.claude/worktrees/<name>`` on ``worktree-<name>`` (see worktrees)."""
    from branchkeeper.adapters.claude.worktrees import create_worktree

    return create_worktree(event, log=lambda m: _log(event.cwd, event.event, m))


def handle_worktree_remove(event: HookEvent) -> HookResponse:
    """Remove the worktree without force (unless proven safe); no decision output."""
    from branchkeeper.adapters.claude.worktrees import remove_worktree

    return remove_worktree(event, log=lambda m: _log(event.cwd, event.event, m))


HANDLERS: dict[str, Callable[[HookEvent], HookResponse]] = {
    "PreToolUse": handle_pre_tool_use,
    "PostToolUse": handle_post_tool_use,
    "UserPromptSubmit": handle_user_prompt_submit,
    "SessionStart": handle_session_start,
    "Stop": handle_stop,
    "SubagentStop": handle_subagent_stop,
    "WorktreeCreate": handle_worktree_create,
    "WorktreeRemove": handle_worktree_remove,
}


# -- entry points ---------------------------------------------------------------------------------
def _write(stream: TextIO | None, text: str) -> bool:
    """Write and flush ``text``; False when the stream is closed or failing (never raises)."""
    if stream is None:
        return False
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _emit(response: HookResponse) -> int:
    """Print the answer. When stdout cannot carry it and it refuses something (a deny, a Stop
    block, a created worktree's path), say so on stderr with exit 2 instead, which Claude Code
    also reads as a refusal: a closed stdout must never turn a deny into an allow."""
    if response.stderr:
        _write(sys.stderr, response.stderr.rstrip("\n") + "\n")
    if response.stdout and not _write(sys.stdout, response.stdout) and response.blocking:
        _write(sys.stderr, response.blocking.rstrip("\n") + "\n")
        return wire.EXIT_BLOCK
    return response.exit_code


def _launch_dir() -> Path | None:
    """Where the host started the hook, for the log when the event names no ``cwd`` (its JSON
    is malformed): ``$CLAUDE_PROJECT_DIR`` when it is absolute, else the process's directory."""
    from pathlib import Path  # a failure path: the hook's fast path never loads pathlib

    project = os.environ.get("CLAUDE_PROJECT_DIR", "")
    if project.startswith("/"):
        return Path(project)
    try:
        return Path(os.getcwd())
    except OSError:  # the directory was removed under us
        return None


def _failure(event_name: str, message: str, where: Path | None) -> int:
    _log(where, event_name, message)
    if event_name == "WorktreeCreate":
        return _emit(HookResponse(exit_code=1, stderr=(
            f"branchkeeper: WorktreeCreate failed, the worktree was not created: {message}")))
    return _emit(HookResponse(stderr=f"branchkeeper hook {event_name}: ignored: {message}"))


def main_fast(argv: list[str]) -> int:
    """Run ``branchkeeper hook EVENT`` with the event JSON on stdin; return the exit status."""
    if not argv or argv[0] in ("-h", "--help"):
        import argparse

        parser = argparse.ArgumentParser(prog="branchkeeper hook")
        _configure(parser)
        if argv:
            parser.print_help()
            return 0
        return _failure("?", "no hook event given", None)
    event_name = argv[0]
    if len(argv) > 1:
        return _failure(event_name, f"unexpected arguments {argv[1:]!r}", _launch_dir())
    if event_name not in wire.EVENTS:
        return _failure(event_name, f"unknown hook event {event_name!r}", _launch_dir())
    try:
        data = sys.stdin.buffer.read(wire.MAX_INPUT_BYTES + 1)
        event = wire.parse_event(event_name, data)
    except wire.InputError as exc:
        return _failure(event_name, f"malformed hook input: {exc}", _launch_dir())
    except Exception as exc:
        return _failure(event_name, f"could not read hook input: {_describe(exc)}",
                        _launch_dir())
    if event.hook_event_name and event.hook_event_name != event_name:
        _log(event.cwd, event_name, f"hook_event_name {event.hook_event_name!r} differs; "
                                    f"answering as {event_name}")
    try:
        response = HANDLERS[event_name](event)
    except Exception as exc:
        if os.environ.get("BRANCHKEEPER_DEBUG"):
            raise
        return _failure(event_name, f"internal error: {_describe(exc)}", event.cwd)
    return _emit(response)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Answer one Claude Code hook event: reads the event JSON on stdin and prints that "
        "event's answer. Installed by `branchkeeper install`; not meant to be run by hand."
    )
    parser.add_argument("event", choices=wire.EVENTS, help="the hook event name")


def register(subparsers: Any) -> None:
    """Add the ``hook`` command (listed in ``branchkeeper --help``)."""
    parser = subparsers.add_parser("hook", help="answer one Claude Code hook event (stdin JSON)")
    _configure(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """argparse path (normally bypassed by :func:`main_fast`)."""
    return main_fast([str(args.event)])
