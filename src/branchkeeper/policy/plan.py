"""Reading a parsed command into what the guard must judge (issue 5 sections 2-3).

Pure: :func:`plan_command` sorts a :class:`ParsedCommand` into creations, destructions,
evacuations and recursive ``rm`` targets, with no git process and no filesystem access. The
guard (:mod:`branchkeeper.policy.command`) gathers facts only for what the plan holds, so a
command with nothing to judge costs no git process at all. The records are NamedTuples, not
frozen dataclasses: the hook imports this module.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.gitargv import (
    _CHECKOUT,
    _SWITCH,
    Creation,
    Destruction,
    Evacuation,
    ForcePush,
    creation,
    destruction,
    evacuation,
    force_pushes,
    overwrites,
)
from branchkeeper.shell.model import GitInvocation, Invocation, ParsedCommand
from branchkeeper.shell.parse import git_invocation, git_invocations, rm_recursive_targets

#: Destruction kinds that section 13 pairs with an evacuation.
PAIRED_KINDS = frozenset({"branch_force_delete", "branch_delete", "update_ref_delete",
                          "worktree_remove", "worktree_remove_force"})


class Discard(NamedTuple):
    """A git command that throws away uncommitted work in one worktree (``R-GIT-DISCARD-CHANGES``).

    ``kind``: ``reset_hard``, ``reset_merge`` (staged changes), ``checkout_force``,
    ``checkout_paths``, ``checkout_maybe_path`` (one operand: a path unless it names a commit),
    ``restore``, ``switch_force``, ``clean``, ``stash_drop``, ``stash_clear``, ``git_rm_force``.
    ``pathspecs`` limit what is discarded (relative to the invocation's cwd; () = the whole
    worktree); ``pathspec_file`` names a ``--pathspec-from-file`` (``-`` = stdin), whose
    entries are NUL-separated with ``pathspec_nul``. For ``clean``: ``untracked`` and
    ``ignored`` say which files it deletes. ``dynamic``: some word is unknown.
    """

    kind: str
    pathspecs: tuple[str, ...]
    untracked: bool
    ignored: bool
    dynamic: bool
    pathspec_file: str | None = None
    pathspec_nul: bool = False


class Plan(NamedTuple):
    """What one command asks of the guard, each item with the git invocation (or the ``rm``
    invocation) it came from."""

    parsed: ParsedCommand
    creations: tuple[tuple[Creation, GitInvocation], ...]
    destructions: tuple[tuple[Destruction, GitInvocation], ...]
    evacuations: tuple[tuple[Evacuation, GitInvocation], ...]
    rm_targets: tuple[tuple[str, Invocation], ...]
    discards: tuple[tuple[Discard, GitInvocation], ...] = ()
    force_pushes: tuple[tuple[ForcePush, GitInvocation], ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to judge with git (``rm`` targets are first checked on
        the filesystem alone)."""
        return not (self.creations or self.destructions or self.evacuations or self.discards
                    or self.force_pushes)


def plan_command(parsed: ParsedCommand) -> Plan:
    """Sort every git invocation of ``parsed`` into creation / destruction / evacuation, and
    collect recursive ``rm`` targets (section 13 pairs them with an evacuation)."""
    creations: list[tuple[Creation, GitInvocation]] = []
    destructions: list[tuple[Destruction, GitInvocation]] = []
    evacuations: list[tuple[Evacuation, GitInvocation]] = []
    discards: list[tuple[Discard, GitInvocation]] = []
    pushes: list[tuple[ForcePush, GitInvocation]] = []
    for g in git_invocations(parsed):
        if asks_help(g):
            continue  # git prints the subcommand's usage or manual and does nothing else
        pushes.extend((f, g) for f in force_pushes(g))
        c = creation(g)
        if c is not None:
            creations.append((c, g))
        destructions.extend((d, g) for d in destruction(g))
        destructions.extend((d, g) for d in overwrites(g))
        e = evacuation(g)
        if e is not None:
            evacuations.append((e, g))
        x = discard(g)
        if x is not None:
            discards.append((x, g))
    rms = tuple((t, inv) for inv in parsed.invocations for t in rm_recursive_targets(inv))
    return Plan(parsed, tuple(creations), tuple(destructions), tuple(evacuations), rms,
                tuple(discards), tuple(pushes))


