"""The unmerged subgraph: every commit reachable from some branch tip but not from the bases.

One ``git rev-list --boundary --stdin`` walk (first document, section 2, "Batching") replaces a
``git cherry`` / ``merge-base`` / ``rev-list --count`` per branch. From it, in Python:
each tip's unique commits (ahead), its merge-base frontier, containment by remote-tracking refs,
and whether the walk touched a shallow graft or a root.

Bounds: the walk is one process whatever the branch count; the per-tip Python walks stop after
:data:`MAX_VISITS` commit visits in total, and tips not reached get ``None`` results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

#: Total commit visits allowed across all per-tip walks of one inventory.
MAX_VISITS = 4_000_000

# One trailers atom: older git shares key= filters between atoms of one format.
_FORMAT = "%x00%H%x00%P%x00%T%x00%ct%x00%(trailers:only=true,unfold=true)%x00%x01"
_END = b"\0\x01\n"
_PARK_KEYS = frozenset({"parked-reason", "unparked"})


@dataclass(slots=True)
class Commit:
    """One commit of the subgraph. ``boundary``: on the base side (an excluded parent)."""

    oid: Oid
    parents: tuple[Oid, ...]
    tree: str
    date: int
    park_trailer: bool
    boundary: bool


@dataclass(slots=True)
class TipWalk:
    """What one tip's walk found.

    ``unique``: commits reachable from the tip and not from any base, newest first;
    ``frontier``: boundary commits reached (the merge-base candidates);
    ``touches_root``: the walk reached a commit with no parents or a shallow graft, so it never
    met the base: in a shallow clone that is "not known", in a full one "unrelated history".
    """

    unique: list[Oid]
    frontier: set[Oid]
    touches_root: bool
    touches_graft: bool


@dataclass(slots=True)
class Subgraph:
    """The walk's commits plus the shallow grafts of the repository."""

    commits: dict[Oid, Commit]
    grafts: frozenset[str] = frozenset()
    visits: int = 0
    _walks: dict[Oid, TipWalk | None] = field(default_factory=dict)
    _parks: frozenset[Oid] | None = None

    @property
    def park_commits(self) -> frozenset[Oid]:
        """Every park commit of the subgraph (see :meth:`is_park_commit`), found once: most
        subgraphs have none, and the per-tip counts then skip the test."""
        if self._parks is None:
            found = []
            for c in self.commits.values():
                if c.park_trailer and len(c.parents) == 1:
                    parent = self.commits.get(c.parents[0])
                    if parent is not None and parent.tree == c.tree:
                        found.append(c.oid)
            self._parks = frozenset(found)
        return self._parks

    def is_park_commit(self, oid: Oid) -> bool:
        """An empty commit (same tree as its first parent) carrying a park or unpark trailer."""
        return oid in self.park_commits

    def own(self, walk: TipWalk) -> list[Oid]:
        """``walk.unique`` without park commits (bookkeeping, not work), newest first."""
        parks = self.park_commits
        return [c for c in walk.unique if c not in parks] if parks else list(walk.unique)

    def own_count(self, walk: TipWalk, *, outside: Container[Oid] = ()) -> int:
        """How many of ``walk.unique`` are not park commits and not in ``outside``."""
        parks = self.park_commits
        if not parks and not outside:
            return len(walk.unique)
        return sum(1 for c in walk.unique if c not in outside and c not in parks)

    def walk(self, tip: Oid) -> TipWalk | None:
        """The tip's unique commits and frontier (memoised); ``None`` past the visit budget."""
        if tip in self._walks:
            return self._walks[tip]
        start = self.commits.get(tip)
        if start is None or start.boundary:
            result: TipWalk | None = TipWalk([], {tip} if start else set(), False, False)
            self._walks[tip] = result
            return result
        seen: set[Oid] = {tip}
        stack = [tip]
        unique: list[Commit] = []
        frontier: set[Oid] = set()
        root = graft = False
        while stack:
            self.visits += 1
            if self.visits > MAX_VISITS:
                self._walks[tip] = None
                return None
            oid = stack.pop()
            c = self.commits.get(oid)
            if c is None:
                continue
            if c.boundary:
                frontier.add(oid)
                continue
            unique.append(c)
            if oid in self.grafts:
                graft = True
            if not c.parents:
                root = True
            for p in c.parents:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        unique.sort(key=_DATE, reverse=True)  # stable: ties keep the walk's order
        result = TipWalk([c.oid for c in unique], frontier, root, graft)
        self._walks[tip] = result
        return result

    def reachable_set(self, tip: Oid) -> set[Oid] | None:
        """Non-boundary commits reachable from ``tip`` (a set), or ``None`` past the budget."""
        w = self.walk(tip)
        return None if w is None else set(w.unique)


