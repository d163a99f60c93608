"""The Stop, SubagentStop, SessionEnd and StopFailure events mapped onto the Stop guard and
the abandoned-work records (first document, section 6; issue 14).
:mod:`branchkeeper.adapters.hooks.handlers` calls these with a host-neutral
:class:`~branchkeeper.adapters.hooks.event.HookEvent`.

As in :mod:`~branchkeeper.adapters.hooks.glue`, whose repository and session helpers it shares,
the module-level imports are the standard library only; every heavier module is imported inside
the function that needs it.
"""

from __future__ import annotations

import os
import time

from branchkeeper.adapters.hooks.glue import HookVerdict, repo_and_config, session_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.git.repo import RepoFacts
    from branchkeeper.model.config import Config
    from branchkeeper.policy.stop import StopJudgement


def _yielding(facts: RepoFacts, config: Config) -> bool:
    """The Stop guard's escape hatches, both a person's: the host process's environment
    variable (out of the agent's reach), or the yield file under the common dir (writing there
    is ``R-BRANCHKEEPER-TAMPER``: only a person creates it; issue 19)."""
    sg = config.branches.stop_guard
    if os.environ.get(sg.yield_env):
        return True
    return (facts.common_dir / "branchkeeper" / sg.yield_file).exists()


def _noisy_lines(facts: RepoFacts, config: Config) -> list[str]:
    from branchkeeper.state.last_sweep import read_last_sweep

    rows = read_last_sweep(facts.common_dir)
    found = sorted((name for name, row in rows.items() if row[2] in ("noisy", "block")))
    if not found:
        return []
    shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    return [f"branchkeeper: {len(found)} dormant branch(es) need finishing, parking or "
            f"deleting: {shown}"]


def _judge(facts: RepoFacts, config: Config, *, session_id: str, agent_id: str,
           ) -> tuple[StopJudgement | None, tuple[str, ...]]:
    """The Stop guard's judgement for the thread ``<session_id>:<agent_id>`` (None when it
    answers for no branch), and the branches it answers for."""
    from branchkeeper.analysis.stop_facts import gather_stop_facts
    from branchkeeper.policy.stop import judge_stop, judged_branches
    from branchkeeper.state.branch_records import read_records

    sg = config.branches.stop_guard
    records = read_records(facts.root)
    threads = {name: rec.threads for name, rec in records.items()}
    scopes = judged_branches(threads, session_id=session_id, agent_id=agent_id)
    if not scopes:
        return None, ()
    stop_facts = gather_stop_facts(facts, config, scopes)
    return judge_stop(stop_facts, scopes, threads, session_id=session_id, agent_id=agent_id,
                      unpushed_subagent=sg.unpushed_subagent,
                      include_default=sg.include_default), tuple(sorted(scopes))


def stop_verdict(event: HookEvent) -> HookVerdict | None:
    """The Stop / SubagentStop guard (section 6): deny (= block) with a message naming each
    branch, failed check and command; warn when ``stop_guard.mode: warn`` or only advisory
    findings; on a main-thread stop with nothing to block, the noisy-stage line at most once
    per ``noisy_interval_minutes`` per session. None when there is nothing to say, the mode is
    off, or the yield marker is present."""
    from branchkeeper.errors import NotARepositoryError

    try:
        facts, config = repo_and_config(event.cwd)
    except NotARepositoryError:
        return None
    sg = config.branches.stop_guard
    if sg.mode == "off" or _yielding(facts, config):
        return None
    judgement, _ = _judge(facts, config, session_id=event.session_id, agent_id=event.agent_id)
    if judgement is not None and judgement.findings:
        findings = tuple((f.branch, f.check.value) for f in judgement.findings if f.blocks)
        if judgement.blocking and sg.mode == "block":
            return HookVerdict("deny", judgement.message(blocking=True),
                               max_blocks=sg.max_blocks, findings=findings)
        return HookVerdict("warn", "", judgement.message(blocking=False))
    if event.agent_id:
        return None
    lines = _noisy_lines(facts, config)
    if not lines:
        return None
    store = session_store(event)
    with store.update() as state:
        ok = state.rate_ok("stop_noisy", now=time.time(),
                           period_s=sg.noisy_interval_minutes * 60.0)
    return HookVerdict("warn", "", "\n".join(lines)) if ok else None


def _by_branch(pairs: Any) -> dict[str, list[str]]:
    by_branch: dict[str, list[str]] = {}
    for branch, check in pairs:
        by_branch.setdefault(branch, []).append(check)
    return by_branch


def abandoned_at_stop(event: HookEvent, verdict: Any) -> None:
    """The guard gave way: record each branch it held the stop for (read at SessionStart)."""
    from branchkeeper.state.abandoned import record_abandoned
    from branchkeeper.state.statedir import common_dir_of

    by_branch = _by_branch(getattr(verdict, "findings", ()))
    if by_branch:
        record_abandoned(common_dir_of(event.cwd), list(by_branch.items()), thread=event.thread)


def session_end_summary(event: HookEvent) -> str | None:
    """SessionEnd: what the session leaves behind on the branches its threads (main thread and
    sub-agents) created or touched, one line per failed check with the command that finishes
    it; every such branch is also recorded (cause ``session_end``) for the next SessionStart.
    None when nothing is left, outside a repository, or with ``stop_guard.mode: off``. Bounded
    by the Stop guard's git calls (no inventory), so it fits the host's short SessionEnd
    timeout."""
    from branchkeeper.errors import NotARepositoryError
    from branchkeeper.state.abandoned import SESSION_END, record_abandoned

    try:
        facts, config = repo_and_config(event.cwd)
    except NotARepositoryError:
        return None
    if config.branches.stop_guard.mode == "off":
        return None
    judgement, _ = _judge(facts, config, session_id=event.session_id, agent_id="")
    if judgement is None or not judgement.findings:
        return None
    by_branch = _by_branch((f.branch, f.check.value) for f in judgement.findings)
    record_abandoned(facts.common_dir, list(by_branch.items()), thread=event.thread,
                     cause=SESSION_END)
    return judgement.message(blocking=False).replace(
        "before you stop, these branches still need work:",
        "this session ends leaving work unfinished on these branches:", 1)


def stopped_by_failure(event: HookEvent) -> None:
    """StopFailure: the thread died on an API error (``event.error``: ``rate_limit``,
    ``overloaded``, ...). Every branch it answers for is recorded as abandoned (cause
    ``stop_failure``) with the checks that still fail, so the next SessionStart reports it."""
    from branchkeeper.errors import NotARepositoryError
    from branchkeeper.state.abandoned import STOP_FAILURE, record_abandoned

    try:
        facts, config = repo_and_config(event.cwd)
    except NotARepositoryError:
        return
    judgement, names = _judge(facts, config, session_id=event.session_id,
                              agent_id=event.agent_id)
    if not names:
        return
    failed = _by_branch((f.branch, f.check.value) for f in judgement.findings) \
        if judgement is not None else {}
    label = f"stopped by {event.error or 'an API error'}"
    record_abandoned(facts.common_dir, [(n, [*failed.get(n, []), label]) for n in names],
                     thread=event.thread, cause=STOP_FAILURE)