def asks_help(g: GitInvocation) -> bool:
    """``git SUB ... -h`` / ``--help`` (before any ``--``): git prints the usage or opens the
    manual page and runs nothing; ``--version`` is no option of a subcommand, which git
    refuses. Option values are not told apart (``-m -h`` is rare)."""
    for word in g.args:
        if word == "--":
            return False
        if word in ("-h", "--help", "--version"):
            return g.subcommand is not None
    return False


def deleted_refs(destructions: Iterable[Destruction]) -> tuple[str, ...]:
    """Full names of every local ref the destructions delete or overwrite (branch deletes,
    update-ref, forced moves)."""
    out: list[str] = []
    for d in destructions:
        if d.kind in ("branch_force_delete", "branch_delete", "update_ref_delete",
                      "branch_overwrite", "tag_delete"):
            out.extend(d.refs)
    return tuple(dict.fromkeys(out))


_REV_SPLIT = re.compile(r"\.\.\.?")


def rev_branch_names(rev: str | None) -> tuple[str, ...]:
    """Branch-like names a revision operand mentions (``main..feat`` -> main, feat;
    ``^x~2`` -> x); the caller keeps those that are local branches."""
    if not rev:
        return ()
    names = []
    for part in _REV_SPLIT.split(rev):
        part = part.lstrip("^")
        cut = min((i for i in (part.find(c) for c in "~^@:") if i >= 0), default=len(part))
        part = part[:cut]
        part = part[len("refs/heads/"):] if part.startswith("refs/heads/") else part
        if part and part != "HEAD":
            names.append(part)
    return tuple(names)


def under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or inside it (both absolute, normalised)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def describe(g: GitInvocation | Invocation) -> str:
    """The command's own text, for messages (the source span, else the argv joined)."""
    src = g.source
    argv = g.invocation.argv if isinstance(g, GitInvocation) else g.argv
    text = (src or " ".join(argv)).strip()
    return text if len(text) <= 200 else text[:197] + "..."


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
    ``stash drop/clear``, ``read-tree --reset -u``, ``checkout-index -f`` (issue 17). Paths
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
        if p.has("patch") or (p.has("staged") and not p.has("worktree")):
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
        return Discard("clean", ops, not p.count("X"), p.count("x", "X") > 0, g.dynamic)
    if sub == "stash" and args[:1] in (("drop",), ("clear",)):
        return Discard(f"stash_{args[0]}", (), False, False, g.dynamic)
    return None


#: A word that runs git or rm, in text the parser could not read (`/usr/bin/git` counts; `.git`,
#: `github`, `git-lfs`, `npm` do not).
_RISKY_WORD = re.compile(r"(?<![\w.-])(?:git|rm)(?![\w-])")
_SYNTAX = ("syntax the parser cannot read", "defines shell function")


def unread_destructive(parsed: ParsedCommand) -> str | None:
    """Why ``parsed`` may run a destructive git route (or ``rm``) the parser did not read, or
    None (issue 5 section 3, "a command the parser cannot read in full").

    A parse that was cut (nesting depth, size, a parser failure) or that hands text to
    something the guard cannot follow (a shell reading a pipe, ``eval`` or ``bash -c`` of an
    unknown string, ``source``, a command name from an expansion) counts when the raw text
    names ``git`` or ``rm`` as a word anywhere. A plain syntax error counts when such a word
    lies outside every command that was read. Text that never names them (an unparsable
    ``npm``/``python`` one-liner) is None, so it stays allowed. Pure; no git process."""
    hidden = _hidden_destroyer(parsed)
    if hidden is not None:
        return hidden
    if not parsed.unparsed:
        return None
    reasons = [r for r in parsed.unparsed_reason.split("; ") if r]
    opaque = [r for r in reasons if not r.startswith(_SYNTAX)]
    if opaque and _RISKY_WORD.search(parsed.text):
        return "; ".join(opaque)
    if len(opaque) < len(reasons):
        leftover = parsed.text
        for inv in parsed.invocations:
            if inv.source:
                leftover = leftover.replace(inv.source, " ", 1)
        if _RISKY_WORD.search(leftover):
            return "; ".join(r for r in reasons if r.startswith(_SYNTAX))
    return None


