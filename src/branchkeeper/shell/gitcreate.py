"""Every branch a git invocation would create (spec section 3 routes; docs/guard.md).

:func:`creations` reads the routes :func:`branchkeeper.shell.gitargv.creation` knows (``switch
-c``, ``checkout -b``, ``branch NAME``, ``worktree add``) and the routes that create a branch
under another name: a copy (``branch -c/-C/--copy``), ``stash branch``, ``update-ref
refs/heads/NEW``, a ``fetch`` (or ``pull``) refspec whose destination is a local branch, a
``push`` refspec that creates a branch on a remote (or, to ``.``, in this repository), and
``symbolic-ref HEAD refs/heads/NEW`` (an unborn branch). One function per subcommand, in
:data:`_ROUTES`. Pure; whether the name exists already is for the caller (git
creates nothing then, or moves the branch: :func:`gitargv.overwrites` reads that).
"""

from __future__ import annotations

from collections.abc import Callable

from branchkeeper.shell import gitopts
from branchkeeper.shell.gitargv import (
    _BRANCH,
    _UPDATE_REF,
    _ZERO_OID,
    PUSH_OPTIONS,
    Creation,
    branch_ref,
    creation,
    fetch_parse,
    last_value,
)
from branchkeeper.shell.gitsymref import symref_set
from branchkeeper.shell.model import GitInvocation


def creations(g: GitInvocation) -> tuple[Creation, ...]:
    """Every branch ``g`` would create, in the order its words name them (section 3). A
    ``Creation`` whose ``remote`` is set creates the branch on that remote, not here; one
    whose name is not known (an expansion, a glob refspec) is ``dynamic``."""
    route = _ROUTES.get(g.subcommand or "")
    if route is not None:
        return route(g)
    c = creation(g)
    return (c,) if c is not None else ()


def _branch(g: GitInvocation) -> tuple[Creation, ...]:
    """``git branch NAME [START]``, and a copy: ``git branch -c|-C|--copy [OLD] NEW`` creates
    NEW at OLD's tip (``-C`` or ``--force`` overwrites an existing NEW). A rename (``-m/-M``)
    adds no branch."""
    c = creation(g)
    if c is not None:
        return (c,)
    p = gitopts.parse(g.args, g.args_dynamic, _BRANCH)
    if not (p.has("copy") or p.count("C")) or p.has("move", "delete") or p.count("M", "D"):
        return ()
    if not 1 <= len(p.operands) <= 2:
        return ()  # git refuses: "too many arguments for a copy operation"
    new, dynamic = p.operands[-1]
    start = p.operands[0][0] if len(p.operands) == 2 else None
    force = p.count("C") > 0 or p.has("force")
    return (Creation(new, "branch_copy", start, None, force, g.dynamic or p.unknown or dynamic,
                     g.cwd, needs_existence_check=force, candidate_existing=new),)


def branch_moves(g: GitInvocation) -> tuple[tuple[str, str, bool], ...]:
    """(new ref, source ref, renamed) of ``git branch -m|-M|-c|-C [OLD] NEW``: NEW then holds
    OLD's tip (``HEAD``: the current branch's, when OLD is not written), and a rename leaves
    no OLD. Empty for any other invocation, or a name from an expansion."""
    if g.subcommand != "branch":
        return ()
    p = gitopts.parse(g.args, g.args_dynamic, _BRANCH)
    renamed = p.has("move") or p.count("M") > 0
    if not (renamed or p.has("copy") or p.count("C")) or p.has("delete") or p.count("D"):
        return ()
    if not 1 <= len(p.operands) <= 2 or g.dynamic or p.dynamic:
        return ()
    old = "refs/heads/" + p.operands[0][0] if len(p.operands) == 2 else "HEAD"
    return (("refs/heads/" + p.operands[-1][0], old, renamed),)


def _stash(g: GitInvocation) -> tuple[Creation, ...]:
    """``git stash branch NEW [STASH]``: NEW at the stash's base (git refuses an existing
    NEW)."""
    args, dyn = g.args, g.args_dynamic
    if args[:1] != ("branch",) or len(args) < 2 or args[1].startswith("-"):
        return ()
    start = args[2] if len(args) > 2 else None
    return (Creation(args[1], "stash_branch", start, None, False,
                     g.dynamic or any(dyn[1:2]), g.cwd),)


