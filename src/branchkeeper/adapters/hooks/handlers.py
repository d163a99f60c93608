"""Each event kind mapped onto the guards, the records and the summaries (issue 6 section 1,
issue 14): :func:`handle` takes a host-neutral
:class:`~branchkeeper.adapters.hooks.event.HookEvent` and returns an
:class:`~branchkeeper.adapters.hooks.answer.Answer`; the host renders it.

Decisions come from :mod:`branchkeeper.adapters.hooks.glue` and, for the stop events,
:mod:`~branchkeeper.adapters.hooks.stopping` (imported inside the handler that
needs it); this module keeps the session counters (turns, touches, Stop blocks, pending
worktree binds). A tool event a handler does not judge answers :data:`SILENT`.
"""

from __future__ import annotations

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import event as E
from branchkeeper.adapters.hooks.log import common_dir, log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.state.session import SessionStore

#: Stop blocks in a row after which the guard gives way (section 6).
MAX_STOP_BLOCKS = 3
#: Shell git subcommands that count as a touch of the checkout's branch (section 6).
TOUCH_SUBCOMMANDS = frozenset({"commit", "merge", "rebase", "cherry-pick", "am", "revert",
                               "reset", "switch", "checkout", "pull"})
#: Those that can stop half-way and leave the checkout mid-operation (conflicts): a failure
#: of one of these is still a touch.
HALFWAY_SUBCOMMANDS = frozenset({"merge", "rebase", "cherry-pick", "am", "revert", "pull"})


def _session(common: Path, event: HookEvent) -> SessionStore:
    from branchkeeper.state.session import SessionStore

    return SessionStore(common, event.session_id)


def _flush_problems(store: SessionStore, event: HookEvent) -> None:
    for problem in store.problems:
        log(event.cwd, event.wire_event, problem)


def _verdict(obj: Any) -> tuple[str, str, str]:
    """(kind, reason, context) of a glue verdict; kind is "" for None."""
    if obj is None:
        return "", "", ""
    kind = getattr(obj, "verdict", "")
    kind = str(getattr(kind, "value", kind)).lower()
    return kind, str(getattr(obj, "reason", "") or ""), str(getattr(obj, "context", "") or "")


def _pre_answer(obj: Any) -> A.Answer:
    kind, reason, context = _verdict(obj)
    if kind == "deny":
        return A.Answer(A.DENY, reason, context)
    if kind == "ask":
        return A.Answer(A.ASK, reason, context)
    text = "\n".join(t for t in (reason, context) if t) if kind == "warn" else context
    return A.Answer(A.CONTEXT, text) if text else A.SILENT


# -- before a tool --------------------------------------------------------------------------------
def pre_tool(event: HookEvent) -> A.Answer:
    """A shell command: the command guard's verdict. A file write: the tamper rule's verdict for
    the paths it writes (issue 19). An agent spawn into a new worktree: the
    creation verdict (the branch named when the host names one). Never an allow that would
    skip the person's permission prompt (hosts render CONTEXT without one)."""
    from branchkeeper.adapters.hooks import glue

    if event.tool == E.SHELL:
        return _pre_answer(glue.bash_verdict(event))
    if event.tool == E.FILE_WRITE:
        from branchkeeper.adapters.hooks.writes import write_verdict

        return _pre_answer(write_verdict(event))
    if event.tool == E.AGENT_SPAWN and (event.isolation or event.branch):
        answer = _pre_answer(glue.creation_verdict(event.branch or None, cwd=event.cwd))
        if event.isolation and answer.kind not in (A.DENY, A.ASK):
            _note_isolated_spawn(event)
        return answer
    return A.SILENT


def _note_isolated_spawn(event: HookEvent) -> None:
    """An allowed spawn into a new worktree: the next WorktreeCreate of this session is that
    sub-agent's (see :func:`subagent_start`)."""
    common = common_dir(event.cwd)
    if common is None:
        return
    store = _session(common, event)
    with store.update() as state:
        state.isolated_spawns += 1
    _flush_problems(store, event)


# -- after a tool ---------------------------------------------------------------------------------
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
    branch = _current_branch(where)
    if branch is not None:
        _touch_branch(event, where, common, branch)


def _touch_branch(event: HookEvent, where: Path, common: Path, branch: str) -> None:
    from branchkeeper.state import branch_records as records

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


def _touch_written(event: HookEvent) -> None:
    """A touch of the branch checked out where each written file lives (once per worktree)."""
    from pathlib import Path

    seen: set[str] = set()
    for write in event.writes:
        where = _existing_dir(Path(write.path).parent)
        if where is None or str(where) in seen:
            continue
        seen.add(str(where))
        common = common_dir(where)
        if common is not None:
            _touch(event, where, common)