_DATE = attrgetter("date")


def _parse(data: bytes) -> dict[Oid, Commit]:
    commits: dict[Oid, Commit] = {}
    if not data:
        return commits
    chunks = data.split(_END)
    if chunks and chunks[-1].strip() == b"":
        chunks.pop()
    for chunk in chunks:
        header, sep, rest = chunk.partition(b"\n")
        if not sep or not header.startswith(b"commit "):
            raise ParseError(f"rev-list: unexpected record {chunk[:80]!r}")
        boundary = header[7:8] == b"-"
        parts = rest.decode("utf-8", "surrogateescape").split("\0")
        if len(parts) != 6 or parts[0] != "":
            raise ParseError(f"rev-list: expected 6 fields, got {len(parts)}")
        _, oid, parents, tree, date, trailers = parts
        park = bool(trailers) and bool(
            {line.partition(":")[0].strip().lower() for line in trailers.splitlines()}
            & _PARK_KEYS)
        o = Oid.parse(oid)
        commits[o] = Commit(
            oid=o,
            parents=tuple(Oid(p) for p in parents.split()),
            tree=tree,
            date=int(date) if date.isdigit() else 0,
            park_trailer=park,
            boundary=boundary,
        )
    return commits


def read_grafts(common_dir: Path) -> frozenset[str]:
    """The shallow grafts (``<common dir>/shallow``): commits whose parents are not present."""
    try:
        text = (common_dir / "shallow").read_text("ascii")
    except (FileNotFoundError, UnicodeDecodeError):
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def walk_subgraph(root: Path, tips: Iterable[Oid], exclude: Sequence[str], *,
                  grafts: frozenset[str] = frozenset(), timeout: float = 120,
                  common_dir: Path | None = None) -> Subgraph:
    """Walk every commit reachable from ``tips`` and not from ``exclude`` (object ids; refs are
    accepted but then nothing is cached).

    One ``git rev-list --boundary --stdin`` process. With ``common_dir`` the output is kept
    (:mod:`~branchkeeper.state.walk_cache`) under a key of the exact input, so an identical
    walk later costs no process; a repository with replace refs is never cached (they change
    what a commit's parents are). Raises :class:`GitError` on failure.
    """
    tip_list = sorted(set(tips))
    if not tip_list:
        return Subgraph({}, grafts)
    lines = [*tip_list, *(f"^{x}" for x in exclude)]
    stdin = ("\n".join(lines) + "\n").encode()
    from branchkeeper.state.walk_cache import load_walk, save_walk  # not on the hook path

    key = None
    if common_dir is not None and all(_is_oid(x) for x in exclude) \
            and not has_replace_refs(common_dir):
        key = _walk_key(stdin, grafts)
        cached = load_walk(common_dir, key)
        if cached is not None:
            with contextlib.suppress(ParseError):
                return Subgraph(_parse(cached), grafts)
    out = run_git(
        ["rev-list", "--boundary", "--stdin", f"--format={_FORMAT}"],
        cwd=root, stdin=stdin, timeout=timeout,
    ).stdout
    subgraph = Subgraph(_parse(out), grafts)
    if key is not None and common_dir is not None:
        save_walk(common_dir, key, out)
    return subgraph


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _walk_key(stdin: bytes, grafts: frozenset[str]) -> bytes:
    import hashlib

    h = hashlib.blake2b(digest_size=32)
    for part in (_FORMAT.encode(), stdin, "\n".join(sorted(grafts)).encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def has_replace_refs(common_dir: Path) -> bool:
    """Whether any ``refs/replace/`` ref may exist (loose or packed; a reftable repository is
    assumed to have some): no git process."""
    if (common_dir / "reftable").exists():
        return True
    replace_dir = common_dir / "refs" / "replace"
    with contextlib.suppress(OSError):
        if any(replace_dir.iterdir()):
            return True
    try:
        with open(common_dir / "packed-refs", "rb") as f:
            return b" refs/replace/" in f.read()  # one search, not a loop over 40,000 lines
    except OSError:
        return False
