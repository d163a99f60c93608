"""What each cleanup command does with a branch, from its one verdict (issue 11, section 5).

:func:`command_verdicts` is computed once per record by the inventory; ``sweep --clean``,
``prune``, ``delete`` (and ``delete --remote``), the hook's cleanup after a merge and ``report``
read it and never judge a branch again. The refusals no proof overrides (the current branch, a
checked-out branch, a protected name, a stack) are applied on top by the cleanup plans, the
same for every command.

Where the commands rightly differ, the record says both: an **unstarted** branch (created at
the default branch's tip, nothing done on it) loses nothing when deleted, so ``delete NAME``
(a person asking) deletes it, while ``prune`` and ``sweep --clean`` keep it because an agent
may be about to start on it. A ``superseded`` branch is never deleted by a proof: park it, or
delete it deliberately with ``delete --allow-unproven --reason``.
"""

from __future__ import annotations

import shlex
from dataclasses import replace

from branchkeeper.analysis.proofrun import TipVerdict
from branchkeeper.model.records import (
    BranchAction,
    BranchRecord,
    BranchState,
    CommandVerdict,
    CommandVerdicts,
    Proof,
    ProofKind,
)
from branchkeeper.model.words import state_word

_ROLE_REFUSAL = {
    BranchState.DEFAULT: "the default branch",
    BranchState.INTEGRATION_LINE: "an integration line",
    BranchState.EXEMPT: "exempt (branches.exempt)",
}
NO_PROOF = "no proof holds: the branch has commits that are not on the base"


#: Each proof in plain words; ``{base}`` is the short name of the ref it was proven against,
#: ``{at}`` `` as <landing commit>`` where one is known.
_PLAIN = {
    "ancestor": "merged into {base}: every commit is on it",
    "patch_equivalent": "rebase-merged into {base}: every commit is on it as a copy",
    "squash_merged": "squash-merged into {base}{at}",
    "tip_subsumed": "inside a branch that landed on {base}{at}; merging it there changes nothing",
    "content_on_base": "every file it changed is identical on {base}",
}
#: How a proof was checked, where the kind alone does not say.
_CHECKED = {
    ("squash_merged", "merge"): " (verified by merge: merging the branch into the landing "
                                "commit's parent reproduces it)",
}


def describe(proof: Proof) -> str:
    """One proof in plain words, the one wording of every proof in every command's output
    (the sweep's reason, each command's disposition, the cleanup plan and its report):
    ``merged into origin/main: every commit is on it``, ``rebase-merged into origin/main:
    every commit is on it as a copy (the tip's copy is 1a2b3c4d5e)``, ``squash-merged into
    origin/main as 1a2b3c4d5e``; how it was checked where the kind alone does
    not say (a squash found by merging, a tip inside a landed branch verified by content)."""
    base = proof.base.removeprefix("refs/remotes/").removeprefix("refs/heads/")
    kind = proof.kind.value
    at = ""
    if proof.landed_as is not None and proof.kind is not ProofKind.PATCH_EQUIVALENT:
        at = f" as {proof.landed_as.short}"
    text = _PLAIN.get(kind, kind + " into {base}{at}").format(base=base, at=at)
    if proof.kind is ProofKind.PATCH_EQUIVALENT and proof.landed_as is not None:
        text += f" (the tip's copy is {proof.landed_as.short})"
    if proof.kind is ProofKind.TIP_SUBSUMED and proof.check == "content":
        text = (f"inside a branch that landed on {base}{at}; merging it there conflicts only "
                "where every line of it already is")
    return text + _CHECKED.get((kind, proof.check), "")


def superseded_reason(rec: BranchRecord) -> str:
    """One line: what of a superseded branch did not land, and the two ways out."""
    sup = rec.superseded
    assert sup is not None
    holder = ", ".join(sup.holder_names) or sup.holder.short
    where = f" as {sup.landed_as.short}" if sup.landed_as is not None else ""
    name = shlex.quote(rec.name)
    return (f"superseded: {sup.lines} changed line(s) in {len(sup.changes)} path(s) did not "
            f"land with {holder}{where}; park it (branchkeeper park --reason '...' -- {name}) "
            f"or delete it deliberately (branchkeeper delete --allow-unproven --reason '...' "
            f"-- {name})")


def _unstarted(rec: BranchRecord) -> bool:
    return rec.state is BranchState.UNSTARTED


