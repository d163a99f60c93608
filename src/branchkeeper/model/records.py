"""Immutable records and enums shared by every layer (DESIGN.md, "Vocabulary").

Analysis computes these; actions, policy and rendering read them. Nothing here runs git.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from branchkeeper.git.types import Oid

if TYPE_CHECKING:
    from collections.abc import Callable

    from branchkeeper.model.config import Config


class BranchState(StrEnum):
    """Branch states, first match wins (first document, section 2; DESIGN.md vocabulary)."""

    EXEMPT = "exempt"
    DEFAULT = "default"
    INTEGRATION_LINE = "integration_line"
    MERGED = "merged"
    MERGED_INTO_LINE = "merged_into_line"
    PATCH_EQUIVALENT = "patch_equivalent"
    PARKED = "parked"
    #: at the default branch's tip with nothing done on it (case C07): no work, so no
    #: dormancy stage; kept by ``sweep --clean`` and ``prune``, deleted by ``delete``
    UNSTARTED = "unstarted"
    #: its commits are inside a branch that landed, but some of its changes did not land:
    #: work, never deleted by a proof (issue 11, section 1)
    SUPERSEDED = "superseded"
    DORMANT = "dormant"
    LIVE = "live"
    UNKNOWN = "unknown"

    @property
    def preserved(self) -> bool:
        """True for the "done, not deleted" states whose work a proof shows preserved."""
        return self in (BranchState.MERGED, BranchState.MERGED_INTO_LINE,
                        BranchState.PATCH_EQUIVALENT)

    @property
    def is_work(self) -> bool:
        """True for the states that are work in progress (parked, superseded, dormant, live,
        and unstarted: a branch made for work not begun yet)."""
        return self in (BranchState.PARKED, BranchState.SUPERSEDED, BranchState.DORMANT,
                        BranchState.LIVE, BranchState.UNSTARTED)


class ProofKind(StrEnum):
    """Which test showed a branch's work preserved (issue 3, the proof ladder)."""

    ANCESTOR = "ancestor"
    PATCH_EQUIVALENT = "patch_equivalent"
    SQUASH_MERGED = "squash_merged"
    TIP_SUBSUMED = "tip_subsumed"
    CONTENT_ON_BASE = "content_on_base"


class Containment(StrEnum):
    """Where an unmerged branch's tip lives (first document, section 4)."""

    IN_DEFAULT = "in_default"
    IN_REMOTE_REF = "in_remote_ref"
    OWN_REMOTE_ONLY = "own_remote_only"
    NOWHERE = "nowhere"


class Stage(StrEnum):
    """Dormancy stages (first document, section 4)."""

    ADVISORY = "advisory"
    NOISY = "noisy"
    BLOCK = "block"


#: How each proof kind is checked unless said otherwise (``Proof.verified``).
VERIFIED_BY = {
    ProofKind.ANCESTOR: "ancestry",
    ProofKind.PATCH_EQUIVALENT: "patch-id",
    ProofKind.SQUASH_MERGED: "patch-id",
    ProofKind.TIP_SUBSUMED: "merge",
    ProofKind.CONTENT_ON_BASE: "content",
}


@dataclass(frozen=True, slots=True)
class Proof:
    """Evidence that a branch's work is preserved.

    ``kind``: the proof; ``base``: the full ref it was proven against (``refs/remotes/origin/main``);
    ``landed_as``: the base commit the work landed as (the squash commit, the matching commit),
    or ``None`` where no single commit exists (plain ancestry). ``verified``: how it was
    checked: ``ancestry``, ``patch-id`` (equal patch-ids), ``merge`` (a real three-way merge
    reproduced the base commit's tree) or ``content`` (every changed file is on the base);
    empty means the kind's usual check (:data:`VERIFIED_BY`).
    """

    kind: ProofKind
    base: str
    landed_as: Oid | None = None
    verified: str = ""

    @property
    def check(self) -> str:
        """``verified``, or the kind's usual check."""
        return self.verified or VERIFIED_BY[self.kind]


@dataclass(frozen=True, slots=True)
class MissingChange:
    """One path of a superseded branch whose change did not land: lines ``added`` and
    ``deleted`` by merging the branch into the landing commit (None for a binary file)."""

    path: str
    added: int | None
    deleted: int | None


@dataclass(frozen=True, slots=True)
class Supersession:
    """Why a branch is ``superseded``: its tip is inside ``holder`` (a tip proven landed on
    ``base`` as ``landed_as``; None when it landed commit by commit and the check ran against
    the base tip), but merging the tip into that commit still changes ``changes``; ``conflicted``
    when that merge did not even apply cleanly. ``holder_names`` are the branches at
    ``holder``."""

    holder: Oid
    base: str
    landed_as: Oid | None
    changes: tuple[MissingChange, ...]
    conflicted: bool = False
    holder_names: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        """Changed lines that did not land (binary files count none)."""
        return sum((c.added or 0) + (c.deleted or 0) for c in self.changes)


class BranchAction(StrEnum):
    """What a cleanup command does with a branch on the strength of its verdict (the refusals
    no proof overrides come on top: docs/cleanup.md)."""

    DELETE = "delete"
    KEEP = "kept"
    SKIP_UNPROVEN = "SKIP_UNPROVEN"
    REFUSED = "refused"


