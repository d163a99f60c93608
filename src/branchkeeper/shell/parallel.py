"""The command lines GNU ``parallel`` runs (spec section 3; issue 17): its command template
with every input source (``:::``, ``::::``, stdin) filled in, each line read as a shell command.

Pure: :func:`parallel_scripts` fills the :class:`~branchkeeper.shell.scope.Special` of a
parallel invocation.
"""

from __future__ import annotations

import itertools
import posixpath
import re

from branchkeeper.shell.pipetext import input_lines
from branchkeeper.shell.quoting import shell_quote
from branchkeeper.shell.scope import Inv, Special

# GNU parallel options that take the next word as their value (long ones also as `--opt=V`).
_PARALLEL_VALUE = frozenset({
    "-j", "-P", "--jobs", "--max-procs", "-I", "--replace", "-a", "--arg-file", "-d",
    "--delimiter", "-E", "-n", "--max-args", "-N", "--max-replace-args", "-L", "--max-lines",
    "-s", "--max-chars", "-C", "--colsep", "--header", "--timeout", "--delay", "--retries",
    "--halt", "--halt-on-error", "--memfree", "--load", "--nice", "--env", "--joblog",
    "--results", "--res", "--tmpdir", "--tempdir", "--tagstring", "--tag-string", "--termseq",
    "--limit", "--arg-sep", "--arg-file-sep", "--basefile", "--bf", "--return",
    "--transferfile", "--tf", "--sshdelay", "--block", "--block-size", "--blocksize", "--rpl",
    "-S", "--sshlogin", "--slf", "--sshloginfile", "--ssh", "--workdir", "--wd", "--filter",
    "--resume-failed", "--tmux", "--sqlmaster", "--sqlandworker", "--sqlworker", "--shellquote",
    "--compress-program", "--decompress-program", "--seqreplace", "--jobslot", "--ctag", "--ctagstring"})
#: Options that change how parallel reads its input into arguments (or take it from a file).
_PARALLEL_INPUT_OPTS = frozenset({
    "-0", "--null", "-d", "--delimiter", "-C", "--colsep", "--header", "-a", "--arg-file", "-N",
    "-n", "--max-args", "--max-replace-args", "-L", "--max-lines", "-l", "-X", "-m", "--xargs",
    "-E", "--eof", "--pipe", "--pipepart", "--trim", "--csv", "--sep"})
_PARALLEL_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})
_PARALLEL_MAX_JOBS = 32
_PARALLEL_RPL = re.compile(r"\{(\d*)(\.|/|//|/\.|#|%)?\}")
_INPUT = '"$__bk_unknown"'  # an argument the guard cannot know (stdin, a file)


def parallel_scripts(inv: Inv, special: Special) -> None:
    """GNU ``parallel CMD ::: ARGS`` (also ``::::`` files, stdin): the command lines it runs,
    each read as a shell command (parallel hands them to a shell): the words of CMD joined by
    spaces (each quoted with ``-q``), every replacement string (``{}``, ``{.}``, ``{/}``,
    ``{1}``..., or ``-I``'s) replaced by the quoted argument, which is appended when CMD has
    none. Arguments from stdin are its lines when a literal echo/printf feeds the pipe and no
    option changes how input is read; from stdin otherwise, or a file, they are unknown; no
    CMD runs each argument as a command; perl code (``{= =}``, ``--rpl``) cannot be read;
    ``--dry-run`` runs nothing."""
    words = [w.value for w in inv.words]
    i, replace, quote, workdir, pipe = 1, "{}", False, None, False
    seen: set[str] = set()
    while i < len(words) and words[i].startswith("-") and words[i] not in _PARALLEL_SEPARATORS:
        opt, eq, value = words[i].partition("=")
        seen.add(opt if opt.startswith("--") else opt[:2])
        if opt in ("--dry-run", "--dryrun"):
            return
        if opt in _PARALLEL_VALUE or (len(opt) > 2 and opt[:2] in _PARALLEL_VALUE
                                      and not opt.startswith("--")):
            if not eq and opt in _PARALLEL_VALUE:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            elif not eq:
                opt, value = opt[:2], opt[2:]
            if opt in ("-I", "--replace"):
                replace = value or "{}"
            elif opt == "--rpl":
                special.reason = "parallel defines a replacement string in perl code"
                return
            elif opt in ("--workdir", "--wd"):
                workdir = value
        elif opt in ("-q", "--quote"):
            quote = True
        elif opt in ("--pipe", "--pipepart"):
            pipe = True
        i += 1
    seps = [k for k in range(i, len(words)) if words[k] in _PARALLEL_SEPARATORS]
    template = words[i:seps[0] if seps else len(words)]
    if any(w.dynamic for w in inv.words[i:]) or "{=" in " ".join(template):
        special.reason = "parallel runs a command or perl code the guard cannot read"
        return
    groups: list[list[str]] = []
    for n, k in enumerate(seps):
        end = seps[n + 1] if n + 1 < len(seps) else len(words)
        values = words[k + 1:end]
        groups.append(values if words[k] in (":::", ":::+") else [_INPUT])
    if not groups:
        piped = None if pipe or seen & _PARALLEL_INPUT_OPTS else inv.piped_text()
        groups = [[] if pipe else [_INPUT] if piped is None else input_lines(piped)]
    if not template and any(v == _INPUT for g in groups for v in g):
        special.reason = "parallel runs commands it reads from its input"
        return
    prefix = f"cd -- {shell_quote(workdir)} && " if workdir not in (None, ".", "...") else ""
    for args in itertools.islice(itertools.product(*groups), _PARALLEL_MAX_JOBS):
        line = (" ".join(args) if not template else  # each argument is a command line
                _parallel_line(template, list(args), replace=replace, quote=quote, pipe=pipe))
        special.scripts.append((prefix + line, inv.forced_dynamic, False, None))


def _arg_text(arg: str, kind: str | None) -> str:
    """A parallel argument as a replacement string kind shows it (``{.}``, ``{/}``...)."""
    if arg == _INPUT:
        return arg
    value = {None: arg, ".": posixpath.splitext(arg)[0], "/": posixpath.basename(arg),
             "//": posixpath.dirname(arg),
             "/.": posixpath.splitext(posixpath.basename(arg))[0]}.get(kind, "1")
    return shell_quote(value)


def _parallel_line(template: list[str], args: list[str], *, replace: str, quote: bool,
                   pipe: bool) -> str:
    words = [shell_quote(w) for w in template] if quote else list(template)
    used = False

    def fill(word: str) -> str:
        nonlocal used
        if replace != "{}" and replace in word:
            used = True
            return word.replace(replace, _arg_text(args[0], None) if args else "")

        def one(m: re.Match[str]) -> str:
            nonlocal used
            used = True
            n = int(m.group(1)) - 1 if m.group(1) else 0
            if not args or n >= len(args):
                return m.group(0)
            return _arg_text(args[n], m.group(2))

        return _PARALLEL_RPL.sub(one, word) if replace == "{}" else word

    line = " ".join(fill(w) for w in words)
    if not used and not pipe:
        line += "".join(" " + _arg_text(a, None) for a in args)
    return line