_BRACE_CHARS = frozenset("{},")


def _recursive_flag(word: str) -> bool:
    """``-r``, ``-rf``, ``-vRf``... or an abbreviation of ``--recursive`` (``--rec``)."""
    if word.startswith("--"):
        return len(word) >= 3 and "--recursive".startswith(word)
    return word.startswith("-") and ("r" in word or "R" in word)


def _braced_option(word: str, dynamic: bool) -> bool:
    """A brace expansion that can produce an option (``{-D,x}``, ``{-rf,../wt}``)."""
    return dynamic and "{" in word and "," in word and "-" in word


def _hidden_destroyer(parsed: ParsedCommand) -> str | None:
    """Why a command may run a destructive git route or a recursive ``rm`` that its words do
    not show, or None: a command name from an expansion (``${x}t``, ``{git,}``,
    ``/usr/bin/g?t``) with an argument that is a destructive git subcommand, or (unless its
    first argument is some tool's own subcommand, as in ``$PIP install -r x``) a recursive
    ``rm`` flag; or ``git``/``rm`` given a brace expansion that can produce an option
    (``git branch {-D,x}``, ``rm {-rf,dir}``). Pure; no git process."""
    if parsed.unparsed and _RISKY_WORD.search(parsed.text) and any(
            inv.argv and not _BRACE_CHARS.isdisjoint(inv.argv[0]) for inv in parsed.invocations):
        return "a command name the parser could not read (a brace expansion such as {git,})"
    for inv in parsed.invocations:
        args = inv.argv[1:]
        if inv.dynamic_args[:1] == (True,) and args:
            if any(a in DESTRUCTIVE_SUBCOMMANDS for a in args):
                return "a command name from an expansion, with git subcommand arguments"
            first = args[0]
            if not (first.isalpha() and first not in DESTRUCTIVE_SUBCOMMANDS) and \
                    any(_recursive_flag(a) for a in args):
                return "a command name from an expansion, with recursive rm arguments"
        if inv.name in ("git", "rm") and any(
                _braced_option(w, d) for w, d in zip(inv.argv[1:], inv.dynamic_args[1:],
                                                     strict=False)):
            return f"a brace expansion that can produce an option of {inv.name}"
        g = git_invocation(inv) if inv.name == "git" else None
        if g is not None and g.subcommand is None and inv.dynamic and not any(inv.dynamic_args):
            return "git's subcommand comes from xargs"
        if g is not None and g.subcommand is not None:
            at = len(inv.argv) - len(g.args) - 1
            if 0 < at < len(inv.dynamic_args) and inv.dynamic_args[at]:
                return "the git subcommand comes from an expansion"
            if g.subcommand in _OPTION_SENSITIVE and g.args_dynamic[:1] == (True,) and (
                    len(g.args) > 1 or g.subcommand not in ("branch", "tag")):  # not a new name
                return (f"the first argument of git {g.subcommand} comes from an expansion and "
                        "can be an option (-D, --hard, -f...)")
        if g is not None and _runs_commands(g):
            return "git is told to run a command that names git or rm"
    return None


#: git subcommands whose first argument, when it is an option, can destroy work.
_OPTION_SENSITIVE = frozenset({"branch", "reset", "clean", "stash", "restore", "worktree",
                               "update-ref", "tag", "reflog", "symbolic-ref"})
#: ``-c`` keys (lower case; ``*`` any middle part) whose value git runs as a command.
_COMMAND_KEYS = ("core.fsmonitor", "core.sshcommand", "core.pager", "core.editor",
                 "core.askpass", "core.hookspath", "diff.external", "sequence.editor",
                 "gpg.program", "credential.helper", "include.path", "includeif.")
_COMMAND_KEY_ENDS = (".command", ".cmd", ".driver", ".clean", ".smudge", ".process", ".path",
                     ".textconv", ".helper")
#: Variables whose value git runs as a command.
_COMMAND_ENV = frozenset({"GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER",
                          "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "PAGER", "EDITOR",
                          "VISUAL"})
#: Subcommand options and words after which git runs a command line.
_EXEC_ARGS = {"rebase": ("-x", "--exec"), "difftool": ("-x", "--extcmd"),
              "bisect": ("run",), "submodule": ("foreach",)}


