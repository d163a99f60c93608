"""The shell commands that interpreter one-liners run (issue 17, section 1).

``python -c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r`` and awk programs can run
shell commands (``os.system``, ``execSync``, ``system``, backticks, awk's ``system()`` and
``|`` pipes) and delete files themselves (``shutil.rmtree``, ``fs.rmSync``,
``FileUtils.rm_rf``, ``unlink``). :func:`commands_in` reads the code and returns what it would
run, as shell command text the guard then reads like any other command: a command string as
written, a deletion as the ``rm`` it amounts to. A deletion of a path the code builds at run
time becomes an ``rm`` of an unknown target (``"$__bk_unknown"``); a command string built at
run time cannot be read, which :attr:`Reading.unread` says. Python code is read with
:mod:`ast`; the other languages by their literal call forms. Pure: no process, no file.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from branchkeeper.shell.model import interpreter_language as language
from branchkeeper.shell.quoting import shell_quote

#: A shell word that expands to something the guard cannot know (no environment defines it).
UNKNOWN = '"$__bk_unknown"'

__all__ = ["STDIN", "UNKNOWN", "Reading", "code_of", "commands_in", "language"]


class Reading(NamedTuple):
    """What one piece of interpreter code runs: ``commands`` (shell command text, in order) and
    ``unread``: why some command it runs cannot be read (None when all could)."""

    commands: tuple[str, ...]
    unread: str | None


# -- Python ----------------------------------------------------------------------------------
_PY_SHELL = frozenset({"system", "popen", "getoutput", "getstatusoutput"})
_PY_RUN = frozenset({"run", "call", "check_call", "check_output", "Popen", "spawn"})
_PY_EXEC = re.compile(r"exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?")
#: The ``rm`` a deletion by code amounts to: unlike the ``rm`` program, code removes ``/`` and
#: empties ``.`` when told to, which ``--no-preserve-root`` makes the guard judge
#: (:func:`branchkeeper.shell.model.rm_skips_dot`).
_RM_TREE = "rm -rf --no-preserve-root --"
_RM_FILE = "rm -f --no-preserve-root --"
_PY_DELETE = {"rmtree": _RM_TREE, "remove": _RM_FILE, "unlink": _RM_FILE,
              "rmdir": "rmdir --", "removedirs": "rmdir --"}


def _py_text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _py_argv(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple):
        words = [_py_text(e) for e in node.elts]
        return None if any(w is None for w in words) else [w for w in words if w is not None]
    return None


def _py_call(call: ast.Call, out: list[str], unread: list[str]) -> None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(
        func, ast.Name) else ""
    args = call.args
    if not name or not args:
        return
    first = args[0]
    if name in _PY_SHELL or name in _PY_RUN:
        text, argv = _py_text(first), _py_argv(first)
        if text is not None:
            out.append(text)
        elif argv:
            out.append(" ".join(shell_quote(w) for w in argv))
        else:
            unread.append(f"python code calls {name}() with a command built at run time")
    elif _PY_EXEC.fullmatch(name):
        argv = [w for w in (_py_text(a) for a in args[1:]) if w is not None]
        listed = _py_argv(args[1]) if len(args) > 1 else None
        words = listed if listed is not None else argv
        if words:
            out.append(" ".join(shell_quote(w) for w in words))
        else:
            unread.append(f"python code calls {name}() with a command built at run time")
    elif name in _PY_DELETE:
        path = _py_text(first)
        out.append(f"{_PY_DELETE[name]} {shell_quote(path) if path is not None else UNKNOWN}")


def _python(code: str, depth: int = 0) -> Reading:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _by_literals(code, "python")
    out: list[str] = []
    unread: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("exec", "eval") and node.args:
            inner = _py_text(node.args[0])
            if inner is not None and depth < 3:
                sub = _python(inner, depth + 1)
                out.extend(sub.commands)
                unread.extend([sub.unread] if sub.unread else [])
            elif inner is None:
                unread.append(f"python code calls {func.id}() on code built at run time")
            continue
        if isinstance(func, ast.Attribute) and func.attr in ("unlink", "rmdir") and not node.args:
            target = func.value  # pathlib: Path("x").unlink()
            if isinstance(target, ast.Call) and target.args:
                path = _py_text(target.args[0])
                verb = _RM_FILE if func.attr == "unlink" else "rmdir --"
                out.append(f"{verb} {shell_quote(path) if path is not None else UNKNOWN}")
            continue
        _py_call(node, out, unread)
    return Reading(tuple(out), "; ".join(dict.fromkeys(unread)) or None)


# -- The other languages: literal call forms ---------------------------------------------------
_STRING = r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
#: Calls whose first argument is a shell command, per language.
_SHELL_CALLS = {
    "node": r"(?:execSync|exec|execFileSync|execFile|spawnSync|spawn|fork)",
    "perl": r"(?:system|exec|qx|readpipe)",
    "ruby": r"(?:system|exec|spawn|popen|popen3|capture2e?|capture3|%x|Kernel\.`)",
    "php": r"(?:system|exec|shell_exec|passthru|popen|proc_open)",
    "awk": r"(?:system)",
}
#: Calls that delete their first argument: (pattern, the rm they amount to), per language.
_DELETE_CALLS = {
    "node": [(r"(?:rmSync|rm|rmdirSync|rmdir)", _RM_TREE), (r"(?:unlinkSync|unlink)", _RM_FILE)],
    "perl": [(r"(?:rmtree|remove_tree)", _RM_TREE), (r"unlink", _RM_FILE)],
    "ruby": [(r"(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)", _RM_TREE),
             (r"(?:rm_f|rm|delete|unlink|remove_file)", _RM_FILE)],
    "php": [(r"unlink", _RM_FILE)],
    "awk": [],
}
_LITERAL = re.compile(_STRING)


def _unescape(literal: str, lang: str) -> tuple[str, bool]:
    """A string literal's value and whether it interpolates (``${x}``, ``#{x}``, ``$x`` in a
    double-quoted perl/php string), which makes it unknowable."""
    body = literal[1:-1]
    if literal[0] == "`":  # a JavaScript template string; perl and ruby backticks run it
        return body, "${" in body
    dynamic = literal[0] == '"' and (
        ("#{" in body and lang == "ruby") or ("${" in body and lang in ("node", "perl", "php")) or
        (re.search(r"(?<!\\)\$[A-Za-z_{]", body) is not None and lang in ("perl", "php")))
    try:
        value = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        value = body
    return value, dynamic


def _arguments(rest: str, lang: str) -> list[str] | None:
    """The top-level arguments of a call whose text starts at ``rest`` (``(a, "b")`` or, in
    perl and ruby, without parentheses up to the end of the statement), as source text; None
    when none can be found."""
    m = re.match(r"\s*(\()?", rest)
    assert m is not None
    paren = m.group(1) is not None
    if not paren and (lang not in ("perl", "ruby") or not re.match(r"\s+[\"'`\[\w$]", rest)):
        return None
    i, depth, start, args = m.end(), 0, m.end(), []
    while i < len(rest):
        c = rest[i]
        if c in "\"'":
            lit = _LITERAL.match(rest, i)
            i = lit.end() if lit else len(rest)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                if paren and c == ")":
                    args.append(rest[start:i])
                    return [a.strip() for a in args if a.strip()]
                break
            depth -= 1
        elif c == "," and depth == 0:
            args.append(rest[start:i])
            start = i + 1
        elif c in ";\n" and depth == 0 and not paren:
            break
        i += 1
    if paren:
        return None
    args.append(rest[start:i])
    found = [a.strip() for a in args if a.strip()]
    return found or None


def _words(arg: str, lang: str) -> tuple[list[str], bool] | None:
    """A string literal or an array of them -> (values, dynamic); None for anything else."""
    if _LITERAL.fullmatch(arg):
        value, dynamic = _unescape(arg, lang)
        return [value], dynamic
    if arg.startswith(("[", "qw(")) and arg.endswith(("]", ")")):
        body = arg[1:-1] if arg.startswith("[") else arg[3:-1]
        if arg.startswith("qw("):
            return body.split(), False
        items = [x.strip() for x in body.split(",") if x.strip()]
        if all(_LITERAL.fullmatch(x) for x in items):
            pairs = [_unescape(x, lang) for x in items]
            return [v for v, _ in pairs], any(d for _, d in pairs)
    return None


def _shell_call(args: list[str], lang: str) -> str | None:
    """The command a shell-running call runs: one string (a shell command line), or a program
    and its arguments (strings or arrays); None when built at run time."""
    parts = [_words(a, lang) for a in args]
    if not parts or parts[0] is None:
        return None
    if len(parts) == 1 or all(p is None for p in parts[1:]):  # options objects etc. after
        values, dynamic = parts[0]
        if dynamic:
            return None
        return values[0] if len(values) == 1 else " ".join(shell_quote(v) for v in values)
    words: list[str] = []
    for p in parts:
        if p is None or p[1]:
            return None
        words.extend(p[0])
    return " ".join(shell_quote(w) for w in words)


def _by_literals(code: str, lang: str) -> Reading:
    out: list[str] = []
    unread: list[str] = []
    calls: list[tuple[str, str | None]] = [(_SHELL_CALLS.get(lang, r"(?:system|exec)"), None)]
    calls += [(p, verb) for p, verb in _DELETE_CALLS.get(lang, [])]
    literals = [(m.start(), m.end()) for m in _LITERAL.finditer(code)]
    for pattern, verb in calls:
        for m in re.finditer(r"(?<![\w$])" + pattern + r"(?![\w$])", code):
            if any(a <= m.start() < b for a, b in literals):
                continue  # inside a string: data, not a call
            args = _arguments(code[m.end():], lang)
            if args is None:
                continue  # a name, not a call
            if verb is not None:
                first = _words(args[0], lang)
                ok = first is not None and not first[1] and len(first[0]) == 1
                out.append(f"{verb} {shell_quote(first[0][0]) if ok and first else UNKNOWN}")
                continue
            text = _shell_call(args, lang)
            if text is None:
                unread.append(f"{lang} code runs a command built at run time")
            else:
                out.append(text)
    if lang in ("perl", "ruby"):
        for m in re.finditer(r"`([^`]*)`|qx\{([^}]*)\}|%x\(([^)]*)\)", code):
            text = next(g for g in m.groups() if g is not None)
            if re.search(r"#\{|\$[A-Za-z_{]", text):
                unread.append(f"{lang} code runs a command built at run time")
            else:
                out.append(text)
    if lang == "awk":
        _awk_pipes(code, out, unread)
    return Reading(tuple(out), "; ".join(dict.fromkeys(unread)) or None)


def _awk_pipes(code: str, out: list[str], unread: list[str]) -> None:
    """awk runs a shell command on either side of ``|``: ``"cmd" | getline`` and
    ``print ... | "cmd"`` (``|&`` in gawk)."""
    for m in re.finditer(r"(" + _STRING + r")\s*\|&?\s*getline|\|&?\s*(" + _STRING + ")", code):
        literal = m.group(1) or m.group(2)
        out.append(_unescape(literal, "awk")[0])
    if re.search(r"(?<![\"'\w])\w+\s*\|&?\s*getline|\|&?\s*(?!getline\b)(?![\"'\s])[\w$(]",
                 code):
        unread.append("awk code pipes to a command built at run time")


def commands_in(lang: str, code: str) -> Reading:
    """The shell commands that ``code`` in ``lang`` (see :func:`language`) runs."""
    return _python(code) if lang == "python" else _by_literals(code, lang)


# -- Where the code is -----------------------------------------------------------------------
#: Per language: options that take the code, and options whose value is the next word.
_CODE_OPTS = {"python": ("c",), "node": ("e", "p", "-eval", "-print"), "perl": ("e", "E"),
              "ruby": ("e",), "php": ("r",), "awk": ("-source", "e")}
_VALUE_OPTS = {
    "python": frozenset("WXm"), "node": frozenset({"r", "-require", "-import", "-input-type"}),
    "perl": frozenset(), "ruby": frozenset({"I", "r"}), "php": frozenset({"c", "d", "f"}),
    "awk": frozenset({"F", "v", "f", "W", "-file", "-assign", "-field-separator"}),
}
#: Short options whose value, if any, is attached (the rest of the word: ``-MFile::Path``).
_ATTACHED_OPTS = {"perl": frozenset("MmIixCdDV"), "ruby": frozenset("rIEKWxCFT")}


#: :func:`code_of`'s answer for an interpreter that reads its code from stdin.
STDIN = (-1, "")


def code_of(lang: str, words: list[str]) -> tuple[int, str] | None:
    """Where the code is in an interpreter's argv (``words[0]`` the interpreter): (index of the
    word holding it, the code); :data:`STDIN` when it reads its code from stdin (no script
    operand, or ``-``); None when it runs a script file or a module. For a clustered short
    option (``-we``, ``-Ic``) the code is the next word; attached (``-cCODE``,
    ``--eval=CODE``) it is the rest of the word."""
    codes, takes = _CODE_OPTS[lang], _VALUE_OPTS[lang]
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--" or not w.startswith("-") or w == "-":
            break
        if w.startswith("--"):
            name, eq, value = w[1:].partition("=")
            if name in codes:
                if eq:
                    return i, value
                return (i + 1, words[i + 1]) if i + 1 < len(words) else None
            if lang == "awk" and name == "-file":
                return None
            i += 1 if eq or name not in takes else 2
            continue
        step = 1
        for k, ch in enumerate(w[1:], start=1):
            rest = w[k + 1:]
            if ch in codes:
                if rest and not (lang == "node" and set(rest) <= set("pe")):
                    return i, rest
                return (i + 1, words[i + 1]) if i + 1 < len(words) else None
            if ch in takes or ch in _ATTACHED_OPTS.get(lang, ()):
                if (lang, ch) in (("awk", "f"), ("python", "m")):
                    return None  # the program is a file, or a module
                step = 1 if rest or ch not in takes else 2
                break
        i += step
    if i < len(words) and words[i] == "--":
        i += 1
    if lang == "awk":
        return (i, words[i]) if i < len(words) else None
    return STDIN if i >= len(words) or words[i] == "-" else None
