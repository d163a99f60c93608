"""What every tier of the proof ladder reads and writes during one run (:mod:`.proofs`).

Kept apart from the tiers so that each tier module (:mod:`.landing`, :mod:`.subsumed`,
:mod:`.content`) reads the same run without importing the others.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from branchkeeper.analysis.basehistory import BaseHistory
from branchkeeper.analysis.commitfacts import DiffFacts, WholeDiff
from branchkeeper.analysis.graph import Subgraph, TipWalk
from branchkeeper.git.isolate import Failure
from branchkeeper.git.mergetree import ScratchObjects
from branchkeeper.git.types import Oid
from branchkeeper.model.records import Proof, Supersession
from branchkeeper.state.inventory_cache import InventoryCache

BUDGET_MSG = "budget spent before the proof steps reached this branch; the next run continues"


@dataclass(frozen=True, slots=True)
class Base:
    """A proof target: the default branch or an integration line, by one of its refs."""

    ref: str
    oid: Oid
    kind: str  # "default" | "line"
    name: str


@dataclass(frozen=True, slots=True)
class TipVerdict:
    """The ladder's answer for one tip: a proof, or ``unknown`` (a reason), or neither (work).

    ``merge_base``: the single merge base with the default branch where it is certain.
    ``note``: why no tier held, for reports. ``superseded``: set when the tip is inside a
    landed branch but some of its changes did not land (then ``proof`` is None).
    """

    proof: Proof | None = None
    unknown: str | None = None
    note: str = ""
    merge_base: Oid | None = None
    superseded: Supersession | None = None


@dataclass
class Deadline:
    """A wall-clock budget in seconds from creation; ``None`` = unbounded. ``checks``: a budget
    in units of work instead (or as well): spent once :meth:`spent` has been asked more than
    that many times (each asks before one batch of proof work), so a pass cut short this way
    stops at the same place on every run (for tests and reproducible measurements)."""

    seconds: float | None
    start: float = field(default_factory=time.monotonic)
    checks: int | None = None
    _asked: int = 0

    @property
    def bounded(self) -> bool:
        """A budget of either kind is set."""
        return self.seconds is not None or self.checks is not None

    def spent(self) -> bool:
        if self.checks is not None:
            self._asked += 1
            if self._asked > self.checks:
                return True
        return self.seconds is not None and time.monotonic() - self.start > self.seconds


@dataclass
class ProofRun:
    """One run of the ladder over many tips.

    Inputs: the repository ``root`` and ``common_dir``, the unmerged ``subgraph``, the
    ``default_bases`` and ``line_bases``, the caches, the ``deadline``, the diff ``facts`` and
    whether git can merge in one process (``merges``). Findings, per pending tip: its
    ``walks``, ``cutoff`` (see :meth:`BaseHistory.cutoff`), ``merge_base`` (certain) and
    ``diff_base`` (the base commit its whole diff is taken from), its ``own`` commits (no park
    markers), its ``whole`` diff; ``gaps`` (a fact it needs is missing: why), and the verdicts.
    ``scratch`` is the scratch object store of the merges (open for the whole run).
    """

    root: Path
    common_dir: Path
    subgraph: Subgraph
    default_bases: list[Base]
    line_bases: list[Base]
    cache: InventoryCache
    deadline: Deadline
    facts: DiffFacts
    merges: bool
    history: BaseHistory | None = None
    scratch: ScratchObjects | None = None
    verdicts: dict[Oid, TipVerdict] = field(default_factory=dict)
    walks: dict[Oid, TipWalk] = field(default_factory=dict)
    cutoff: dict[Oid, int] = field(default_factory=dict)
    merge_base: dict[Oid, Oid] = field(default_factory=dict)
    diff_base: dict[Oid, Oid] = field(default_factory=dict)
    own: dict[Oid, list[Oid]] = field(default_factory=dict)
    whole: dict[Oid, WholeDiff] = field(default_factory=dict)
    phash: dict[Oid, int] = field(default_factory=dict)
    pids: dict[Oid, str] = field(default_factory=dict)
    gaps: dict[Oid, str] = field(default_factory=dict)
    notes: dict[Oid, str] = field(default_factory=dict)
    not_merged: set[Oid] = field(default_factory=set)
    #: tips whose patch-id proof was refused on whitespace-blind git with no content check
    #: (the note counts them on every run, cached ones too)
    pid_blind: set[Oid] = field(default_factory=set)
    #: why the default tips' trees could not be listed (the content tier then proves nothing)
    content_error: str | None = None
    missing_objects: set[str] = field(default_factory=set)
    #: candidate landing commits by changed-path hash: on the default branch (by join), and
    #: per integration line ref (commits only the line holds)
    base_by_hash: dict[int, list[Oid]] = field(default_factory=dict)
    line_by_hash: dict[str, dict[int, list[Oid]]] = field(default_factory=dict)
    #: the same by patch-id
    base_by_pid: dict[str, list[Oid]] = field(default_factory=dict)
    line_by_pid: dict[str, dict[str, list[Oid]]] = field(default_factory=dict)
    range_pid: dict[Oid, str] = field(default_factory=dict)
    _unique: dict[Oid, frozenset[Oid]] = field(default_factory=dict)

    def is_open(self, tip: Oid) -> bool:
        """No tier has proven the tip, declared it unknown or superseded yet."""
        v = self.verdicts.get(tip)
        return v is None or (v.proof is None and v.unknown is None and v.superseded is None)

    def unproven(self, tips: list[Oid]) -> list[Oid]:
        """The tips of ``tips`` still open (:meth:`is_open`)."""
        return [t for t in tips if self.is_open(t)]

    def prove(self, tip: Oid, proof: Proof, note: str = "") -> None:
        self.verdicts[tip] = TipVerdict(proof, note=note, merge_base=self.merge_base.get(tip))

    def gap(self, tip: Oid, failure: Failure | None) -> None:
        """Record that a fact ``tip`` needs is missing: a missing object (``failure``) or the
        budget (None). The first gap wins."""
        if failure is not None and failure.oid is not None:
            self.missing_objects.add(failure.oid)
        self.gaps.setdefault(tip, failure.reason if failure is not None else BUDGET_MSG)

    def lacks_objects(self, tip: Oid) -> bool:
        """A fact of the tip already failed on a missing object: the tiers that read its
        blobs (merges) would fail the same way, so they skip it."""
        return self.gaps.get(tip, "").startswith("object missing")

    def line_reach(self, base: Base) -> set[Oid]:
        """Commits an integration line holds that the default branch does not."""
        return self.subgraph.reachable_set(base.oid) or set()

    def walks_of(self, base: Base) -> list[Oid]:
        """The commits of :meth:`line_reach`, newest first."""
        walk = self.subgraph.walk(base.oid)
        return [] if walk is None else walk.unique

    def unique(self, tip: Oid) -> frozenset[Oid]:
        """The tip's commits the default branch does not hold (memoised)."""
        found = self._unique.get(tip)
        if found is None:
            found = self._unique[tip] = frozenset(self.walks[tip].unique)
        return found

    def base_ref(self, commit: Oid) -> str:
        """The default ref a base commit is on: the remote-tracking one when it reaches it."""
        assert self.history is not None
        if self.history.reached_by_first(commit):
            return self.default_bases[0].ref
        return self.default_bases[-1].ref

    def landed(self, tip: Oid, *, pid: str | None = None, paths: int | None = None
               ) -> list[tuple[Oid, Base | None]]:
        """Base commits the tip does not hold whose patch-id is ``pid`` (or whose changed-path
        hash is ``paths``): on the default branch first, oldest first (``None`` base), then on
        each integration line."""
        assert self.history is not None
        cut = self.cutoff.get(tip, -1)
        if pid is not None:
            on_default = self.base_by_pid.get(pid, [])
        else:
            on_default = self.base_by_hash.get(paths or 0, [])
        out: list[tuple[Oid, Base | None]] = [
            (b, None) for b in on_default if self.history.join_of(b) > cut]
        for base in self.line_bases:
            table = (self.line_by_pid if pid is not None else self.line_by_hash).get(base.ref, {})
            key: object = pid if pid is not None else paths
            mine = self.unique(tip)
            out.extend((c, base) for c in table.get(key, []) if c not in mine)  # type: ignore[call-overload]
        return out
