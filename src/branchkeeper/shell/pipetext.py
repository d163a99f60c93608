"""What a literal ``echo`` or ``printf`` writes down a pipe, and how ``xargs`` splits such
text into arguments (issue 17: ``echo 'rm -rf x' | sh``, ``printf '%s\\n' x | xargs rm``).

Pure text functions; each returns None where the output or the split cannot be known exactly
(an escape or conversion it does not read, quotes xargs would interpret), and the caller then
treats the input as unknown.
"""

from __future__ import annotations

import re

_ECHO_OPT = re.compile(r"-[neE]+\Z")
_PRINTF_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "a": "\a",
                   "b": "\b", "f": "\f", "r": "\r", "v": "\v"}
_PRINTF_PART = re.compile(r"%%|%[sb]|%|\\.?|[^%\\]+", re.S)


def output_of(argv: tuple[str, ...]) -> str | None:
    """What ``echo ARGS`` or ``printf FORMAT ARGS`` (bash's builtins) writes to stdout, or None
    when it cannot be told: an ``echo`` argument with a backslash (``-e`` and other shells
    read escapes), a ``printf`` option, or an escape or conversion other than ``\\n``-style
    escapes, ``%s``, ``%b`` (of an argument without a backslash) and ``%%``."""
    if not argv:
        return None
    if argv[0] == "echo":
        args = list(argv[1:])
        newline = True
        while args and _ECHO_OPT.match(args[0]):
            newline = newline and "n" not in args[0]
            args.pop(0)
        if any("\\" in a for a in args):
            return None
        return " ".join(args) + ("\n" if newline else "")
    if argv[0] == "printf" and len(argv) > 1:
        fmt, args = argv[1], list(argv[2:])
        if fmt == "--" and len(argv) > 2:
            fmt, args = argv[2], list(argv[3:])
        elif fmt.startswith("-"):
            return None  # -v VAR writes nothing to stdout
        return _printf(fmt, args)
    return None


def _printf(fmt: str, args: list[str]) -> str | None:
    parts = _PRINTF_PART.findall(fmt)
    if not any(p in ("%s", "%b") for p in parts):
        args = []  # the format is written once
    out: list[str] = []
    while True:
        for p in parts:
            if p == "%%":
                out.append("%")
            elif p in ("%s", "%b"):
                arg = args.pop(0) if args else ""
                if p == "%b" and "\\" in arg:
                    return None
                out.append(arg)
            elif p.startswith("%"):
                return None
            elif p.startswith("\\"):
                if p[1:] not in _PRINTF_ESCAPES:
                    return None
                out.append(_PRINTF_ESCAPES[p[1:]])
            else:
                out.append(p)
        if not args:
            return "".join(out)


def xargs_items(text: str, *, lines: bool) -> list[str] | None:
    """The input items GNU xargs reads from ``text``: blank-separated words, or (``lines``,
    for ``-I``) whole lines with leading blanks removed; None when it holds a quote or a
    backslash (xargs would interpret them), a NUL, or (``lines``) a blank line."""
    if any(c in text for c in "'\"\\\x00"):
        return None
    if lines:
        found = text.removesuffix("\n").split("\n") if text else []
        if any(not line.strip(" \t") for line in found):
            return None
        return [line.lstrip(" \t") for line in found]
    return text.split()


def input_lines(text: str) -> list[str]:
    """The lines GNU parallel reads as arguments from ``text``: each line (an empty one is an
    empty argument), the last newline ending the last line."""
    return text.removesuffix("\n").split("\n") if text else []