class RefusalKind(StrEnum):
    """Why a branch may not be deleted whatever its proof (issue 3, section 2; field case C05)."""

    DEFAULT = "default"
    REMOTE_DEFAULT = "remote_default"
    INTEGRATION_LINE = "integration_line"
    EXEMPT = "exempt"
    PROTECTED = "protected"
    CURRENT = "current"
    CHECKED_OUT = "checked_out"
    STACK = "stack"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refusal no proof overrides: ``kind`` and a one-line ``reason`` naming the rule."""

    kind: RefusalKind
    reason: str


@dataclass(frozen=True, slots=True)
class CommandVerdict:
    """One command's disposition of a branch and why; ``unknown``: the verdict is unknown, so
    not even ``delete --allow-unproven`` deletes it; ``refusal``: the rule that refuses it
    (``action`` is then ``REFUSED``). ``worktree``: for ``sweep --clean``, the linked worktree
    removed first (the command checks it holds nothing: else the branch is blocked)."""

    action: BranchAction
    reason: str
    unknown: bool = False
    refusal: Refusal | None = None
    worktree: str | None = None
    #: for a refused ``delete``: the reason it would otherwise be deleted (a batch that lifts
    #: a stack refusal deletes it on that reason)
    otherwise: str = ""


@dataclass(frozen=True, slots=True)
class CommandVerdicts:
    """What each cleanup command would do with one branch (issue 11, section 5): ``sweep
    --clean``, ``prune``, ``delete NAME`` and, for a branch with a remote-tracking copy,
    ``delete --remote NAME`` (its remote copy)."""

    sweep_clean: CommandVerdict
    prune: CommandVerdict
    delete: CommandVerdict
    delete_remote: CommandVerdict | None = None


@dataclass(frozen=True, slots=True)
class Park:
    """A park marker read from the tip commit's trailers (first document, section 5)."""

    reason: str
    by: str
    since: int  # unix seconds: the park commit's committer date


@dataclass(frozen=True, slots=True)
class BranchRecord:
    """One record per branch name over ``refs/heads`` and ``refs/remotes/<remote>``.

    Counts (``ahead``, ``behind``, ``lines``) are relative to the default branch and are ``None``
    when unknown, never a guessed zero. ``age_days`` is a float number of days. ``containment`` and
    ``stage`` are set only where the first document defines them (unmerged, unparked work).
    """

    name: str
    local_tip: Oid | None
    remote_tip: Oid | None
    state: BranchState
    reason: str = ""
    proof: Proof | None = None
    containment: Containment | None = None
    containing_ref: str | None = None
    stage: Stage | None = None
    upstream: str | None = None
    upstream_gone: bool = False
    worktree: str | None = None
    ahead: int | None = None
    behind: int | None = None
    #: commits of the branch that no remote-tracking ref holds (what a push would secure)
    unpushed: int | None = None
    lines: int | None = None
    age_days: float | None = None
    tip_date: int | None = None
    created: int | None = None
    parked: Park | None = None
    number_token: str | None = None
    same_tip_as: tuple[str, ...] = field(default_factory=tuple)
    superseded: Supersession | None = None
    #: what sweep --clean, prune and delete do with it (set by the inventory)
    actions: CommandVerdicts | None = None
    #: the refusal no proof overrides that applies to the local branch on its own (protected,
    #: current, checked out...); batch refusals (a stack) are on the dispositions
    refusal: Refusal | None = None

    @property
    def tip(self) -> Oid | None:
        """The local tip where there is one, else the remote tip."""
        return self.local_tip or self.remote_tip

    @property
    def lost_work_risk(self) -> bool:
        """True when no remote-tracking ref contains the tip (containment ``nowhere``)."""
        return self.containment is Containment.NOWHERE


def stager(config: Config) -> Callable[[float], Stage | None]:
    """The dormancy stage of an age in days under ``config`` (first document, section 4,
    "Stages"), thresholds read once (a loop over thousands): None below the advisory days or
    with ``dormancy.mode: off``; the block stage only with ``mode: block``."""
    d = config.branches.dormancy
    mode = d.mode
    advisory, noisy, block = (d.effective_advisory_days, d.effective_noisy_days,
                              d.effective_block_days)

    def stage(age: float) -> Stage | None:
        if mode == "off" or age < advisory:
            return None
        if age >= block and mode == "block":
            return Stage.BLOCK
        if age >= noisy:
            return Stage.NOISY
        return Stage.ADVISORY

    return stage


#: Seconds in a day: ages are in days.
DAY_S = 86400.0


def branch_age(tip_date: int | None, created: int | None, now: float) -> float | None:
    """A branch's age in days at ``now`` (unix s), from the later of its tip's committer date
    and its creation (``created``, unix s, from the reflog; a branch made recently from an old
    commit is not idle: field case C07); None without a tip date. Unrounded: the stage is
    decided on this, a record shows it to two decimals."""
    if tip_date is None:
        return None
    return max(0.0, (now - max(tip_date, created or 0)) / DAY_S)
