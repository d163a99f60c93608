"""Reading an agent's shell command: `parse_command`, `git_invocations` (spec sections 3, 11, 13).

Pure functions: no git process, no filesystem access, no printing. tree-sitter is imported on
first use only (the hook imports this module on every tool call), and the parser is a lazily
created module-level singleton. `parse_command` never raises: input it cannot read in full
comes back with `unparsed=True` and a reason.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from branchkeeper.shell.model import (
    FindScope,
    GitInvocation,
    Invocation,
    ParsedCommand,
    Redirect,
    join_path,
    rm_recursive_targets,
)

__all__ = [
    "MAX_INPUT_BYTES",
    "GitInvocation",
    "Invocation",
    "ParsedCommand",
    "Redirect",
    "git_invocation",
    "git_invocations",
    "parse_command",
    "rm_recursive_targets",
]

MAX_INPUT_BYTES = 256 * 1024
_PARSER: Any = None

#: Every byte >= 0x80 maps to an ASCII letter (one byte for one byte, so every offset into the
#: tree still points into the original text). tree-sitter-bash's external scanner passes
#: non-ASCII code points to C character-class functions, which crashed the process on inputs
#: such as ``{\U000771a8\U000ee563k:``; to bash every non-ASCII character is an ordinary word
#: character, as the letters that stand in for it are.
_ASCII_ONLY = bytes(
    range(128)) + bytes(
    (ord("a") + (b % 26)) if b % 2 else (ord("A") + (b % 26)) for b in range(128, 256))


def _parse_bytes(data: bytes) -> Any:
    """tree-sitter parse of ``data`` (with non-ASCII bytes replaced, see :data:`_ASCII_ONLY`)
    by the shared bash parser, created on first call. Callers read node text from ``data``."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter

        _PARSER = tree_sitter.Parser(tree_sitter.Language(_bash_language()))
    return _PARSER.parse(data.translate(_ASCII_ONLY))


def _bash_language() -> Any:
    """tree-sitter-bash's language pointer, read from its compiled ``_binding`` module loaded on
    its own: the package's ``__init__`` imports ``importlib.resources`` (and with it
    ``tempfile``, ``shutil``, compression modules: ~8 ms of every guarded hook call) only to
    serve a highlighting query. Falls back to the plain import wherever that layout differs."""
    import importlib.machinery
    import importlib.util
    import os

    spec = importlib.util.find_spec("tree_sitter_bash")  # finds the package, does not run it
    for where in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(where, "_binding" + suffix)
            if not os.path.isfile(path):
                continue
            binding = importlib.util.spec_from_file_location("tree_sitter_bash._binding", path)
            if binding is None or binding.loader is None:
                continue
            module = importlib.util.module_from_spec(binding)
            binding.loader.exec_module(module)
            return module.language()
    import tree_sitter_bash

    return tree_sitter_bash.language()


def parse_command(text: str, *, cwd: str, home: str | None = None,
                  env: Mapping[str, str] | None = None) -> ParsedCommand:
    """Parse a bash command string into every simple command it runs, in source order.

    `cwd` is the absolute directory the command starts in; `home` (optional) resolves `~`;
    `env` (optional) is the environment the command starts with: ``$NAME`` takes its value
    there unless the command assigns or unsets NAME first (a name it lacks is unknown, as is
    every variable without `env`). Returns a ParsedCommand; never raises. Input over
    MAX_INPUT_BYTES (UTF-8), with NUL characters, or not encodable as UTF-8 is refused as
    unparsed. Spec: issue 5 section 1. The last few results are kept: the hook's fast path and
    the guard read the same command.
    """
    outer = dict(env) if env is not None else {}
    key = (text, cwd, home, tuple(sorted(outer.items())))
    done = _RECENT.get(key)
    if done is not None:
        return done
    try:
        parsed = _parse(text, cwd=cwd, home=home, env=outer)
    except RecursionError:
        parsed = ParsedCommand(text, (), True, "commands nested too deeply")
    except Exception as exc:  # the guard must fail closed, never crash the hook
        parsed = ParsedCommand(text, (), True, f"parser failure: {type(exc).__name__}")
    if len(_RECENT) >= 16:
        _RECENT.clear()
    _RECENT[key] = parsed
    return parsed


#: Recent parses, keyed by (text, cwd, home, environment); the results are read-only records.
_RECENT: dict[tuple[str, str, str | None, tuple[tuple[str, str], ...]], ParsedCommand] = {}


def _parse(text: str, *, cwd: str, home: str | None, env: Mapping[str, str]) -> ParsedCommand:
    from branchkeeper.shell import walk
    from branchkeeper.shell.scope import Scope

    if not isinstance(text, str):
        return ParsedCommand(str(text), (), True, "command is not text")
    if "\x00" in text:
        return ParsedCommand(text, (), True, "command contains a NUL character")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return ParsedCommand(text, (), True, "command is not valid Unicode")
    if len(data) > MAX_INPUT_BYTES:
        return ParsedCommand(text, (), True, f"command longer than {MAX_INPUT_BYTES} bytes")
    start_cwd = posixpath.normpath(cwd) if cwd.startswith("/") else None
    scope = Scope(start_cwd, home, outer=env)
    ctx = walk.Ctx(data, [], [], 0, _parse_bytes)
    tree = _parse_bytes(data)
    root = tree.root_node
    if root.has_error:
        ctx.reasons.append(f"syntax the parser cannot read ({walk._error_where(root, data)})")
    walk.run_container(root, scope, ctx, walk.Inherit())
    frozen: dict[int, Invocation] = {}
    invocations = tuple(_freeze(inv, frozen) for inv in ctx.out)
    reasons = list(dict.fromkeys(ctx.reasons))
    scripts = tuple(ctx.scripts.texts) if ctx.scripts is not None else ()
    return ParsedCommand(text, invocations, bool(reasons), "; ".join(reasons), scripts)


