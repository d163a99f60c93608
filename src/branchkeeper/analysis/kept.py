"""Kept tips: the commits the ``reference-transaction`` hook kept when a branch deletion or
rewind would have lost them (issue 15), under ``refs/branchkeeper/kept/<branch>/<unix time>``.

:func:`read_kept` lists them with how many of their commits exist nowhere else (one
``for-each-ref`` and one ``rev-list``), for the sweep ("recoverable") and for ``prune``, which
expires them after ``branches.git_hook.keep_days`` behind a bundle. A second tip kept for the
same branch in the same second gets ``<unix time>-2``, ``-3``, ...
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from branchkeeper.analysis.losing import TIMEOUT_S, reachable, unheld_commits
from branchkeeper.git.parse import records
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

#: Where kept tips live.
KEPT_PREFIX = "refs/branchkeeper/kept/"
_STAMP = re.compile(r"\A(\d{1,12})(?:-(\d{1,6}))?\Z")


class KeptTip(NamedTuple):
    """One kept tip: its ``ref``, the ``branch`` it was the tip of, ``time`` (unix seconds, when
    it was kept), the commit ``oid`` and ``unique``: how many of its commits no branch, tag,
    remote-tracking ref or other ``refs/branchkeeper`` ref (outside ``kept/``) holds; 0 means
    the work is also elsewhere now (for example the branch was restored)."""

    ref: str
    branch: str
    time: int
    oid: Oid
    unique: int


def parse_kept_ref(ref: str) -> tuple[str, int] | None:
    """(branch, unix time) of a kept ref, or ``None`` when ``ref`` is not one."""
    if not ref.startswith(KEPT_PREFIX):
        return None
    branch, _, stamp = ref[len(KEPT_PREFIX):].rpartition("/")
    match = _STAMP.match(stamp)
    if not branch or match is None:
        return None
    return branch, int(match[1])


def kept_ref_name(branch: str, when: int, taken: Iterable[str]) -> str:
    """The kept ref for ``branch`` at ``when`` (unix seconds) that is not in ``taken``."""
    used = set(taken)
    name = f"{KEPT_PREFIX}{branch}/{when}"
    n = 1
    while name in used:
        n += 1
        name = f"{KEPT_PREFIX}{branch}/{when}-{n}"
    return name


def kept_refs(root: Path) -> dict[str, Oid]:
    """Every ref under ``refs/branchkeeper/kept/`` -> its commit (one ``for-each-ref``)."""
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)", KEPT_PREFIX],
                  cwd=root, timeout=TIMEOUT_S).stdout
    return {name: Oid.parse(oid) for name, oid in records(out, fields=2) if oid}


def read_kept(root: Path) -> list[KeptTip]:
    """Every kept tip, oldest first, with its count of commits held nowhere else."""
    refs = {r: o for r, o in kept_refs(root).items() if parse_kept_ref(r) is not None}
    if not refs:
        return []
    graph = unheld_commits(root, list(refs.values()), [], [f"{KEPT_PREFIX}*"])
    tips: list[KeptTip] = []
    for ref, oid in refs.items():
        parsed = parse_kept_ref(ref)
        assert parsed is not None
        tips.append(KeptTip(ref, parsed[0], parsed[1], oid, len(reachable(oid, graph))))
    return sorted(tips, key=lambda t: (t.time, t.ref))
