"""Which git invocations throw away uncommitted work (issue 5 section 2, issue 17).

Pure, like :mod:`branchkeeper.policy.plan` (which sorts these into its plan): :func:`discard`
reads one git invocation into a :class:`Discard`, :func:`stash_then_drop` pairs a stash save
with the drop that loses it, :func:`reset_target` names the commit a ``reset --hard`` moves to.
No git process, no filesystem access; NamedTuples, not dataclasses: the hook imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.gitargv import _CHECKOUT, _SWITCH
from branchkeeper.shell.gitsymref import symref_set
from branchkeeper.shell.model import GitInvocation, ParsedCommand
from branchkeeper.shell.parse import git_invocations


class Discard(NamedTuple):
    """A git command that throws away uncommitted work in one worktree (``R-GIT-DISCARD-CHANGES``).

    ``kind``: ``reset_hard``, ``reset_merge`` (staged changes), ``checkout_force``,
    ``checkout_paths``, ``checkout_maybe_path`` (one operand: a path unless it names a commit),
    ``restore``, ``switch_force``, ``clean``, ``stash_drop``, ``stash_clear``, ``git_rm_force``,
    ``mv_force`` (``git mv -f``: ``pathspecs`` are its operands, sources then destination),
    ``save_stash`` (a stash save: ``untracked`` and ``ignored`` say what it takes; it throws
    away only the edits a skip-worktree or assume-unchanged flag hides).
    ``pathspecs`` limit what is discarded (relative to the invocation's cwd; () = the whole
    worktree); ``pathspec_file`` names a ``--pathspec-from-file`` (``-`` = stdin), whose
    entries are NUL-separated with ``pathspec_nul``. For ``clean``: ``untracked`` and
    ``ignored`` say which files it deletes, ``excludes`` the ``-e`` patterns it spares (with
    ``-X`` they add to the ignore rules instead). ``dynamic``: some word is unknown.
    """

    kind: str
    pathspecs: tuple[str, ...]
    untracked: bool
    ignored: bool
    dynamic: bool
    pathspec_file: str | None = None
    pathspec_nul: bool = False
    excludes: tuple[str, ...] = ()


_RESET = gitopts.spec(
    "q|quiet |refresh |soft |mixed N |hard |merge |keep |recurse-submodules? p|patch "
    "|pathspec-from-file= |pathspec-file-nul |intent-to-add"
)
_RESTORE = gitopts.spec(
    "s|source= p|patch W|worktree S|staged q|quiet |progress |ours |theirs m|merge |conflict= "
    "|ignore-unmerged |ignore-skip-worktree-bits |recurse-submodules? |overlay "
    "|pathspec-from-file= |pathspec-file-nul"
)
_CLEAN = gitopts.spec("d f|force i|interactive n|dry-run q|quiet e|exclude= x X")
_GIT_MV = gitopts.spec("f|force k n|dry-run v|verbose |sparse")
_GIT_RM = gitopts.spec("f|force n|dry-run r q|quiet |cached |ignore-unmatch |sparse "
                       "|pathspec-from-file= |pathspec-file-nul")


def _from_file(p: gitopts.Parsed) -> tuple[str | None, bool]:
    """(the ``--pathspec-from-file`` value, ``--pathspec-file-nul``) of a parse."""
    found = p.values("pathspec-from-file")
    return (found[-1][1] if found else None), p.has("pathspec-file-nul")
_PATHLIKE = (".", "./", "../", ":")


def clean_enters_repositories(g: GitInvocation) -> bool:
    """``git clean -ff``: only a doubled force removes nested repositories and worktrees
    (``.claude/worktrees/<name>`` inside the repository); a single ``-f`` skips them."""
    return gitopts.parse(g.args, g.args_dynamic, _CLEAN).count("force") >= 2


_READ_TREE = gitopts.spec(
    "m |reset u i n|dry-run v |trivial |aggressive |prefix= |index-output= |empty q|quiet "
    "|no-sparse-checkout |recurse-submodules? |exclude-per-directory=")
_CHECKOUT_INDEX = gitopts.spec(
    "u|index q|quiet f|force a|all |ignore-skip-worktree-bits n|no-create |prefix= |stage= "
    "|temp z |stdin")


def _fed(g: GitInvocation) -> bool:
    """Whether ``xargs`` or ``parallel`` adds operands to ``g`` (paths the guard cannot know):
    the invocation is marked dynamic while none of its own words is."""
    return g.invocation.dynamic and not any(g.invocation.dynamic_args)


def _plumbing_discard(g: GitInvocation) -> Discard | None:
    """``read-tree --reset -u`` (the work tree follows the tree read, over every uncommitted
    change to a tracked file, as ``reset --hard``) and ``checkout-index -f`` with ``-a``, paths
    or ``--stdin`` (index versions written over work-tree edits); without ``-u``/``-f``,
    with ``--prefix``, ``--temp`` or a dry run git writes no work-tree file it would lose."""
    if g.subcommand == "read-tree":
        p = gitopts.parse(g.args, g.args_dynamic, _READ_TREE)
        if p.has("reset") and p.has("u") and not p.has("dry-run", "prefix"):
            return Discard("reset_hard", (), False, False, g.dynamic)
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _CHECKOUT_INDEX)
    if not p.has("force") or p.has("prefix", "temp"):
        return None
    ops = tuple(t for t, _ in p.operands)
    if p.has("all", "stdin") or _fed(g):
        return Discard("checkout_paths", (), False, False, True)
    return Discard("checkout_paths", ops, False, False, g.dynamic) if ops else None


def discard(g: GitInvocation) -> Discard | None:
    """The uncommitted work this invocation would throw away, or None (issue 5 section 2):
    ``reset --hard``, ``checkout -f`` / ``checkout [<tree-ish>] [--] <paths>``, ``restore``
    (unless ``--staged`` alone), ``switch -f/--discard-changes``, ``clean -f``,
    ``stash drop/clear``, ``read-tree --reset -u``, ``checkout-index -f``, ``mv -f`` over an
    existing file (issue 17). Paths
    that ``xargs``/``parallel`` add are unknown: the whole worktree counts. Interactive forms
    (``-p``, ``clean -i``) and dry runs are None."""
    sub, args, dyn = g.subcommand, g.args, g.args_dynamic
    fed = _fed(g)
    if sub == "reset":
        p = gitopts.parse(args, dyn, _RESET)
        if p.has("hard"):
            return Discard("reset_hard", (), False, False, g.dynamic)
        return Discard("reset_merge", (), False, False, g.dynamic) if p.has("merge") else None
    if sub == "rm":
        p = gitopts.parse(args, dyn, _GIT_RM)
        if not p.has("force") or p.has("dry-run", "cached"):
            return None  # without -f git refuses to remove files with changes
        ops = tuple(t for t, _ in p.operands)
        return Discard("git_rm_force", ops, False, False, g.dynamic, *_from_file(p))
    if sub == "mv":
        p = gitopts.parse(args, dyn, _GIT_MV)
        ops = tuple(t for t, _ in p.operands)
        if not p.has("force") or p.has("dry-run") or (len(ops) < 2 and not fed):
            return None  # without -f git refuses to move over an existing file
        return Discard("mv_force", ops, True, True, g.dynamic)
    if sub == "switch":
        p = gitopts.parse(args, dyn, _SWITCH)
        if p.has("force", "discard-changes"):
            return Discard("switch_force", (), False, False, g.dynamic)
        return None
    if sub == "checkout":
        p = gitopts.parse(args, dyn, _CHECKOUT)
        if p.has("patch"):
            return None
        if p.has("force"):
            return Discard("checkout_force", (), False, False, g.dynamic)
        if p.values("b", "B", "orphan"):
            return None
        if p.values("pathspec-from-file"):  # the operand is the tree-ish, the paths a file's
            return Discard("checkout_paths", (), False, False, g.dynamic, *_from_file(p))
        ops = tuple(t for t, _ in p.operands)
        paths: tuple[str, ...]
        if p.after_dashdash is not None:
            paths = ops[p.after_dashdash:]
        elif len(ops) >= 2 or (ops and ops[0].startswith(_PATHLIKE)):
            paths = ops  # `checkout <tree-ish> <paths>` or a path-looking operand
        elif len(ops) == 1:
            # `checkout X`: a branch or commit to switch to, else a path whose edits it
            # discards (git's own rule); the guard asks git which (one rev-parse)
            return Discard("checkout_maybe_path", ops, False, False, g.dynamic)
        else:
            paths = ()
        if not paths and not p.values("pathspec-from-file") and not fed:
            return None
        return Discard("checkout_paths", paths, False, False, g.dynamic)
    if sub == "restore":
        p = gitopts.parse(args, dyn, _RESTORE)
        if p.has("patch") or (p.has("staged") and not p.has("worktree")) or \
                _restore_refused(p):
            return None
        ops = tuple(t for t, _ in p.operands)
        if not ops and not p.values("pathspec-from-file") and not fed:
            return None
        return Discard("restore", ops, False, False, g.dynamic, *_from_file(p))
    if sub in ("read-tree", "checkout-index"):
        return _plumbing_discard(g)
    if sub == "clean":
        p = gitopts.parse(args, dyn, _CLEAN)
        if p.has("dry-run", "interactive") or not p.has("force"):
            return None
        ops = tuple(t for t, _ in p.operands)
        excludes = tuple(v for _, v, _ in p.values("exclude") if v is not None)
        return Discard("clean", ops, not p.count("X"), p.count("x", "X") > 0, g.dynamic,
                       excludes=excludes)
    if sub == "stash" and args[:1] in (("drop",), ("clear",)):
        return Discard(f"stash_{args[0]}", (), False, False, g.dynamic)
    saved = stash_save(g)
    if saved is not None:  # the stash leaves out hidden edits, and its reset overwrites them
        return Discard("save_stash", (), saved[0], saved[1], g.dynamic)
    return None


#: The conflict styles ``restore --conflict`` takes (any other is refused).
_CONFLICT_STYLES = frozenset({"merge", "diff3", "zdiff3"})


def _restore_refused(p: gitopts.Parsed) -> bool:
    """Whether git refuses this ``restore`` before touching a file: ``--staged`` and
    ``--worktree`` both switched off after one was named ("neither '--staged' or
    '--worktree' is specified", as ``--no-staged`` alone does), a ``--source`` that begins
    with ``-`` (no revision does: ``-s --staged``), or a ``--conflict`` style git does not
    know (``--conflict --staged``)."""
    named = any(k.removeprefix("no-") in ("staged", "worktree") for k, _, _ in p.options)
    if named and not p.has("staged", "worktree"):
        return True
    if any(not d and (v or "").startswith("-") for _, v, d in p.values("source")):
        return True
    return any(not d and v not in _CONFLICT_STYLES for _, v, d in p.values("conflict"))


_APPLY = gitopts.spec(
    "R|reverse |check |stat |numstat |summary |cached |index 3|3way |build-fake-ancestor= "
    "|apply |no-add |allow-binary-replacement |binary |exclude= |include= |ignore-space-change "
    "|ignore-whitespace |whitespace= |inaccurate-eof v|verbose q|quiet |recount |directory= "
    "|unsafe-paths |allow-empty |reject z p= C= |unidiff-zero"
)
_DIFF_READ = frozenset({"diff"})


def reversed_diff(g: GitInvocation, feeder: GitInvocation | None) -> Discard | None:
    """``git diff [-- PATHS] | git apply -R`` (issue 17): applying the work tree's own diff in
    reverse puts every changed tracked file back as the index (or ``HEAD``) has it, like
    ``checkout -- PATHS``. Judged only when ``apply -R`` reads its patch from a pipe that a
    ``git diff`` feeds (a patch file, or another feeder, reverses what it holds, which need
    not be uncommitted work); ``--check``/``--stat``/``--numstat``/``--summary`` apply
    nothing, ``--cached`` changes only the index."""
    if g.subcommand != "apply" or feeder is None or feeder.subcommand not in _DIFF_READ:
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _APPLY)
    if not p.has("reverse") or p.has("check", "stat", "numstat", "summary", "cached"):
        return None
    if any(t != "-" for t, _ in p.operands):
        return None  # the patch comes from a file
    d = gitopts.parse(feeder.args, feeder.args_dynamic, gitopts.spec(""))
    paths = tuple(t for t, _ in d.operands[d.after_dashdash:]) \
        if d.after_dashdash is not None else ()
    return Discard("checkout_paths", paths, False, False, g.dynamic or feeder.dynamic)


# -- shapes added after the tester's report (issue 5 follow-up) ---------------------------------
_STASH = gitopts.spec(
    "p|patch S|staged k|keep-index |no-keep-index q|quiet u|include-untracked "
    "|no-include-untracked a|all m|message= |pathspec-from-file= |pathspec-file-nul"
)


def stash_save(g: GitInvocation) -> tuple[bool, bool] | None:
    """``(untracked, ignored)`` when ``g`` stashes the worktree's changes (``git stash``,
    ``stash push``/``save``, ``stash -u``/``-m MSG``...), else None."""
    if g.subcommand != "stash":
        return None
    args, dyn = g.args, g.args_dynamic
    if args[:1] in (("push",), ("save",)):
        args, dyn = args[1:], dyn[1:]
    elif args and not args[0].startswith("-"):
        return None  # list, show, drop, pop, apply, branch, clear, create, store
    p = gitopts.parse(args, dyn, _STASH)
    return p.has("include-untracked", "all"), p.has("all")


def stash_then_drop(parsed: ParsedCommand, discards: Iterable[tuple[Discard, GitInvocation]]
                    ) -> list[tuple[GitInvocation, GitInvocation, bool, bool]]:
    """(save, drop, untracked, ignored) for every ``stash drop``/``clear`` of ``discards`` (a plan's) that a
    stash save of the same command, in the same directory and repository options, precedes:
    the saved work is reachable from no ref once dropped (issue 5 follow-up, item 4)."""
    out: list[tuple[GitInvocation, GitInvocation, bool, bool]] = []
    gits = git_invocations(parsed)
    for x, drop in discards:
        if not x.kind.startswith("stash_"):
            continue
        for g in gits:
            if g.invocation is drop.invocation:
                break
            saved = stash_save(g)
            if saved is not None and (g.cwd, g.git_dir, g.work_tree) == (
                    drop.cwd, drop.git_dir, drop.work_tree):
                out.append((g, drop, saved[0], saved[1]))
                break
    return out


def reset_target(g: GitInvocation) -> str | None:
    """The commit a ``git reset --hard|--keep|--merge <commit>`` moves the current branch to,
    else None: ``reset`` without a commit, with pathspecs, interactive, or ``--soft`` /
    ``--mixed`` (the default), which keep the content of every commit they undo staged or in
    the work tree, where the discard rule guards it (item 6; issue 17)."""
    if g.subcommand != "reset":
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _RESET)
    if p.has("patch") or p.values("pathspec-from-file"):
        return None
    ops = p.operands[: p.after_dashdash] if p.after_dashdash is not None else p.operands
    if len(ops) != 1 or (p.after_dashdash is not None and len(p.operands) > len(ops)):
        return None
    rev, dyn = ops[0]
    if not p.has("hard", "keep", "merge"):
        return None  # --soft and --mixed keep every change in the index or the work tree
    return None if dyn else rev


#: The target of ``switch --orphan``/``checkout --orphan``: no commit, so nothing holds HEAD's.
ORPHAN = ""



def head_move_target(g: GitInvocation) -> str | None:
    """Where ``git switch``/``git checkout`` moves HEAD: the revision as written (``-`` read
    as ``@{-1}``), :data:`ORPHAN` for ``--orphan``, or None when it does not move HEAD (no
    operand, a creation at HEAD, a path checkout: ``checkout X -- PATHS``, several operands,
    ``--patch``), when a word comes from an expansion, or git would refuse an option. A single
    ``checkout`` operand may still be a path: :mod:`branchkeeper.policy.detached` tells.
    ``git symbolic-ref HEAD REF`` moves HEAD onto REF (as written; an unborn branch when it
    does not exist)."""
    sub = g.subcommand
    sym = symref_set(g)
    if sym is not None and sym.name == "HEAD" and not sym.dynamic:
        return sym.target
    if sub not in ("switch", "checkout"):
        return None
    p = gitopts.parse(g.args, g.args_dynamic, _SWITCH if sub == "switch" else _CHECKOUT)
    if p.unknown or g.dynamic or p.has("patch") or p.values("pathspec-from-file"):
        return None
    if p.has("orphan"):
        return ORPHAN
    ops = p.operands[: p.after_dashdash] if p.after_dashdash is not None else p.operands
    if len(ops) != 1 or len(p.operands) != 1 or ops[0][1]:
        return None
    rev = ops[0][0]
    return "@{-1}" if rev == "-" else rev


def reset_with_paths(g: GitInvocation) -> bool:
    """``git reset --hard|--merge|--keep -- PATHS`` with a literal path after ``--``: git
    refuses such a reset ("Cannot do hard reset with paths") and changes nothing. An operand
    from an expansion may expand to nothing, so it does not count."""
    if g.subcommand != "reset":
        return False
    p = gitopts.parse(g.args, g.args_dynamic, _RESET)
    if not p.has("hard", "merge", "keep") or p.after_dashdash is None:
        return False
    return any(not dyn for _, dyn in p.operands[p.after_dashdash:])
