"""Immutable records produced by the shell-command reader (spec sections 3, 11, 13).

These are plain data: the walker (`walk`) builds them, `parse` exposes them, and the
decision layer reads them. Nothing here imports tree-sitter. They are NamedTuples, not frozen
dataclasses: the hook imports this module on every tool call.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

# Redirect operators whose target is a file that receives the command's stdout.
_STDOUT_FILE_OPS = frozenset({">", ">>", ">|", "&>", "&>>"})
# Paths that receive output without keeping it anywhere a person would call saved work.
NON_FILE_SINKS = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"}
)
_NO_ENV: Mapping[str, str] = MappingProxyType({})  # the default `Invocation.env` (read-only)
_VERSION_CHARS = frozenset("0123456789.")


def interpreter_language(name: str) -> str | None:
    """The language an interpreter command name runs (``python3.11`` -> ``python``), or None.
    Here, not in :mod:`branchkeeper.shell.interp`, so the reader imports the code reader
    (and :mod:`ast`) only for a command that runs an interpreter."""
    base = name.lower().removesuffix(".exe")
    for stem in ("python", "pypy"):
        if base.startswith(stem) and set(base[len(stem):]) <= _VERSION_CHARS:
            return "python"
    if base in ("node", "nodejs", "bun", "deno"):
        return "node"
    if base in ("perl", "ruby", "php"):
        return base
    if base in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return "awk"
    return None


class Redirect(NamedTuple):
    """One redirection of a simple command.

    `op` is the operator text (`>`, `>>`, `&>`, `<`, `<<`, `<<<`, `>&`, ...); `fd` the explicit
    descriptor (`2` in `2>x`) or None; `target` the destination after quote removal (for a
    heredoc or herestring: the delimiter / the string); `path` the absolute, normalised target
    path when it names a file and could be resolved (None for descriptor duplication, heredocs,
    dynamic targets or an unknown cwd); `dynamic` is True when the target came from an expansion;
    `body` holds heredoc / herestring text (None otherwise).
    """

    op: str
    fd: int | None
    target: str
    path: str | None
    dynamic: bool
    body: str | None = None

    @property
    def writes_stdout(self) -> bool:
        """True when this redirect sends the command's stdout into a file (or unknown target)."""
        if self.op in _STDOUT_FILE_OPS:
            return self.fd in (None, 1)
        if self.op == ">&" and self.fd in (None, 1):
            # `>&file` is `&>file`; `>&2` duplicates a descriptor.
            return not self.target.isdigit() and self.target != "-"
        return False


class FindScope(NamedTuple):
    """Where the paths ``find`` hands to ``-exec CMD {}`` (or deletes with ``-delete``) come
    from: its starting points (``starts``, absolute when the cwd is known, else as written),
    ``-name``/``-iname`` patterns one of which every selected path's base name matches
    (``names``: (pattern, ignore case) pairs; None when some alternative of the expression has
    no such test), and ``files_only`` (``-type f``: no directory is selected). A recursive
    ``rm`` of ``{}`` reaches a path only through a path that find can visit and that matches;
    a plain ``rm`` or ``-delete`` only the paths that match themselves."""

    starts: tuple[str, ...]
    names: tuple[tuple[str, bool], ...] | None
    files_only: bool = False


