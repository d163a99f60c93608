"""Classify a git invocation: creation, destruction, force push (spec sections 3, 7, 11).

Pure functions of a `GitInvocation` (see `parse.git_invocations`). They report what the
command would do by git's own option rules; whether it is allowed is decided elsewhere. The
records are NamedTuples, not frozen dataclasses: the hook imports this module. What a git
invocation writes as a patch (evacuation, section 13) is read by :mod:`gitevac`.
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.gitsymref import symref_set
from branchkeeper.shell.model import GitInvocation, ParsedCommand, join_path

_BRANCH = gitopts.spec(
    "v|verbose q|quiet t|track? |no-track u|set-upstream-to= |unset-upstream |color? "
    "|no-color r|remotes |contains^ |no-contains^ |merged^ |no-merged^ |points-at= "
    "|column? |no-column |sort= |format= a|all l|list |show-current d|delete D m|move M "
    "c|copy C |edit-description f|force |create-reflog i|ignore-case |omit-empty "
    "|recurse-submodules |abbrev? |no-abbrev"
)
# Options that leave `git branch <name> [<start>]` in its create form (branch.c cmd_branch).
_BRANCH_CREATE_OK = frozenset(
    {"force", "no-force", "track", "no-track", "quiet", "no-quiet", "verbose", "color",
     "no-color", "abbrev", "no-abbrev", "create-reflog", "no-create-reflog",
     "recurse-submodules", "no-recurse-submodules"}
)  # fmt: skip
_SWITCH = gitopts.spec(
    "c|create= C|force-create= |orphan= d|detach |guess f|force |discard-changes m|merge "
    "|conflict= q|quiet |progress t|track? |ignore-other-worktrees |recurse-submodules?"
)
_CHECKOUT = gitopts.spec(
    "b= B= |orphan= l t|track? |detach f|force m|merge |conflict= p|patch q|quiet |progress "
    "2|ours 3|theirs |ignore-skip-worktree-bits |ignore-other-worktrees |overwrite-ignore "
    "|guess |overlay |recurse-submodules? |pathspec-from-file= |pathspec-file-nul"
)
_WT_ADD = gitopts.spec(
    "f|force b= B= d|detach |checkout |guess-remote |lock |reason= q|quiet |track |orphan "
    "|relative-paths"
)
_WT_REMOVE = gitopts.spec("f|force")
_WT_PRUNE = gitopts.spec("n|dry-run v|verbose |expire=")
PUSH_OPTIONS = gitopts.spec(
    "|all |branches |mirror d|delete |tags n|dry-run |porcelain f|force |force-with-lease? "
    "|force-if-includes |recurse-submodules= |thin |receive-pack= |exec= u|set-upstream "
    "|progress |prune |verify |follow-tags |signed? |atomic o|push-option= 4|ipv4 6|ipv6 "
    "|repo= q|quiet v|verbose"
)
_UPDATE_REF = gitopts.spec("m= d |no-deref |stdin z |create-reflog |batch-updates")
_ZERO_OID = re.compile(r"0{40}(0{24})?\Z")



class Creation(NamedTuple):
    """A command that would create a branch (spec section 3 routes).

    `route` is one of `switch_create`, `checkout_create`, `branch_create`, `worktree_add_b`,
    `worktree_add_dwim`, and (`gitcreate.creations`) `branch_copy`, `stash_branch`,
    `update_ref_create`, `fetch_create`, `push_create`, `symref_head`. `path` is the new worktree (absolute)
    for worktree routes. When `needs_existence_check` is True git creates the branch only when
    `refs/heads/<candidate_existing>` does not exist (`worktree_add_dwim`: and, when a
    commit-ish was given, only when it names no commit but one remote's branch; the
    update-ref, fetch and forced-copy routes move an existing one instead). `remote`: the
    remote the branch is created on (`push_create`), None for this repository. `dynamic`
    means name or options unknown.
    """

    name: str
    route: str
    start: str | None
    path: str | None
    force: bool
    dynamic: bool
    cwd: str | None
    needs_existence_check: bool = False
    candidate_existing: str | None = None
    remote: str | None = None


class Destruction(NamedTuple):
    """A command that would delete a branch, a remote branch or a worktree (sections 7, 11).

    `kind`: `branch_force_delete`, `branch_delete`, `update_ref_delete`, `tag_delete`,
    `worktree_remove`,
    `worktree_remove_force`, `worktree_prune` (every entry whose directory is gone; no
    targets), `gc_worktree_prune` (the `worktree prune` every `git gc` runs), `bisect_reset`
    (`bisect reset|start`: the worktree's refs/bisect/*; no targets), `push_delete`,
    `push_mirror`, `push_prune`, `branch_overwrite`
    (a branch moved or replaced: `branch -f`, `checkout -B`, `switch -C`, `worktree add -B`,
    `branch -M/-C`, forced `fetch`/`pull`/`push .` refspecs, `update-ref REF NEW`,
    `symbolic-ref refs/heads/X REF`; it loses work only
    when the branch exists, and `new_value` is the revision it is set to, None when unknown).
    `targets` are branch names (without `refs/heads/`; other refs keep their full name;
    remote-tracking deletes give `origin/x`) or absolute worktree paths (raw text when
    unresolvable); `refs` the full ref names for branch kinds; `remote` the remote for push
    kinds. `dynamic` means some target, the remote or the repository could not be known.
    `carried`: (ref, source, renamed) for each of `refs` an earlier part of the same command
    renamed (`renamed`) or copied a branch into (`plan.plan_command`; source a full ref, or
    `HEAD` for the current branch): that ref then holds the source's tip.
    """

    kind: str
    targets: tuple[str, ...]
    remote: str | None
    dynamic: bool
    cwd: str | None
    refs: tuple[str, ...] = ()
    remote_tracking: bool = False
    new_value: str | None = None
    carried: tuple[tuple[str, str, bool], ...] = ()


def last_value(p: gitopts.Parsed, *keys: str) -> tuple[str, str | None, bool] | None:
    found = p.values(*keys)
    return found[-1] if found else None


def creation(g: GitInvocation) -> Creation | None:
    """The branch this invocation would create, or None. Spec section 3, issue 5 section 2."""
    sub, args, dyn = g.subcommand, g.args, g.args_dynamic
    if sub == "switch":
        p = gitopts.parse(args, dyn, _SWITCH)
        opt = last_value(p, "create", "force-create", "orphan")
        if opt is None or opt[1] is None:
            return None
        start = p.operands[0][0] if p.operands and opt[0] != "orphan" else None
        return Creation(opt[1], "switch_create", start, None, opt[0] == "force-create",
                        g.dynamic or p.unknown, g.cwd)  # fmt: skip
    if sub == "checkout":
        p = gitopts.parse(args, dyn, _CHECKOUT)
        opt = last_value(p, "b", "B", "orphan")
        if opt is None or opt[1] is None:
            return None
        ops = p.operands[: p.after_dashdash] if p.after_dashdash is not None else p.operands
        start = ops[0][0] if ops else None
        return Creation(opt[1], "checkout_create", start, None, opt[0] == "B",
                        g.dynamic or p.unknown, g.cwd)  # fmt: skip
    if sub == "branch":
        p = gitopts.parse(args, dyn, _BRANCH)
        if p.unknown or any(key not in _BRANCH_CREATE_OK for key, _, _ in p.options):
            return None
        if not 1 <= len(p.operands) <= 2:
            return None
        start = p.operands[1][0] if len(p.operands) == 2 else None
        return Creation(p.operands[0][0], "branch_create", start, None, p.has("force"),
                        g.dynamic, g.cwd)  # fmt: skip
    if sub == "worktree" and args[:1] == ("add",):
        return _worktree_add(g)
    return None


def _worktree_add(g: GitInvocation) -> Creation | None:
    p = gitopts.parse(g.args[1:], g.args_dynamic[1:], _WT_ADD)
    if not p.operands:
        return None
    raw_path = p.operands[0][0]
    path = None if p.operands[0][1] else join_path(g.cwd, raw_path)
    start = p.operands[1][0] if len(p.operands) > 1 else None
    dynamic = g.dynamic or p.unknown
    opt = last_value(p, "b", "B")
    if opt is not None and opt[1] is not None:
        return Creation(opt[1], "worktree_add_b", start, path, opt[0] == "B", dynamic, g.cwd)
    if p.has("detach"):
        return None
    # builtin/worktree.c add(): no commit-ish -> dwim_branch(basename of path); a commit-ish
    # that names no commit but one remote's branch -> a new branch of that name.
    name = start if start is not None else posixpath.basename(raw_path.rstrip("/"))
    if not name:
        return None
    return Creation(name, "worktree_add_dwim", start, path, False, dynamic, g.cwd,
                    needs_existence_check=True, candidate_existing=name)  # fmt: skip


_TAG = gitopts.spec(
    "a|annotate s|sign u|local-user= f|force d|delete v|verify n? l|list |sort= |contains^ "
    "|no-contains^ |merged^ |no-merged^ |points-at^ m|message= F|file= e|edit |cleanup= "
    "|create-reflog i|ignore-case |column? |no-column |format= |color? |omit-empty |trailer=")


def destruction(g: GitInvocation) -> tuple[Destruction, ...]:
    """Every deletion this invocation would perform (sections 7, 11; issue 5 section 2)."""
    sub, args, dyn = g.subcommand, g.args, g.args_dynamic
    if sub == "branch":
        return _branch_delete(g)
    if sub == "tag":
        p = gitopts.parse(args, dyn, _TAG)
        if not p.has("delete") or (not p.operands and not g.dynamic):
            return ()
        names = tuple(n for n, _ in p.operands)
        return (Destruction("tag_delete", names, None, g.dynamic or p.unknown, g.cwd,
                            tuple("refs/tags/" + n for n in names)),)
    if sub == "update-ref":
        return _update_ref(g)
    if sub == "worktree" and args[:1] == ("remove",):
        p = gitopts.parse(args[1:], dyn[1:], _WT_REMOVE)
        if not p.operands and not g.dynamic:
            return ()
        paths = tuple((None if d else join_path(g.cwd, t)) or t for t, d in p.operands)
        force = p.count("force") > 0
        kind = "worktree_remove_force" if force else "worktree_remove"
        dynamic = g.dynamic or p.unknown or any(not t.startswith("/") for t in paths)
        return (Destruction(kind, paths, None, dynamic, g.cwd),)
    if sub == "worktree" and args[:1] == ("prune",):
        p = gitopts.parse(args[1:], dyn[1:], _WT_PRUNE)
        if p.has("dry-run"):
            return ()
        return (Destruction("worktree_prune", (), None, g.dynamic or p.unknown, g.cwd),)
    if sub == "bisect" and args[:1] in (("reset",), ("start",)):
        return (Destruction("bisect_reset", (), None, g.dynamic, g.cwd),)
    if sub == "gc" and not _gc_keeps_worktrees(g):
        return (Destruction("gc_worktree_prune", (), None, g.dynamic, g.cwd),)
    if sub == "push":
        return _push(g) + _push_self(g)
    return ()


def _gc_keeps_worktrees(g: GitInvocation) -> bool:
    """Whether ``git gc`` runs without its worktree prune: ``-c gc.worktreePruneExpire=never``
    on its command line (git's ``gc.worktreePruneExpire``; a repository's own setting is not
    read here)."""
    return any(k.lower() == "gc.worktreepruneexpire" and v.strip().lower() == "never"
               for k, v in g.config)


def _overwrite(name: str, new: str | None, dynamic: bool, cwd: str | None) -> Destruction:
    ref = name if name.startswith("refs/") else "refs/heads/" + name
    return Destruction("branch_overwrite", (_short_ref(ref),), None, dynamic, cwd, (ref,),
                       new_value=new)


def overwrites(g: GitInvocation) -> tuple[Destruction, ...]:
    """Every existing-branch overwrite this invocation may perform (issue 5 section 2: moving a
    branch loses its commits like a delete). Whether the branch exists is for the caller."""
    c = creation(g)
    if c is not None and c.force and c.route != "worktree_add_dwim":
        return (_overwrite(c.name, c.start or "HEAD", c.dynamic, g.cwd),)
    sub, args, dyn = g.subcommand, g.args, g.args_dynamic
    if sub == "branch":
        p = gitopts.parse(args, dyn, _BRANCH)
        moving = p.count("M", "C") > 0 or (p.has("move", "copy") and p.has("force"))
        if not moving or not 1 <= len(p.operands) <= 2:
            return ()
        new = p.operands[0][0] if len(p.operands) == 2 else "HEAD"
        return (_overwrite(p.operands[-1][0], new, g.dynamic or p.unknown, g.cwd),)
    if sub in ("fetch", "pull"):
        return _fetch_overwrites(g)
    if sub == "update-ref":
        return _update_ref_moves(g)
    sym = symref_set(g)
    if sym is not None and sym.name.startswith("refs/heads/"):
        return (_overwrite(sym.name, sym.target, sym.dynamic, g.cwd),)  # X becomes an alias
    return ()


_FETCH_TEXT = (
    "|all a|append |atomic |depth= |deepen= |shallow-since= |shallow-exclude= |unshallow "
    "|update-shallow |negotiation-tip= |negotiate-only |dry-run |porcelain |write-fetch-head "
    "f|force k|keep |multiple |auto-maintenance |auto-gc |write-commit-graph |prefetch p|prune "
    "P|prune-tags n t|tags |refetch |refmap= |recurse-submodules? j|jobs= |set-upstream "
    "|submodule-prefix= |recurse-submodules-default= u|update-head-ok |upload-pack= q|quiet "
    "v|verbose |progress o|server-option= |show-forced-updates 4|ipv4 6|ipv6 |filter= |stdin"
)
_FETCH = gitopts.spec(_FETCH_TEXT)


# `git pull`'s own options (builtin/pull.c): the rest are fetch's, which pull hands to fetch with
# its refspecs.
_PULL = gitopts.spec(
    _FETCH_TEXT + " r|rebase? n |stat |summary |log? |signoff? |squash |commit e|edit "
    "|cleanup= |ff |ff-only |verify |verify-signatures |autostash s|strategy= "
    "X|strategy-option= S|gpg-sign? |allow-unrelated-histories"
)


def fetch_parse(g: GitInvocation) -> gitopts.Parsed:
    """``g``'s words read by git's option rules for ``git fetch``, or for ``git pull``, which
    hands its repository, refspecs and fetch options to fetch: the operands are
    ``[REPOSITORY, REFSPEC...]`` either way, so both are judged by the same reading."""
    return gitopts.parse(g.args, g.args_dynamic, _PULL if g.subcommand == "pull" else _FETCH)


def _dst_branch(spec: str) -> tuple[bool, str] | None:
    """(forced, branch ref) of a refspec whose destination is a local branch, else None."""
    forced = spec.startswith("+")
    body = spec[1:] if forced else spec
    src, colon, dst = body.partition(":")
    ref = branch_ref(dst) if colon and src and dst else None
    return None if ref is None else (forced, ref)


def branch_ref(dst: str) -> str | None:
    """The full ref a refspec's destination ``dst`` names when it is a branch, else None:
    ``refs/heads/x`` as it is, ``heads/x`` and an unqualified ``x`` under ``refs/heads/``
    (remote.c ``get_local_ref``); ``refs/remotes/...``, ``refs/tags/...``, ``tags/x`` and
    ``remotes/x`` are no branch."""
    if dst.startswith("refs/"):
        return dst if dst.startswith("refs/heads/") else None
    if dst.startswith(("tags/", "remotes/")):
        return None
    return "refs/heads/" + dst.removeprefix("heads/")


def _fetch_overwrites(g: GitInvocation) -> tuple[Destruction, ...]:
    p = fetch_parse(g)
    if p.has("dry-run") or len(p.operands) < 2:
        return ()
    force = p.has("force")
    dynamic = g.dynamic or p.unknown
    out = []
    for spec, _ in p.operands[1:]:
        dst = _dst_branch(spec)
        if dst is not None and (dst[0] or force):
            out.append(_overwrite(dst[1], None, dynamic, g.cwd))  # the new tip is remote
    return tuple(out)


def _push_self(g: GitInvocation) -> tuple[Destruction, ...]:
    """`git push . src:X --force` / `push . +src:X`: a forced update of a branch of this very
    repository."""
    p = gitopts.parse(g.args, g.args_dynamic, PUSH_OPTIONS)
    if p.has("dry-run") or not p.operands or p.operands[0][0] not in (".", "./"):
        return ()
    force = p.has("force", "force-with-lease")
    out = []
    for spec, _ in p.operands[1:]:
        dst = _dst_branch(spec)
        if dst is not None and (dst[0] or force):
            src = spec.lstrip("+").partition(":")[0]
            out.append(_overwrite(dst[1], src, g.dynamic or p.unknown, g.cwd))
    return tuple(out)


def _update_ref_moves(g: GitInvocation) -> tuple[Destruction, ...]:
    p = gitopts.parse(g.args, g.args_dynamic, _UPDATE_REF)
    dynamic = g.dynamic or p.unknown
    if p.has("stdin"):
        feeds = [r for r in g.invocation.redirects if r.op in ("<<", "<<-", "<<<")]
        if p.has("z") or not feeds or feeds[-1].dynamic or feeds[-1].body is None:
            return ()  # reported as an unknown delete by `_update_ref`
        out = []
        for line in feeds[-1].body.splitlines():
            parts = line.split()
            if parts[:1] == ["update"] and len(parts) >= 3 and not _ZERO_OID.match(parts[2]) \
                    and parts[1].startswith("refs/heads/"):
                out.append(_overwrite(parts[1], parts[2], dynamic, g.cwd))
        return tuple(out)
    ops = [t for t, _ in p.operands]
    if p.has("d") or len(ops) < 2 or _ZERO_OID.match(ops[1]):
        return ()
    if not ops[0].startswith("refs/heads/"):
        return ()
    return (_overwrite(ops[0], ops[1], dynamic, g.cwd),)


def _branch_delete(g: GitInvocation) -> tuple[Destruction, ...]:
    p = gitopts.parse(g.args, g.args_dynamic, _BRANCH)
    if not (p.has("delete") or p.count("D")):
        return ()
    if not p.operands and not g.dynamic:
        return ()  # git refuses: "branch name required" (unless xargs supplies names)
    force = p.count("D") > 0 or p.has("force")
    remote = p.has("remotes")
    names = tuple(name for name, _ in p.operands)
    refs = tuple(("refs/remotes/" if remote else "refs/heads/") + n for n in names)
    kind = "branch_force_delete" if force else "branch_delete"
    return (Destruction(kind, names, None, g.dynamic or p.unknown, g.cwd, refs, remote),)


def _short_ref(ref: str) -> str:
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref


def _update_ref(g: GitInvocation) -> tuple[Destruction, ...]:
    p = gitopts.parse(g.args, g.args_dynamic, _UPDATE_REF)
    dynamic = g.dynamic or p.unknown
    if p.has("stdin"):
        feeds = [r for r in g.invocation.redirects if r.op in ("<<", "<<-", "<<<")]
        if p.has("z") or not feeds or feeds[-1].dynamic or feeds[-1].body is None:
            return (Destruction("update_ref_delete", (), None, True, g.cwd),)
        refs = []
        for line in feeds[-1].body.splitlines():
            parts = line.split()
            deletes = parts[:1] == ["delete"] and len(parts) >= 2
            zeroes = parts[:1] == ["update"] and len(parts) >= 3 and _ZERO_OID.match(parts[2])
            if deletes or zeroes:
                refs.append(parts[1])
        if not refs:
            return ()
        return (Destruction("update_ref_delete", tuple(_short_ref(r) for r in refs), None,
                            dynamic, g.cwd, tuple(refs)),)  # fmt: skip
    ops = [t for t, _ in p.operands]
    if p.has("d") and ops:
        ref = ops[0]
    elif len(ops) >= 2 and _ZERO_OID.match(ops[1]):
        ref = ops[0]  # `update-ref <ref> 0000...` deletes too
    else:
        return ()
    return (Destruction("update_ref_delete", (_short_ref(ref),), None, dynamic, g.cwd, (ref,)),)


def _push(g: GitInvocation) -> tuple[Destruction, ...]:
    p = gitopts.parse(g.args, g.args_dynamic, PUSH_OPTIONS)
    if p.has("dry-run"):
        return ()
    repo_opt = last_value(p, "repo")
    operands = list(p.operands)
    remote = repo_opt[1] if repo_opt else (operands.pop(0)[0] if operands else None)
    dynamic = g.dynamic or p.unknown
    out: list[Destruction] = []
    if p.has("delete"):
        names = tuple(_short_ref(t) for t, _ in operands)
        out.append(Destruction("push_delete", names, remote, dynamic, g.cwd, names))
    else:
        deleted = []
        for spec, _ in operands:
            body = spec[1:] if spec.startswith("+") else spec
            if body.startswith(":") and len(body) > 1:
                deleted.append(_short_ref(body[1:]))
        if deleted:
            out.append(Destruction("push_delete", tuple(deleted), remote, dynamic, g.cwd,
                                   tuple(deleted)))  # fmt: skip
    if p.has("mirror"):
        out.append(Destruction("push_mirror", (), remote, dynamic, g.cwd))
    if p.has("prune"):
        out.append(Destruction("push_prune", (), remote, dynamic, g.cwd))
    return tuple(out)


#: An invocation environment that can define git aliases or options the guard cannot see.
_CONFIG_ENV = ("GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_KEY_", "GIT_CONFIG_GLOBAL",
               "GIT_CONFIG_SYSTEM", "GIT_CONFIG")


def config_from_env(g: GitInvocation) -> bool:
    """True when ``g`` takes configuration the guard cannot read from the repository: a
    ``GIT_CONFIG_*`` variable in the command's environment, another ``HOME`` or
    ``XDG_CONFIG_HOME`` (another global config), or ``--config-env``."""
    inv = g.invocation
    return any(k.startswith(_CONFIG_ENV) or k in ("HOME", "XDG_CONFIG_HOME") for k in inv.env) or \
        any(w.startswith("--config-env") for w in inv.argv[1:])


#: Configuration keys that define what a git word runs (lower case prefixes).
_ALIAS_KEYS = ("alias.", "include.", "includeif.")


def writes_git_config(parsed: ParsedCommand) -> bool:
    """True when ``parsed`` may define a git alias before a later part of it runs: a ``git
    config`` of an ``alias.*``/``include.*``/``includeIf.*`` key, or output sent to a file
    named ``config`` or ``*gitconfig``."""
    for inv in parsed.invocations:
        if inv.name == "git" and "config" in inv.argv and any(
                a.lower().startswith(_ALIAS_KEYS) for a in inv.argv):
            return True
        if any(r.writes_stdout and posixpath.basename(r.target).endswith(("config", "gitconfig"))
               for r in inv.redirects):
            return True
    return False

