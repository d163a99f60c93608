"""The few facts a guard decision needs, read with as few bounded git calls as possible.

Issue 5 section 3; first document sections 3 ("one for-each-ref and the cache"), 7 (remote
deletes judged from local tracking refs, no network), 11 (one containment check batched over
every tip a command deletes, one ``status`` per worktree named) and 13 (where an evacuation's
output lands). Nothing here decides; the rules in :mod:`branchkeeper.policy` do.

Every git call runs with :data:`GUARD_TIMEOUT_S`. Callers catch
:class:`~branchkeeper.git.run.GitError` (a timeout is one) and fail the way the rule requires:
allow with a "could not judge" line for a creation, deny for a destruction.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from branchkeeper import clock
from branchkeeper.analysis.refs import RefInfo, RefTable
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import Repo, resolve_git_dir
from branchkeeper.git.parse import ParseError, zsplit
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.config_cache import load_config_cached

if TYPE_CHECKING:
    # Imported where used: a creation decision (the hot hook path) never needs them.
    from branchkeeper.analysis.ignored import Blocked
    from branchkeeper.git.repo import Worktree
    from branchkeeper.model.config import Config

#: Timeout of every git call a guard makes, seconds.
GUARD_TIMEOUT_S = 5.0


def load_guard_config(repo: Repo) -> tuple[Config, str]:
    """The repository's config, or the defaults plus a one-line note when the file is invalid
    (a broken config must not lock an agent out; the defaults are the strict side)."""
    try:
        return load_config_cached(Path(repo.main_root), Path(repo.common_dir)), ""
    except BranchkeeperError as exc:
        from branchkeeper.model.config import DEFAULT_CONFIG

        first = str(exc).splitlines()[0] if str(exc) else "invalid"
        return DEFAULT_CONFIG, f"branchkeeper: .branchkeeper.yaml ignored ({first}); defaults used."


#: The lean record of the guard's one ``for-each-ref``: no date, trailers or subject, so git
#: never opens a commit object (about 5x faster than the sweep's format at 5,000 branches);
#: ages come from the sweep. ``%(symref)`` keeps symbolic refs (``<remote>/HEAD`` and any
#: other) out of the branches, exactly as git resolves them (a dangling one is not listed).
_LEAN_FORMAT = "%(refname)%00%(objectname)%00%(symref)"


class LeanRefs(NamedTuple):
    """The guard's ref facts from its one lean ``for-each-ref``: ``local`` branch name -> tip,
    ``remote`` branch name of ``remote_name`` -> tip (``<remote>/HEAD`` and other symrefs
    excluded), ``remote_head`` the target of ``refs/remotes/<remote>/HEAD`` (``""`` when none),
    and ``others``: (ref, tip, symref target) of the excluded refs. Plain strings, no record per
    ref: a creation decision reads thousands of branches on every hook call."""

    remote_name: str
    local: dict[str, str]
    remote: dict[str, str]
    remote_head: str
    others: tuple[tuple[str, str, str], ...]

    def table(self) -> RefTable:
        """The same refs as a :class:`RefTable` (``date`` None, no upstream, trailers or
        subject), for the decisions that want records."""
        def info(ref: str, oid: str, symref: str = "") -> RefInfo:
            return RefInfo(ref, cast(Oid, oid) or None, "commit", None, "", False, symref,
                           "", "", "", "")

        prefix = f"refs/remotes/{self.remote_name}/"
        local = {n: info("refs/heads/" + n, o) for n, o in self.local.items()}
        remote = {n: info(prefix + n, o) for n, o in self.remote.items()}
        by_ref = {i.ref: i for i in (*local.values(), *remote.values())}
        by_ref.update((r, info(r, o, s)) for r, o, s in self.others)
        return RefTable(self.remote_name, local, remote, self.remote_head, by_ref)


def read_lean_refs(repo: Repo, remote: str) -> LeanRefs:
    """``refs/heads`` and ``refs/remotes/<remote>`` with ONE bounded ``for-each-ref`` reading
    names, tips and symref targets only (the ages the guard shows come from the last sweep).
    Raises GitError, or ValueError on a malformed record."""
    return lean_refs_at(repo.root, remote)


def lean_refs_at(root: str | Path, remote: str) -> LeanRefs:
    """:func:`read_lean_refs` of the repository whose work tree (or git dir) is ``root``."""
    out = run_git(["for-each-ref", f"--format={_LEAN_FORMAT}", "refs/heads", f"refs/remotes/{remote}"],
                  cwd=root, timeout=GUARD_TIMEOUT_S).stdout
    local: dict[str, str] = {}
    remote_refs: dict[str, str] = {}
    others: list[tuple[str, str, str]] = []
    remote_head = ""
    prefix = f"refs/remotes/{remote}/"
    cut = len(prefix)
    head_ref = prefix + "HEAD"
    for line in out.decode("utf-8", "surrogateescape").split("\n"):
        if not line:
            continue
        parts = line.split("\0")
        if len(parts) != 3:
            raise ValueError(f"for-each-ref: expected 3 fields, got {len(parts)}")
        ref, oid, symref = parts
        if ref.startswith("refs/heads/"):
            local[ref[11:]] = oid
        elif ref == head_ref:  # kept as remote_head, never a branch named HEAD
            remote_head = symref
            others.append((ref, oid, symref))
        elif symref:
            others.append((ref, oid, symref))
        elif ref.startswith(prefix):
            remote_refs[ref[cut:]] = oid
    return LeanRefs(remote, local, remote_refs, remote_head, tuple(others))


def read_ref_table(repo: Repo, remote: str) -> RefTable:
    """:func:`read_lean_refs` as a :class:`RefTable`. Raises GitError or ValueError."""
    return read_lean_refs(repo, remote).table()


def read_worktrees(repo: Repo) -> list[Worktree]:
    """Every worktree (one bounded ``worktree list --porcelain -z``; without ``-z`` on a git
    older than 2.36, which rejects it). Raises GitError."""
    from branchkeeper.git.repo import parse_worktree_porcelain

    res = run_git(["worktree", "list", "--porcelain", "-z"], cwd=repo.root,
                  timeout=GUARD_TIMEOUT_S, check=False)
    if res.returncode == 0:
        return parse_worktree_porcelain(res.stdout, nul=True)
    out = run_git(["worktree", "list", "--porcelain"], cwd=repo.root,
                  timeout=GUARD_TIMEOUT_S).stdout
    return parse_worktree_porcelain(out, nul=False)


class WorktreeContents(NamedTuple):
    """What removing a worktree would lose: ``dirty`` (modified, staged, untracked paths, and
    edits hidden from ``git status`` by a skip-worktree or assume-unchanged flag),
    ``ignored_blocking`` (ignored paths the ignored-content rule keeps, each with a reason) and
    whether an archive could hold those (``branchkeeper worktree retire --archive-ignored``).
    ``hidden``: the edits among ``dirty`` that ``git status`` cannot see, so that ``git
    worktree remove`` deletes them even without ``--force``. ``own_refs``: ``<ref> (<n>
    commit(s))`` for each of its own refs (``refs/worktree/*``, ``refs/bisect/*``,
    ``refs/rewritten/*``) holding commits no branch, tag or remote holds; ``stores``: its
    submodule stores (``git worktree remove --force`` deletes them; without it git refuses)."""

    dirty: tuple[str, ...]
    ignored_blocking: tuple[Blocked, ...]
    ignored_archivable: bool = True
    hidden: tuple[str, ...] = ()
    own_refs: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()


def read_worktree_contents(path: str, config: Config) -> WorktreeContents:
    """One bounded ``git status`` of the worktree at ``path`` with the edits it cannot see
    (:func:`~branchkeeper.analysis.hidden_edits.read_work`): what it holds that a removal
    would lose, its ignored paths judged by the one ignored-content rule
    (:func:`branchkeeper.analysis.ignored.judge_ignored`, the repository's polarity) that every
    removal path uses; and what its admin directory holds that nothing else does
    (:func:`~branchkeeper.analysis.worktree_store.own_refs_at_risk`: one ``rev-list`` when it
    has refs of its own). Raises GitError."""
    from branchkeeper.analysis.hidden_edits import read_work
    from branchkeeper.analysis.ignored import IgnoredRules, judge_ignored
    from branchkeeper.analysis.worktree_store import own_refs_at_risk

    tracked, untracked, ignored, hidden = read_work(path, timeout=GUARD_TIMEOUT_S)
    verdict = judge_ignored(Path(path), ignored, IgnoredRules.from_config(config), file_cap=2000)
    held, stores = own_refs_at_risk(Path(path), timeout=GUARD_TIMEOUT_S)
    return WorktreeContents(tuple([*tracked, *untracked]), verdict.blocking,
                            verdict.archivable, tuple(hidden),
                            tuple(f"{h.ref} ({h.count} commit(s))" for h in held), stores)


def ignored_blocking(root: str, ignored: Sequence[str], config: Config) -> tuple[Blocked, ...]:
    """Which of a worktree's ``ignored`` paths (relative to ``root``, as ``git status
    --ignored=matching`` lists them) may not be lost with it, each with the reason: the one
    ignored-content rule (:func:`branchkeeper.analysis.ignored.judge_ignored`, the repository's
    polarity; ignored directories are listed, bounded, where their contents decide). Reads the
    filesystem; no git process."""
    from branchkeeper.analysis.ignored import IgnoredRules, judge_ignored

    return judge_ignored(Path(root), ignored, IgnoredRules.from_config(config),
                         file_cap=2000).blocking


def read_tips(repo: Repo, refs: Sequence[str]) -> dict[str, str]:
    """Full ref name -> commit id for the refs that exist (one bounded ``for-each-ref`` with the
    exact names; annotated tags peeled). Raises GitError."""
    if not refs:
        return {}
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)", "--",
                   *dict.fromkeys(refs)], cwd=repo.root, timeout=GUARD_TIMEOUT_S).text
    tips: dict[str, str] = {}
    wanted = set(refs)
    for line in out.splitlines():
        ref, oid, peeled = [*line.split("\0"), "", ""][:3]
        if ref in wanted:
            tips[ref] = peeled or oid
    return tips


def _excluded(pattern_refs: Iterable[str], prefix: str) -> list[str]:
    return [f"--exclude={r[len(prefix):]}" for r in pattern_refs if r.startswith(prefix)]


def unreachable_tips(repo: Repo, tips: Sequence[str], *, excluded_refs: Sequence[str],
                     not_refs: Sequence[str] | None = None, also_held: Sequence[str] = ()
                     ) -> tuple[frozenset[str], int]:
    """Which of ``tips`` no other ref contains, in ONE bounded ``rev-list``.

    ``not_refs`` None: the holders are every local branch, tag and remote-tracking ref except
    ``excluded_refs`` (section 11's ``contained_elsewhere``, batched over all tips); otherwise
    the holders are exactly ``not_refs`` (section 7: the remote default and integration lines).
    ``also_held``: commits held elsewhere that count as holders too (a tag a remote on this
    machine holds). Returns (the tips reachable from no holder, the number of commits reachable from the tips
    and from no holder). A tip is in ``rev-list TIPS --not HOLDERS`` exactly when no holder
    contains it. Raises GitError.
    """
    if not tips:
        return frozenset(), 0
    args = ["rev-list", *dict.fromkeys(tips), "--not"]
    if not_refs is None:
        ex = list(excluded_refs)
        args += [*_excluded(ex, "refs/heads/"), "--branches",
                 *_excluded(ex, "refs/tags/"), "--tags",
                 *_excluded(ex, "refs/remotes/"), "--remotes"]
    else:
        args += list(not_refs)
    args += list(dict.fromkeys(also_held))
    out = run_git([*args, "--"], cwd=repo.root, timeout=GUARD_TIMEOUT_S).text.split()
    found = set(out)
    return frozenset(t for t in tips if t in found), len(found)


def tracked_paths(root: str, paths: Sequence[str]) -> frozenset[str]:
    """Which of ``paths`` (absolute, inside the work tree ``root``) git tracks: one bounded
    ``ls-files -z --full-name``. An output that is not tracked is untracked or ignored, which
    section 13 treats alike (ignored files are untracked by definition). Raises GitError."""
    rels = {p: posixpath.relpath(p, root) for p in paths}
    if not rels:
        return frozenset()
    out = run_git(["ls-files", "-z", "--full-name", "--", *(f":(literal){r}" for r in rels.values())],
                  cwd=root, timeout=GUARD_TIMEOUT_S).stdout
    listed = set(zsplit(out))
    return frozenset(p for p, r in rels.items() if r in listed)


def linked_worktree_paths(repo: Repo) -> list[str]:
    """The linked (non-main) worktrees of ``repo`` as absolute real paths, read from
    ``<common>/worktrees/*/gitdir`` on the filesystem (no git process), so a recursive ``rm``
    that touches none of them costs nothing. Unreadable entries are skipped."""
    out: list[str] = []
    try:
        entries = list((Path(repo.common_dir) / "worktrees").iterdir())
    except OSError:
        return out
    for entry in entries:
        try:
            text = (entry / "gitdir").read_text("utf-8", "surrogateescape").strip()
        except OSError:
            continue
        if text:
            out.append(os.path.realpath(posixpath.dirname(text)))
    return out


def discardable(cwd: str, pathspecs: Sequence[str], *, tracked: bool, untracked: bool,
                ignored: bool, git_dir: str | None = None, work_tree: str | None = None,
                staged_only: bool = False, visible: bool = True) -> tuple[str, ...]:
    """What a discarding command run in ``cwd`` would throw away: ONE bounded
    ``status --porcelain -z`` limited to ``pathspecs`` (relative to ``cwd``; empty = the whole
    worktree). ``tracked``: staged or unstaged changes to tracked files (a file deleted, and
    nothing else, holds nothing to lose), the edits a skip-worktree or assume-unchanged flag
    hides from ``status`` among them
    (:func:`~branchkeeper.analysis.hidden_edits.hidden_edits_selected`: no process when the
    index flags nothing; not read with ``git_dir``); ``staged_only``: of those, only the staged
    ones (what ``reset --merge`` drops, hidden edits aside); ``untracked``: files git does not
    track; ``ignored``: ignored files. ``visible=False``: only the hidden edits, and only when
    ``status`` lists something else (what a stash save, which takes the rest, overwrites; no
    process at all when the index flags nothing). Returns the paths (relative to the work tree
    root). Raises GitError, or ParseError (a ValueError) on malformed output."""
    see = tracked and not staged_only and git_dir is None
    # imported here: the creation decision's hook path imports this module and never discards
    from branchkeeper.analysis.hidden_edits import hidden_edits_selected

    hidden = hidden_edits_selected(cwd, pathspecs, work_tree=work_tree,
                                   timeout=GUARD_TIMEOUT_S) if see else []
    if not visible and not hidden:
        return ()  # no process when the index flags nothing
    pre = _globals(git_dir, work_tree)
    args = [*pre, "-c", "core.quotePath=false", "status", "--porcelain=v1", "-z", "--no-renames",
            "--ignore-submodules=none",
            "--untracked-files=" + ("all" if untracked or ignored else "no")]
    if ignored:
        args.append("--ignored=matching")
    out = run_git([*args, "--", *pathspecs], cwd=cwd, timeout=GUARD_TIMEOUT_S).stdout
    found: list[str] = []
    for entry in zsplit(out):
        if len(entry) < 4 or entry[2] != " ":
            raise ParseError(f"unexpected status entry: {entry[:200]!r}")
        x, y, path = entry[0], entry[1], entry[3:]
        if x + y == "??":
            keep = untracked
        elif x + y == "!!":
            keep = ignored
        elif staged_only:
            keep = tracked and x in "MAT"
        else:
            keep = tracked and not (x in " D" and y in " D")
        if keep:
            found.append(path)
    if not visible:
        return tuple(p for p in hidden if p not in found) if found else ()
    return tuple(dict.fromkeys([*found, *hidden]))


def clean_removes(cwd: str, pathspecs: Sequence[str], *, excludes: Sequence[str],
                  untracked: bool, ignored: bool, git_dir: str | None = None,
                  work_tree: str | None = None) -> tuple[str, ...]:
    """The files ``git clean -f [-x|-X] -e PATTERN... -- PATHSPECS`` run in ``cwd`` deletes, as
    git's own exclude rules decide (ONE bounded ``ls-files -z --others --full-name``, which
    applies them as clean does): without ``-x``/``-X`` (``untracked`` alone) the standard ignore
    rules and the ``-e`` patterns spare a file; ``-x`` (both) only the patterns; ``-X``
    (``ignored`` alone) deletes what the standard rules or the patterns ignore. Paths relative
    to the work tree root; files inside untracked directories are listed (as without ``-d``
    clean would spare them, this errs on the side of judging). Raises GitError."""
    args = [*_globals(git_dir, work_tree), "ls-files", "-z", "--others", "--full-name"]
    if not (untracked and ignored):
        args.append("--exclude-standard")
    if ignored and not untracked:
        args.append("--ignored")
    args += [f"--exclude={e}" for e in excludes]
    out = run_git([*args, "--", *pathspecs], cwd=cwd, timeout=GUARD_TIMEOUT_S).stdout
    return tuple(zsplit(out))


def is_ancestor(cwd: str, commit: str, rev: str) -> bool:
    """True when ``commit`` is an ancestor of (or equal to) ``rev`` as resolved in ``cwd``: one
    bounded ``merge-base --is-ancestor``. A ``rev`` git cannot resolve is False (not proven).
    Raises GitError on a timeout."""
    if commit.startswith("-") or rev.startswith("-"):
        return False
    res = run_git(["merge-base", "--is-ancestor", commit, rev], cwd=cwd,
                  timeout=GUARD_TIMEOUT_S, check=False)
    return res.returncode == 0


def is_commitish(cwd: str, name: str, *, git_dir: str | None = None) -> bool:
    """True when ``name`` names a commit where a git command run in ``cwd`` acts (a branch,
    tag, remote-tracking branch or commit id): one bounded ``rev-parse --verify -q``, as
    ``git checkout NAME`` decides between switching and restoring a path. Raises GitError on
    a timeout."""
    if name.startswith("-"):
        return False
    res = run_git([*_globals(git_dir, None), "rev-parse", "--verify", "-q", f"{name}^{{commit}}"],
                  cwd=cwd, timeout=GUARD_TIMEOUT_S, check=False)
    return res.returncode == 0


def _globals(git_dir: str | None, work_tree: str | None) -> list[str]:
    return [*([f"--git-dir={resolve_git_dir(git_dir)}"] if git_dir else []),
            *([f"--work-tree={work_tree}"] if work_tree else [])]


def current_branch(cwd: str, *, git_dir: str | None = None,
                   work_tree: str | None = None) -> str | None:
    """The full ref name of the branch checked out where a git command run in ``cwd`` acts
    (one bounded ``symbolic-ref -q HEAD``), None on a detached HEAD. Raises GitError on a
    timeout or when git cannot run."""
    res = run_git([*_globals(git_dir, work_tree), "symbolic-ref", "-q", "HEAD"], cwd=cwd,
                  timeout=GUARD_TIMEOUT_S, check=False)
    if res.returncode != 0:
        return None
    ref = res.stdout.decode("utf-8", "surrogateescape").strip()
    return ref if ref.startswith("refs/heads/") else None


def detached_only(cwd: str, *, git_dir: str | None = None, work_tree: str | None = None
                  ) -> tuple[str, str, int] | None:
    """(top level, HEAD commit, commits HEAD reaches that no branch, tag, remote-tracking ref
    or ref of ours holds) of the worktree where a git command run in ``cwd`` acts, when there
    is at least one such commit; None when there is none or HEAD is unborn, or no work tree.
    For a detached HEAD: what moving it away leaves to its reflog alone. One bounded
    ``rev-parse --show-toplevel HEAD`` and one ``rev-list``. Raises GitError on a timeout
    or when the walk fails."""
    from branchkeeper.analysis.worktree_store import KEEPING_ARGS

    pre = _globals(git_dir, work_tree)
    res = run_git([*pre, "rev-parse", "--show-toplevel", "HEAD"], cwd=cwd,
                  timeout=GUARD_TIMEOUT_S, check=False)
    lines = res.stdout.decode("utf-8", "surrogateescape").splitlines()
    if res.returncode != 0 or len(lines) != 2:
        return None
    only = run_git([*pre, "rev-list", lines[1], "--not", *KEEPING_ARGS, "--"], cwd=cwd,
                   timeout=GUARD_TIMEOUT_S).text.split()
    return (lines[0], lines[1], len(only)) if only else None


def read_alias(cwd: str, name: str, *, git_dir: str | None = None) -> str | None:
    """The configured text of ``alias.<name>`` as git run in ``cwd`` sees it (one bounded
    ``config --get``), None when there is none. Raises GitError on a timeout."""
    res = run_git([*_globals(git_dir, None), "config", "--get", f"alias.{name}"], cwd=cwd,
                  timeout=GUARD_TIMEOUT_S, check=False)
    if res.returncode != 0:
        return None
    return res.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def now() -> float:
    """Unix seconds (one place, so tests and the bench read the same clock)."""
    return clock.now()


def commit_of(cwd: str, rev: str, *, git_dir: str | None = None) -> str | None:
    """The commit id ``rev`` names where a git command run in ``cwd`` acts (one bounded
    ``rev-parse --verify -q``), None when it names no commit. Raises GitError on a timeout."""
    if rev.startswith("-"):
        return None
    res = run_git([*_globals(git_dir, None), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
                  cwd=cwd, timeout=GUARD_TIMEOUT_S, check=False)
    return res.stdout.decode("ascii", "replace").strip() or None if res.returncode == 0 else None


def push_destinations(cwd: str, branches: Sequence[str],
                      config: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """Local branch name -> the remote-tracking ref of where a plain ``git push`` sends it
    (``%(push)``: push.default, pushRemote and the upstream applied, with the command's own
    ``-c key=value`` pairs ``config``; one bounded ``for-each-ref``). A branch with no upstream
    that ``push.autoSetupRemote`` pushes (push.default simple, upstream or current) goes to the
    same name on remote.pushDefault or ``origin`` (one more bounded ``git config``, only then).
    A branch git would not push is absent. Raises GitError."""
    if not branches:
        return {}
    # only the keys that choose where a push goes: the guard never runs what a -c could name
    overrides = [w for k, v in config if k.lower().startswith(("push.", "remote.", "branch."))
                 for w in ("-c", f"{k}={v}")]
    out = run_git([*overrides, "for-each-ref", "--format=%(refname:lstrip=2)%00%(push)", "--",
                   *(f"refs/heads/{b}" for b in dict.fromkeys(branches))], cwd=cwd,
                  timeout=GUARD_TIMEOUT_S).text
    found: dict[str, str] = {}
    unset: list[str] = []
    for line in out.splitlines():
        name, _, push = line.partition("\0")
        if push.startswith("refs/remotes/"):
            found[name] = push
        elif not push:
            unset.append(name)
    if unset:
        remote = _auto_setup_remote(cwd, overrides)
        if remote is not None:
            found.update((name, f"refs/remotes/{remote}/{name}") for name in unset)
    return found


def _auto_setup_remote(cwd: str, overrides: list[str]) -> str | None:
    """The remote a plain push of a branch without upstream goes to when
    ``push.autoSetupRemote`` is on (remote.pushDefault, else ``origin``), None when it is off
    or push.default sends nothing then (``nothing``, ``matching``). One bounded ``git config``."""
    res = run_git([*overrides, "config", "-z", "--get-regexp",
                   r"^(push\.autosetupremote|push\.default|remote\.pushdefault)$"],
                  cwd=cwd, timeout=GUARD_TIMEOUT_S, check=False)
    values: dict[str, str] = {}
    for item in res.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = item.partition("\n")
        if key:
            values[key.lower()] = value
    if values.get("push.autosetupremote", "").lower() not in ("true", "yes", "on", "1"):
        return None
    if values.get("push.default", "simple") not in ("simple", "upstream", "current",
                                                    "tracking"):
        return None
    return values.get("remote.pushdefault") or "origin"


def merge_bases(cwd: str, a: str, b: str) -> list[str]:
    """Every best common ancestor of the commits ``a`` and ``b`` (ids; one bounded
    ``merge-base --all``), [] when they share no history. Raises GitError."""
    res = run_git(["merge-base", "--all", a, b], cwd=cwd, timeout=GUARD_TIMEOUT_S, check=False)
    if res.returncode not in (0, 1):  # 1: no common ancestor
        raise BranchkeeperError(f"git merge-base --all failed: {res.stderr[:300]!r}")
    return res.stdout.decode("ascii", "replace").split()


def commits_only_in(repo: Repo, tip: str | Sequence[str], *, pushed: str,
                    excluded_refs: Sequence[str]) -> list[tuple[str, str]]:
    """(short id, subject) of each commit reachable from ``tip`` (one commit, or several) and
    from neither ``pushed`` nor any local branch, tag or remote-tracking ref outside
    ``excluded_refs``, newest first: what a forced push of ``pushed`` over a remote branch at
    ``tip`` leaves the remote holding alone, and this clone holding nowhere once its tracking
    ref moves; what a rebase onto ``pushed`` drops from the branches ``excluded_refs`` (one
    bounded ``git log``). Raises GitError."""
    ex = list(excluded_refs)
    tips = [tip] if isinstance(tip, str) else list(tip)
    out = run_git(["log", "--no-color", "--format=%h%x00%s", *tips, "--not", pushed,
                   *_excluded(ex, "refs/heads/"), "--branches", *_excluded(ex, "refs/tags/"),
                   "--tags", *_excluded(ex, "refs/remotes/"), "--remotes", "--"],
                  cwd=repo.root, timeout=GUARD_TIMEOUT_S).text
    return [(h, subj) for h, _, subj in (line.partition("\0") for line in out.splitlines())]
