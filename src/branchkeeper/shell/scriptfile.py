"""Reading a shell script a command runs by name (issue 17): ``./cleanup.sh``, ``bash
scripts/x.sh``, ``sh x.sh``, ``source x.sh``, ``. x.sh``. The walker judges its text as the
commands it is (:func:`branchkeeper.shell.walk.run_text`). Imported only for a command that
runs a script file, so the hook path stays lean.

Bounded: a script larger than :data:`MAX_SCRIPT_BYTES`, more than :data:`MAX_SCRIPTS` reads in
one command, or more than :data:`MAX_TOTAL_BYTES` read in all is not walked and the parse is
marked unread (its reason says why); so is a script that runs itself while it is being read
(the walker's nesting depth bounds the rest). The unread check looks for ``git`` and ``rm`` in
what was not walked: the first :data:`MAX_SCAN_BYTES` of a script too large to walk; a script
larger still, or one past the count or total, counts as naming them (it may). A file that
cannot be read, is not text, or (run by its path) is not executable or names an interpreter
other than a shell in its ``#!`` line is not read, without a reason: it runs as any other
program does.
"""

from __future__ import annotations

import os
import posixpath

#: The largest script read, in bytes.
MAX_SCRIPT_BYTES = 64 * 1024
#: The most script reads in one command, and the most bytes read in all.
MAX_SCRIPTS = 32
MAX_TOTAL_BYTES = 256 * 1024
#: How much of a script too large to walk is looked at for ``git`` and ``rm``.
MAX_SCAN_BYTES = 1024 * 1024
#: How much of a file is read first to tell a script from a program.
_HEAD_BYTES = 4096
#: What stands, for the unread check, for a script it cannot look at: it may run either.
_MAY_RUN_ANYTHING = "git rm"
#: What a ``#!`` line may name for the file to be a shell script (``env`` is followed to the
#: next word that is not an option).
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})


class Reads:
    """The scripts read during one parse: ``texts`` (every text read or looked at, in order,
    for the unread check's words) and ``stack`` (the paths being read now, outermost first)."""

    __slots__ = ("stack", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.stack: list[str] = []


def _shell_shebang(text: str) -> bool:
    """Whether a script run by its path runs in a shell: no ``#!`` line (the calling shell
    runs such a file itself), or one naming a shell, directly or through ``env``."""
    if not text.startswith("#!"):
        return True
    words = text[2:].split("\n", 1)[0].split()
    if words and posixpath.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and posixpath.basename(words[0]) in _SHELLS


def missing(path: str) -> bool:
    """Whether nothing is at ``path`` (absolute), so a command run by that path cannot start."""
    return not os.path.lexists(path)


def read_script(path: str | None, reads: Reads, *, by_path: bool) -> tuple[str | None, str]:
    """The text of the script at ``path`` (absolute; None when the directory is unknown) and
    why it was not walked when that makes the command unread: (text, "") when it is read,
    (None, reason) when a bound stops it (module docstring), (None, "") when it is not a
    script that can be read (it runs like any program). ``by_path``: run as ``./x.sh``, so it
    must be executable and a shell script by its ``#!`` line. Appends what the unread check
    must look at to ``reads.texts``."""
    if path is None:
        return None, ""
    if path in reads.stack:
        return None, f"a script runs itself ({path})"
    try:
        if not os.path.isfile(path) or (by_path and not os.access(path, os.X_OK)):
            return None, ""
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)  # a program (`/usr/bin/git`) shows itself here
            if b"\0" in head or (by_path and not _shell_shebang(
                    head.decode("utf-8", "replace"))):
                return None, ""
            size = os.fstat(f.fileno()).st_size
            if len(reads.texts) >= MAX_SCRIPTS or \
                    sum(map(len, reads.texts)) + min(size, MAX_SCRIPT_BYTES) > MAX_TOTAL_BYTES:
                reads.texts.append(_MAY_RUN_ANYTHING)
                return None, "more scripts than the guard reads in one command"
            limit = min(size, MAX_SCAN_BYTES) if size > MAX_SCRIPT_BYTES else MAX_SCRIPT_BYTES
            data = head + f.read(max(0, limit + 1 - len(head)))
        text = data.decode("utf-8", "replace" if size > MAX_SCRIPT_BYTES else "strict")
    except (OSError, UnicodeDecodeError):
        return None, ""
    if "\x00" in text:
        return None, ""
    if size > MAX_SCRIPT_BYTES:
        reads.texts.append(text if size <= MAX_SCAN_BYTES else _MAY_RUN_ANYTHING)
        return None, f"a script larger than {MAX_SCRIPT_BYTES} bytes ({path})"
    reads.texts.append(text)
    return text, ""
