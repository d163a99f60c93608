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

from branchkeeper.policy.discard_plan import Discard, discard, reversed_diff
from branchkeeper.shell.gitargv import (
    Creation,
    Destruction,
    destruction,
    overwrites,
)
from branchkeeper.shell.gitcreate import branch_moves
from branchkeeper.shell.gitcreate import creations as branch_creations
from branchkeeper.shell.gitevac import Evacuation, evacuation
from branchkeeper.shell.gitpush import ForcePush, force_pushes
from branchkeeper.shell.gitrebase import RebaseOnto, rebase_onto
from branchkeeper.shell.model import GitInvocation, Invocation, ParsedCommand
from branchkeeper.shell.parse import git_invocation, git_invocations, rm_recursive_targets

#: Destruction kinds that section 13 pairs with an evacuation.
PAIRED_KINDS = frozenset({"branch_force_delete", "branch_delete", "update_ref_delete",
                          "worktree_remove", "worktree_remove_force"})


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
    rebases: tuple[tuple[RebaseOnto, GitInvocation], ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is nothing to judge with git (``rm`` targets are first checked on
        the filesystem alone)."""
        return not (self.creations or self.destructions or self.evacuations or self.discards
                    or self.force_pushes or self.rebases)


def plan_command(parsed: ParsedCommand) -> Plan:
    """Sort every git invocation of ``parsed`` into creation / destruction / evacuation, and
    collect recursive ``rm`` targets (section 13 pairs them with an evacuation)."""
    creations: list[tuple[Creation, GitInvocation]] = []
    destructions: list[tuple[Destruction, GitInvocation]] = []
    evacuations: list[tuple[Evacuation, GitInvocation]] = []
    discards: list[tuple[Discard, GitInvocation]] = []
    pushes: list[tuple[ForcePush, GitInvocation]] = []
    rebases: list[tuple[RebaseOnto, GitInvocation]] = []
    moved: dict[str, tuple[str, bool]] = {}  # ref -> (source, renamed) of earlier renames/copies
    gits = git_invocations(parsed)
    fed_by = {id(d): g for g in gits for d in g.invocation.downstream}
    for g in gits:
        if asks_help(g):
            continue  # git prints the subcommand's usage or manual and does nothing else
        pushes.extend((f, g) for f in force_pushes(g))
        r = rebase_onto(g)
        if r is not None:
            rebases.append((r, g))
        creations.extend((c, g) for c in branch_creations(g))
        destructions.extend((_carry(d, moved), g) for d in destruction(g) + overwrites(g))
        for ref, source, renamed in branch_moves(g):
            root, gone = moved.get(source, (source, True))  # a chain names its first branch
            moved[ref] = (root, renamed and gone)
        e = evacuation(g)
        if e is not None:
            evacuations.append((e, g))
        x = discard(g) or reversed_diff(g, fed_by.get(id(g.invocation)))
        if x is not None:
            discards.append((x, g))
    rms = tuple((t, inv) for inv in parsed.invocations for t in rm_recursive_targets(inv))
    return Plan(parsed, tuple(creations), tuple(destructions), tuple(evacuations), rms,
                tuple(discards), tuple(pushes), tuple(rebases))


def _carry(d: Destruction, moved: dict[str, tuple[str, bool]]) -> Destruction:
    """``d`` with the refs an earlier part of the command renamed or copied a branch into
    (``Destruction.carried``): deleting such a ref deletes that branch's tip (trial F20:
    ``git branch -m feat old && git branch -D old``)."""
    carried = tuple((r, *moved[r]) for r in d.refs if r in moved)
    return d._replace(carried=carried) if carried else d


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
    update-ref, forced moves), and the branches an earlier rename took a deleted name from
    (``Destruction.carried``)."""
    out: list[str] = []
    for d in destructions:
        if d.kind in ("branch_force_delete", "branch_delete", "update_ref_delete",
                      "branch_overwrite", "tag_delete"):
            out.extend(d.refs)
            out.extend(source for _, source, renamed in d.carried
                       if renamed and source != "HEAD")
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
    names ``git`` or ``rm`` as a word anywhere (the text of the script files it read
    included). A plain syntax error counts when such a word lies outside every command that
    was read. Text that never names them (an unparsable
    ``npm``/``python`` one-liner) is None, so it stays allowed. Pure; no git process."""
    hidden = _hidden_destroyer(parsed)
    if hidden is not None:
        return hidden
    if not parsed.unparsed:
        return None
    reasons = [r for r in parsed.unparsed_reason.split("; ") if r]
    opaque = [r for r in reasons if not r.startswith(_SYNTAX)]
    text = "\n".join([parsed.text, *parsed.scripts])  # with the scripts it read
    if opaque and _RISKY_WORD.search(text):
        return "; ".join(opaque)
    if len(opaque) < len(reasons):
        leftover = text
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