def _freeze(inv: Any, memo: dict[int, Invocation]) -> Invocation:
    done = memo.get(id(inv))
    if done is not None:
        return done
    flags = tuple(w.dynamic for w in inv.words)
    result = Invocation(
        argv=tuple(w.value for w in inv.words),
        cwd=inv.cwd,
        env=dict(inv.env),
        env_dynamic=frozenset(inv.env_dynamic),
        dynamic=inv.forced_dynamic or any(flags),
        dynamic_args=flags,
        redirects=tuple(inv.redirects),
        downstream=tuple(_freeze(d, memo) for d in inv.downstream if d is not inv),
        in_pipeline=inv.in_pipeline,
        source=inv.source,
        wrappers=tuple(inv.wrappers),
        found_by=inv.found_by,
    )
    memo[id(inv)] = result
    return result


# git global options (git.c handle_options) that take the next word as their value.
_GIT_VALUE_OPTS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--attr-source",
     "--super-prefix"}
)  # fmt: skip
_GIT_INFO_OPTS = frozenset({"--version", "-v", "--help", "-h", "--html-path", "--man-path",
                            "--info-path", "--exec-path", "--list-cmds"})  # fmt: skip


def git_invocation(inv: Invocation) -> GitInvocation | None:
    """Resolve git's global options of one invocation; None when it does not run git.

    Handles `-C DIR` (cumulative, relative to the effective cwd), `--git-dir[=]`,
    `--work-tree[=]`, `-c key=val`, `--bare`, `GIT_DIR`/`GIT_WORK_TREE` prefixes, and skips the
    flag-only globals (`--no-pager`, `-p`, `-P`, `--literal-pathspecs`, ...). Spec: issue 5 s1.
    """
    if not inv.argv or inv.dynamic_args[:1] == (True,) or inv.name != "git":
        return None
    argv, flags = inv.argv, inv.dynamic_args
    cwd = inv.cwd
    dynamic = False
    git_dir = inv.env.get("GIT_DIR") or None
    work_tree = inv.env.get("GIT_WORK_TREE") or None
    dynamic |= bool({"GIT_DIR", "GIT_WORK_TREE"} & inv.env_dynamic)
    config: list[tuple[str, str]] = []
    bare = False
    i = 1
    while i < len(argv):
        word, dyn = argv[i], flags[i]
        if not word.startswith("-") or word == "-":
            break
        name, eq, glued = word.partition("=")
        if name in _GIT_INFO_OPTS and not (name == "--exec-path" and eq):
            return _make(inv, None, i + 1, cwd, git_dir, work_tree, config, dynamic or dyn)
        if name in _GIT_VALUE_OPTS and not eq:
            if i + 1 >= len(argv):
                return _make(inv, None, i + 1, cwd, git_dir, work_tree, config, dynamic)
            value, vdyn = argv[i + 1], flags[i + 1]
            i += 2
        else:
            value, vdyn = glued, dyn
            i += 1
        dynamic |= vdyn
        if name == "-C" and value:
            cwd = None if vdyn else join_path(cwd, value)
        elif name == "--git-dir":
            git_dir = value
        elif name == "--work-tree":
            work_tree = value
        elif name == "-c":
            key, _, val = value.partition("=")
            if not vdyn and "." not in key:  # "key does not contain a section": git stops
                return _make(inv, None, i, cwd, git_dir, work_tree, config, dynamic)
            config.append((key, val))
        elif name == "--bare":
            bare = True
    if bare and git_dir is None:
        git_dir = "."
    git_dir = join_path(cwd, git_dir) if git_dir else None
    work_tree = join_path(cwd, work_tree) if work_tree else None
    if i >= len(argv):
        return _make(inv, None, i, cwd, git_dir, work_tree, config, dynamic)
    return _make(inv, argv[i], i + 1, cwd, git_dir, work_tree, config, dynamic or flags[i])


def _make(
    inv: Invocation, sub: str | None, start: int, cwd: str | None, git_dir: str | None,
    work_tree: str | None, config: list[tuple[str, str]], dynamic: bool,
) -> GitInvocation:  # fmt: skip
    args = inv.argv[start:]
    flags = inv.dynamic_args[start:]
    return GitInvocation(
        invocation=inv,
        subcommand=sub,
        args=args,
        args_dynamic=flags,
        cwd=cwd,
        git_dir=git_dir,
        work_tree=work_tree,
        config=tuple(config),
        dynamic=dynamic or any(flags) or inv.dynamic,
    )


def find_scope_of(inv: Invocation) -> FindScope | None:
    """What the ``find`` of ``inv`` selects (:class:`FindScope`), for the paths it prints to a
    pipe (``find ... | xargs rm``); None when ``inv`` is no find or a start is unknown."""
    from branchkeeper.shell.find import find_scope
    from branchkeeper.shell.words import Word

    if inv.name != "find":
        return None
    words = [Word(v, d) for v, d in zip(inv.argv, inv.dynamic_args, strict=False)]
    return find_scope(words, inv.cwd)


def git_invocations(parsed: ParsedCommand) -> tuple[GitInvocation, ...]:
    """Every git invocation of a parsed command, in source order (see `git_invocation`)."""
    found = (git_invocation(inv) for inv in parsed.invocations)
    return tuple(g for g in found if g is not None)
