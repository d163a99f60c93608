"""The stored whole-sweep result: a warm sweep whose inputs did not change reads its records
instead of computing them (issue 16: ``sweep`` warm at 5,000 branches in half a second).

Every inventory starts with the same three git calls (:func:`read_listings`): the lean
``for-each-ref``, ``worktree list`` and the remotes' ``config``. Their raw output, the
repository's paths, the git version and the patch-id mode, the configuration's key, the shallow
and grafts files and the package's own source files (a changed branchkeeper invalidates it) make
the **key** (:func:`sweep_key`). An inventory computed in full is stored under it
(:func:`store`) unless some verdict was cut short (budget, a stream that stopped, a git error),
the repository is bare (its current branch is not in the worktree list) or has replace refs
(they change history without moving a ref). A later inventory with the same key takes the
stored records (:func:`lookup`) while all of these hold:

- the clock has not gone back before the time it was computed, nor reached ``valid_until``,
  the first moment a branch's age could begin to count from its creation date
  (:func:`valid_until`);
- each local work branch at the default branch's tip still has the reflog it had (whether
  anything was done on it decides ``unstarted``: :func:`~.reflog_dates.had_work`);
- every object the computation found missing is still missing (one ``cat-file``, only when
  there were some).

What is read afresh on every run stays out of it: ages are computed again from each record's
tip date and creation date (the same function the classifier uses,
:func:`~branchkeeper.model.records.branch_age`), and with them the state and stage a dormancy
threshold decides (:func:`~.classify.age_verdict`, the classifier's own rule); dirty files,
stashes, kept tips and the ``cleanup`` suggestions (which read the worktree records) are the
sweep's own later steps. A reused inventory carries no verdicts and no refusal facts: the
commands that delete never reuse one (they compute their own, compare-and-swap at the proven
tip).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from branchkeeper.analysis.classify import age_verdict
from branchkeeper.analysis.dispositions import restaged_verdicts
from branchkeeper.analysis.graph import has_replace_refs
from branchkeeper.analysis.proofrun import Base
from branchkeeper.analysis.reflog_dates import had_work
from branchkeeper.analysis.refs import DefaultBranch, lean_listing
from branchkeeper.analysis.refusal_facts import REMOTE_DEFAULT_PATTERNS
from branchkeeper.git.isolate import STOPPED_MARK
from branchkeeper.git.objects import missing_objects
from branchkeeper.git.repo import REMOTE_CONFIG_ARGS, patch_id_mode, worktree_list_args
from branchkeeper.git.run import GitError, GitResult, run_git
from branchkeeper.git.types import Oid
from branchkeeper.model.record_codec import Decoder, Encoder, field_index
from branchkeeper.model.records import (
    DAY_S,
    BranchRecord,
    BranchState,
    Stage,
    branch_age,
    stager,
)
from branchkeeper.state.config_cache import config_key
from branchkeeper.state.sweep_result import load_result, save_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from branchkeeper.git.repo import RepoFacts
    from branchkeeper.model.config import Config

#: Bump when what a stored result means changes (it is part of the key).
REUSE_FORMAT = 1
#: The states that are not work: no age decides them.
_ROLES = frozenset({BranchState.EXEMPT, BranchState.DEFAULT, BranchState.INTEGRATION_LINE})
#: The states an age decides (live or dormant), or whose stage it decides: restaged on read.
_AGED = frozenset({BranchState.LIVE, BranchState.DORMANT, BranchState.SUPERSEDED})
_AGE = field_index(BranchRecord, "age_days")
_TIP_DATE = field_index(BranchRecord, "tip_date")
_CREATED = field_index(BranchRecord, "created")
#: A threshold is taken as reached this many seconds early (float rounding of day counts).
_MARGIN_S = 1.0


class Listings(NamedTuple):
    """The raw output of the first three calls of every inventory: the lean ``for-each-ref``,
    ``worktree list``, and the remotes' ``config`` (its whole result: exit 1 means none)."""

    refs: bytes
    worktrees: bytes
    config: GitResult


