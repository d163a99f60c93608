"""Quote removal and expansion detection for tree-sitter-bash word nodes (spec section 3).

Pure functions over tree-sitter nodes (typed `Any` so this module never imports tree-sitter).
A word's value follows bash's quote removal; anything bash would expand at run time
(parameters, command substitution, arithmetic, globs, braces, unknown tildes) marks it dynamic,
and its value is then the raw text, useful only for messages.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol

_BRACKET = re.compile(r"\[[^\]\x00]+\]")
_BRACE = re.compile(r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}")
_DYNAMIC_NODES = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


class Word(NamedTuple):
    """One shell word after quote removal: `value`, and `dynamic` when bash would expand it.

    A NamedTuple, not a frozen dataclass: this module is on the hook path."""

    value: str
    dynamic: bool


def node_text(node: Any, src: bytes) -> str:
    """Source text of `node` (UTF-8, undecodable bytes replaced)."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _unquoted(text: str) -> tuple[str, str, bool]:
    """Unquoted word text -> (value, pattern text for brace detection, glob seen)."""
    out: list[str] = []
    pat: list[str] = []
    glob = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 < n:
                if text[i + 1] != "\n":  # backslash-newline is a line continuation
                    out.append(text[i + 1])
                    pat.append("\x00")
                i += 2
                continue
            out.append("\\")
            pat.append("\x00")
            i += 1
            continue
        if c in "*?":
            glob = True
        out.append(c)
        pat.append(c)
        i += 1
    return "".join(out), "".join(pat), glob


def unescape_double(text: str) -> str:
    """Body of a double-quoted string -> value (only \\ $ ` \" and newline are escapable)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _ansi_c(body: str) -> str:
    """Body of a `$'...'` string -> value, as bash decodes it (NUL ends the string)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
        elif e in "01234567":
            m = re.match(r"[0-7]{0,2}", body[i:])
            digits = e + (m.group(0) if m else "")
            i += len(digits) - 1
            out.append(_byte_char(int(digits, 8) & 0xFF))
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(f"[0-9a-fA-F]{{1,{width}}}", body[i:])
            if not m:
                out.append("\\" + e)
                continue
            i += len(m.group(0))
            code = int(m.group(0), 16)
            if e == "x":
                out.append(_byte_char(code))
            else:
                out.append(chr(code) if code <= 0x10FFFF and not 0xD800 <= code < 0xE000 else "?")
        elif e == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    value = "".join(out)
    return value.split("\x00", 1)[0]


def _byte_char(b: int) -> str:
    # A raw byte above 0x7f is not a character; keep it as a surrogate escape like os.fsdecode.
    return chr(b) if b < 0x80 else chr(0xDC00 + b)


class Variables(Protocol):
    """What a word's expansions may read: the home directory ``~`` stands for (None:
    unknown) and the value of a variable (None: unknown)."""

    home: str | None
    splits: bool

    def lookup(self, name: str) -> str | None: ...

    def arguments(self) -> tuple[Word, ...] | None: ...


class _NoVariables:
    __slots__ = ("home", "splits")

    def __init__(self, home: str | None) -> None:
        self.home = home
        self.splits = True

    def lookup(self, name: str) -> str | None:
        return None

    def arguments(self) -> tuple[Word, ...] | None:
        return None


#: Characters that make an unquoted expansion's value split into words or expand as a glob.
_SPLITS = frozenset(" \t\n*?[")


def word_value(node: Any, src: bytes, *, home: str | None = None,
               variables: Variables | None = None) -> Word:
    """Evaluate one word node (word, string, raw_string, concatenation, expansion, ...).

    Returns the value after quote removal and whether bash would expand it at run time.
    A leading `~` or `~/` resolves against the home directory (``variables.home``, else
    ``home``) when known; otherwise it is dynamic. ``$NAME`` and ``${NAME}`` take the value
    ``variables.lookup`` gives; an unknown variable, any other expansion, and an unquoted
    value that would split into words or expand as a glob are dynamic.
    """
    vars_ = variables if variables is not None else _NoVariables(home)
    parts: list[tuple[str, str, bool]] = []  # (value, brace-pattern text, dynamic)
    _collect(node, src, parts, vars_, quoted=False)
    value = "".join(p[0] for p in parts)
    dynamic = any(p[2] for p in parts)
    pattern = "".join(p[1] for p in parts)
    if _BRACE.search(pattern) or _BRACKET.search(pattern):
        dynamic = True
    first = node.children[0] if node.type == "concatenation" and node.children else node
    if first.type == "word" and parts and parts[0][1].startswith("~"):
        head, sep, rest = value.partition("/")
        home = vars_.home
        if head == "~" and home is not None:
            value = home.rstrip("/") + "/" + rest if sep else home
        else:
            dynamic = True
    return Word(value, dynamic)


def _variable(node: Any, src: bytes, variables: Variables, *, quoted: bool
              ) -> tuple[str, str, bool]:
    """``$NAME`` / ``${NAME}``: its value when known (and, unquoted, when it would neither
    split into words nor glob), else the raw text, dynamic."""
    text = node_text(node, src)
    named = node.named_children
    if len(named) == 1 and (named[0].type == "variable_name" or (
            named[0].type == "special_variable_name" and node_text(named[0], src) in "*#")) and (
            node.type == "simple_expansion" or len(node.children) == 3):
        value = variables.lookup(node_text(named[0], src))
        if value is not None and (quoted or (value and _SPLITS.isdisjoint(value))):
            return value, "\x00" * len(value), False
    value = _with_default(node, src, variables)
    if value is not None and (quoted or (value and _SPLITS.isdisjoint(value))):
        return value, "\x00" * len(value), False
    return text, "\x00", True


