"""The SessionStart text (issue 6, section 1; first document, section 4 "Stages").

Order: LOST WORK RISK first, in capitals, on every source, each with its push command, then the
other local-only work (detached commits, dirty worktrees, stashes, our refs, kept ignored files),
each with the command that secures it; branches abandoned at stop, stopped by an error, or left
when a session ended; dormant branches at the block and noisy stages on every source; advisory
ones only on a new session (``source == "startup"``); open holds; merged branches waiting for
``branchkeeper sweep --clean``; then one counts line. At most :data:`MAX_LINES` branch lines
(plus "and N more"). Empty when there is nothing to say. Every command is shell-quoted.
"""

from __future__ import annotations

from collections import Counter

from branchkeeper.analysis.lost_work import LostKind
from branchkeeper.analysis.session_summary import SessionSummary, SummaryRow
from branchkeeper.git.types import push_argv
from branchkeeper.model.words import state_word
from branchkeeper.shell.quoting import git_cmd, shell_quote
from branchkeeper.state.abandoned import SESSION_END, STOP, STOP_FAILURE

#: Branch lines shown at most; the rest are counted.
MAX_LINES = 20
_LOST_LABEL = {LostKind.DETACHED_COMMIT: "worktree", LostKind.DIRTY_WORKTREE: "worktree",
               LostKind.WORKTREE_REF: "worktree", LostKind.SUBMODULE_STORE: "worktree",
               LostKind.STASH: "stash", LostKind.KEPT_REF: "ref",
               LostKind.IGNORED_FILES: "worktree", LostKind.UNPUSHED_BRANCH: "branch"}
_STAGE_ORDER = {"block": 0, "noisy": 1, "advisory": 2}
#: The abandoned-at-stop entries by cause, in the order they are listed.
_ABANDONED_HEADS = (
    (STOP, "Abandoned at stop (the Stop guard gave way; finish them):"),
    (STOP_FAILURE, "Stopped by an error before finishing (finish them):"),
    (SESSION_END, "Left unfinished when a session ended (finish them):"),
)


def _age(row: SummaryRow) -> str:
    if row.age_days is None:
        return "age unknown"
    days = round(row.age_days)
    return f"{days} day{'' if days == 1 else 's'} idle"


def _where(row: SummaryRow) -> str:
    parts = []
    if row.containment == "own_remote_only":
        parts.append("pushed, not merged")
    elif row.containment == "in_remote_ref":
        parts.append("contained in another remote branch")
    if row.worktree:
        parts.append(f"worktree {row.worktree}")
    return ("; " + ", ".join(parts)) if parts else ""


def session_start_text(summary: SessionSummary, *, source: str) -> str:
    """The additionalContext for SessionStart ``source`` (``startup``, ``resume``, ``clear``,
    ``compact``); ``""`` when there is nothing to say."""
    rows = summary.rows
    remote = summary.remote
    lines: list[str] = []
    budget = MAX_LINES

    def add(items: list[str]) -> None:
        nonlocal budget
        shown = items[:max(budget, 0)]
        lines.extend(shown)
        budget -= len(shown)
        if len(items) > len(shown):
            lines.append(f"  ... and {len(items) - len(shown)} more")

    lost = sorted((r for r in rows if r.containment == "nowhere"),
                  key=lambda r: (-(r.age_days or 0.0), r.name))
    if lost:
        lines.append(f"LOST WORK RISK: {len(lost)} branch(es) hold commits no remote-tracking "
                     "ref contains; push them now:")
        add([f"  {r.name} ({_age(r)}): {git_cmd(*push_argv(remote, r.name)[1:])}" for r in lost])
    if summary.lost:
        more = " more" if lost else ""
        lines.append(f"LOST WORK RISK: {len(summary.lost)}{more} piece(s) of work exist only in "
                     "this clone; secure them:")
        add([f"  {_LOST_LABEL[i.kind]} {i.subject}: {i.detail}; {i.secure}"
             for i in summary.lost])
    for cause, head in _ABANDONED_HEADS:
        entries = [a for a in summary.abandoned if a.cause == cause]
        if entries:
            lines.append(head)
            add([f"  {a.branch}: {', '.join(a.checks) or 'unfinished'} (thread {a.thread})"
                 for a in entries])
    shown_stages = ("block", "noisy", "advisory") if source == "startup" else ("block", "noisy")
    dormant = sorted((r for r in rows if r.state == "dormant" and r.stage in shown_stages
                      and r.containment != "nowhere"),
                     key=lambda r: (_STAGE_ORDER.get(r.stage or "", 9), -(r.age_days or 0.0),
                                    r.name))
    if dormant:
        lines.append("Dormant branches: finish and merge, park with a reason, or delete:")
        add([f"  [{r.stage}] {r.name} ({_age(r)}{_where(r)})" for r in dormant])
    superseded = sorted((r for r in rows if r.state == "superseded"),
                        key=lambda r: (-(r.age_days or 0.0), r.name))
    if superseded:
        lines.append("Superseded branches (inside a branch that landed, but changes of their own "
                     "did not land): park each with a reason, or delete it deliberately "
                     "(branchkeeper delete --allow-unproven --reason ...):")
        add([f"  {r.name} ({_age(r)}{_where(r)})" for r in superseded])
    if summary.holds:
        lines.append("Held worktrees:")
        add([f"  {h.path}: {h.reason} (owner {h.owner}; revisit {h.revisit})"
             for h in summary.holds])
    merged = [r for r in rows if r.state in ("merged", "merged_into_line", "patch_equivalent")]
    if merged:
        names = ", ".join(shell_quote(r.name) for r in merged[:5])
        more = f" and {len(merged) - 5} more" if len(merged) > 5 else ""
        lines.append(f"{len(merged)} branch(es) are merged but not deleted ({names}{more}); "
                     "delete them with: branchkeeper sweep --clean (its --dry-run says which "
                     "it deletes and what keeps the rest)")
    if not lines and not summary.unclassified:
        return ""
    lines.append(_counts_line(summary))
    return "\n".join(lines)


def _counts_line(summary: SessionSummary) -> str:
    """``branchkeeper: N branches: 3 live, 2 merged[; M branches not yet classified (why)].``;
    with no branch classified yet, ``branchkeeper: M branches not yet classified (why).``"""
    counts = Counter(r.state for r in summary.rows)
    work = ("live", "dormant", "superseded", "parked", "unstarted", "merged",
            "merged_into_line", "patch_equivalent", "unknown")
    parts = [f"{counts[s]} {state_word(s)}" for s in work if counts[s]]
    total = len(summary.rows) + summary.unclassified
    if not summary.unclassified:
        return f"branchkeeper: {total} branches: {', '.join(parts) or 'none open'}."
    if summary.passing == "running":
        why = "the pass continues in the background; the next session start reports more"
    elif summary.passing.startswith("failed"):
        why = (f"the background pass could not start ({summary.passing.removeprefix('failed: ')})"
               "; run: branchkeeper sweep")
    else:
        why = "the time budget was spent; the next pass continues from the cache"
    pending = f"{summary.unclassified} branches not yet classified ({why})"
    if not parts:
        return f"branchkeeper: {pending}."
    return f"branchkeeper: {total} branches: {', '.join(parts)}; {pending}."