class Invocation(NamedTuple):
    """One simple command, after wrapper prefixes (`env`, `sudo`, `command`, ...) are stripped.

    `argv` is after quote removal and escape processing; `dynamic_args[i]` says whether argv[i]
    came (even partly) from an expansion the guard cannot know (`$(...)`, `$VAR`, globs, braces,
    arithmetic, `~` without a known home); `dynamic` is any of them or a forced mark (xargs,
    find -exec). `cwd` is the effective directory, or None when unknown. `env` holds prefix
    assignments and exports made earlier in the command (`env_dynamic` names those whose value
    is unknown). `downstream` lists the commands that read this command's stdout through a pipe
    (the next pipeline element; follow their own `downstream` for the rest). `wrappers` are the
    stripped prefix words. `source` is the original text span. `found_by` is set on a command
    that ``find -exec`` runs (its ``{}`` words are dynamic). `env` takes no part in the hash
    (a dict is not hashable); equality compares every field.
    """

    argv: tuple[str, ...]
    cwd: str | None
    env: Mapping[str, str] = _NO_ENV
    env_dynamic: frozenset[str] = frozenset()
    dynamic: bool = False
    dynamic_args: tuple[bool, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    downstream: tuple[Invocation, ...] = ()
    in_pipeline: bool = False
    source: str = ""
    wrappers: tuple[str, ...] = ()
    found_by: FindScope | None = None

    def __hash__(self) -> int:  # every field but `env`
        return hash(self[:2] + self[3:])

    @property
    def pipe_to(self) -> tuple[str, ...] | None:
        """argv of the first command this command's stdout is piped into, or None."""
        return self.downstream[0].argv if self.downstream else None

    @property
    def name(self) -> str:
        """Basename of argv[0] (`/usr/bin/git` -> `git`), or '' for an empty argv."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    @property
    def rm_targets(self) -> tuple[str, ...]:
        """Targets of a recursive `rm` (see :func:`rm_recursive_targets`)."""
        return rm_recursive_targets(self)


class ParsedCommand(NamedTuple):
    """The whole command: every simple command in source order, and whether it was read in full.

    `unparsed` is True when tree-sitter reported an error, the input was refused (too large, NUL
    bytes, not encodable) or a construct could not be followed (eval of a dynamic string,
    `source`, functions, aliases, a shell reading commands from a pipe); `unparsed_reason` then
    says why (reasons joined with '; '). Invocations found are still listed. `scripts` holds
    the text of each script file the command runs that was read (``./x.sh``, ``bash x.sh``,
    ``source x.sh``; their commands are among the invocations).
    """

    text: str
    invocations: tuple[Invocation, ...]
    unparsed: bool = False
    unparsed_reason: str = ""
    scripts: tuple[str, ...] = ()


class GitInvocation(NamedTuple):
    """A git invocation with git's global options resolved (`git [globals] <sub> <args>`).

    `cwd` is the effective directory after every `-C` (None when unknown); `git_dir` and
    `work_tree` are absolute (from `--git-dir`/`--work-tree`, `GIT_DIR`/`GIT_WORK_TREE`, or
    `--bare`), None when not given or not resolvable; `config` the `-c key=value` pairs in order;
    `subcommand` None for `git --version` and the like; `args` the words after the subcommand
    with `args_dynamic` flags aligned; `dynamic` is True when any global option, the
    subcommand, an argument or a GIT_* environment value is unknown.
    """

    invocation: Invocation
    subcommand: str | None
    args: tuple[str, ...]
    args_dynamic: tuple[bool, ...]
    cwd: str | None
    git_dir: str | None
    work_tree: str | None
    config: tuple[tuple[str, str], ...]
    dynamic: bool

    @property
    def redirects(self) -> tuple[Redirect, ...]:
        """Redirects of the underlying invocation."""
        return self.invocation.redirects

    @property
    def pipe_to(self) -> tuple[str, ...] | None:
        """argv of the first command reading this invocation's stdout, or None."""
        return self.invocation.pipe_to

    @property
    def source(self) -> str:
        """Original text span of the command."""
        return self.invocation.source


def join_path(cwd: str | None, path: str) -> str | None:
    """``path`` made absolute against ``cwd`` and normalised; None when it is relative and
    ``cwd`` is unknown."""
    if path.startswith("/"):
        return posixpath.normpath(path)
    return None if cwd is None else posixpath.normpath(posixpath.join(cwd, path))


_RM_ARG_OPTS = frozenset({"--interactive", "--preserve-root"})


def rm_no_preserve_root(word: str) -> bool:
    """Whether one option word of ``rm`` is ``--no-preserve-root`` (or an abbreviation of it,
    as GNU's getopt takes: ``--n`` is already unambiguous)."""
    return len(word) >= 3 and "--no-preserve-root".startswith(word)


def rm_skips_dot(word: str) -> bool:
    """Whether ``rm`` refuses the operand ``word`` without touching it: its last component
    (trailing slashes stripped) is ``.`` or ``..`` (POSIX; GNU, BSD and busybox rm all skip
    it: ``rm -rf .`` removes nothing). The interpreter reader spells the deletions code runs
    (``shutil.rmtree('.')`` empties the directory) with ``--no-preserve-root``, and any rm
    given that option is judged as removing such an operand too."""
    last = word.rstrip("/").rsplit("/", 1)[-1] if word.strip("/") else ""
    return last in (".", "..")


def rm_recursive_targets(inv: Invocation) -> tuple[str, ...]:
    """Targets of `rm -r`/`-R`/`-rf`/`--recursive` as absolute paths; () for any other command.

    A target that came from an expansion or cannot be resolved (unknown cwd) is returned as
    its raw text (not starting with '/'); `inv.dynamic` is then True. Spec section 13.
    """
    if inv.name != "rm":
        return ()
    recursive = False
    operands: list[tuple[str, bool]] = []
    options_done = False
    for word, dyn in zip(inv.argv[1:], inv.dynamic_args[1:], strict=False):
        if not options_done and word == "--":
            options_done = True
        elif not options_done and word.startswith("--"):
            recursive |= len(word) >= 3 and "--recursive".startswith(word.split("=", 1)[0])
        elif not options_done and word.startswith("-") and len(word) > 1:
            recursive |= "r" in word or "R" in word
        else:
            operands.append((word, dyn))
    if not recursive:
        return ()
    out: list[str] = []
    spare = not any(rm_no_preserve_root(w) for w in inv.argv[1:] if w.startswith("--"))
    for word, dyn in operands:
        if spare and not dyn and rm_skips_dot(word):
            continue  # rm refuses `.` and `..` (rm_skips_dot)
        path = None if dyn else join_path(inv.cwd, word)
        out.append(path if path is not None else word)
    if inv.dynamic and not any(inv.dynamic_args):  # xargs: more operands arrive on stdin
        out.append(XARGS_OPERANDS)
    return tuple(out)


#: The target standing for the operands ``xargs`` adds to a recursive ``rm``.
XARGS_OPERANDS = "(the names xargs reads)"


class RmTarget(NamedTuple):
    """One path a deleting command removes: ``path`` absolute and normalised, or the raw text
    when ``dynamic`` (from an expansion, xargs, find's ``{}``, an unknown cwd); ``recursive``
    when a directory goes with everything in it (a plain ``rm`` removes files only, and
    ``rm -d`` or ``find -delete`` only empty directories)."""

    path: str
    recursive: bool
    dynamic: bool


def _rm_options(word: str) -> tuple[bool, bool]:
    """(is an option, recursive) for one word of ``rm``'s arguments."""
    if word.startswith("--"):
        return True, len(word) >= 3 and "--recursive".startswith(word.split("=", 1)[0])
    if word.startswith("-") and len(word) > 1:
        return True, "r" in word or "R" in word
    return False, False


def rm_operands(inv: Invocation) -> tuple[RmTarget, ...]:
    """What ``rm`` (any options), ``unlink FILE`` and ``shred FILE...`` (which overwrites the
    content, and with ``-u`` removes the file too) destroy (issue 17): each operand as an
    :class:`RmTarget`, plus one dynamic target when ``xargs`` or ``parallel`` feed it more.
    () for any other command."""
    name = inv.name
    if name not in ("rm", "unlink", "shred"):
        return ()
    args = list(zip(inv.argv[1:], inv.dynamic_args[1:], strict=False))
    recursive, done = False, False
    operands: list[tuple[str, bool]] = []
    for word, dyn in args:
        if not done and word == "--":
            done = True
            continue
        is_opt, rec = (False, False) if done else _rm_options(word)
        if is_opt:
            recursive |= rec and name == "rm"
        else:
            operands.append((word, dyn))
    out = []
    spare = name == "rm" and not any(rm_no_preserve_root(w) for w in inv.argv[1:]
                                     if w.startswith("--"))
    for word, dyn in operands:
        if spare and not dyn and rm_skips_dot(word):
            continue  # rm refuses `.` and `..` (rm_skips_dot)
        path = None if dyn else join_path(inv.cwd, word)
        out.append(RmTarget(path if path is not None else word, recursive, path is None))
    if inv.dynamic and not any(d for _, d in operands):  # xargs: more operands on stdin
        out.append(RmTarget(XARGS_OPERANDS, recursive, True))
    return tuple(out)


#: Commands that write nothing to any descriptor a redirect gives them, so a ``>`` redirect of
#: one leaves the file empty (a redirect alone, ``> f``, is read as ``: > f``, as bash runs
#: it). ``echo`` and ``printf`` count only as :func:`_silent` says.
_SILENT = frozenset({":", "true", "false", "exec"})
#: Redirect operators that open their file for writing from its start, emptying it.
_TRUNCATING_OPS = frozenset({">", ">|", "&>", ">&"})
#: ``truncate`` options that take a value (GNU; BSD's ``-s``/``-r`` too).
_TRUNCATE_ARG_OPTS = ("-s", "--size", "-r", "--reference")


def _silent(inv: Invocation) -> bool:
    """Whether ``inv`` writes nothing: a :data:`_SILENT` command (``exec`` only without a
    program), ``cat /dev/null``, ``echo -n`` (``echo`` alone writes a newline only), ``printf ''``."""
    if any(inv.dynamic_args):
        return False
    name, args = inv.name, inv.argv[1:]
    if name in _SILENT:
        return name != "exec" or not args
    if name == "cat":
        return bool(args) and all(a == "/dev/null" for a in args)
    if name == "echo":
        return all(a.startswith("-") and set(a[1:]) <= set("neE") for a in args)
    return name == "printf" and args in ((), ("",))


def _truncate_operands(args: tuple[str, ...]) -> list[int] | None:
    """Indexes (into ``args``) of the files ``truncate`` makes shorter, or None when it only
    extends them (``-s +N``, ``-s >N``, ``-s %N``) or has no size (it fails)."""
    size: str | None = None
    files: list[int] = []
    i, done = 0, False
    while i < len(args):
        word = args[i]
        if not done and word == "--":
            done = True
        elif not done and word.startswith("--") and "=" in word and \
                word.split("=", 1)[0] in _TRUNCATE_ARG_OPTS:
            size = word.split("=", 1)[1] if word.startswith("--s") else "r"
        elif not done and word in _TRUNCATE_ARG_OPTS:
            size = (args[i + 1] if i + 1 < len(args) else None) if word in ("-s", "--size") \
                else "r"
            i += 1
        elif not done and word.startswith(("-s", "-r")) and len(word) > 2:
            size = word[2:] if word.startswith("-s") else "r"
        elif done or not word.startswith("-") or word == "-":
            files.append(i)
        i += 1
    if size is None or size[:1] in ("+", ">", "%"):
        return None
    return files


def truncated_files(inv: Invocation) -> tuple[RmTarget, ...]:
    """What ``inv`` empties or shortens (issue 17): the files of a ``>``/``>|``/``&>``
    redirect (any descriptor) of a command that writes nothing (:func:`_silent`), the files of
    ``truncate`` (unless it only extends them), ``cp /dev/null FILE`` and ``dd if=/dev/null
    of=FILE`` (without ``conv=notrunc``); each a non-recursive :class:`RmTarget`, plus one
    dynamic target when ``xargs`` or ``parallel`` feed ``truncate`` more. ``>>`` appends and
    loses nothing. () for anything else."""
    out: list[RmTarget] = []
    if _silent(inv):
        for r in inv.redirects:
            if r.op in _TRUNCATING_OPS and not (r.op == ">&" and r.path is None
                                                and not r.dynamic) \
                    and r.target not in NON_FILE_SINKS:
                out.append(RmTarget(r.path or r.target, False, r.path is None))
    args, dyn = inv.argv[1:], inv.dynamic_args[1:]
    picked: list[int] = []
    if inv.name == "truncate":
        picked = _truncate_operands(args) or []
        if inv.dynamic and not any(dyn) and _truncate_operands(args) is not None:
            out.append(RmTarget(XARGS_OPERANDS, False, True))
    elif inv.name == "cp" and len(args) == 2 and args[0] == "/dev/null":
        picked = [1]
    elif inv.name == "dd" and "if=/dev/null" in args and \
            not any(a.startswith("conv=") and "notrunc" in a for a in args):
        out += [RmTarget(p or a[3:], False, p is None) for a, d in zip(args, dyn, strict=False)
                if a.startswith("of=") for p in [None if d else join_path(inv.cwd, a[3:])]]
    for i in picked:
        path = None if i < len(dyn) and dyn[i] else join_path(inv.cwd, args[i])
        if path is None or path not in NON_FILE_SINKS:
            out.append(RmTarget(path or args[i], False, path is None))
    return tuple(out)
