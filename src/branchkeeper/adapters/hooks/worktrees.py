"""WorktreeCreate and WorktreeRemove (spec sections 3 and 8), host-neutral: the events of a
host whose worktrees are made by a hook (Claude Code today; no other host has these events).

A WorktreeCreate hook REPLACES the host's own worktree creation: we create the worktree in
Claude Code's layout (``<repository root>/.claude/worktrees/<name>`` on a new branch
``worktree-<name>`` from HEAD), write the creator record (route ``worktree_create``, empty
agent) and print the absolute path as the last stdout line. Any non-zero exit aborts the
creation. The same name again is idempotent: an existing worktree at that path is printed
without being counted or judged.

WorktreeRemove has no decision output: we map the path to its branch, read the worktree's one
record (:mod:`branchkeeper.analysis.worktree_record`) and keep the worktree, saying why, when it
holds ignored files the ignored-content rule keeps (with the ``worktree retire
--archive-ignored`` command that saves them first), carries an explicit hold or a nested
checkout, or is the checkout of the default branch or a line; otherwise we remove it without
``--force`` (with it only when :func:`~branchkeeper.adapters.hooks.glue.force_removal_safe`
proves it safe), never delete a directory by hand, and delete the branch only through
:func:`~branchkeeper.adapters.hooks.glue.delete_if_proven` when its creator route is
``worktree_create``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.adapters.hooks import answer as A
from branchkeeper.adapters.hooks import glue as events
from branchkeeper.adapters.hooks.event import HookEvent
from branchkeeper.git.repo import RepoFacts, Worktree, list_worktrees, repo_facts
from branchkeeper.git.run import run_git
from branchkeeper.state import branch_records as records
from branchkeeper.state.faults import fault

if TYPE_CHECKING:
    from branchkeeper.actions.interrupt import Signals

WORKTREES_DIR = Path(".claude") / "worktrees"
EXCLUDE_LINE = "/.claude/worktrees/"

Log = Callable[[str], None]


def _project_dir(event: HookEvent) -> Path:
    # The project directory stays at the project root while ``cwd`` follows the agent.
    project = os.environ.get("CLAUDE_PROJECT_DIR", "")
    return Path(project) if project.startswith("/") else event.cwd


def _same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _exclude(common_dir: Path) -> None:
    """Add ``/.claude/worktrees/`` to ``info/exclude`` so a worktree inside the main checkout
    never shows there as untracked content (which would read as a dirty checkout)."""
    path = common_dir / "info" / "exclude"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if EXCLUDE_LINE in text.splitlines():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(("" if not text or text.endswith("\n") else "\n") + EXCLUDE_LINE + "\n")
    except OSError:
        pass


def create_worktree(event: HookEvent, *, log: Log) -> A.Answer:
    """Handle WorktreeCreate; see the module docstring.

    Returns :data:`~branchkeeper.adapters.hooks.answer.PATH` (the absolute path, and a note),
    :data:`~branchkeeper.adapters.hooks.answer.REFUSE` for a name that cannot be used (the
    reason :func:`~branchkeeper.policy.worktree_name.worktree_name_decision` gives, as
    ``branchkeeper check --creation`` does) or when
    :func:`~branchkeeper.adapters.hooks.glue.creation_verdict` denies, or
    :data:`~branchkeeper.adapters.hooks.answer.ERROR` for a path that exists and is not a
    worktree. Git failures raise (the hook aborts the creation).
    """
    from branchkeeper.policy.worktree_name import worktree_name_decision

    name = event.worktree_name
    named = worktree_name_decision(name)  # the same check as `branchkeeper check --creation`
    if named.reason:
        return A.Answer(A.REFUSE, f"branchkeeper: [{named.rule_id}] {named.reason} "
                                  f"{named.way_out}")
    facts = repo_facts(_project_dir(event))
    if facts.toplevel is None:
        return A.Answer(A.ERROR, "branchkeeper: WorktreeCreate needs a work tree")
    top = facts.toplevel
    path = top / WORKTREES_DIR / name
    branch = f"worktree-{name}"
    for worktree in list_worktrees(facts):
        if _same_path(worktree.path, path):
            return A.Answer(A.PATH, str(path))  # the idempotent re-fire: never counted
    if os.path.lexists(path):
        return A.Answer(A.ERROR, f"branchkeeper: {path} exists and is not a worktree of this "
                                 "repository; not touching it")
    note = ""
    verdict = events.creation_verdict(branch, cwd=top)
    kind = str(getattr(getattr(verdict, "verdict", ""), "value",
                       getattr(verdict, "verdict", ""))).lower() if verdict else ""
    reason = str(getattr(verdict, "reason", "") or "") if verdict else ""
    if kind == "deny":
        return A.Answer(A.REFUSE, reason or f"branchkeeper: creating {branch} was refused")
    if kind == "warn" and reason:
        note = reason
    created = not records.branch_exists(top, branch)
    if created and run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=top,
                           check=False).returncode != 0:
        return A.Answer(A.ERROR, "branchkeeper: the repository has no commit yet, so there is "
                                 "nothing to start a worktree from; make a first commit")
    args = (["worktree", "add", "-q", "-b", branch, str(path), "HEAD"] if created else
            # Left over from an earlier worktree: check it out again, nothing new is created.
            ["worktree", "add", "-q", str(path), branch])
    res = run_git(args, cwd=top, check=False)
    if res.returncode != 0:
        detail = res.stderr.decode("utf-8", "replace").strip().splitlines()
        return A.Answer(A.ERROR, f"branchkeeper: git could not create the worktree {path}: "
                                 f"{detail[-1] if detail else 'exit ' + str(res.returncode)}")
    _exclude(facts.common_dir)
    if created:
        try:
            records.write_creator(top, branch, session_id=event.session_id, agent_id="",
                                  route=records.ROUTE_WORKTREE_CREATE)
        except Exception as exc:  # the worktree exists; a missing record must not abort it
            log(f"creator record for {branch} not written: {exc}")
    return A.Answer(A.PATH, str(path), note)


def _short(ref: str | None) -> str | None:
    if ref and ref.startswith("refs/heads/"):
        return ref[len("refs/heads/"):]
    return None


def _pin_unreferenced_head(wt: Worktree, where: Path, common_dir: Path, log: Log) -> bool | None:
    """Save before destroy: a detached HEAD that no ref contains gets a ref of ours first.

    Returns None when nothing needed pinning, True when pinned (and journaled, so the ref and
    the restore command are on record), False when it could not be pinned (keep the worktree).
    """
    if wt.branch is not None or wt.head is None:
        return None
    from branchkeeper.actions.refupdate import RefOutcome, create_refs
    from branchkeeper.analysis.worktree_model import ref_containing
    from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus

    try:
        if ref_containing(where, wt.head) is not None:
            return None
    except Exception:  # cannot tell: pin, which costs nothing
        pass
    pin = f"refs/branchkeeper/pinned/{wt.path.name}-{wt.head[:10]}"
    restore = f"git worktree add {shlex.quote(str(wt.path))} {shlex.quote(pin)}"
    journal = Journal(common_dir)
    op_id = journal.begin("worktree-remove", [JournalItem(pin, wt.head, None, restore)],
                          bundle=None, note=f"WorktreeRemove {wt.path}: detached HEAD pinned")
    result = create_refs(where, {pin: wt.head}, must_not_exist=False)[pin]
    ok = result.outcome in (RefOutcome.CREATED, RefOutcome.PRESENT)
    journal.record(op_id, ItemResult(pin, ItemOutcome.KEPT, "pinned before removal" if ok
                                     else result.reason))
    journal.end(op_id, OpStatus.DONE if ok else OpStatus.FAILED)
    log(f"pinned the detached HEAD of {wt.path} as {pin}" if ok else
        f"could not pin the detached HEAD of {wt.path}: {result.reason}")
    return ok


#: Retire gates the WorktreeRemove hook leaves to others: it runs inside the worktree it
#: removes (not_self), pins a detached HEAD itself (commit_kept), and lets git refuse a dirty
#: tree (clean) or a locked one (unlocked) in its own words.
_HOOK_IGNORES = frozenset({"not_self", "commit_kept", "clean", "unlocked"})


def _record_blockers(facts: RepoFacts, worktrees: list[Worktree], wt: Worktree,
                     session_id: str = "") -> list[str]:
    """Why the worktree's record keeps it (the checkout of the default branch or a line, an
    explicit hold, a nested checkout, ignored files the ignored-content rule keeps), with the
    command that removes it without loss where one exists; empty when nothing does. The
    default branch is the one the session resolved at SessionStart while it still holds
    (no ref listing), else read from the refs."""
    from branchkeeper.analysis.refs import session_default
    from branchkeeper.analysis.worktree_record import gather, judge, worktree_context

    config = events.repo_config(facts)
    b = config.branches
    ctx = worktree_context(facts, config, inventory=None, worktrees=worktrees,
                           default=session_default(facts.common_dir, session_id, b.default,
                                                   b.remote))
    record = judge(ctx, gather(ctx, wt))
    gates = [g for g in record.retire.blockers if g.name not in _HOOK_IGNORES]
    lines = [f"{g.fails_as.value}: {g.detail}" for g in gates]
    if [g.name for g in gates] == ["ignored_disposable"]:
        lines.append("to keep those files and remove it: "
                     + shlex.join(["branchkeeper", "worktree", "retire", "--archive-ignored",
                                   str(wt.path)]))
    return lines


def remove_worktree(event: HookEvent, *, log: Log) -> A.Answer:
    """Handle WorktreeRemove; see the module docstring. Never a decision: a refusal by git is
    a notice (and a log line), and the worktree is kept. SIGINT or SIGTERM is deferred to the
    end of the step it arrives in (never a git killed mid-transaction); then
    :class:`~branchkeeper.actions.interrupt.Interrupted` is raised, which the hook process
    reports on stderr with exit 130."""
    from branchkeeper.actions.interrupt import Interrupted, deferred_signals

    try:
        with deferred_signals("WorktreeRemove") as signals:
            return _remove_worktree(event, log=log, signals=signals)
    except Interrupted as exc:
        log(str(exc))
        raise


def _remove_worktree(event: HookEvent, *, log: Log, signals: Signals) -> A.Answer:
    target = Path(event.worktree_path)
    base = target if target.is_dir() else _project_dir(event)
    facts = repo_facts(base)
    worktrees = list_worktrees(facts)
    match: Worktree | None = next((w for w in worktrees if _same_path(w.path, target)), None)
    if match is None or match.is_main:
        log(f"{target} is not a linked worktree of this repository; nothing removed")
        return A.SILENT
    main = worktrees[0]
    where = facts.common_dir if main.bare else main.path
    kept = _record_blockers(facts, worktrees, match, event.session_id)
    if kept:
        message = f"branchkeeper: kept worktree {match.path}: " + "; ".join(kept)
        log(message)
        return A.Answer(A.NOTICE, message)
    force = bool(events.force_removal_safe(match.path, cwd=where))
    pinned = _pin_unreferenced_head(match, where, facts.common_dir, log)
    if pinned is False:
        message = (f"branchkeeper: kept worktree {match.path}: its detached HEAD is in no ref "
                   "and could not be pinned")
        log(message)
        return A.Answer(A.NOTICE, message)
    from branchkeeper.actions.worktree_removal import git_worktree_remove

    fault("hook-worktree-remove.before_remove")
    if signals.stop:  # SIGINT/SIGTERM came: start no removal
        return A.Answer(A.NOTICE, f"branchkeeper: kept worktree {match.path}: interrupted")
    refused = git_worktree_remove(where, match.path, force=force, timeout=60)
    fault("hook-worktree-remove.after_remove")
    if refused:
        message = (f"branchkeeper: kept worktree {match.path}: git refused to remove it "
                   f"({refused})")
        log(message)
        return A.Answer(A.NOTICE, message)
    branch = _short(match.branch)
    if branch is None:
        return A.SILENT
    record = records.read_records(where).get(branch)
    if record is None or record.route != records.ROUTE_WORKTREE_CREATE:
        return A.SILENT
    if signals.stop:
        return A.SILENT
    note = events.delete_if_proven(branch, cwd=where)
    return A.Answer(A.NOTICE, str(note)) if note else A.SILENT
