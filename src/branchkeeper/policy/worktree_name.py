"""Which names the WorktreeCreate route can use (``R-WORKTREE-NAME``; docs/guard.md).

A WorktreeCreate ``name`` becomes the directory ``.claude/worktrees/<name>`` and the branch
``worktree-<name>`` (Claude Code's layout). :func:`worktree_name_decision` is the one function
that says whether a name can be used, for the hook and for ``branchkeeper check --creation``
alike, and when not, the real reason: git's ``check-ref-format`` rules for the branch (no
``..``, no component ending in ``.lock`` or ``.``), the path rules for one directory name (not
``.`` or ``..``, no leading ``-`` that commands read as an option, no hidden leading ``.``,
short enough for a file name), and the characters allowed. Pure; no git process.
"""

from __future__ import annotations

from branchkeeper.policy.decision import ALLOW, Decision, Verdict

R_WORKTREE_NAME = "R-WORKTREE-NAME"
#: Longest name (characters): ``worktree-<name>`` is a file name under ``refs/heads/``, and
#: file systems allow 255 bytes for one.
MAX_NAME = 100
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a worktree name (one clause, for a message), or None."""
    if not name:
        return "it is empty"
    if len(name) > MAX_NAME:
        return (f"it is {len(name)} characters long; at most {MAX_NAME} fit (the branch "
                f"worktree-<name> is a file name under .git/refs/heads/)")
    bad = sorted({c for c in name if c not in _ALLOWED})
    if bad:
        shown = ", ".join(repr(c) for c in bad[:5])
        return f"it holds {shown}: use letters, digits, '.', '_' and '-' only"
    if name in (".", ".."):
        return f"{name!r} names a directory that exists already (this one or its parent)"
    if name.startswith("-"):
        return "it begins with '-', which commands given the path read as an option"
    if name.startswith("."):
        return "it begins with '.', which would make the worktree a hidden directory"
    if ".." in name:
        return "it holds '..', which git does not allow in a branch name (check-ref-format)"
    if name.endswith(".lock"):
        return "it ends with '.lock', which git does not allow in a branch name (check-ref-format)"
    if name.endswith("."):
        return "it ends with '.', which git does not allow in a branch name (check-ref-format)"
    return None


def worktree_name_decision(name: str) -> Decision:
    """ALLOW when ``name`` can be used for ``.claude/worktrees/<name>`` and the branch
    ``worktree-<name>``; otherwise DENY saying why (:func:`name_problem`)."""
    why = name_problem(name)
    if why is None:
        return ALLOW
    return Decision(
        Verdict.DENY, R_WORKTREE_NAME,
        f"The worktree name {name[:200]!r} cannot be used: {why}.",
        "Choose a name of letters, digits, '.', '_' and '-' that begins with a letter, a digit "
        f"or '_' and is at most {MAX_NAME} characters long.")
