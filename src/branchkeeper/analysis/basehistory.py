"""The default branch's whole history, read once: which of its commits a branch does not hold.

Issue 11, section 3: the patch-id and squash proofs compare a branch with the base commits made
after it forked, whatever the history length (no window). One ``git rev-list --parents --timestamp``
of the default branch's refs gives every commit, its committer date and its parents; from that, in Python:

- the **chain**: the first-parent line of the first ref (the remote-tracking default), position
  0 at its root;
- each commit's **join**: the first chain position whose commit reaches it (a commit on the
  chain joins at its own position; a commit brought in by a merge joins at that merge). Commits
  only the other refs reach (a local default ahead of its remote) join after the whole chain.

Then, for a branch whose walk stopped at the frontier ``F`` (the base commits it reaches):

- a base commit ``b`` with ``join(b) > max(join(f) for f in F)`` is not an ancestor of the branch
  (an ancestor of ``f`` joins no later than ``f``), so it may be where the branch landed;
- the merge base is exact when one frontier commit is on the chain and joins last (the others
  are its ancestors); otherwise it is ``None`` and no proof rests on it;
- commits behind = commits of the first ref minus those joining no later than that merge base.

Memory: a few small ints per commit (about 250 bytes with its id; 25 MB at 100,000 commits).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid


@dataclass
class BaseHistory:
    """See the module docstring. ``ids[i]`` is commit ``i``; ``parents[i]`` its parents'
    indices in order (-1 for a parent outside the history, as at a shallow graft); ``join[i]``;
    ``chain`` the chain's commit indices, root first; ``first_count`` the number of commits
    the first ref reaches; ``upto[p]`` how many of them join at or before chain position p."""

    ids: list[Oid]
    index: dict[str, int]
    dates: list[int]
    parents: list[tuple[int, ...]]
    join: list[int]
    chain_pos: dict[int, int]
    chain: list[int]
    first_count: int
    upto: list[int]
    _roots: list[int] | None = None

    @classmethod
    def read(cls, root: Path, tips: Sequence[Oid], *, timeout: float = 300) -> BaseHistory:
        """One ``rev-list --parents --timestamp`` of ``tips`` (the first is the chain's).
        Raises :class:`~branchkeeper.git.run.GitError`."""
        out = run_git(["rev-list", "--parents", "--timestamp", *dict.fromkeys(tips)],
                      cwd=root, timeout=timeout).stdout
        return cls.build(out.decode("ascii").splitlines(), tips[0])

    @classmethod
    def build(cls, lines: Iterable[str], first: Oid) -> BaseHistory:
        """From ``rev-list --parents --timestamp`` lines (``<date> <commit> <parent>...``) and
        the chain's tip."""
        ids: list[Oid] = []
        index: dict[str, int] = {}
        dates: list[int] = []
        raw: list[list[str]] = []
        for line in lines:
            fields = line.split()
            if len(fields) < 2:
                continue
            index[fields[1]] = len(ids)
            ids.append(Oid(fields[1]))
            dates.append(int(fields[0]) if fields[0].isdigit() else 0)
            raw.append(fields[2:])
        parents = [tuple(index.get(p, -1) for p in ps) for ps in raw]
        chain: list[int] = []
        at = index.get(first)
        seen_chain: set[int] = set()
        while at is not None and at not in seen_chain:
            seen_chain.add(at)
            chain.append(at)
            ps = raw[at]
            at = index.get(ps[0]) if ps else None
        chain.reverse()
        join = [-1] * len(ids)
        upto: list[int] = []
        count = 0
        for pos, c in enumerate(chain):
            stack = [c]
            while stack:
                x = stack.pop()
                if join[x] != -1:
                    continue
                join[x] = pos
                count += 1
                stack.extend(p for p in parents[x] if p != -1 and join[p] == -1)
            upto.append(count)
        after = len(chain)
        for i, j in enumerate(join):
            if j == -1:
                join[i] = after
        return cls(ids, index, dates, parents, join, {c: p for p, c in enumerate(chain)}, chain,
                   count, upto)

    def __contains__(self, commit: object) -> bool:
        return commit in self.index

    def join_of(self, commit: str) -> int:
        """The join position of a base commit; raises ``KeyError`` for another commit."""
        return self.join[self.index[commit]]

    def cutoff(self, frontier: Iterable[Oid]) -> int:
        """The latest join among ``frontier`` (-1 when empty): base commits joining later are
        not ancestors of a branch with that frontier."""
        return max((self.join[self.index[f]] for f in frontier if f in self.index), default=-1)

    def merge_base(self, frontier: Iterable[Oid]) -> Oid | None:
        """The branch's single merge base with the first ref where it is certain (see the
        module docstring), else None."""
        found = [self.index[f] for f in frontier if f in self.index]
        if len(found) == 1:
            return self.ids[found[0]]
        if not found:
            return None
        last = max(self.join[i] for i in found)
        top = [i for i in found if self.join[i] == last]
        if len(top) == 1 and self.chain_pos.get(top[0]) == last:
            return self.ids[top[0]]
        return None

    def behind(self, merge_base: Oid) -> int | None:
        """Commits of the first ref that ``merge_base`` does not reach, when it is on the
        chain (exact); None otherwise."""
        i = self.index.get(merge_base)
        pos = None if i is None else self.chain_pos.get(i)
        if pos is None:
            return None
        return self.first_count - self.upto[pos]

    def reached_by_first(self, commit: str) -> bool:
        """Whether the first ref (the chain's tip) reaches ``commit``."""
        i = self.index.get(commit)
        return i is not None and self.join[i] < len(self.chain)

    def is_merge(self, commit: str) -> bool:
        return len(self.parents[self.index[commit]]) > 1

    def date(self, commit: str) -> int:
        """The committer date of a base commit (unix seconds)."""
        return self.dates[self.index[commit]]

    def landing_candidates(self, cutoff: int) -> list[Oid]:
        """Base commits joining after ``cutoff`` that have one parent in the history: where a
        branch forked at or before ``cutoff`` may have landed as a single commit."""
        join, parents, ids = self.join, self.parents, self.ids
        return [ids[i] for i in range(len(ids))
                if join[i] > cutoff and len(parents[i]) == 1 and parents[i][0] != -1]

    def roots(self, commit: str) -> int:
        """The root commits ``commit`` reaches, as a bit set (bit ``k``: the ``k``-th root):
        two commits share history exactly when their sets meet. A history merged from
        several repositories has several roots; merging across them fails ("unrelated
        histories"), so the merge check skips such pairs. Computed once, for every commit."""
        if self._roots is None:
            self._roots = self._root_sets()
        return self._roots[self.index[commit]]

    def _root_sets(self) -> list[int]:
        parents = self.parents
        sets = [0] * len(parents)
        done = [False] * len(parents)
        bit = 1
        for start in range(len(parents)):
            stack = [start]
            while stack:
                i = stack[-1]
                if done[i]:
                    stack.pop()
                    continue
                todo = [p for p in parents[i] if p != -1 and not done[p]]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                done[i] = True
                if not parents[i] or all(p == -1 for p in parents[i]):
                    sets[i] = bit
                    bit <<= 1
                else:
                    acc = 0
                    for p in parents[i]:
                        if p != -1:
                            acc |= sets[p]
                    sets[i] = acc
        return sets

    def first_parent(self, commit: str) -> Oid | None:
        """The first parent of a base commit, None for a root or beyond a graft."""
        ps = self.parents[self.index[commit]]
        return self.ids[ps[0]] if ps and ps[0] != -1 else None