def _update_ref(g: GitInvocation) -> tuple[Creation, ...]:
    """``git update-ref refs/heads/NEW OID`` (and ``create``/``update`` lines of ``--stdin``
    fed by a here-document): a new branch when NEW does not exist. ``-d`` or a zero OID
    deletes (``gitargv.destruction``)."""
    p = gitopts.parse(g.args, g.args_dynamic, _UPDATE_REF)
    dynamic = g.dynamic or p.unknown
    if p.has("stdin"):
        feeds = [r for r in g.invocation.redirects if r.op in ("<<", "<<-", "<<<")]
        if p.has("z") or not feeds or feeds[-1].dynamic or feeds[-1].body is None:
            return ()  # an unread feed: judged as an unknown delete (gitargv._update_ref)
        out = []
        for line in feeds[-1].body.splitlines():
            parts = line.split()
            if parts[:1] in (["create"], ["update"]) and len(parts) >= 3 and \
                    parts[1].startswith("refs/heads/") and not _ZERO_OID.match(parts[2]):
                out.append(_local(parts[1], parts[2], "update_ref_create", dynamic, g))
        return tuple(out)
    ops = p.operands
    if p.has("d") or len(ops) < 2 or _ZERO_OID.match(ops[1][0]):
        return ()
    ref, ref_dynamic = ops[0]
    if not ref.startswith("refs/heads/") and not (ref_dynamic and not ref.startswith("refs/")):
        return ()
    return (_local(ref, ops[1][0], "update_ref_create", dynamic or ref_dynamic, g),)


def _local(ref: str, start: str | None, route: str, dynamic: bool,
           g: GitInvocation) -> Creation:
    """A branch created in this repository at the full ref ``ref``, under a name that may
    exist already (git then moves it: the existence check is the caller's)."""
    name = ref.removeprefix("refs/heads/")
    return Creation(name, route, start, None, False, dynamic or "*" in name, g.cwd,
                    needs_existence_check=True, candidate_existing=name)


def _refspec_dsts(specs: tuple[tuple[str, bool], ...], *, empty_src: bool
                  ) -> list[tuple[str, str, bool]]:
    """(source, branch ref, dynamic) of each ``src:dst`` refspec whose destination is a
    branch; a source may be empty only where ``empty_src`` (fetch: the remote's HEAD)."""
    out = []
    for spec, dynamic in specs:
        src, colon, dst = spec.removeprefix("+").partition(":")
        if not colon or not dst or (not src and not empty_src) or src.startswith("^"):
            continue
        ref = branch_ref(dst)
        if ref is not None:
            out.append((src, ref, dynamic))
    return out


def _fetch(g: GitInvocation) -> tuple[Creation, ...]:
    """``git fetch REMOTE SRC:DST`` where DST is a branch (``main:new``,
    ``+src:refs/heads/new``): DST is created when it does not exist. A remote-tracking or tag
    destination creates no branch; ``--dry-run``, ``--multiple`` and ``--stdin`` name none.
    ``git pull REMOTE SRC:DST`` is the same route: pull hands its refspecs to fetch."""
    p = fetch_parse(g)
    if p.has("dry-run", "multiple", "stdin", "all") or len(p.operands) < 2:
        return ()
    dynamic = g.dynamic or p.unknown
    return tuple(_local(ref, None, "fetch_create", dynamic or d, g)
                 for _, ref, d in _refspec_dsts(p.operands[1:], empty_src=True))


def _push(g: GitInvocation) -> tuple[Creation, ...]:
    """``git push REMOTE SRC:DST`` (``HEAD:refs/heads/new``, ``x:new``): DST is created on
    REMOTE when it has no such branch (``remote`` set on the record); to ``.`` it is a branch
    of this repository. An unqualified DST is read as a branch (git picks a tag only for a tag
    source). Deletions, ``--dry-run``, ``--mirror``, ``--all`` and ``--tags`` create none here."""
    p = gitopts.parse(g.args, g.args_dynamic, PUSH_OPTIONS)
    if p.has("dry-run", "delete", "mirror", "all", "branches", "tags"):
        return ()
    repo_opt = last_value(p, "repo")
    operands = list(p.operands)
    if repo_opt is not None:
        remote, remote_dynamic = repo_opt[1], repo_opt[2]
    elif operands:
        remote, remote_dynamic = operands.pop(0)
    else:
        return ()
    if remote is None:
        return ()
    dynamic = g.dynamic or p.unknown
    out = []
    for src, ref, d in _refspec_dsts(tuple(operands), empty_src=False):
        if remote in (".", "./") and not remote_dynamic:
            out.append(_local(ref, src, "push_create", dynamic or d, g))
            continue
        name = ref.removeprefix("refs/heads/")
        out.append(Creation(name, "push_create", src, None, False,
                            dynamic or d or remote_dynamic or "*" in name, g.cwd,
                            remote=remote))
    return tuple(out)


def _symbolic_ref(g: GitInvocation) -> tuple[Creation, ...]:
    """``git symbolic-ref HEAD refs/heads/NEW``: HEAD on the unborn branch NEW when NEW does
    not exist, which the next commit creates, as ``checkout --orphan NEW`` does; an existing
    NEW is only checked out (index and work tree kept)."""
    sym = symref_set(g)
    if sym is None or sym.name != "HEAD" or not sym.target.startswith("refs/heads/"):
        return ()
    return (_local(sym.target, None, "symref_head", sym.dynamic, g),)


_ROUTES: dict[str, Callable[[GitInvocation], tuple[Creation, ...]]] = {
    "branch": _branch, "stash": _stash, "update-ref": _update_ref, "fetch": _fetch,
    "pull": _fetch, "push": _push, "symbolic-ref": _symbolic_ref}
