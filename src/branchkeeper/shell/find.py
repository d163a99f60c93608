"""What a ``find`` runs and removes: its starting points, its expression's ``-name``/``-type``
tests, ``-delete`` (an action, not another primary's argument) and the ``-exec`` family's
commands (spec section 3; issue 17).

Pure: :func:`find_exec` fills the :class:`~branchkeeper.shell.scope.Special` of a find
invocation; :func:`find_scope` gives the :class:`~branchkeeper.shell.model.FindScope` a
deleting command fed by a find reaches.
"""

from __future__ import annotations

import posixpath

from branchkeeper.shell.model import FindScope
from branchkeeper.shell.scope import SHELL_ONLY_BUILTINS, Inv, Special
from branchkeeper.shell.words import Word

#: find options before its starting points (``-D`` takes a value).
_FIND_LEADING = frozenset({"-H", "-L", "-P"})
#: find primaries that take the next word as their argument (so ``-gid -delete`` is no delete).
_FIND_ARG = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-lname", "-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm",
    "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-anewer",
    "-cnewer", "-samefile", "-inum", "-links", "-maxdepth", "-mindepth", "-fstype", "-used",
    "-printf", "-fprint", "-fprint0", "-fls", "-context", "-regextype", "-files0-from"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


class _FindExpr:
    """One pass over a find expression: the ``-name``/``-iname`` patterns of each ``-o``/``,``
    alternative, the ``-type`` letters, whether ``-delete`` is one of its actions (not an
    argument of another primary), each ``-exec`` family command (flag, words), and whether
    an ``-exec`` lacks its terminator (``broken``: find then refuses to run at all)."""

    __slots__ = ("alternatives", "broken", "delete", "empty", "execs", "exotic", "types")

    def __init__(self, expr: list[Word]) -> None:
        self.alternatives: list[list[tuple[str, bool]]] = [[]]
        self.types: set[str] = set()
        self.delete = False
        self.empty = False  # -empty: only empty files and directories are selected
        self.exotic = False  # a pattern find matches differently from Python's fnmatch
        self.execs: list[tuple[str, list[Word]]] = []
        self.broken = False  # an -exec without its `;` or `{} +`
        k = 0
        while k < len(expr):
            value = expr[k].value
            if value in _FIND_EXEC:
                j = k + 1
                # `;` ends the command; `+` only right after `{}` (else it is an argument)
                while j < len(expr) and not (expr[j].value == ";" or (
                        expr[j].value == "+" and expr[j - 1].value == "{}")):
                    j += 1
                if j >= len(expr) and not any(w.dynamic for w in expr[k + 1:]):
                    self.broken = True  # find refuses the whole expression: it runs nothing
                self.execs.append((value, expr[k + 1:j]))
                k = j
            elif value in ("-o", "-or", ","):
                self.alternatives.append([])
            elif value in ("!", "-not"):
                k += 2 if k + 1 < len(expr) and expr[k + 1].value in _FIND_ARG else 1
                continue
            elif value == "-delete":
                self.delete = True
            elif value == "-empty":
                self.empty = True
            elif value in _FIND_ARG and k + 1 < len(expr):
                arg = expr[k + 1]
                if value in ("-name", "-iname"):
                    if arg.dynamic or "[" in arg.value or "\\" in arg.value:
                        self.exotic = True
                    self.alternatives[-1].append((arg.value, value == "-iname"))
                elif value == "-type":
                    self.types.update(arg.value.split(",") if not arg.dynamic else "?")
                k += 1
            k += 1

    def names(self) -> tuple[tuple[str, bool], ...] | None:
        """The patterns one of which every selected path's base name matches, or None."""
        if self.exotic or not all(self.alternatives):
            return None
        return tuple(p for alt in self.alternatives for p in alt)


def _find_starts(inv: Inv) -> tuple[list[str] | None, int]:
    """find's starting points (absolute when the cwd is known; None when one comes from an
    expansion) and the index where its expression begins."""
    return find_starts(inv.words, inv.cwd)


def find_starts(words: list[Word], cwd: str | None) -> tuple[list[str] | None, int]:
    """:func:`_find_starts` of a find's words (``words[0]`` is ``find``) run in ``cwd``."""
    i = 1
    while i < len(words) and (words[i].value in _FIND_LEADING or
                              words[i].value.startswith("-O") or words[i].value == "-D"):
        i += 2 if words[i].value == "-D" else 1
    starts: list[str] = []
    while i < len(words) and not words[i].value.startswith(("-", "(", "!", ")", ",")):
        if words[i].dynamic:
            return None, i
        start = words[i].value
        starts.append(posixpath.normpath(posixpath.join(cwd, start)) if cwd else start)
        i += 1
    return (starts or ([posixpath.normpath(cwd)] if cwd else ["."])), i


def find_scope(words: list[Word], cwd: str | None) -> FindScope | None:
    """The starting points, ``-name``/``-iname`` patterns and ``-type f`` of a ``find`` (its
    words, ``words[0]`` the name) run in ``cwd`` (see :class:`FindScope`); None when a
    starting point comes from an expansion."""
    starts, i = find_starts(words, cwd)
    if starts is None:
        return None
    expr = _FindExpr(words[i:])
    return FindScope(tuple(starts), expr.names(), expr.types == {"f"})


def find_exec(inv: Inv, special: Special) -> None:
    """`find ... -exec CMD {} ;` (and -execdir/-ok/-okdir) and `find ... -delete`: the
    commands find runs (for -delete, an ``rm -d`` of each path it selects). Their `{}` words
    are dynamic (find supplies them) and each command carries :func:`find_scope`."""
    starts, i = _find_starts(inv)
    expr = _FindExpr(inv.words[i:])
    if expr.broken and not inv.forced_dynamic:  # (xargs may append the terminator)
        return  # `find . -exec rm {}` without `;`: "missing argument to -exec", nothing runs
    scope = None if starts is None else FindScope(tuple(starts), expr.names(),
                                                  expr.types == {"f"})
    inner_cmds: list[tuple[str, list[Word]]] = list(expr.execs)
    expr_words = inv.words[i:]
    unknown = inv.forced_dynamic or any(  # a primary (not some primary's argument) unknown
        w.dynamic and (k == 0 or expr_words[k - 1].value not in _FIND_ARG)
        for k, w in enumerate(expr_words))
    if unknown and not expr.execs:
        # a word of its expression from an expansion, or more from xargs: it may be -delete
        inner_cmds.append(("-exec", [Word("rm", False), Word("-r", False), Word("{}", True)]))
    elif expr.delete and not expr.empty and not (expr.types and expr.types <= {"d"}):
        # -delete removes each selected file, and a directory only when it is empty
        inner_cmds.append(("-exec", [Word("rm", False), Word("-d", False), Word("{}", True)]))
    for flag, words in inner_cmds:
        if not words or (not words[0].dynamic and words[0].value in SHELL_ONLY_BUILTINS):
            continue  # (find runs programs: `-exec eval …` runs nothing)
        cwd = inv.cwd if flag in ("-exec", "-ok") else None
        inner = [Word(w.value, w.dynamic or "{}" in w.value) for w in words]
        found = Inv(inner, cwd, dict(inv.env), set(inv.env_dynamic), scope is None, [],
                    inv.in_pipeline, inv.source)
        found.found_by = scope
        special.inner.append(found)