def read_listings(facts: RepoFacts, remote: str) -> Listings:
    """Three git processes. Raises :class:`GitError` when the refs or worktrees cannot be
    listed."""
    root = facts.root
    return Listings(
        lean_listing(root, remote, REMOTE_DEFAULT_PATTERNS),
        run_git(worktree_list_args(facts), cwd=root).stdout,
        run_git(list(REMOTE_CONFIG_ARGS), cwd=root, check=False))


@functools.cache
def source_stamp() -> str:
    """A digest of the package's source files (path, size, modification time), read once per
    process: a changed branchkeeper never reads a result an older one stored."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.blake2b(digest_size=16)
    for top, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(top, name))
                rel = os.path.relpath(os.path.join(top, name), package)
                digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(
                    "utf-8", "surrogateescape"))
    return digest.hexdigest()


def _file_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"-"  # absent (or unreadable): unlike any content


def sweep_key(facts: RepoFacts, config: Config, listings: Listings) -> str:
    """The key a result is stored under (see the module docstring): 32 hex digits."""
    digest = hashlib.blake2b(digest_size=16)
    texts = (f"reuse={REUSE_FORMAT}", str(facts.toplevel), str(facts.git_dir),
             str(facts.common_dir), f"bare={facts.bare} shallow={facts.shallow}",
             repr(facts.version), patch_id_mode(), config_key(config), source_stamp(),
             f"config-exit={listings.config.returncode}")
    parts = [t.encode("utf-8", "surrogateescape") for t in texts]
    parts += [listings.refs, listings.worktrees, listings.config.stdout,
              _file_bytes(facts.common_dir / "shallow"),
              _file_bytes(facts.common_dir / "info" / "grafts")]
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


class Reused(NamedTuple):
    """What a stored result gives an inventory: the records (ages at now), the default branch,
    the proof targets, the notes, whether the remote is configured and its ``HEAD`` target."""

    records: list[BranchRecord]
    default: DefaultBranch
    bases: list[Base]
    notes: list[str]
    remote_configured: bool
    remote_head: str
    #: ``state.last_sweep.refs_key`` of the refs it was computed from
    refs: str


def storable(facts: RepoFacts, records: Sequence[BranchRecord], notes: Sequence[str]) -> bool:
    """Whether an inventory computed in full may be stored: no verdict cut short or failed, a
    repository with a work tree here and no replace refs."""
    if facts.toplevel is None or has_replace_refs(facts.common_dir):
        return False
    if any(n.startswith("git error") for n in notes):
        return False
    return not any(r.state is BranchState.UNKNOWN and (
        "budget" in r.reason or STOPPED_MARK in r.reason or r.reason.startswith("git error"))
        for r in records)


def valid_until(records: Sequence[BranchRecord], config: Config, now: float,
                default_tips: set[Oid]) -> float | None:
    """The first time after ``now`` at which an age could change a record in a way a read of
    the stored result cannot redo: a local work branch whose tip becomes old enough for its
    creation date to be read (the classifier reads it only past the advisory days, for
    branches not proven or at the default tip; the date may change its age). A branch
    crossing a dormancy threshold is not one: the read restages it (:func:`_restaged`).
    None: never."""
    advisory = config.branches.dormancy.effective_advisory_days
    first: float | None = None
    for r in records:
        if r.tip_date is None or r.state in _ROLES:
            continue
        if r.local_tip is not None and r.created is None \
                and (r.proof is None or r.local_tip in default_tips):
            at = r.tip_date + advisory * DAY_S
            if at > now and (first is None or at < first):
                first = at
    return None if first is None else first - _MARGIN_S


def _probes(facts: RepoFacts, records: Sequence[BranchRecord], default_tips: set[Oid]
            ) -> dict[str, bool]:
    return {r.name: had_work(facts, r.name) for r in records
            if r.local_tip is not None and r.local_tip in default_tips and r.state not in _ROLES}


def store(facts: RepoFacts, config: Config, listings: Listings, *, now: float,
          records: Sequence[BranchRecord], default: DefaultBranch, bases: Sequence[Base],
          notes: Sequence[str], remote_configured: bool, remote_head: str,
          missing: set[str], partial: bool, refs: str) -> None:
    """Store an inventory computed in full (when :func:`storable`; ``refs``: the key of its
    refs, as ``last-sweep.json`` writes it); errors are ignored."""
    if not storable(facts, records, notes):
        return
    default_tips = {b.oid for b in bases if b.kind == "default"}
    encoder = Encoder()
    rows = [encoder.row(r) for r in records]
    body = {"records": rows, "tables": encoder.tables(), "default": list(default),
            "bases": [[b.ref, b.oid, b.kind, b.name] for b in bases], "notes": list(notes),
            "remote_configured": remote_configured, "remote_head": remote_head}
    header = {"computed": now, "valid_until": valid_until(records, config, now, default_tips),
              "missing": sorted(missing), "partial": partial,
              "reflog": _probes(facts, records, default_tips), "refs": refs}
    save_result(facts.common_dir, sweep_key(facts, config, listings), header, body)


def lookup(facts: RepoFacts, config: Config, listings: Listings, *, now: float
           ) -> Reused | None:
    """The stored result for these listings at ``now``; None when there is none that holds
    (see the module docstring). Never raises: a damaged file is no result."""
    if facts.toplevel is None or has_replace_refs(facts.common_dir):
        return None
    loaded = load_result(facts.common_dir, sweep_key(facts, config, listings))
    if loaded is None:
        return None
    header, body = loaded
    try:
        if not _holds(facts, header, now):
            return None
        return _decode(body, now, str(header["refs"]), stager(config))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def _holds(facts: RepoFacts, header: dict[str, Any], now: float) -> bool:
    computed, until = header["computed"], header["valid_until"]
    if now < float(computed) or (until is not None and now >= float(until)):
        return False
    probes = header["reflog"]
    if any(had_work(facts, str(name)) is not bool(was) for name, was in probes.items()):
        return False
    missing = header["missing"]
    if missing:
        try:
            lacking = missing_objects(facts.root, [str(m) for m in missing],
                                      partial=bool(header["partial"]))
        except GitError:
            return False
        return lacking == set(missing)
    return True


def _restaged(rec: BranchRecord, age: float | None,
              stage_of: Callable[[float], Stage | None]) -> BranchRecord:
    """``rec`` at its age now: its state and stage by :func:`~.classify.age_verdict`, and its
    dispositions' kept reason with them (:func:`~.dispositions.restaged_verdicts`)."""
    state, stage = age_verdict(rec.state, age, stage_of)
    if state is rec.state and stage is rec.stage:
        return rec
    after = replace(rec, state=state, stage=stage)
    return replace(after, actions=restaged_verdicts(rec, after))


def _decode(body: dict[str, Any], now: float, refs: str,
            stage_of: Callable[[float], Stage | None]) -> Reused:
    decoder = Decoder(body["tables"])
    records = []
    for row in body["records"]:
        age = branch_age(row[_TIP_DATE], row[_CREATED], now)
        row[_AGE] = None if age is None else round(age, 2)
        rec = decoder.record(row)
        if rec.state in _AGED:
            rec = _restaged(rec, age, stage_of)
        records.append(rec)
    name, refs, how, reason = body["default"]
    default = DefaultBranch(name, tuple(refs), str(how), str(reason))
    bases = [Base(str(ref), Oid(oid), str(kind), str(bname)) for ref, oid, kind, bname
             in body["bases"]]
    return Reused(records, default, bases, [str(n) for n in body["notes"]],
                  bool(body["remote_configured"]), str(body["remote_head"]), refs)
