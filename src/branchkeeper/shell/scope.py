"""The walker's shared state: the shell :class:`Scope` a command runs in, the :class:`Inv`
builder of one simple command and the :class:`Special` of what it runs beyond itself, plus
:func:`resolve` for paths seen from a directory.

Below the walker (``walk``) and the wrapper rules (``wrappers``, ``find``, ``parallel``), which
hand these back and forth; nothing here reads the tree.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from branchkeeper.shell.model import FindScope, Redirect
from branchkeeper.shell.words import Word


# The classes below are plain classes with __slots__, not dataclasses: the hook imports this
# module on every tool call, and a dataclass costs more to define.
class Scope:
    """Mutable shell state that a command can change for what follows it.

    ``env`` holds exported variables (they reach the commands run), ``vars`` every variable
    the command assigned (exported or not), ``env_dynamic`` the names whose value is unknown
    (from an expansion, assigned twice, a loop variable, ``read``...), ``unset`` the names the
    command unset, and ``outer`` the environment the command starts with (the hook's own,
    which the agent's shell shares): a variable neither assigned nor unset takes its value
    there, and one it lacks is unknown. ``args`` are the positional parameters, ``$0`` first
    (None: unknown), ``args_open`` whether more unknown ones may follow them (xargs appends
    its input), ``splits`` whether an unquoted expansion splits into words (bash, sh; not
    zsh or fish)."""

    __slots__ = ("args", "args_open", "cwd", "dirstack", "env", "env_dynamic", "functions",
                 "home", "oldpwd", "outer", "splits", "unset", "vars")

    def __init__(self, cwd: str | None, home: str | None, oldpwd: str | None = None,
                 dirstack: list[str | None] | None = None, env: dict[str, str] | None = None,
                 env_dynamic: set[str] | None = None, *, outer: Mapping[str, str] | None = None,
                 vars_: dict[str, str] | None = None, unset: set[str] | None = None,
                 functions: dict[str, tuple[Any, bytes]] | None = None,
                 args: tuple[Word, ...] | None = None, args_open: bool = False,
                 splits: bool = True) -> None:
        self.cwd = cwd
        self.args = args
        self.args_open = args_open
        self.splits = splits
        self.home = home
        self.oldpwd = oldpwd
        self.dirstack: list[str | None] = [] if dirstack is None else dirstack
        self.env: dict[str, str] = {} if env is None else env
        self.env_dynamic: set[str] = set() if env_dynamic is None else env_dynamic
        self.outer: Mapping[str, str] = {} if outer is None else outer
        self.vars: dict[str, str] = {} if vars_ is None else vars_
        self.unset: set[str] = set() if unset is None else unset
        #: shell functions defined so far: name -> (body node, the source bytes it points into)
        self.functions: dict[str, tuple[Any, bytes]] = {} if functions is None else functions

    def copy(self) -> Scope:
        return Scope(
            self.cwd, self.home, self.oldpwd, list(self.dirstack), dict(self.env),
            set(self.env_dynamic), outer=self.outer, vars_=dict(self.vars),
            unset=set(self.unset), functions=dict(self.functions), args=self.args,
            args_open=self.args_open, splits=self.splits,
        )  # fmt: skip

    def child(self, args: tuple[Word, ...] | None, *, args_open: bool = False,
              splits: bool = True) -> Scope:
        """The scope of a new shell process started here (``bash -c``, a script fed to
        ``sh``): the same directory and exported variables; a variable the command assigned
        without exporting it is unknown there (empty, unless ``set -a`` exported it), and
        its positional parameters are ``args`` (``$0`` first; None: unknown)."""
        sub = self.copy()
        for name in sub.vars:
            if name not in sub.env and name not in sub.outer:
                sub.env_dynamic.add(name)
        sub.args, sub.args_open, sub.splits = args, args_open, splits
        return sub

    def arguments(self) -> tuple[Word, ...] | None:
        """``$1``... as words (each may be unknown), or None when how many is unknown."""
        if self.args is None or self.args_open or "IFS" in self.vars or "IFS" in self.outer:
            return None
        return self.args[1:]

    def lookup(self, name: str) -> str | None:
        """The value ``$name`` expands to here, or None when it cannot be known: ``PWD`` and
        ``OLDPWD`` follow ``cd``; ``IFS`` set anywhere makes word splitting unknowable."""
        if name in self.env_dynamic or "IFS" in self.vars or "IFS" in self.outer:
            return None
        if name.isdigit() or name in ("#", "*"):
            return self._positional(name)
        if name == "PWD":
            return self.cwd
        if name == "OLDPWD":
            return self.oldpwd
        if name in self.vars:
            return self.vars[name]
        if name in self.env:
            return self.env[name]
        if name in self.unset:
            return ""
        if name == "HOME" and self.home is not None:
            return self.home
        return self.outer.get(name)

    def _positional(self, name: str) -> str | None:
        """``$0``, ``$1``..., ``$#`` and ``$*`` (joined by spaces) when known."""
        args = self.args
        if args is None:
            return None
        if name in ("#", "*"):
            rest = args[1:]
            if self.args_open or any(w.dynamic for w in rest):
                return None
            return str(len(rest)) if name == "#" else " ".join(w.value for w in rest)
        n = int(name)
        if n < len(args):
            return None if args[n].dynamic else args[n].value
        return None if self.args_open else ""

    def assign(self, name: str, value: str, *, dynamic: bool, export: bool) -> None:
        """Record ``name=value``: a second assignment of one name makes it unknown (the guard
        reads a command in text order, not its branches and loops)."""
        if name in self.vars or name in self.unset:
            dynamic = True
        self.vars[name] = value
        self.unset.discard(name)
        (self.env_dynamic.add if dynamic else self.env_dynamic.discard)(name)
        if export or name in self.env:
            self.env[name] = value


class Inv:
    """Builder for an Invocation; frozen at the end once pipelines are linked. Compared by
    identity."""

    __slots__ = ("cwd", "downstream", "env", "env_dynamic", "forced_dynamic", "found_by",
                 "in_pipeline", "reads_pipe", "redirects", "source", "stdin_text", "words",
                 "wrappers")

    def __init__(self, words: list[Word], cwd: str | None, env: dict[str, str],
                 env_dynamic: set[str], forced_dynamic: bool, redirects: list[Redirect],
                 in_pipeline: bool, source: str, reads_pipe: bool = False,
                 wrappers: list[str] | None = None, downstream: list[Inv] | None = None,
                 stdin_text: str | None = None) -> None:
        self.words = words
        self.cwd = cwd
        self.env = env
        self.env_dynamic = env_dynamic
        self.forced_dynamic = forced_dynamic
        self.redirects = redirects
        self.in_pipeline = in_pipeline
        self.source = source
        self.reads_pipe = reads_pipe
        self.wrappers: list[str] = [] if wrappers is None else wrappers
        self.downstream: list[Inv] = [] if downstream is None else downstream
        self.found_by: FindScope | None = None
        #: what the pipe it reads carries, when a literal echo/printf writes it (else None)
        self.stdin_text = stdin_text

    def piped_text(self) -> str | None:
        """The text this command reads on stdin from the pipe, when known: a literal ``echo``
        or ``printf`` writes it and no ``<`` redirect replaces it."""
        if not self.reads_pipe or any(r.op in ("<", "<&", "<>") for r in self.redirects):
            return None
        return self.stdin_text


#: Builtins of the shell that no program on disk implements: a wrapper that runs a program
#: (``xargs``, ``sudo``, ``env``, ``nice``…, and ``find -exec``) fails to run one of them.
SHELL_ONLY_BUILTINS = frozenset({"eval", "source", ".", "exec", "trap", "alias"})

#: A script a command runs: (text, dynamic, runs in the current shell, positional parameters).
Script = tuple[str, bool, bool, "tuple[Word, ...] | None"]
#: A script file a command runs (:attr:`Special.files`).
ScriptFile = tuple["str | None", bool, "tuple[Word, ...] | None", bool]


class Special:
    """What a command does beyond itself: scripts to parse, inner commands, an unparsed reason.

    `scripts` items are (text, dynamic, runs in the current shell, positional parameters of
    the new shell that runs it: ``$0`` first, None when unknown). A plain class (the hook
    imports this module; a dataclass costs more to define).
    """

    __slots__ = ("files", "inner", "reason", "scripts")

    def __init__(self, reason: str | None = None,
                 scripts: list[Script] | None = None,
                 inner: list[Inv] | None = None) -> None:
        self.reason = reason
        self.scripts: list[Script] = [] if scripts is None else scripts
        self.inner: list[Inv] = [] if inner is None else inner
        #: script files it runs: (absolute path or None when unknown, runs in the current
        #: shell, positional parameters as for ``scripts``, run by its own path)
        self.files: list[ScriptFile] = []


def resolve(cwd: str | None, path: str) -> str | None:
    """Absolute normalised path of `path` seen from `cwd` (None when it cannot be known)."""
    if path.startswith("/"):
        return posixpath.normpath(path).replace("//", "/")
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, path))
