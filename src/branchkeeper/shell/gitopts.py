"""A small re-implementation of git's parse-options for the subcommands the guards read.

Follows parse-options.c: clustered short flags (`-dr`), a short option's value glued (`-bname`)
or in the next word, `--long=value` or `--long value` for required values, optional values only
when glued, unique-prefix abbreviation of long options, `--no-<long>` negation, `--` ending
options, and options mixed with operands. Pure; spec issue 5 section 2.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

# Value kinds: "" flag, "=" required, "?" optional (glued only), "^" required unless last
# (git's PARSE_OPT_LASTARG_DEFAULT, e.g. `branch --contains`).
_KINDS = "=?^"


class OptSpec(NamedTuple):
    """short char -> (key, kind) and long name -> (key, kind). A NamedTuple (hook path)."""

    short: dict[str, tuple[str, str]]
    long: dict[str, tuple[str, str]]


class Parsed:
    """Options in order as (key, value or None, dynamic); operands as (text, dynamic).

    `unknown` is True when a word looked like an option git would not accept (git would then
    exit without acting, but the guard cannot be sure what was meant). `after_dashdash` is the
    index in `operands` where `--` appeared, or None.

    Read-only by convention. A plain class, not a dataclass (hook path) nor a NamedTuple (its
    :meth:`count` would shadow ``tuple.count``).
    """

    __slots__ = ("after_dashdash", "operands", "options", "unknown")

    def __init__(self, options: tuple[tuple[str, str | None, bool], ...],
                 operands: tuple[tuple[str, bool], ...], unknown: bool,
                 after_dashdash: int | None) -> None:
        self.options = options
        self.operands = operands
        self.unknown = unknown
        self.after_dashdash = after_dashdash

    def has(self, *keys: str) -> bool:
        """True when any of `keys` was given (a later `--no-<key>` cancels an earlier one)."""
        state: dict[str, bool] = {}
        for key, _, _ in self.options:
            if key.startswith("no-") and key[3:] in keys:
                state[key[3:]] = False
            elif key in keys:
                state[key] = True
        return any(state.values())

    def count(self, *keys: str) -> int:
        """How many times any of `keys` was given (`-f -f`, `-ff`)."""
        return sum(1 for key, _, _ in self.options if key in keys)

    def values(self, *keys: str) -> list[tuple[str, str | None, bool]]:
        """The (key, value, dynamic) entries for `keys`, in order."""
        return [opt for opt in self.options if opt[0] in keys]

    @property
    def dynamic(self) -> bool:
        """True when any option value or operand came from an expansion."""
        return any(d for _, _, d in self.options) or any(d for _, d in self.operands)


@cache
def spec(text: str) -> OptSpec:
    """Build an OptSpec from `"s|long= |long-only x"`: `|` separates short and long names."""
    short: dict[str, tuple[str, str]] = {}
    long: dict[str, tuple[str, str]] = {}
    for item in text.split():
        kind = item[-1] if item[-1] in _KINDS else ""
        body = item[:-1] if kind else item
        s, _, name = body.partition("|") if "|" in body else (body, "", "")
        key = name or s
        if s:
            short[s] = (key, kind)
        if name:
            long[name] = (key, kind)
    for name, (key, _) in list(long.items()):
        if not name.startswith("no-"):
            long.setdefault("no-" + name, ("no-" + key, ""))
    return OptSpec(short, long)


def _long(specs: OptSpec, name: str) -> tuple[str, str] | None:
    if name in specs.long:
        return specs.long[name]
    matches = {v for k, v in specs.long.items() if k.startswith(name)}
    return matches.pop() if len(matches) == 1 else None


def parse(words: tuple[str, ...], dyn: tuple[bool, ...], specs: OptSpec) -> Parsed:
    """Parse `words` (with aligned `dyn` flags) against `specs`; never raises."""
    options: list[tuple[str, str | None, bool]] = []
    operands: list[tuple[str, bool]] = []
    unknown = False
    dashdash: int | None = None
    i = 0
    n = len(words)
    while i < n:
        word, d = words[i], dyn[i] if i < len(dyn) else False
        i += 1
        if dashdash is not None or not word.startswith("-") or word == "-":
            operands.append((word, d))
            continue
        if word == "--":
            dashdash = len(operands)
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            found = _long(specs, name)
            if found is None:
                unknown = True
                options.append((name, value if eq else None, d))
                continue
            key, kind = found
            if eq:
                options.append((key, value, d))
            elif kind == "=" or (kind == "^" and i < n):
                if i < n:
                    options.append((key, words[i], dyn[i] if i < len(dyn) else False))
                    i += 1
                else:
                    unknown = True
            else:
                options.append((key, None, d))
            continue
        cluster = word[1:]
        if cluster.isdigit():
            options.append(("number", cluster, d))
            continue
        j = 0
        while j < len(cluster):
            ch = cluster[j]
            j += 1
            if ch not in specs.short:
                unknown = True
                options.append((ch, None, d))
                continue
            key, kind = specs.short[ch]
            if kind in ("=", "^"):
                if j < len(cluster):
                    options.append((key, cluster[j:], d))
                elif i < n:
                    options.append((key, words[i], dyn[i] if i < len(dyn) else False))
                    i += 1
                elif kind == "^":
                    options.append((key, None, d))
                else:
                    unknown = True
                break
            if kind == "?" and j < len(cluster):
                options.append((key, cluster[j:], d))
                break
            options.append((key, None, d))
    return Parsed(tuple(options), tuple(operands), unknown, dashdash)
