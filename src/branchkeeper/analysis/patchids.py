"""Batched patch-ids: one ``diff-tree --stdin | patch-id --stable`` pipeline for many diffs.

The user's diff settings never change a patch-id here (field case C09): plumbing ``diff-tree``
ignores the porcelain ``diff.*`` settings, and the options that could still change the text are
pinned on the command line. Binary changes are hashed in full (``--binary``), so two different
binary edits of one path never share a patch-id. Where git has it, ``patch-id --verbatim`` keeps
whitespace in the hash (see :func:`branchkeeper.git.repo.patch_id_mode`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from branchkeeper.git.repo import patch_id_mode
from branchkeeper.git.run import run_git, run_git_pipeline
from branchkeeper.git.types import Oid

#: Options pinned on every diff whose text is hashed or counted (STYLE.md: neutralise settings).
_PINNED = (
    "-c", "core.quotePath=false",
    "-c", "diff.context=3",
    "-c", "diff.interHunkContext=0",
    "-c", "diff.algorithm=myers",
    "-c", "diff.indentHeuristic=true",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.relative=false",
)
_DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-U3",
              "--full-index", "--binary", "--diff-algorithm=myers", "--no-relative")


def commit_patch_ids(root: Path, commits: Iterable[Oid], *, timeout: float = 300) -> dict[Oid, str]:
    """Patch-id of each commit against its first parent, for non-merge commits.

    Returns ``{commit: patch_id}``; a commit with an empty diff or a merge commit is absent
    (it has no patch). One pipeline of two git processes. Raises :class:`GitError`.
    """
    todo = sorted(set(commits))
    if not todo:
        return {}
    return _patch_ids(root, ("\n".join(todo) + "\n").encode(), timeout)


def _patch_ids(root: Path, stdin: bytes, timeout: float) -> dict[Oid, str]:
    """``diff-tree --stdin -p | patch-id --<mode>`` over ``stdin`` lines -> {commit: pid}."""
    out = run_git_pipeline(
        [*_PINNED, "diff-tree", "--stdin", "-p", "-r", *_DIFF_OPTS],
        ["patch-id", f"--{patch_id_mode()}"],
        cwd=root, stdin=stdin, timeout=timeout,
    ).stdout
    result: dict[Oid, str] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            result[Oid(parts[1])] = parts[0]
    return result


def range_patch_ids(root: Path, pairs: Iterable[tuple[Oid, Oid]], *,
                    timeout: float = 300) -> dict[Oid, str]:
    """Patch-id of the whole diff ``base..tip`` for each ``(base, tip)`` pair, keyed by tip.

    Feeds ``<tip> <base>`` lines to ``diff-tree --stdin`` (a commit with an explicit parent).
    Each tip must appear once. A pair with an empty diff is absent from the result.
    """
    items = sorted(set(pairs), key=lambda p: p[1])
    if not items:
        return {}
    return _patch_ids(root, "".join(f"{tip} {base}\n" for base, tip in items).encode(),
                      timeout)


def range_line_counts(root: Path, pairs: Iterable[tuple[Oid, Oid]], *,
                      timeout: float = 300) -> dict[Oid, int]:
    """Lines added plus deleted in ``base..tip`` for each ``(base, tip)`` pair, keyed by tip.

    One ``diff-tree --stdin --numstat -z`` process; binary files count 0 lines.
    """
    items = sorted(set(pairs), key=lambda p: p[1])
    if not items:
        return {}
    stdin = "".join(f"{tip} {base}\n" for base, tip in items).encode()
    out = run_git(
        [*_PINNED, "diff-tree", "--stdin", "--numstat", "-z", "-r", "--no-renames"],
        cwd=root, stdin=stdin, timeout=timeout,
    ).stdout
    result: dict[Oid, int] = {tip: 0 for _, tip in items}
    current: Oid | None = None
    for field in out.split(b"\0"):
        text = field.decode("utf-8", "surrogateescape")
        if len(text) in (40, 64) and all(ch in "0123456789abcdef" for ch in text):
            current = Oid(text)
            continue
        if current is None or "\t" not in text:
            continue
        added, _, rest = text.partition("\t")
        deleted, _, _ = rest.partition("\t")
        if added.isdigit() and deleted.isdigit():
            result[current] = result.get(current, 0) + int(added) + int(deleted)
    return result