def post_tool(event: HookEvent) -> A.Answer:
    """Creator records, touch records, evacuation records, and cleanup after merge. A tool
    the host reports as failed goes to :func:`post_tool_failure` (never recorded as a
    success)."""
    if event.succeeded is False:
        return post_tool_failure(event)
    from branchkeeper.adapters.hooks import glue

    if event.tool == E.SHELL:
        command = event.command
        calls = glue.git_invocations(command)
        common = common_dir(event.cwd) if calls else None
        if common is not None:
            from branchkeeper.state import branch_records as records

            names = glue.created_branches(command, cwd=event.cwd)
            for name in dict.fromkeys(names):
                records.write_creator(event.cwd, name, session_id=event.session_id,
                                      agent_id=event.agent_id, route=records.ROUTE_BASH)
            if any(call[0] in TOUCH_SUBCOMMANDS for call in calls):
                _touch(event, event.cwd, common)
    elif event.tool == E.FILE_WRITE:
        _touch_written(event)
    found = glue.evacuations(event)
    if found:
        common = common_dir(event.cwd)
        if common is not None:
            store = _session(common, event)
            with store.update() as state:
                for record in found:
                    state.add_evacuation(event.agent_id, dict(record))
            _flush_problems(store, event)
    text = glue.post_tool_use_context(event) or ""
    return A.Answer(A.CONTEXT, text) if text else A.SILENT


def post_tool_failure(event: HookEvent) -> A.Answer:
    """A tool that failed: nothing is recorded as done (no creator record, no evacuation, no
    cleanup after a merge that did not happen), but a failed ``git merge``/``rebase``/
    ``cherry-pick``... (:data:`HALFWAY_SUBCOMMANDS`) may have left the checkout mid-operation,
    so it still counts as a touch of that branch (the Stop guard then judges it)."""
    if event.tool == E.SHELL:
        from branchkeeper.adapters.hooks import glue

        calls = glue.git_invocations(event.command)
        if any(call[0] in HALFWAY_SUBCOMMANDS for call in calls):
            common = common_dir(event.cwd)
            if common is not None:
                _touch(event, event.cwd, common)
    elif event.tool == E.FILE_WRITE:
        _touch_written(event)
    return A.SILENT


# -- prompts and sessions -------------------------------------------------------------------------
def prompt(event: HookEvent) -> A.Answer:
    """Advance the main thread's turn counter (the same-turn evacuation rule's clock)."""
    common = common_dir(event.cwd)
    if common is not None:
        store = _session(common, event)
        with store.update() as state:
            state.advance_turn()
        _flush_problems(store, event)
    return A.SILENT


def session_start(event: HookEvent) -> A.Answer:
    """The sweep summary, as context for the agent."""
    from branchkeeper.adapters.hooks import glue

    text = glue.session_start_context(event) or ""
    return A.Answer(A.CONTEXT, text) if text else A.SILENT


def session_end(event: HookEvent) -> A.Answer:
    """A last summary of what the session leaves behind (dirty, unpushed, merged but not
    deleted, on the branches its threads touched), recorded for the next SessionStart and
    shown to the person where the host shows anything."""
    from branchkeeper.adapters.hooks import stopping

    text = stopping.session_end_summary(event) or ""
    return A.Answer(A.NOTICE, text) if text else A.SILENT


def stop_failure(event: HookEvent) -> A.Answer:
    """The agent died on an API error (rate limit, overload...): its branches are recorded as
    abandoned, and the next SessionStart reports them. No output (the host ignores it)."""
    from branchkeeper.adapters.hooks import stopping

    stopping.stopped_by_failure(event)
    return A.SILENT


def subagent_start(event: HookEvent) -> A.Answer:
    """Bind the new sub-agent to its worktree and branch at once (section 6), instead of at its
    first tool call: the branch the host names for it (after the creation verdict when that
    branch is new), else the one worktree a single pending isolated spawn of this session made
    (two or more pending: which is whose is unknown, so none is bound here)."""
    from branchkeeper.adapters.hooks import glue
    from branchkeeper.state import branch_records as records

    if event.branch:
        answer = _pre_answer(glue.creation_verdict(event.branch, cwd=event.cwd))
        if answer.kind in (A.DENY, A.ASK):
            return answer
    common = common_dir(event.cwd)
    if common is None or not event.agent_id:
        return A.SILENT
    if event.branch:
        if records.branch_exists(event.cwd, event.branch):
            _touch_branch(event, event.cwd, common, event.branch)
        return A.SILENT
    store = _session(common, event)
    with store.update() as state:
        pending = state.take_pending_worktrees()
    _flush_problems(store, event)
    if len(pending) == 1:
        from pathlib import Path

        where = Path(pending[0])
        branch = _current_branch(where) if where.is_dir() else None
        if branch is not None:
            _touch_branch(event, where, common, branch)
    return A.SILENT


