"""Whether a shell refuses a one-line command before running any of it (issue 17, section 2).

A shell reads a whole line before it runs the first command on it, so a line with a syntax
error runs nothing: ``git reset --hard 'unterminated`` and ``&& git reset --hard`` lose
nothing. Only two kinds of error count, because every shell an agent's host may use (bash,
zsh, sh, fish) refuses them alike: a line that begins with a control operator, and a quote or
substitution left open at the end of the line (asked of ``bash -n``, which reads without
running; other syntax bash refuses may be valid zsh). Loaded only for a command the parser
could not read in full.
"""

from __future__ import annotations

import shutil
import subprocess

#: Control operators a command line cannot begin with.
_LEADING = ("&&", "||", "|&", "|", ";;", ";", "&")
#: What ``bash -n`` says of a quote or substitution left open at the end of the input.
_OPEN = "unexpected EOF while looking for matching"
#: Longest ``bash -n`` may take, seconds.
_TIMEOUT_S = 2.0


def refused_line(text: str) -> str | None:
    """Why every shell refuses the one-line command ``text`` without running any of it, or
    None (more than one line, no such error, or no ``bash`` to ask). At most one ``bash -n``
    process, only when the line does not begin with a control operator."""
    if "\n" in text or "\r" in text:
        return None  # the lines before the one in error run
    stripped = text.lstrip(" \t")
    if stripped.startswith(_LEADING) and not stripped.startswith("&>"):  # `&>FILE`: a redirect
        return "the line begins with a control operator"
    bash = shutil.which("bash")
    if bash is None:
        return None
    try:
        res = subprocess.run([bash, "--norc", "--noprofile", "-n", "-c", text],
                             stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if res.returncode != 0 and _OPEN in res.stderr.decode("utf-8", "replace"):
        return "a quote or substitution is left open at the end of the line"
    return None
