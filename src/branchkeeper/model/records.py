"""Immutable records and enums shared by every layer (DESIGN.md, "Vocabulary").

Analysis computes these; actions, policy and rendering read them. Nothing here runs git.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from branchkeeper.git.types import Oid


class BranchState(StrEnum):
    """Branch states, first match wins (first document, section 2; DESIGN.md vocabulary)."""

    EXEMPT = "exempt"
    DEFAULT = "default"
    INTEGRATION_LINE = "integration_line"
    MERGED = "merged"
    MERGED_INTO_LINE = "merged_into_line"
    PATCH_EQUIVALENT = "patch_equivalent"
    PARKED = "parked"
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
        """True for the states that are work in progress (parked, dormant, live)."""
        return self in (BranchState.PARKED, BranchState.DORMANT, BranchState.LIVE)


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


@dataclass(frozen=True, slots=True)
class Proof:
    """Evidence that a branch's work is preserved.

    ``kind``: the proof; ``base``: the full ref it was proven against (``refs/remotes/origin/main``);
    ``landed_as``: the base commit the work landed as (the squash commit, the matching commit),
    or ``None`` where no single commit exists (plain ancestry).
    """

    kind: ProofKind
    base: str
    landed_as: Oid | None = None


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

    @property
    def tip(self) -> Oid | None:
        """The local tip where there is one, else the remote tip."""
        return self.local_tip or self.remote_tip

    @property
    def lost_work_risk(self) -> bool:
        """True when no remote-tracking ref contains the tip (containment ``nowhere``)."""
        return self.containment is Containment.NOWHERE