def _runs_commands(g: GitInvocation) -> bool:
    """Whether ``g`` makes git run a command whose text names git or rm: a ``-c`` key git runs
    (``core.fsmonitor``, ``diff.external``, ``include.path``...), such a variable in its
    environment (``GIT_EXTERNAL_DIFF``...), or ``rebase -x``, ``difftool -x``, ``bisect run``,
    ``submodule foreach`` with such a command."""
    for key, value in g.config:
        k = key.lower()
        if (k.startswith(_COMMAND_KEYS) or k.endswith(_COMMAND_KEY_ENDS)) and \
                (_RISKY_WORD.search(value) or k.startswith(("include", "alias"))):
            return True
    env = g.invocation.env
    if any(name in _COMMAND_ENV and _RISKY_WORD.search(env[name]) for name in env):
        return True
    flags = _EXEC_ARGS.get(g.subcommand or "")
    if flags and any(a in flags or a.startswith(tuple(f + "=" for f in flags if f.startswith("--")))
                     for a in g.args):
        return bool(_RISKY_WORD.search(" ".join(g.args)))
    return False


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


def stash_then_drop(plan: Plan) -> list[tuple[GitInvocation, GitInvocation, bool, bool]]:
    """(save, drop, untracked, ignored) for every ``stash drop``/``clear`` of the plan that a
    stash save of the same command, in the same directory and repository options, precedes:
    the saved work is reachable from no ref once dropped (issue 5 follow-up, item 4)."""
    out: list[tuple[GitInvocation, GitInvocation, bool, bool]] = []
    gits = git_invocations(plan.parsed)
    for x, drop in plan.discards:
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


#: git's own commands (builtins and the usual scripts): any other word after `git` may be an
#: alias, looked up with one `git config --get alias.<name>` (item 5).
_KNOWN_TEXT = """
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool
clean clone column commit commit-graph commit-tree config count-objects credential
credential-cache credential-store describe diagnose diff diff-files diff-index diff-tree
difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref
for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep gui
hash-object help hook http-backend http-fetch http-push index-pack init init-db instaweb
interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge
merge-base merge-file merge-index merge-one-file merge-ours merge-recursive merge-subtree
merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects
pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport range-diff read-tree
rebase receive-pack reflog refs remote repack replace replay request-pull rerere reset restore
rev-list rev-parse revert rm scalar send-email send-pack shortlog show show-branch show-index
show-ref sparse-checkout stage stash status stripspace submodule svn switch symbolic-ref tag
unpack-file unpack-objects update-index update-ref update-server-info upload-archive
upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree
lfs flow
"""
KNOWN_GIT_COMMANDS = frozenset(_KNOWN_TEXT.split())

#: Subcommands whose alias the guard denies outright when set with `git -c alias.X=...`.
DESTRUCTIVE_SUBCOMMANDS = frozenset({
    "branch", "update-ref", "worktree", "push", "reset", "checkout", "switch", "restore", "clean",
    "stash", "fetch", "reflog", "gc", "prune", "filter-branch", "symbolic-ref", "replace", "rm",
    "notes", "tag"})


def inline_alias_problem(g: GitInvocation) -> str | None:
    """Why a ``git -c alias.X=...`` of ``g`` cannot be followed, or None: a shell alias
    (``!...``) or one whose first word is a destructive subcommand (item 5)."""
    for key, value in g.config:
        if not key.lower().startswith("alias."):
            continue
        words = value.split()
        if value.lstrip().startswith("!"):
            return f"`-c {key}=...` defines a shell alias, which the guard does not follow"
        if words and words[0] in DESTRUCTIVE_SUBCOMMANDS:
            return (f"`-c {key}=...` defines an alias running `git {words[0]}`, which the guard "
                    "does not follow")
    return None


def glob_only(word: str) -> bool:
    """True when an expanded word's only expansion is a pathname glob (``*``, ``?``,
    ``[...]``): no ``$``, backquote, brace or leading ``~``. Pure."""
    return (any(c in word for c in "*?[") and not any(c in word for c in "$`{")
            and not word.startswith("~"))
