"""What of the proof ladder is cached between sweeps, and how it is written down.

Tiers 2, 3 and 5 judge a tip against the bases only, so their verdict is kept per tip under a
**stamp** of everything it depends on: the default branch's and the integration lines' refs and
tips, whether git could merge, the patch-id mode and this format's version. A sweep in which
neither the tip nor any base moved reads the verdict and starts no git process for it. Tier 4
depends on which other branches landed, so it is recomputed every sweep, but the merge of a tip
into a landing commit it needs is cached per ``(landing commit, tip)`` pair: a merge's outcome
never changes. Verdicts a spent budget or a stream that stopped answering cut short are never
cached; ``object missing`` ones
are, and are dropped as soon as that object is present again (one ``cat-file``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from branchkeeper.analysis.proofrun import BUDGET_MSG, Base, TipVerdict
from branchkeeper.git.isolate import STOPPED_MARK
from branchkeeper.git.types import Oid
from branchkeeper.model.records import MissingChange, Proof, ProofKind

#: Bump when a tier's meaning changes: every cached verdict is then recomputed.
VERDICT_FORMAT = 3  # 2: whitespace-blind patch-id proofs need a content check; 3: and say so
#: Bump when what a cached merge's changes count changes (2: a conflict's markers are not
#: counted; 3: a conflict hunk's lines are counted as multisets).
PAIR_FORMAT = 3


def verdict_stamp(default_bases: Sequence[Base], line_bases: Sequence[Base], *, merges: bool,
                  pid_mode: str, shallow: bool) -> str:
    """A short digest of everything a tip's tier 2, 3 and 5 verdict depends on but the tip."""
    parts = [f"v{VERDICT_FORMAT}", pid_mode, f"merges={merges}", f"shallow={shallow}"]
    parts += [f"{b.kind}:{b.ref}:{b.oid}" for b in [*default_bases, *line_bases]]
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogateescape"),
                           digest_size=12).hexdigest()


def cacheable(verdict: TipVerdict) -> bool:
    """A verdict worth keeping: not cut short by the budget or by a git stream that stopped
    answering (the next run tries again), not a superseded one (tier 4)."""
    return verdict.superseded is None and verdict.unknown != BUDGET_MSG \
        and STOPPED_MARK not in (verdict.unknown or "")


def encode(verdict: TipVerdict) -> list[Any]:
    """``[proof or None, unknown, note, merge base]`` as JSON values (the cache may append
    more facts of the run: :func:`decode` reads the first four)."""
    proof = verdict.proof
    return [None if proof is None else [proof.kind.value, proof.base, proof.landed_as,
                                        proof.verified],
            verdict.unknown, verdict.note, verdict.merge_base]


def decode(value: Any) -> TipVerdict | None:
    """The verdict written by :func:`encode`, or None when it has another shape."""
    if not isinstance(value, list) or len(value) not in (4, 5):
        return None
    raw, unknown, note, mb = value[:4]
    proof = None
    try:
        if raw is not None:
            kind, base, landed, verified = raw
            proof = Proof(ProofKind(kind), str(base), None if landed is None else Oid(landed),
                          str(verified))
        return TipVerdict(proof, None if unknown is None else str(unknown), str(note or ""),
                          None if mb is None else Oid(mb))
    except (TypeError, ValueError):
        return None


def pair_key(target: str, tip: str) -> str:
    return f"{target}:{tip}"


def encode_pair(*, clean: bool, same: bool, changes: Sequence[MissingChange]) -> list[Any]:
    """A merge of a tip into a landing commit: clean, whether it changed nothing, what it
    still changes."""
    return [clean, same, [[c.path, c.added, c.deleted] for c in changes], PAIR_FORMAT]


def decode_pair(value: Any) -> tuple[bool, bool, tuple[MissingChange, ...]] | None:
    """What :func:`encode_pair` wrote, or None for another shape or an older format."""
    if not isinstance(value, list) or len(value) != 4 or value[3] != PAIR_FORMAT:
        return None
    clean, same, raw, _ = value
    try:
        changes = tuple(MissingChange(str(p), a, d) for p, a, d in raw)
    except (TypeError, ValueError):
        return None
    return bool(clean), bool(same), changes
