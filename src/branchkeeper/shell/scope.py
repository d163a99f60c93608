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
    there, and one it lacks is unknown."""

    __slots__ = ("cwd", "dirstack", "env", "env_dynamic", "functions", "home", "oldpwd",
                 "outer", "unset", "vars")

    def __init__(self, cwd: str | None, home: str | None, oldpwd: str | None = None,
                 dirstack: list[str | None] | None = None, env: dict[str, str] | None = None,
                 env_dynamic: set[str] | None = None, *, outer: Mapping[str, str] | None = None,
                 vars_: dict[str, str] | None = None, unset: set[str] | None = None,
                 functions: dict[str, tuple[Any, bytes]] | None = None) -> None:
        self.cwd = cwd
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
            unset=set(self.unset), functions=dict(self.functions),
        )  # fmt: skip

    def lookup(self, name: str) -> str | None:
        """The value ``$name`` expands to here, or None when it cannot be known: ``PWD`` and
        ``OLDPWD`` follow ``cd``; ``IFS`` set anywhere makes word splitting unknowable."""
        if name in self.env_dynamic or "IFS" in self.vars or "IFS" in self.outer:
            return None
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
                 "in_pipeline", "reads_pipe", "redirects", "source", "words", "wrappers")

    def __init__(self, words: list[Word], cwd: str | None, env: dict[str, str],
                 env_dynamic: set[str], forced_dynamic: bool, redirects: list[Redirect],
                 in_pipeline: bool, source: str, reads_pipe: bool = False,
                 wrappers: list[str] | None = None, downstream: list[Inv] | None = None) -> None:
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


class Special:
    """What a command does beyond itself: scripts to parse, inner commands, an unparsed reason.

    `scripts` items are (text, dynamic, runs in the current shell). A plain class (the hook
    imports this module; a dataclass costs more to define).
    """

    __slots__ = ("inner", "reason", "scripts")

    def __init__(self, reason: str | None = None,
                 scripts: list[tuple[str, bool, bool]] | None = None,
                 inner: list[Inv] | None = None) -> None:
        self.reason = reason
        self.scripts: list[tuple[str, bool, bool]] = [] if scripts is None else scripts
        self.inner: list[Inv] = [] if inner is None else inner


def resolve(cwd: str | None, path: str) -> str | None:
    """Absolute normalised path of `path` seen from `cwd` (None when it cannot be known)."""
    if path.startswith("/"):
        return posixpath.normpath(path).replace("//", "/")
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, path))
