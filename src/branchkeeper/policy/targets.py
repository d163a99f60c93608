"""What a deleting command reaches, found on the filesystem alone (issue 17, section 1).

:func:`deletions` lists each deleting invocation of a parsed command (``rm``, ``unlink``,
``shred``, a truncation such as ``: > f`` or ``truncate -s0 f``, what ``find -delete``/``-exec``
and interpreters run, the same through ``xargs`` and ``parallel``) with the worktrees, paths
and git directories its targets reach (:class:`Hit`): globs are expanded as bash without
dotglob would, ``find``'s selection stands for its ``{}`` and for the paths it pipes to
``xargs``, literal words piped from ``echo`` or ``printf`` for ``xargs``'s operands. No git
process; the judging is :mod:`branchkeeper.policy.deletion`'s (work in worktrees) and
:mod:`branchkeeper.policy.rm`'s (linked worktrees).
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import itertools
import os
import posixpath
from collections.abc import Sequence
from typing import NamedTuple

from branchkeeper.analysis.guard_facts import linked_worktree_paths
from branchkeeper.git.locate import Repo, locate
from branchkeeper.policy.facts import child_checkouts
from branchkeeper.policy.plan import glob_only, under
from branchkeeper.shell.model import (
    FindScope,
    Invocation,
    ParsedCommand,
    RmTarget,
    rm_no_preserve_root,
    rm_operands,
    truncated_files,
)
from branchkeeper.shell.parse import find_scope_of

#: Entries of a git directory that hold commits, refs or the index: deleting one of them (or
#: the whole directory) loses what no remote holds. Others (``*.lock``, ``hooks/``,
#: ``COMMIT_EDITMSG``...) may go.
GIT_DATA = frozenset({"objects", "refs", "packed-refs", "logs", "index", "HEAD", "worktrees",
                      "modules", "shallow", "commondir"})


#: What the real path of an ``rm`` program may be called for it to keep ``/`` (GNU coreutils,
#: as ``rm`` or its single binary, and BSD/macOS rm). Busybox's rm has no such check.
_ROOT_KEEPING_RM = frozenset({"rm", "grm", "coreutils"})


def rm_spares_root(inv: Invocation) -> bool:
    """Whether the ``rm`` of ``inv`` skips an operand that is the root directory ``/`` (POSIX
    asks it; GNU's default ``--preserve-root``; BSD and macOS): it runs as ``rm``, not through
    busybox, without ``--no-preserve-root`` (any abbreviation) among its options, and the
    program it names (``argv[0]``, looked up on the hook's ``PATH``) is a real ``rm``
    (:data:`_ROOT_KEEPING_RM`). The filesystem only, no process; False when unsure."""
    if inv.name != "rm" or any(os.path.basename(w) == "busybox" for w in inv.wrappers):
        return False
    for word in inv.argv[1:]:
        if word == "--":
            break
        if word.startswith("--") and rm_no_preserve_root(word):
            return False
    program = inv.argv[0]
    if "/" in program:
        where = [program if program.startswith("/") else os.path.join(inv.cwd or "/", program)]
    else:
        where = [os.path.join(d, program) for d in os.environ.get("PATH", "").split(":") if d]
    for path in where:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.basename(os.path.realpath(path)) in _ROOT_KEEPING_RM
    return False


class Hit(NamedTuple):
    """Work a deletion reaches: under ``spec`` (relative to the worktree ``root``; None = the
    whole worktree) of one worktree, or (``root`` None) only the repository's git directory;
    ``git_dir``: the repository's git directory goes too. A deletion ``find`` runs removes,
    under ``spec``, only what its ``find`` selects (``scope``), recursively or not."""

    root: str | None
    spec: str | None
    repo: Repo
    git_dir: bool
    scope: FindScope | None = None
    recursive: bool = True


class Deleted(NamedTuple):
    """One deleting invocation and what it reaches: ``hits``; ``unknown``, targets the guard
    cannot know (their reach is the repository around the invocation, :func:`near`); and
    ``scopes``, the (selection, recursive) of each ``find`` that supplies its targets; ``paths``
    the known targets it removes recursively (absolute, globs expanded); ``files`` every known
    target; ``truncates``: it empties its files rather than deleting them
    (:func:`~branchkeeper.shell.model.truncated_files`)."""

    inv: Invocation
    hits: tuple[Hit, ...]
    unknown: tuple[str, ...]
    scopes: tuple[tuple[FindScope, bool], ...] = ()
    paths: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    truncates: bool = False


def deletions(parsed: ParsedCommand, cwd: str) -> list[Deleted]:
    """Every deleting invocation of ``parsed`` with the work its targets reach, found on the
    filesystem alone (no git process): globs expanded in the invocation's directory (as bash
    without dotglob), ``find``'s selection for ``{}`` and for the paths it pipes to
    ``xargs``, literal words piped from ``echo``/``printf``."""
    feeders = {id(d): inv for inv in parsed.invocations for d in inv.downstream}
    out: list[Deleted] = []
    for inv in parsed.invocations:
        targets = rm_operands(inv)
        truncates = not targets
        if truncates:
            targets = truncated_files(inv)
        if not targets:
            continue
        hits: list[Hit] = []
        unknown: list[str] = []
        scopes: list[tuple[FindScope, bool]] = []
        paths: list[str] = []
        files: list[str] = []
        for t in _expand(targets, inv, feeders.get(id(inv))):
            if isinstance(t, RmTarget) and not t.dynamic and t.path in ("/", "//") and \
                    rm_spares_root(inv):
                continue  # rm refuses the root directory
            if isinstance(t, tuple) and len(t) == 2:  # (scope, recursive) of a find
                hits += _find_hits(t[0], recursive=t[1], cwd=inv.cwd or cwd)
                scopes.append(t)
            elif t.dynamic:
                unknown.append(t.path)
            else:
                hits += reach(t.path, recursive=t.recursive, cwd=inv.cwd or cwd)
                paths += [t.path] if t.recursive else []
                files.append(t.path)
        if hits or unknown or scopes or files:
            out.append(Deleted(inv, tuple(hits), tuple(unknown), tuple(scopes), tuple(paths),
                               tuple(files), truncates))
    return out


def _expand(targets: Sequence[RmTarget], inv: Invocation, feeder: Invocation | None
            ) -> list[RmTarget | tuple[FindScope, bool]]:
    out: list[RmTarget | tuple[FindScope, bool]] = []
    for t in targets:
        if not t.dynamic:
            out.append(t)
        elif inv.found_by is not None and "{}" in t.path:
            out.append((inv.found_by, t.recursive))
        elif feeder is not None and "xargs" in inv.wrappers and not any(inv.dynamic_args):
            scope = find_scope_of(feeder)
            if scope is not None and all(s.startswith("/") for s in scope.starts):
                out.append((scope, t.recursive))
            elif feeder.name in ("echo", "printf") and not any(feeder.dynamic_args) and \
                    inv.cwd is not None and not any(c in a for a in feeder.argv[1:]
                                                    for c in "'\"\\"):
                # (xargs reads quotes and backslashes in its input: such words are unknown)
                words = [w for a in feeder.argv[1:] for w in a.split() if w != "-n"]
                out += [RmTarget(posixpath.normpath(posixpath.join(inv.cwd, w)),
                                 t.recursive, False) for w in words if "%" not in w]
            else:
                out.append(t)
        elif inv.cwd is not None and glob_only(t.path):
            pattern = t.path if t.path.startswith("/") else os.path.join(inv.cwd, t.path)
            matches = list(itertools.islice(globlib.iglob(pattern), 1001))
            if len(matches) > 1000:
                out.append(t)  # too many to judge one by one: an unknown target
            else:
                out += [RmTarget(os.path.normpath(m), t.recursive, False) for m in sorted(matches)]
        else:
            out.append(t)
    return out


def _git_entry(path: str, repo: Repo) -> bool | None:
    """For ``path`` inside ``repo``'s git directory: whether deleting it loses data
    (:data:`GIT_DATA`); None when it is not inside the git directory."""
    common = repo.common_dir
    if not under(path, common):
        return None
    if path == common:
        return True
    rel = posixpath.relpath(path, common).split("/")
    return rel[0] in GIT_DATA


def _worktrees_of(repo: Repo) -> list[str]:
    """The main worktree (when the repository has one) and the linked ones, real paths."""
    main = [] if posixpath.basename(repo.common_dir) != ".git" else [repo.main_root]
    return [os.path.realpath(p) for p in main] + linked_worktree_paths(repo)


def reach(path: str, *, recursive: bool, cwd: str | None, linked: bool = False) -> list[Hit]:
    """What deleting ``path`` (absolute) reaches (:class:`Hit`), on the filesystem alone: the
    worktree holding it, a repository's git directory, or, for a directory holding worktrees
    (``rm -rf ~``), every main worktree under it (linked ones too with ``linked``; else they
    are ``policy.rm``'s)."""
    if not os.path.lexists(path):
        return []
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    is_dir = os.path.isdir(real) and not os.path.islink(real)
    if is_dir and not recursive:
        return []  # rm refuses a directory (and -d removes only an empty one)
    repo = locate(real if is_dir else os.path.dirname(real))
    hits: list[Hit] = []
    if repo is not None:
        inside_git = _git_entry(real, repo)
        if inside_git is not None:
            return [Hit(None, None, repo, True)] if inside_git else []
        top = os.path.realpath(repo.toplevel) if repo.toplevel else None
        if top is not None and real != top and under(real, top):
            return [Hit(top, posixpath.relpath(real, top), repo, False)]
    if not is_dir:
        return hits
    # the target is a worktree root or holds worktrees: every main worktree under it
    seen: set[str] = set()
    for near in filter(None, [repo, locate(cwd) if cwd else None,
                              *(locate(c) for c in child_checkouts(real))]):
        if near.common_dir in seen:
            continue
        seen.add(near.common_dir)
        git_dir = under(os.path.realpath(near.common_dir), real)
        every = _worktrees_of(near)
        mains = every[:1] if posixpath.basename(near.common_dir) == ".git" else []
        for wt in every if linked else mains:
            if under(wt, real):
                hits.append(Hit(wt, None, near, git_dir and wt in mains))
        if git_dir and not mains:
            hits.append(Hit(None, None, near, True))  # a bare repository
    return hits


def _find_hits(scope: FindScope, *, recursive: bool, cwd: str) -> list[Hit]:
    """What a deletion of the paths ``find`` (run in ``cwd``) selects reaches: everything at or
    under each starting point (with the repository around ``cwd`` when it lies there, as for
    ``rm``), then narrowed to what its ``-name`` tests and ``-type f`` select."""
    out: list[Hit] = []
    for start in scope.starts:
        if not start.startswith("/"):
            continue  # an unknown directory: denied as unread by the caller's unknown
        for h in reach(start, recursive=True, cwd=cwd, linked=True):
            git_dir = h.git_dir and (scope.names is None or _matches(".git", scope.names))
            out.append(h._replace(git_dir=git_dir, scope=scope, recursive=recursive))
    return out


def _matches(name: str, names: Sequence[tuple[str, bool]]) -> bool:
    return any(fnmatch.fnmatchcase(name.lower() if nocase else name,
                                   pattern.lower() if nocase else pattern)
               for pattern, nocase in names)


def selected(rel: str, hit: Hit) -> bool:
    """Whether the at-risk path ``rel`` (relative to the worktree root) is under the hit's
    target and, for a find, among what it deletes."""
    path = rel.rstrip("/")
    if hit.spec is not None and not (path == hit.spec or path.startswith(hit.spec + "/")):
        return False
    scope = hit.scope
    if scope is None or scope.names is None:
        return True
    is_dir = rel.endswith("/")  # an ignored directory listed whole: its files are unknown
    parts = path.split("/")
    if not hit.recursive or scope.files_only:
        return is_dir or _matches(parts[-1], scope.names)
    start = hit.spec.split("/") if hit.spec else []
    return any(_matches(p, scope.names) for p in parts[max(0, len(start) - 1):]) or \
        (not hit.spec and hit.root is not None and
         _matches(posixpath.basename(hit.root), scope.names))


def near(where: str) -> list[Hit]:
    """Everything a deletion of unknown targets run in ``where`` could reach: every worktree
    (whole) and the git directory of the repository around ``where`` or, outside every
    repository, of the checkouts directly under it."""
    repo = locate(where)
    repos = [repo] if repo is not None else [r for c in child_checkouts(where)
                                             if (r := locate(c)) is not None]
    out: list[Hit] = []
    seen: set[str] = set()
    for r in repos:
        if r.common_dir in seen:
            continue
        seen.add(r.common_dir)
        out += [Hit(wt, None, r, False) for wt in _worktrees_of(r)]
        out.append(Hit(None, None, r, True))
    return out


