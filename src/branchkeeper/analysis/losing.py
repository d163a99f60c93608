"""Losing updates: which branch deletions or rewinds of one ref transaction would lose commits
(issue 15, "Behaviour"; docs/git-hook.md).

A *losing update* deletes a local branch, or moves it to a commit that does not contain its old
tip, while no other ref holds that tip: no other branch, tag, remote-tracking ref or
``refs/branchkeeper/*`` ref, and none of the new values the same transaction writes. The refs
the transaction itself changes never count as holders (their current value is about to go).
A rewind whose lost commits all reappear in the new tip by patch-id (a rebase, an amend of the
message), or whose new tip has the old tip's tree (a squash of the branch into one commit),
loses no work either; the project's proofs use the same tests (patch equivalence, content).

Cost: one ``rev-list --parents`` for every tip of the transaction together (the common case:
a deletion of a merged branch ends there), plus, for a rewind that would lose commits, one
``rev-parse`` of the trees, one ``rev-list`` of the new side and one patch-id pipeline. No
network and no lazy fetch: the patch-id test (which reads blobs) is skipped in a partial clone.
On git without ``patch-id --verbatim`` (< 2.39) a patch-id match also needs a content check
(one ``diff-tree --raw``, and where that does not settle it one ``merge-tree --write-tree``):
there patch-ids ignore whitespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from branchkeeper.git.parse import records
from branchkeeper.git.repo import read_remote_config
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

#: Timeout of each git call, in seconds: the hook runs while git holds the refs' locks.
TIMEOUT_S = 20.0
#: Most commits of a rewind's new side compared by patch-id.
NEW_SIDE_MAX = 2000
_HOLDER_SETS = (("--branches", "refs/heads/"), ("--tags", "refs/tags/"),
                ("--remotes", "refs/remotes/"))


class Candidate(NamedTuple):
    """A branch update to judge: ``old`` is the tip it had before the transaction, ``new`` the
    value it gets (``None``: deleted)."""

    ref: str
    old: Oid
    new: Oid | None


class Losing(NamedTuple):
    """A losing update and ``lost``, the number of commits that exist in no other ref (and
    have no patch-equivalent in the new tip)."""

    ref: str
    old: Oid
    new: Oid | None
    lost: int

    @property
    def branch(self) -> str:
        return self.ref.removeprefix("refs/heads/")


def read_tips(root: Path, refs: Iterable[str]) -> dict[str, Oid]:
    """ref -> oid for those of ``refs`` that exist (one ``for-each-ref``; none for no refs)."""
    wanted = sorted(set(refs))
    if not wanted:
        return {}
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)", *wanted],
                  cwd=root, timeout=TIMEOUT_S).stdout
    return {name: Oid.parse(oid) for name, oid in records(out, fields=2)
            if name in wanted and oid}


def _holder_args(excluded: Iterable[str]) -> list[str]:
    """``--not``-side pseudo-refs: every branch, tag, remote-tracking and ``refs/branchkeeper``
    ref except ``excluded`` (full names, or globs under ``refs/branchkeeper/``). Ref names
    cannot hold glob characters, so an exclusion of a ref is literal."""
    skip = sorted(set(excluded))
    args: list[str] = []
    for option, prefix in _HOLDER_SETS:
        args += [f"--exclude={r[len(prefix):]}" for r in skip if r.startswith(prefix)]
        args.append(option)
    args += [f"--exclude={r}" for r in skip if r.startswith("refs/branchkeeper/")]
    args.append("--glob=refs/branchkeeper/*")
    return args


def unheld_commits(root: Path, tips: Sequence[Oid], holders: Sequence[Oid],
                   excluded: Iterable[str]) -> dict[Oid, tuple[Oid, ...]]:
    """Commits reachable from ``tips`` and from no holder, each mapped to its parents (one
    ``rev-list --parents``). Holders: the ``holders`` ids and every branch, tag,
    remote-tracking and ``refs/branchkeeper`` ref but ``excluded``. Raises :class:`GitError`."""
    args = ["rev-list", "--parents", *sorted(set(tips)), "--not", *sorted(set(holders)),
            *_holder_args(excluded)]
    out = run_git(args, cwd=root, timeout=TIMEOUT_S).text
    graph: dict[Oid, tuple[Oid, ...]] = {}
    for line in out.splitlines():
        ids = line.split()
        if ids:
            graph[Oid.parse(ids[0])] = tuple(Oid.parse(p) for p in ids[1:])
    return graph


def reachable(tip: Oid, graph: Mapping[Oid, tuple[Oid, ...]]) -> set[Oid]:
    """The commits of ``graph`` reachable from ``tip`` (``graph`` holds only unheld commits)."""
    seen: set[Oid] = set()
    todo = [tip]
    while todo:
        commit = todo.pop()
        if commit in seen or commit not in graph:
            continue
        seen.add(commit)
        todo.extend(graph[commit])
    return seen


def _same_trees(root: Path, pairs: Sequence[tuple[Oid, Oid]]) -> set[tuple[Oid, Oid]]:
    """The (old, new) pairs whose commits have the same tree (one ``rev-parse``)."""
    if not pairs:
        return set()
    args = ["rev-parse", *(f"{c}^{{tree}}" for pair in pairs for c in pair)]
    trees = run_git(args, cwd=root, timeout=TIMEOUT_S).text.split()
    if len(trees) != 2 * len(pairs):
        return set()
    return {pair for i, pair in enumerate(pairs) if trees[2 * i] == trees[2 * i + 1]}


def _equivalent(root: Path, lost: set[Oid], old: Oid, new: Oid) -> set[Oid]:
    """The commits of ``lost`` whose patch-id appears among the new tip's own commits (the
    sweep's batched patch-ids; no cache file is written from a hook)."""
    from branchkeeper.analysis.commitfacts import DiffFacts
    from branchkeeper.git.repo import patch_id_mode
    from branchkeeper.state.commit_cache import CommitCache

    side = [Oid.parse(c) for c in run_git(
        ["rev-list", f"--max-count={NEW_SIDE_MAX}", new, "--not", old], cwd=root,
        timeout=TIMEOUT_S).text.split()]
    if not side:
        return set()
    facts = DiffFacts(root, CommitCache.load(None, pid_mode=patch_id_mode()), budgeted=True,
                      spent=lambda: False)
    pids, _failed = facts.patch_ids([*lost, *side])
    theirs: dict[str, list[Oid]] = {}
    for c in side:
        if pids.get(c):
            theirs.setdefault(pids[c], []).append(c)
    matched = {c: theirs[pids[c]] for c in lost if pids.get(c) and pids[c] in theirs}
    if not matched or patch_id_mode() == "verbatim":
        return set(matched)
    return _confirmed(root, matched, old, new)