# -- stopping -------------------------------------------------------------------------------------
def stop(event: HookEvent) -> A.Answer:
    """Stop and SubagentStop: block with the Stop guard's reason, giving way after the
    verdict's ``max_blocks`` (default :data:`MAX_STOP_BLOCKS`) blocks in a row (then
    ``abandoned_at_stop`` records the branches). A warn verdict, or an allow with context, is a
    non-blocking notice."""
    if event.kind == E.SUBAGENT_STOP and not event.agent_id:
        return A.SILENT  # a host that does not say which sub-agent: its parent's stop judges
    from branchkeeper.adapters.hooks import stopping

    verdict = stopping.stop_verdict(event)
    kind, reason, context = _verdict(verdict)
    max_blocks = getattr(verdict, "max_blocks", MAX_STOP_BLOCKS)
    common = common_dir(event.cwd)
    blocking = kind in ("deny", "block") and bool(reason)
    notice = A.Answer(A.NOTICE, "" if blocking else "\n".join(t for t in (reason, context) if t))
    quiet = notice if notice.text else A.SILENT
    if common is None:
        # No place to count blocks: block once, never twice in a row.
        if blocking and not event.stop_hook_active:
            return A.Answer(A.BLOCK, reason)
        return quiet
    store = _session(common, event)
    key = store.read().thread_key(event.agent_id)
    if not blocking:
        if key in store.read().stop_blocks:
            with store.update() as state:
                state.reset_stop_blocks(event.agent_id)
        return quiet
    with store.update() as state:
        give_way = state.stop_blocks.get(key, 0) >= max_blocks
        if give_way:
            state.reset_stop_blocks(event.agent_id)
        else:
            state.bump_stop_blocks(event.agent_id)
    _flush_problems(store, event)
    if give_way:
        log(event.cwd, event.wire_event, f"gave way after {max_blocks} blocks: {reason[:500]}")
        stopping.abandoned_at_stop(event, verdict)
        return A.SILENT
    return A.Answer(A.BLOCK, reason)


# -- worktrees ------------------------------------------------------------------------------------
def worktree_create(event: HookEvent) -> A.Answer:
    """Create the worktree in the host's layout (see :mod:`~branchkeeper.adapters.hooks.worktrees`)."""
    from branchkeeper.adapters.hooks.worktrees import create_worktree

    made = create_worktree(event, log=lambda m: log(event.cwd, event.wire_event, m))
    if made.kind == A.PATH:
        _pending_bind(event, made.text)
    return made


def _pending_bind(event: HookEvent, path: str) -> None:
    """A worktree made for an isolated spawn this session announced: remember it for that
    sub-agent's SubagentStart."""
    common = common_dir(event.cwd)
    if common is None:
        return
    store = _session(common, event)
    with store.update() as state:
        if state.isolated_spawns > 0:
            state.isolated_spawns -= 1
            state.add_pending_worktree(path)
    _flush_problems(store, event)


def worktree_remove(event: HookEvent) -> A.Answer:
    """Remove the worktree without force (unless proven safe); a note, never a decision."""
    from branchkeeper.adapters.hooks.worktrees import remove_worktree

    return remove_worktree(event, log=lambda m: log(event.cwd, event.wire_event, m))


HANDLERS: dict[str, Callable[[HookEvent], A.Answer]] = {
    E.PRE_TOOL: pre_tool,
    E.POST_TOOL: post_tool,
    E.POST_TOOL_FAILURE: post_tool_failure,
    E.PROMPT: prompt,
    E.SESSION_START: session_start,
    E.SESSION_END: session_end,
    E.STOP: stop,
    E.SUBAGENT_STOP: stop,
    E.SUBAGENT_START: subagent_start,
    E.STOP_FAILURE: stop_failure,
    E.WORKTREE_CREATE: worktree_create,
    E.WORKTREE_REMOVE: worktree_remove,
    E.IGNORED: lambda event: A.SILENT,
}


def handle(event: HookEvent) -> A.Answer:
    """The answer to ``event`` (errors propagate: the entry point fails open and logs)."""
    return HANDLERS[event.kind](event)
