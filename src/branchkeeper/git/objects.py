"""Object lookups in one process: the trees of many commits, the entries of a tree.

:func:`tips_missing_objects` finds the tips a bundle could not carry for want of an object
(``rev-list --objects --missing=print``, bisected). ``cat-file --batch-check`` answers ``<rev>``
lines in order, ``<rev> missing`` for an object it
cannot find (in a partial clone an offline ``cat-file`` dies instead: see
:mod:`branchkeeper.git.run`, so a failure leaves every answer unknown). ``ls-tree -r -z`` lists
``<mode> <type> <oid>\\t<path>`` entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from branchkeeper.git.difftree import split_z
from branchkeeper.git.isolate import failure_of
from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import GitError, run_git, stream_git
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


#: Most ``rev-list`` processes :func:`tips_missing_objects` starts to isolate the tips that need
#: a missing object; past it, every tip of a failing group is reported with that group's object.
MAX_ISOLATING_RUNS = 64


def _missing_in(root: Path, tips: Sequence[str], negatives: Sequence[str], timeout: float
                ) -> str | None:
    """The first object reachable from ``tips`` and not from ``negatives`` that the repository
    lacks, or None. ``rev-list --objects --missing=print`` never fetches (nor would any call
    here: they run offline); a missing commit makes it fail, and git's message names it."""
    stdin = "".join(f"{t}\n" for t in tips) + "".join(f"^{n}\n" for n in negatives)
    res = run_git(["rev-list", "--objects", "--missing=print", "--stdin"], cwd=root,
                  stdin=stdin.encode("ascii"), check=False, timeout=timeout)
    if res.returncode != 0:  # a missing commit (or tree, on older git): named in the message
        error = GitError("rev-list failed", argv=["git", "rev-list"], returncode=res.returncode,
                         stderr=res.stderr)
        return failure_of(error).oid or "?"
    for line in res.stdout.decode("ascii", "replace").splitlines():
        if line.startswith("?"):
            return line[1:].split(" ", 1)[0]
    return None


def tips_missing_objects(root: Path, tips: Sequence[str], negatives: Sequence[str] = (), *,
                         timeout: float = 600) -> dict[str, str]:
    """The tips among ``tips`` whose objects (reachable from the tip, not from any of
    ``negatives``: what a bundle of them would carry) include one the repository lacks, each
    with that object's id. One ``rev-list`` when nothing is missing; otherwise the tips are
    split in halves until each failing one stands alone (about two processes per level for each
    tip that needs a missing object), at most :data:`MAX_ISOLATING_RUNS` processes: past that a
    failing group is reported whole. Never fetches. Issue 11, section 4."""
    out: dict[str, str] = {}
    runs = 0
    todo: list[list[str]] = [list(dict.fromkeys(tips))] if tips else []
    while todo:
        group = todo.pop()
        runs += 1
        oid = _missing_in(root, group, negatives, timeout)
        if oid is None:
            continue
        if len(group) == 1 or runs >= MAX_ISOLATING_RUNS:
            out.update((t, oid) for t in group)
            continue
        half = len(group) // 2
        todo += [group[half:], group[:half]]
    return out


def bundle_negatives(root: Path, base: Oid, tips: Sequence[Oid], *, timeout: float = 600
                     ) -> list[Oid]:
    """The commits a compact recovery bundle of ``tips`` leaves out: the boundary of
    ``rev-list ^base TIPS`` (the fork points of unmerged tips) and the parents of tips already
    merged into ``base`` (so such a tip is still carried, as one commit). Every one is
    reachable from ``base``. Two ``rev-list`` processes at most. Raises
    :class:`~branchkeeper.git.run.GitError`."""
    stdin = "".join(f"{t}\n" for t in tips) + f"^{base}\n"
    # --boundary marks the excluded commits the walk stopped at with a leading "-".
    out = run_git(["rev-list", "--boundary", "--stdin"], cwd=root, stdin=stdin.encode(),
                  timeout=timeout).text
    unmerged: set[str] = set()
    negatives: dict[str, None] = {}
    for line in out.splitlines():
        if line.startswith("-"):
            negatives[line[1:]] = None
        elif line:
            unmerged.add(line)
    merged = [t for t in tips if t not in unmerged]
    if merged:
        parents = run_git(["rev-list", "--no-walk=unsorted", "--parents", "--stdin"], cwd=root,
                          stdin="".join(f"{t}\n" for t in merged).encode(),
                          timeout=timeout).text
        for line in parents.splitlines():
            for parent in line.split()[1:]:
                negatives[parent] = None
    return [Oid.parse(n) for n in negatives]


def bundle_lacking(root: Path, tips: Sequence[Oid], base: Oid | None) -> dict[str, str]:
    """The tips among ``tips`` whose recovery bundle (compact against ``base``, the default
    branch's tip; full history when ``base`` is None or its history is unreadable) needs an
    object the repository lacks, each with that object's id: what
    ``actions.bundle.create_bundle`` would refuse, found the same way before anything is
    written (:func:`bundle_negatives`, then :func:`tips_missing_objects`: one ``rev-list``
    when nothing is missing; never fetches). Raises :class:`~branchkeeper.git.run.GitError`
    when git cannot walk the tips."""
    todo = list(dict.fromkeys(tips))
    if not todo:
        return {}
    negatives: list[Oid] = []
    if base is not None:
        try:
            negatives = bundle_negatives(root, base, todo)
        except GitError:
            negatives = []
    return tips_missing_objects(root, [str(t) for t in todo], [str(n) for n in negatives])