def _confirmed(root: Path, matched: Mapping[Oid, Sequence[Oid]], old: Oid, new: Oid
               ) -> set[Oid]:
    """Without ``patch-id --verbatim`` (git < 2.39) equal patch-ids may differ in whitespace,
    so each match needs a content check, as the sweep's proofs do (issue 11): the lost commit
    and a new-side commit with its patch-id change the same paths between the same blobs (one
    ``diff-tree --raw`` stream), or, for the whole rewind, merging the old tip into the new one
    (``merge-tree --write-tree``, git 2.38, objects in a scratch store) is clean and leaves the
    new tip's tree unchanged. What neither check confirms is lost."""
    raws = _raw_changes(root, {*matched, *(n for ns in matched.values() for n in ns)})
    same = {c for c, ns in matched.items()
            if c in raws and any(raws.get(n) == raws[c] for n in ns)}
    if len(same) == len(matched) or not _merge_keeps(root, old, new):
        return same
    return set(matched)


def _raw_changes(root: Path, commits: Iterable[Oid]) -> dict[Oid, frozenset[tuple[str, ...]]]:
    """commit -> its change against its first parent as (path, old mode, new mode, old blob,
    new blob) entries (one ``diff-tree --stdin --raw -z`` process); {} when git fails."""
    from branchkeeper.git.difftree import parse_raw_z
    from branchkeeper.git.run import GitError

    wanted = sorted(set(commits))
    try:
        out = run_git(["diff-tree", "--stdin", "-r", "--raw", "-z", "--no-renames",
                       "--no-abbrev"], cwd=root, stdin="".join(f"{c}\n" for c in wanted).encode(),
                      timeout=TIMEOUT_S).stdout
    except GitError:
        return {}
    return {Oid.parse(header): frozenset((e.path, e.old_mode, e.new_mode, e.old_oid, e.new_oid)
                                         for e in entries)
            for header, entries in parse_raw_z(out)}


def _merge_keeps(root: Path, old: Oid, new: Oid) -> bool:
    """Whether ``merge-tree --write-tree NEW OLD`` is clean and gives NEW's tree (git 2.38;
    False on older git or any failure). Its objects go to a scratch object store."""
    from branchkeeper.git.mergetree import scratch_objects
    from branchkeeper.git.repo import git_version
    from branchkeeper.git.run import GitError

    if not git_version().has_merge_tree_write_tree:
        return False
    try:
        common = Path(run_git(["rev-parse", "--git-common-dir"], cwd=root,
                              timeout=TIMEOUT_S).path_text.strip())
        with scratch_objects(common if common.is_absolute() else root / common) as scratch:
            res = run_git(["merge-tree", "--write-tree", "--no-messages", new, old], cwd=root,
                          env=scratch.env(), check=False, timeout=TIMEOUT_S)
        tree = run_git(["rev-parse", f"{new}^{{tree}}"], cwd=root, timeout=TIMEOUT_S).text
    except (GitError, OSError):
        return False
    return res.returncode == 0 and res.text.split() == [tree.strip()]


def losing_updates(root: Path, candidates: Sequence[Candidate], *,
                   excluded: Iterable[str]) -> list[Losing]:
    """The losing updates among ``candidates``, in their order.

    ``excluded``: every ref the transaction changes (full names); their current values never
    hold a tip, and each candidate's new value does. Raises :class:`GitError` when git fails
    (the caller decides what a failure means in its state).
    """
    todo = [c for c in candidates if c.old != c.new]
    if not todo:
        return []
    news = [c.new for c in todo if c.new is not None]
    graph = unheld_commits(root, [c.old for c in todo], news, excluded)
    lost = {c.ref: reachable(c.old, graph) for c in todo}
    todo = [c for c in todo if lost[c.ref]]
    rewinds = [(c.old, c.new) for c in todo if c.new is not None]
    same = _same_trees(root, rewinds)
    partial: bool | None = None
    out: list[Losing] = []
    for c in todo:
        commits = lost[c.ref]
        if c.new is not None:
            if (c.old, c.new) in same:
                continue
            if partial is None:  # objects may be missing on purpose: read no blob then
                partial = read_remote_config(root, "origin").partial_clone
            if not partial:
                commits = commits - _equivalent(root, commits, c.old, c.new)
            if not commits:
                continue
        out.append(Losing(c.ref, c.old, c.new, len(commits)))
    return out
