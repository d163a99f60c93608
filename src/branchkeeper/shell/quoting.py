"""Shell quoting for every command branchkeeper prints (design guarantee 5).

`shell_quote` has `shlex.quote` semantics (single quotes, `'"'"'` for a quote inside), and also
quotes a word starting with `=` (zsh expands `=cmd`) or containing non-ASCII text. Quoting
makes a name one word of data; it cannot stop git from reading a name such as `-x` or
`--force` as an option. So callers of `git_cmd` put `--` before names (`git branch -D -- NAME`)
or pass full ref names (`refs/heads/NAME` to `update-ref`), never a bare name where an option
may stand.
"""

from __future__ import annotations

import re

_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")


def shell_quote(s: str) -> str:
    """One POSIX shell word that evaluates to exactly `s` in bash, sh and zsh.

    `s` must not contain NUL (no shell word can); raises ValueError if it does. A newline is
    kept inside single quotes, so the word survives `bash -c`.
    """
    if "\x00" in s:
        raise ValueError("a shell word cannot contain NUL")
    if s and _SAFE.match(s) and not s.startswith("="):
        return s
    return "'" + s.replace("'", "'\"'\"'") + "'"


def git_cmd(*argv: str) -> str:
    """`git` followed by `argv`, each quoted with `shell_quote`, joined by spaces.

    Example: `git_cmd("branch", "-D", "--", name)`. Put `--` or full ref names before
    user-controlled names (see the module docstring). Raises ValueError on NUL.
    """
    return " ".join(shell_quote(w) for w in ("git", *argv))