#: What a literal default of ``${NAME:-WORD}`` may not hold (quotes, escapes, expansions).
_NOT_LITERAL = frozenset("$`\\'\"{}")


def _with_default(node: Any, src: bytes, variables: Variables) -> str | None:
    """``${NAME:-WORD}`` with a literal WORD (or none): NAME's value when it is known and not
    empty, WORD when NAME is known to be empty or unset, else None (unknown)."""
    kids = node.children
    if node.type != "expansion" or len(kids) not in (4, 5) or kids[1].type != "variable_name" \
            or kids[2].type != ":-" or kids[-1].type != "}":
        return None
    value = variables.lookup(node_text(kids[1], src))
    if value is None or value:
        return value
    if len(kids) == 4:
        return ""
    default = node_text(kids[3], src)
    if kids[3].type != "word" or not _NOT_LITERAL.isdisjoint(default):
        return None
    return default


_BLANKS = re.compile(r"[ \t\n]+")
_GLOBS = frozenset("*?[")


def word_fields(node: Any, src: bytes, *, variables: Variables) -> list[Word]:
    """The words bash makes of one word node: an unquoted ``$NAME``, ``${NAME}``, ``$*`` or
    ``$@`` whose value is known splits at blanks into fields (none when it is empty), and
    ``"$@"`` is one word per positional parameter; any other node is one word
    (:func:`word_value`). A value that would glob, a changed ``IFS`` (the value is then
    unknown) or a shell that does not split (zsh) leaves one unknown word."""
    t = node.type
    if t == "string" and node_text(node, src) in ('"$@"', '"${@}"'):
        args = variables.arguments()
        if args is not None:
            return list(args)
    elif t in ("simple_expansion", "expansion") and variables.splits:
        named = node.named_children
        if len(named) == 1 and (t == "simple_expansion" or len(node.children) == 3):
            kind, name = named[0].type, node_text(named[0], src)
            value: str | None = None
            if kind == "special_variable_name" and name in ("@", "*"):
                args = variables.arguments()
                if args is not None and not any(w.dynamic for w in args):
                    value = " ".join(w.value for w in args)
            elif kind == "variable_name":
                value = variables.lookup(name)
            if value is not None and _GLOBS.isdisjoint(value):
                return [Word(f, False) for f in _BLANKS.split(value) if f]
    return [word_value(node, src, variables=variables)]


def _collect(node: Any, src: bytes, parts: list[tuple[str, str, bool]], variables: Variables,
             *, quoted: bool) -> None:
    t = node.type
    text = node_text(node, src)
    if t in ("word", "number", "variable_name"):
        value, pat, glob = _unquoted(text)
        parts.append((value, pat, glob))
    elif t == "raw_string":
        parts.append((text[1:-1], "\x00", False))
    elif t == "ansi_c_string":
        parts.append((_ansi_c(text[2:-1]), "\x00", False))
    elif t in ("string", "translated_string"):
        _collect_string(node, src, parts, variables)
    elif t == "concatenation":
        pos = node.start_byte
        for child in node.children:
            if child.start_byte > pos:  # text tree-sitter left outside any child
                gap = src[pos : child.start_byte].decode("utf-8", "replace")
                parts.append(_unquoted(gap))
            if child.is_named:
                _collect(child, src, parts, variables, quoted=quoted)
            else:
                parts.append(_unquoted(node_text(child, src)))
            pos = child.end_byte
    elif t in ("simple_expansion", "expansion"):
        parts.append(_variable(node, src, variables, quoted=quoted))
    elif t in _DYNAMIC_NODES:
        parts.append((text, "\x00", True))
    else:
        # Anything unfamiliar (extglob, regex, ERROR...) is treated as unknowable.
        parts.append((text, "\x00", True))


def _collect_string(node: Any, src: bytes, parts: list[tuple[str, str, bool]],
                    variables: Variables) -> None:
    """A double-quoted string: its text (escapes as bash reads them) and its expansions."""
    text = node_text(node, src)
    start = text.find('"')
    if start < 0 or not text.endswith('"') or len(text) < start + 2:
        parts.append((unescape_double(text), "\x00", True))
        return
    pos = node.start_byte + start + 1
    end = node.end_byte - 1
    for child in node.children:
        if child.start_byte < pos or child.end_byte > end:
            continue  # the quotes (and a translated string's `$`)
        if child.start_byte > pos:
            gap = src[pos:child.start_byte].decode("utf-8", "replace")
            parts.append((unescape_double(gap), "\x00", False))
        if child.type == "string_content":
            parts.append((unescape_double(node_text(child, src)), "\x00", False))
        elif child.type in ("simple_expansion", "expansion"):
            parts.append(_variable(child, src, variables, quoted=True))
        else:
            parts.append((node_text(child, src), "\x00", True))
        pos = child.end_byte
    if end > pos:
        parts.append((unescape_double(src[pos:end].decode("utf-8", "replace")), "\x00", False))


def parse_redirect_op(node: Any, src: bytes) -> tuple[str, int | None, Any | None]:
    """A file/heredoc/herestring redirect node -> (operator, explicit fd, destination node)."""
    op = ""
    fd: int | None = None
    dest: Any | None = None
    for child in node.children:
        if child.type == "file_descriptor":
            txt = node_text(child, src)
            fd = int(txt) if txt.isdigit() and len(txt) < 6 else None
        elif not child.is_named and not op:
            op = child.type
        elif child.is_named and dest is None and child.type not in ("heredoc_start",):
            dest = child
    dest = node.child_by_field_name("destination") or dest
    return op, fd, dest
