"""Object lookups in one process: the trees of many commits, the entries of a tree.

``cat-file --batch-check`` answers ``<rev>`` lines in order, ``<rev> missing`` for an object it
cannot find (in a partial clone an offline ``cat-file`` dies instead: see
:mod:`branchkeeper.git.run`, so a failure leaves every answer unknown). ``ls-tree -r -z`` lists
``<mode> <type> <oid>\\t<path>`` entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from branchkeeper.git.difftree import split_z
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import run_git, stream_git
from branchkeeper.git.types import Oid


def commit_trees(root: Path, commits: Iterable[str], *, env: dict[str, str] | None = None,
                 timeout: float = 300) -> dict[str, Oid]:
    """``{commit: its tree}`` for each commit git has (one ``cat-file --batch-check``).
    Raises :class:`~branchkeeper.git.run.GitError` when git fails."""
    todo = list(dict.fromkeys(commits))
    if not todo:
        return {}
    stdin = "".join(f"{c}^{{tree}}\n" for c in todo).encode("ascii")
    out = run_git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=root,
                  stdin=stdin, env=env, timeout=timeout).stdout
    lines = out.decode("ascii", "replace").splitlines()
    if len(lines) != len(todo):
        raise ParseError(f"cat-file answered {len(lines)} of {len(todo)} lookups")
    trees: dict[str, Oid] = {}
    for commit, line in zip(todo, lines, strict=True):
        oid, _, kind = line.partition(" ")
        if kind == "tree":
            trees[commit] = Oid(oid)
    return trees


def tree_listing(root: Path, tree: str, *, timeout: float = 300
                 ) -> dict[bytes, tuple[bytes, bytes]]:
    """``{path: (mode, oid)}`` of every file (blob, link, submodule) of ``tree`` (a commit or
    tree id), as git prints them (bytes), read from one ``ls-tree -r -z`` stream. Raises
    :class:`~branchkeeper.git.run.GitError` and :class:`ParseError`."""
    table: dict[bytes, tuple[bytes, bytes]] = {}
    for entry in split_z(stream_git(["ls-tree", "-r", "-z", "--full-tree", tree], cwd=root,
                                    timeout=timeout)):
        meta, tab, raw_path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if not tab or len(fields) != 3:
            raise ParseError(f"ls-tree: bad entry {entry[:120]!r}")
        table[raw_path] = (fields[0], fields[2])
    return table


def missing_objects(root: Path, oids: Iterable[str], *, partial: bool,
                    timeout: float = 300) -> set[str]:
    """The ids among ``oids`` the repository lacks, in one process and without fetching.

    A full repository: one ``cat-file --batch-check`` (it answers ``<oid> missing``). A
    partial clone, where an offline ``cat-file`` dies on the first promisor object instead:
    one ``cat-file --batch-all-objects --batch-check`` of the objects it has (only what is
    local is listed; nothing is fetched). Raises :class:`~branchkeeper.git.run.GitError`.
    """
    todo = set(oids)
    if not todo:
        return set()
    if partial:
        out = run_git(["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
                      cwd=root, timeout=timeout).stdout
        present = set(out.decode("ascii", "replace").split())
        return todo - present
    stdin = "".join(f"{o}\n" for o in sorted(todo)).encode("ascii")
    out = run_git(["cat-file", "--batch-check=%(objectname)"], cwd=root, stdin=stdin,
                  timeout=timeout).stdout
    missing: set[str] = set()
    for line in out.decode("ascii", "replace").splitlines():
        oid, _, word = line.partition(" ")
        if word == "missing" and oid in todo:
            missing.add(oid)
    return missing