def command_verdicts(rec: BranchRecord, *, verdict: TipVerdict | None,
                     remote_verdict: TipVerdict | None, remote: str,
                     default_name: str | None) -> CommandVerdicts:
    """The dispositions of ``rec`` (its ``state``, ``proof``, ``reason`` already set).
    ``verdict`` is the ladder's answer for its tip (an unstarted branch's ancestry proof is
    there, not on the record), ``remote_verdict`` the answer for its remote-tracking tip."""
    role = _ROLE_REFUSAL.get(rec.state)
    if role is not None:
        refused = CommandVerdict(BranchAction.REFUSED, role)
        return CommandVerdicts(CommandVerdict(BranchAction.KEEP, _kept_reason(rec)), refused,
                               refused, refused if rec.remote_tip is not None else None)
    remote_cv = _remote(rec, remote_verdict, remote) if rec.remote_tip is not None else None
    if rec.local_tip is None:
        why = (f"exists only on {remote}: branchkeeper delete --remote -- {shlex.quote(rec.name)}"
               if rec.state.preserved else _kept_reason(rec))
        kept = CommandVerdict(BranchAction.KEEP, why)
        return CommandVerdicts(kept, kept, CommandVerdict(BranchAction.KEEP, "no local branch"),
                               remote_cv)
    if rec.state.preserved and rec.proof is not None:
        go = CommandVerdict(BranchAction.DELETE, describe(rec.proof))
        return CommandVerdicts(go, go, go, remote_cv)
    if _unstarted(rec):
        at = default_name or "the default branch"
        keep = CommandVerdict(BranchAction.KEEP,
                              f"unstarted: at the same tip as {at}; kept because an agent may "
                              "be about to start on it (branchkeeper delete removes it: "
                              "nothing to lose)")
        deleted = (CommandVerdict(BranchAction.DELETE,
                                  f"unstarted: at the same tip as {at}, nothing to lose")
                   if verdict is not None and verdict.proof is not None
                   else CommandVerdict(BranchAction.SKIP_UNPROVEN, NO_PROOF))
        return CommandVerdicts(keep, keep, deleted, remote_cv)
    sweep = CommandVerdict(BranchAction.KEEP, _kept_reason(rec))
    if rec.state is BranchState.UNKNOWN:
        skip = CommandVerdict(BranchAction.SKIP_UNPROVEN, f"unknown: {rec.reason}", unknown=True)
        return CommandVerdicts(sweep, skip, skip, remote_cv)
    unproven = CommandVerdict(BranchAction.SKIP_UNPROVEN,
                              superseded_reason(rec) if rec.superseded is not None
                              else (verdict.note if verdict is not None and verdict.note
                                    else NO_PROOF))
    prune = (CommandVerdict(BranchAction.KEEP, f"parked: {rec.parked.reason}")
             if rec.state is BranchState.PARKED and rec.parked is not None else unproven)
    return CommandVerdicts(sweep, prune, unproven, remote_cv)


def restaged_verdicts(before: BranchRecord, after: BranchRecord) -> CommandVerdicts | None:
    """The dispositions of ``after``, the record ``before`` once its age moved it between live
    and dormant (:func:`~.classify.age_verdict`; same tips, proof and reason): each entry that
    gave ``before``'s kept reason gives ``after``'s, the rest (an unproven branch's refusals,
    its remote copy's) is unchanged, as :func:`command_verdicts` would build them. ``None``
    when ``before`` has none."""
    actions = before.actions
    if actions is None:
        return None
    old, new = _kept_reason(before), _kept_reason(after)

    def moved(cv: CommandVerdict | None) -> CommandVerdict | None:
        return cv if cv is None or cv.reason != old else replace(cv, reason=new)

    sweep, prune, delete = (moved(actions.sweep_clean), moved(actions.prune),
                            moved(actions.delete))
    assert sweep is not None and prune is not None and delete is not None
    return CommandVerdicts(sweep, prune, delete, moved(actions.delete_remote))


def _kept_reason(rec: BranchRecord) -> str:
    if rec.superseded is not None:
        return superseded_reason(rec)
    label = f"{state_word(rec.state.value)}: "  # "integration line", never the identifier
    if rec.reason.startswith(label):  # a parked branch's reason already says "parked: ..."
        return rec.reason
    return f"{label}{rec.reason}".rstrip(": ")


def _remote(rec: BranchRecord, verdict: TipVerdict | None, remote: str) -> CommandVerdict:
    """``delete --remote``: the remote-tracking tip must be proven against a ref of that
    remote (first document, section 7)."""
    if verdict is None:
        return CommandVerdict(BranchAction.SKIP_UNPROVEN, "unknown: not judged by the inventory",
                              unknown=True)
    if verdict.proof is not None and verdict.proof.base.startswith(f"refs/remotes/{remote}/"):
        return CommandVerdict(BranchAction.DELETE, describe(verdict.proof))
    if verdict.unknown is not None:
        return CommandVerdict(BranchAction.SKIP_UNPROVEN, f"unknown: {verdict.unknown}",
                              unknown=True)
    if verdict.proof is not None:
        return CommandVerdict(BranchAction.SKIP_UNPROVEN,
                              f"proven only against {verdict.proof.base}, not a ref of remote "
                              f"{remote}")
    return CommandVerdict(BranchAction.SKIP_UNPROVEN, verdict.note or NO_PROOF)
