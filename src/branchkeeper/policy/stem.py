"""The duplicate-stem rule's name helpers (first document, section 3, "Duplicate-stem rule").

Pure string functions: :func:`stem` and :func:`number_tokens`.
"""

from __future__ import annotations

import re

_SUFFIX = re.compile(
    r"[-_](\d{1,2}|r\d+|v\d+|orig|old|new|retry\d*|again|redo|copy|bak|backup|[0-9a-f]{8})\Z")
_HASH = re.compile(r"[-_][0-9a-f]{8}\Z")
_DIGITS = re.compile(r"(?<![0-9])([0-9]{2,5})(?![0-9])")
_ISSUE = re.compile(r"(?:^|[^a-z0-9])(?:issue|gh)[-_]?([0-9]{1,7})(?![0-9])")


def _strip_prefix(name: str, remote: str) -> str:
    low = name.lower()
    for prefix in ("worktree-", "agent-", f"{remote.lower()}/"):
        if low.startswith(prefix):
            return low[len(prefix):]
    return low


def stem(name: str, *, remote: str = "origin") -> str:
    """Lower-case; strip one leading ``worktree-``, ``agent-`` or ``<remote>/``; then strip
    trailing ``[-_](\\d{1,2}|r\\d+|v\\d+|orig|old|new|retry\\d*|again|redo|copy|bak|backup|
    [0-9a-f]{8})`` suffixes while one matches. ``stem("agent-Fix-Login-v2-old") == "fix-login"``.
    """
    s = _strip_prefix(name, remote)
    while True:
        m = _SUFFIX.search(s)
        if m is None or m.start() == 0:
            return s
        s = s[: m.start()]


def number_tokens(name: str, *, remote: str = "origin") -> frozenset[str]:
    """Every 2-5 digit token of the name plus the N of ``issue-N``/``gh-N`` (leading zeros
    dropped), ignoring a ``worktree_create`` 8-hex suffix. ``number_tokens("fix-0152-x") ==
    {"152"}``."""
    s = _strip_prefix(name, remote)
    m = _HASH.search(s)
    if m is not None and m.start() > 0:
        s = s[: m.start()]
    found = {t.lstrip("0") or "0" for t in _DIGITS.findall(s)}
    found |= {t.lstrip("0") or "0" for t in _ISSUE.findall(s)}
    return frozenset(found)
