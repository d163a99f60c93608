"""Where a git invocation writes a patch of work: the evacuation half of the evacuate-then-
destroy shape (spec section 13).

A pure function of a `GitInvocation` (see `parse.git_invocations`): `git diff`, `show`,
`format-patch` and `stash show -p` with their outputs (redirects, `--output=`, `-o DIR`, `tee`
down a pipe). Whether what follows destroys the source is decided in policy. The record is a
NamedTuple, not a frozen dataclass: the hook imports this module.
"""

from __future__ import annotations

from typing import NamedTuple

from branchkeeper.shell import gitopts
from branchkeeper.shell.model import NON_FILE_SINKS, GitInvocation, Invocation, join_path

# Diff-family options that take the next word; the rest are treated as flags.
_DIFF_COMMON = (
    "|output= O= S= G= I= |diff-filter= |src-prefix= |dst-prefix= |line-prefix= "
    "|find-object= |anchored= |word-diff-regex= |cached |staged p|patch u s|no-patch "
    "|no-index |stdout o|output-directory= |subject-prefix= v|reroll-count= |to= |cc= "
    "|in-reply-to= |suffix= |base= |interdiff= |range-diff= |signature-file= "
    "|description-file= |format= |pretty? |start-number= |include-untracked |only-untracked"
)
_DIFF = gitopts.spec(_DIFF_COMMON)


class Evacuation(NamedTuple):
    """A command that writes a worktree's or branch's changes to files (section 13).

    `kind`: `diff`, `diff_cached`, `format_patch`, `stash_show`, `show`. `outputs` are absolute
    paths (raw text when from an expansion or unresolvable, with `dynamic` True);
    `source_cwd` the worktree read (work tree or effective cwd); `source_rev` the first
    revision-like operand, if any.
    """

    kind: str
    outputs: tuple[str, ...]
    source_cwd: str | None
    source_rev: str | None
    dynamic: bool


def evacuation(g: GitInvocation) -> Evacuation | None:
    """Where this invocation writes a patch of work, or None (spec section 13).

    Outputs come from stdout redirects, `--output=`, `format-patch -o DIR` (or the cwd when
    format-patch writes files without `--stdout`), and files of `tee` or redirects further
    down a pipe. `/dev/null` and similar sinks are not outputs.
    """
    sub, args, dyn = g.subcommand, g.args, g.args_dynamic
    if sub == "stash":
        if args[:1] != ("show",):
            return None
        p = gitopts.parse(args[1:], dyn[1:], _DIFF)
        show_patch = any(k == "stash.showpatch" and v == "true" for k, v in _lower(g.config))
        if not (p.has("patch") or show_patch):
            return None
        kind = "stash_show"
    elif sub in ("diff", "format-patch", "show"):
        p = gitopts.parse(args, dyn, _DIFF)
        kind = {"diff": "diff", "format-patch": "format_patch", "show": "show"}[sub]
        if kind == "diff" and p.has("cached", "staged"):
            kind = "diff_cached"
    else:
        return None
    outputs: list[tuple[str, bool]] = []
    for _, value, vdyn in p.values("output"):
        if value is not None:
            outputs.append(_out(g.cwd, value, vdyn))
    if kind == "format_patch":
        dirs = p.values("output-directory")
        for _, value, vdyn in dirs:
            if value is not None:
                outputs.append(_out(g.cwd, value, vdyn))
        if p.has("stdout"):
            outputs.extend(_stdout_sinks(g.invocation))
        elif not dirs and not p.values("output"):
            outputs.append((g.cwd or ".", g.cwd is None))  # patch files land in the cwd
    else:
        outputs.extend(_stdout_sinks(g.invocation))
    outputs = [(o, d) for o, d in outputs if o not in NON_FILE_SINKS]
    if not outputs:
        return None
    ops = p.operands[: p.after_dashdash] if p.after_dashdash is not None else p.operands
    rev = ops[0][0] if ops else ("stash@{0}" if kind == "stash_show" else None)
    return Evacuation(kind, tuple(dict.fromkeys(o for o, _ in outputs)), g.work_tree or g.cwd,
                      rev, g.dynamic or any(d for _, d in outputs))  # fmt: skip


def _lower(config: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    return [(k.lower(), v.lower()) for k, v in config]


def _out(cwd: str | None, target: str, dynamic: bool) -> tuple[str, bool]:
    path = None if dynamic else join_path(cwd, target)
    return (path, False) if path is not None else (target, True)


def _stdout_sinks(inv: Invocation) -> list[tuple[str, bool]]:
    """Files that receive `inv`'s stdout: its redirects, then tee/redirects down the pipe."""
    found: list[tuple[str, bool]] = []
    seen: set[int] = set()
    todo = [inv]
    first = True
    while todo:
        cur = todo.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        for r in cur.redirects:
            if r.writes_stdout:
                found.append((r.path, False) if r.path else (r.target, True))
        if not first and cur.name == "tee":
            files = [(w, d) for w, d in zip(cur.argv[1:], cur.dynamic_args[1:], strict=False)
                     if not w.startswith("-") or w == "-"]  # fmt: skip
            found.extend(_out(cur.cwd, w, d) for w, d in files if w != "-")
        first = False
        todo.extend(cur.downstream)
    return found
