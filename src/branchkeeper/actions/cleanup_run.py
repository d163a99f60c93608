"""The three cleanup commands end to end: lock, inventory, plan, execute (issue 3, sections 3-5).

Each ``run_*`` function takes the mutation lock (not for a dry run), builds the inventory inside
it (so two runs never act on one snapshot), plans, and executes. Two runs at once serialise: the
second waits up to ``lock_wait_s`` seconds, then raises :class:`LockBusyError` with a clear
message; nothing is corrupted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from branchkeeper import clock
from branchkeeper.actions.cleanup import Plan, plan_delete, plan_prune, plan_sweep_clean
from branchkeeper.actions.cleanup_exec import Outcome, compact_base, dry_run, execute
from branchkeeper.actions.interrupt import Signals, deferred_signals, interrupted_message
from branchkeeper.actions.kept_expiry import expire_kept
from branchkeeper.actions.refupdate import RefLockError, RefOutcome, create_refs
from branchkeeper.actions.retire import pin_ref_name
from branchkeeper.analysis.ignored import Polarity
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.analysis.lost_work import lost_work, risk_line, worktree_work
from branchkeeper.analysis.worktree_record import WorktreeRecord, prunable_at_risk
from branchkeeper.git.repo import RepoFacts, read_remote_config
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.config import Config
from branchkeeper.state.lock import MUTATION_LOCK, repo_lock

#: How long a cleanup waits for another one to finish before giving up, in seconds.
LOCK_WAIT_S = 30.0


@contextlib.contextmanager
def _maybe_lock(facts: RepoFacts, *, act: bool, wait_s: float) -> Iterator[Signals | None]:
    """The mutation lock and deferred signals (a Ctrl-C stops the cleanup between steps, never
    inside a git transaction) when acting; nothing for a dry run. The caller marks its outcome
    with :func:`_stopped` once the block is left."""
    if not act:
        yield None
        return
    with repo_lock(facts.common_dir, MUTATION_LOCK, wait_s=wait_s), \
            deferred_signals("the cleanup", raise_after=False) as signals:
        yield signals


def _stopped(outcome: Outcome, signals: Signals | None) -> Outcome:
    """``outcome``, marked interrupted when SIGINT or SIGTERM arrived during the cleanup (the
    command prints what was done, then says so and exits 130)."""
    if signals is not None and signals.stop:
        outcome.interrupted = interrupted_message(signals, "the cleanup")
    return outcome


def run_delete(facts: RepoFacts, config: Config, names: Sequence[str], *, remote: bool,
               allow_unproven: bool, dry: bool, confirm: Callable[[Plan], None] | None = None,
               reason: str | None = None, lock_wait_s: float = LOCK_WAIT_S) -> Outcome:
    """``branchkeeper delete NAME...``. ``confirm`` is called with the plan before anything is
    deleted when ``allow_unproven`` would delete an unproven branch; it raises to refuse.
    Raises :class:`LockBusyError`, :class:`BundleError`, :class:`RefusedError` (from
    ``confirm``). ``reason`` (with ``allow_unproven``) is recorded in the journal note."""
    with _maybe_lock(facts, act=not dry, wait_s=lock_wait_s) as signals:
        inv = build_inventory(facts, config, use_cache=True)
        plan = plan_delete(inv, names, remote=remote, allow_unproven=allow_unproven)
        if dry:
            return dry_run(plan)
        unproven = [i for i in plan.deletions if i.proof is None]
        if unproven and not plan.refused:
            if confirm is not None:
                confirm(plan)
            plan.notes.append(f"unproven branches deleted on request: {reason or ''}".strip())
        outcome = execute(plan, op="delete",
                          fetch_timeout_s=config.branches.sweep.fetch_timeout_s, signals=signals)
    return _stopped(outcome, signals)


def run_sweep_clean(facts: RepoFacts, config: Config, *, dry: bool,
                    lock_wait_s: float = LOCK_WAIT_S, polarity: Polarity | None = None,
                    archive_ignored: bool = False) -> Outcome:
    """``branchkeeper sweep --clean``: one bundle, one journal operation for every proven
    branch, linked worktrees removed only when nothing in them would be lost (``polarity`` of
    the ignored-content rule; ``archive_ignored``: archive the ignored files it keeps, then
    remove)."""
    with _maybe_lock(facts, act=not dry, wait_s=lock_wait_s) as signals:
        inv = build_inventory(facts, config, use_cache=True)
        plan = plan_sweep_clean(inv, config, polarity=polarity, archive_ignored=archive_ignored)
        if dry:
            return dry_run(plan)
        outcome = execute(plan, op="sweep-clean",
                          fetch_timeout_s=config.branches.sweep.fetch_timeout_s, signals=signals)
    return _stopped(outcome, signals)


def fetch_argv(remote: str) -> list[str]:
    """The arguments of the one fetch ``prune`` makes: every branch of ``remote`` into
    ``refs/remotes/<remote>/`` and nothing else, whatever the configuration says. A configured
    fetch refspec may write local branches (``+refs/heads/main:refs/heads/feat``, or a mirror's
    ``+refs/*:refs/*``, which ``--prune`` turns into deleting every branch the remote lacks),
    prune local tags (``pruneTags``), fetch submodules or start ``gc --auto`` (whose worktree
    prune drops admin directories that hold work): the explicit refspec with an empty
    ``--refmap`` (the configured refspecs are not even used to map it) and the options rule each
    out. Its output is never parsed."""
    return ["-c", "fetch.pruneTags=false", "-c", f"remote.{remote}.pruneTags=false",
            "fetch", "--refmap=", "--prune", "--no-tags", "--no-recurse-submodules", "--no-auto-gc",
            "--quiet", "--", remote, f"+refs/heads/*:refs/remotes/{remote}/*"]


def _fetch(facts: RepoFacts, config: Config) -> str:
    """:func:`fetch_argv` bounded by ``branches.sweep.fetch_timeout_s``; a note."""
    remote = config.branches.remote
    try:
        run_git(fetch_argv(remote), cwd=facts.root,
                timeout=config.branches.sweep.fetch_timeout_s)
    except GitError as exc:
        said = [line.strip() for line in (exc.stderr or b"").decode("utf-8", "replace")
                .splitlines() if line.strip()]
        why = next((line for line in said if line.startswith(("fatal:", "error:"))),
                   said[0] if said else exc.summary)
        code = f"exit {exc.returncode}: " if exc.returncode is not None else ""
        return f"fetch from {remote} failed ({code}{why}); pruning on local data"
    return f"fetched {remote} (--prune)"


#: The lock reason of a prunable entry held while ``git worktree prune`` runs.
HOLD_REASON = "branchkeeper: held from git worktree prune (its admin directory holds work)"


def _held_lines(facts: RepoFacts, config: Config, held: Sequence[WorktreeRecord], *,
                dry: bool) -> list[str]:
    """Per prunable entry held from ``git worktree prune``: why, then its LOST WORK RISK lines
    (the sweep's words and commands; one ``git config`` for the remote, only when one is
    held)."""
    if not held:
        return []
    remote = config.branches.remote
    configured = read_remote_config(facts.root, remote).configured
    items = lost_work([], worktree_work(held), [], {}, remote=remote if configured else None,
                      now=clock.now())
    verb = "would hold" if dry else "held"
    lines = [f"{verb} prunable worktree {r.worktree.path} from git worktree prune: "
             f"{r.admin_loss}" for r in held]
    return lines + [risk_line(i) for i in items]


def _pin_heads(facts: RepoFacts, at_risk: Sequence[WorktreeRecord], *, dry: bool
               ) -> tuple[list[str], bool]:
    """Pin the unreferenced detached HEADs of ``at_risk`` (dry: say so): (notes, ok)."""
    pins: dict[str, Oid] = {}
    where: dict[str, str] = {}
    for r in at_risk:
        if (head := r.unreferenced_head) is not None:
            ref = pin_ref_name(r.worktree.path, head)
            pins[ref], where[ref] = head, str(r.worktree.path)
    if dry:
        return [f"would pin detached HEAD {oid.short} of prunable worktree {where[ref]} as {ref}"
                for ref, oid in pins.items()], True
    if not pins:
        return [], True
    try:
        results = create_refs(facts.root, pins, must_not_exist=True)
    except RefLockError as exc:
        return [f"git worktree prune not run: could not pin its detached HEADs ({exc})"], False
    failed = [r for r in results.values()
              if r.outcome not in (RefOutcome.CREATED, RefOutcome.PRESENT)]
    if failed:
        return [f"git worktree prune not run: could not pin {r.expected} as {r.ref} "
                f"({r.reason})" for r in failed], False
    return [f"pinned detached HEAD {oid.short} of prunable worktree {where[ref]} as {ref}"
            for ref, oid in pins.items()], True


def _prune_around(facts: RepoFacts, held: Sequence[WorktreeRecord]) -> list[str]:
    """``git worktree prune`` with each ``held`` entry locked for its duration (git never
    prunes a locked entry) and unlocked after; a lock that fails prunes nothing."""
    locked: list[str] = []
    notes: list[str] = []
    try:
        for r in held:
            path = str(r.worktree.path)
            res = run_git(["worktree", "lock", "--reason", HOLD_REASON, path], cwd=facts.root,
                          check=False)
            if res.returncode != 0:
                why = res.stderr.decode("utf-8", "replace").strip()
                return [f"git worktree prune not run: could not hold {path} ({why})"]
            locked.append(path)
        res = run_git(["worktree", "prune"], cwd=facts.root, check=False)
        if res.returncode != 0:
            notes.append("git worktree prune failed: "
                         + res.stderr.decode("utf-8", "replace").strip())
    finally:
        for path in locked:
            res = run_git(["worktree", "unlock", path], cwd=facts.root, check=False)
            if res.returncode != 0:
                notes.append(f"could not unlock {path} after git worktree prune: "
                             + res.stderr.decode("utf-8", "replace").strip())
    return notes


def prune_worktrees(facts: RepoFacts, config: Config, *, dry: bool) -> list[str]:
    """``git worktree prune``, after pinning under ``refs/branchkeeper/pinned/`` every detached
    HEAD of a prunable entry that no ref holds (the entry is its only copy), and holding (not
    pruning) every prunable entry whose admin directory holds work nothing else does: its own
    refs' commits, its submodule stores
    (:func:`~branchkeeper.analysis.worktree_record.prunable_at_risk`); a held entry is listed
    with its LOST WORK RISK lines. When a pin or a hold cannot be written, or the entries
    cannot be read, nothing is pruned. ``dry``: say what would be pinned and held, change
    nothing. Returns the notes to show; raises nothing."""
    try:
        at_risk = prunable_at_risk(facts, config)
        held = [r for r in at_risk if r.admin_loss is not None]
        notes = _held_lines(facts, config, held, dry=dry)
    except GitError as exc:
        return [f"git worktree prune not run: could not read the worktrees "
                f"({str(exc).splitlines()[0]})"]
    pinned, ok = _pin_heads(facts, [r for r in at_risk if r not in held], dry=dry)
    if dry or not ok:
        return [*notes, *pinned] if ok else pinned
    return [*notes, *pinned, *_prune_around(facts, held)]


def run_prune(facts: RepoFacts, config: Config, *, fetch: bool, dry: bool,
              lock_wait_s: float = LOCK_WAIT_S,
              start_reap: Callable[[], str] | None = None) -> Outcome:
    """``branchkeeper prune``: fetch (bounded; a failure is a note), ``git worktree prune``,
    ``start_reap`` (the background worktree reap; it returns the note to show, and waits for
    this prune's lock before it removes anything), expire kept tips older than
    ``branches.git_hook.keep_days`` behind a bundle, then delete every local branch the
    inventory proves preserved; the rest is ``SKIP_UNPROVEN`` or kept, with the reason its
    record gives. A dry run starts nothing."""
    notes: list[str] = []
    with _maybe_lock(facts, act=not dry, wait_s=lock_wait_s) as signals:
        if dry:
            notes.append("dry run: fetch, worktree prune and the background worktree reap not run")
            notes.extend(prune_worktrees(facts, config, dry=True))
        else:
            if fetch:
                notes.append(_fetch(facts, config))
            else:
                notes.append("fetch skipped (--no-fetch)")
            notes.extend(prune_worktrees(facts, config, dry=False))
            if start_reap is not None:
                notes.append(start_reap())
        inv = build_inventory(facts, config, use_cache=True)
        plan = plan_prune(inv)
        expiry = expire_kept(facts.root, facts.common_dir,
                             keep_days=config.branches.git_hook.keep_days, now=int(clock.now()),
                             base=compact_base(plan), dry=dry)
        plan.notes[:0] = [*notes, *([expiry.note] if expiry.note else [])]
        if dry:
            return dry_run(plan)
        if signals is not None and signals.stop:  # the fetch was interrupted: go no further
            return _stopped(dry_run(plan), signals)
        outcome = execute(plan, op="prune",
                          fetch_timeout_s=config.branches.sweep.fetch_timeout_s, signals=signals)
    return _stopped(outcome, signals)
