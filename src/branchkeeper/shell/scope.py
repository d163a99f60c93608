"""The walker's shared state: the shell :class:`Scope` a command runs in and the :class:`Inv`
builder of one simple command, plus :func:`resolve` for paths seen from a directory.

Below both the walker (``walk``) and the wrapper rules (``wrappers``), which hand these back
and forth; nothing here reads the tree.
"""

from __future__ import annotations

import posixpath

from branchkeeper.shell.model import FindScope, Redirect
from branchkeeper.shell.words import Word


# The classes below are plain classes with __slots__, not dataclasses: the hook imports this
# module on every tool call, and a dataclass costs more to define.
class Scope:
    """Mutable shell state that a command can change for what follows it."""

    __slots__ = ("cwd", "dirstack", "env", "env_dynamic", "home", "oldpwd")

    def __init__(self, cwd: str | None, home: str | None, oldpwd: str | None = None,
                 dirstack: list[str | None] | None = None, env: dict[str, str] | None = None,
                 env_dynamic: set[str] | None = None) -> None:
        self.cwd = cwd
        self.home = home
        self.oldpwd = oldpwd
        self.dirstack: list[str | None] = [] if dirstack is None else dirstack
        self.env: dict[str, str] = {} if env is None else env
        self.env_dynamic: set[str] = set() if env_dynamic is None else env_dynamic

    def copy(self) -> Scope:
        return Scope(
            self.cwd, self.home, self.oldpwd, list(self.dirstack), dict(self.env),
            set(self.env_dynamic),
        )  # fmt: skip


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


def resolve(cwd: str | None, path: str) -> str | None:
    """Absolute normalised path of `path` seen from `cwd` (None when it cannot be known)."""
    if path.startswith("/"):
        return posixpath.normpath(path).replace("//", "/")
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, path))
