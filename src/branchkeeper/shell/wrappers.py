"""Commands that run other commands or change the shell's state (spec section 3).

Strips wrapper prefixes (`env`, `sudo`, `command`, `exec`, `nohup`, `time`, `nice`, `timeout`,
`stdbuf`, `xargs`), follows `cd`/`pushd`/`popd`, and finds the scripts that `bash -c`, a shell
fed a heredoc, and `eval` run; `find -exec` commands are read by :mod:`find` and GNU
`parallel` by :mod:`parallel` (each imported only for such a command). Pure: it mutates only
the builders and the scope handed to it.
"""

from __future__ import annotations

import posixpath
import re

from branchkeeper.shell.model import interpreter_language
from branchkeeper.shell.scope import SHELL_ONLY_BUILTINS, Inv, Scope, Special, resolve
from branchkeeper.shell.words import Word

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "fish"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STDIN_OPS = frozenset({"<<", "<<-", "<<<"})
# Options that consume the next word, per wrapper (short forms; long ones use `=` or listed).
_ARG_OPTS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-h", "--user",
                       "--group", "--prompt", "--chdir", "--role", "--type", "--other-user",
                       "--close-from", "--command-timeout", "--host"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "exec": frozenset({"-a"}),
    # --eof, --replace and --max-lines take a value only as `--opt=VALUE`
    "xargs": frozenset({"-a", "-E", "-I", "-L", "-n", "-P", "-s", "-d", "--arg-file",
                        "--max-args", "--max-procs", "--max-chars", "--delimiter",
                        "--process-slot-var"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "-n", "--class", "--classdata"}),
    "taskset": frozenset(),  # then the CPU mask or list, a positional
    "flock": frozenset({"-w", "-E", "--timeout", "--wait", "--conflict-exit-code"}),  # then a file
    "chronic": frozenset(),
    "unbuffer": frozenset(),
    "strace": frozenset({"-e", "-o", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P"}),
    "ltrace": frozenset({"-e", "-o", "-s", "-u", "-a", "-n", "-A", "-D", "-F", "-l", "-x"}),
    "watch": frozenset({"-n", "-d", "--interval", "--differences", "-q", "--equexit"}),
}  # fmt: skip
_WRAPPERS = frozenset({*_ARG_OPTS, "command", "builtin", "nohup", "coproc", "{"})


def _name(word: Word) -> str:
    return "" if word.dynamic else posixpath.basename(word.value)


def _skip_options(words: list[Word], i: int, wrapper: str) -> int:
    """Index of the first operand after `wrapper`'s options starting at `i`."""
    takes = _ARG_OPTS.get(wrapper, frozenset())
    while i < len(words):
        w = words[i].value
        if w == "--":
            return i + 1
        if not w.startswith("-") or w == "-":
            return i
        if wrapper == "nice" and w[1:].isdigit():
            i += 1
            continue
        opt = w.split("=", 1)[0]
        if opt in takes and "=" not in w:
            i += 2
            continue
        if not w.startswith("--") and len(w) > 2 and w[:2] in takes:
            i += 1  # glued short value such as -oL or -uroot
            continue
        i += 1
    return i


#: Wrappers the shell itself runs its command through, builtins included.
_SHELL_WRAPPERS = frozenset({"command", "builtin", "time", "coproc", "{"})


def _command_runs(words: list[Word]) -> bool:
    """Whether ``command [-pvV] NAME…`` runs NAME: not with ``-v``/``-V`` (it prints how
    NAME would be found), nor with another option letter (bash refuses it)."""
    for w in words[1:]:
        if w.dynamic:
            return True
        if w.value == "--" or not w.value.startswith("-") or w.value == "-":
            return True
        if set(w.value[1:]) - {"p"}:
            return False
    return True


def strip_wrappers(inv: Inv, scope: Scope) -> str | None:
    """Remove wrapper prefixes from `inv.words` in place; returns an unparsed reason or None."""
    while inv.words:
        name = _name(inv.words[0])
        if name == "busybox" and len(inv.words) > 1 and _name(inv.words[1]) not in SHELLS:
            inv.wrappers.append(inv.words[0].value)  # `busybox rm -rf x` runs the applet
            inv.words = inv.words[1:]
            continue
        if name not in _WRAPPERS:
            return None
        words = inv.words
        if name == "command" and not _command_runs(words):
            return None  # `command -v git` only looks git up; `command -x git` fails
        if name == "env":
            i = 1
            while i < len(words):
                w = words[i].value
                split = _env_split(words, i)
                if split is not None:  # -S STRING: its words take its place, options too
                    parts, used = split
                    if parts is None:
                        return "env -S splits a string the guard does not read"
                    words = [*words[:i], *(Word(p, False) for p in parts), *words[i + used:]]
                    continue
                if w in ("-C", "--chdir") and i + 1 < len(words):
                    target = words[i + 1]
                    inv.cwd = None if target.dynamic else resolve(inv.cwd, target.value)
                    i += 2
                elif w.startswith("--chdir=") or (w.startswith("-C") and len(w) > 2):
                    where = w[8:] if w.startswith("--chdir=") else w[2:]  # `-CDIR`, attached
                    inv.cwd = None if words[i].dynamic else resolve(inv.cwd, where)
                    i += 1
                elif w in ("-u", "--unset"):
                    i += 2
                elif w.startswith("-"):
                    i += 1  # -i, -0, -v, `-` (same as -i), --unset=NAME, --
                elif "=" in w and _NAME.match(w.split("=", 1)[0]):
                    key, value = w.split("=", 1)
                    inv.env[key] = value
                    (inv.env_dynamic.add if words[i].dynamic else inv.env_dynamic.discard)(key)
                    i += 1
                else:
                    break
        elif name in ("timeout", "taskset"):
            i = _skip_options(words, 1, name) + 1  # the duration / the CPU mask
        elif name == "flock":
            i = _skip_options(words, 1, name) + 1  # the lock file
            if i < len(words) and words[i].value in ("-c", "--command"):
                words = [*words[:i], Word("sh", False), Word("-c", False), *words[i + 1:]]
        else:
            i = _skip_options(words, 1, name)
        known = _xargs_known(inv, words[1:i], words[i:]) if name == "xargs" else None
        if known is not None:  # input a literal echo/printf gives it: the command it runs
            words = [*words[:i], *known]
            inv.reads_pipe = False  # xargs consumed the pipe
        elif name == "xargs":
            inv.forced_dynamic = True  # arguments arrive on stdin
            if i >= len(words):
                words = [*words, Word("echo", False)]
            token = _xargs_replace(words[1:i])
            if token:  # -I STR: each word holding STR takes an input line
                words = [*words[:i], *(Word(w.value, w.dynamic or token in w.value)
                                       for w in words[i:])]
        if name == "sudo":
            _sudo_dir(inv, words[1:i])
        if i >= len(words):
            return None  # a bare wrapper (`env`, `nohup`) runs nothing further
        if name not in _SHELL_WRAPPERS and not words[i].dynamic and \
                words[i].value in SHELL_ONLY_BUILTINS:
            return None  # `xargs eval …`: no program of that name, nothing runs
        inv.wrappers.extend(w.value for w in words[:i])
        inv.words = words[i:]
    return None


#: xargs options that change neither which command runs nor its arguments.
_XARGS_PLAIN = frozenset({"-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit"})


def _xargs_known(inv: Inv, options: list[Word], command: list[Word]) -> list[Word] | None:
    """The one command line ``xargs OPTIONS COMMAND`` runs when a literal echo/printf feeds it
    (:meth:`Inv.piped_text`): COMMAND (``echo`` when none) with the input words appended, or
    with ``-I``'s string replaced by the one input line; None when the input is unknown, it
    makes more than one command line (several ``-I`` lines, more words than ``-n``), or an
    option changes how the input is read (``-0``, ``-d``, ``-a``, ``-E``, ``-L``, ``-s``...)."""
    text = inv.piped_text()
    if text is None:
        return None
    token, most = None, None
    k = 0
    while k < len(options):
        w = options[k]
        v, nxt = w.value, options[k + 1] if k + 1 < len(options) else None
        if w.dynamic:
            return None
        if v in _XARGS_PLAIN:
            pass
        elif v in ("-I", "-n", "--max-args", "-P", "--max-procs") and nxt is not None:
            if v == "-I":
                token = nxt.value
            elif v in ("-n", "--max-args"):
                most = int(nxt.value) if nxt.value.isdigit() else -1
            k += 1
        elif v.startswith("-I") and len(v) > 2:
            token = v[2:]
        elif v in ("-i", "--replace"):
            token = "{}"
        elif v.startswith(("-n", "--max-args=")) and v.split("=", 1)[-1].removeprefix("-n").isdigit():
            most = int(v.split("=", 1)[-1].removeprefix("-n"))
        elif not ((v.startswith("-P") and v[2:].isdigit()) or
                  (v.startswith("--max-procs=") and v[12:].isdigit())):
            return None
        k += 1
    run = command or [Word("echo", False)]
    from branchkeeper.shell.pipetext import xargs_items

    items = xargs_items(text, lines=token is not None)
    if items is None or (most is not None and not 0 < len(items) <= most):
        return None
    if token is not None:
        if not token or len(items) != 1:
            return None
        return [Word(w.value.replace(token, items[0]), w.dynamic) for w in run]
    return [*run, *(Word(item, False) for item in items)]


#: What GNU env -S reads specially in its string (quotes, escapes, ${VAR}, comments).
_ENV_SPECIAL = frozenset("\\'\"$#")


def _env_split(words: list[Word], i: int) -> tuple[list[str] | None, int] | None:
    """``env -S STRING`` (``-SSTRING``, ``--split-string[=]STRING``) at ``words[i]``: (the
    words STRING splits into at blanks, how many words the option took); the words are None
    when the string comes from an expansion or holds what env reads specially (quotes,
    backslashes, ``$``, ``#``), or ``-S`` is inside a cluster of short options. None when
    ``words[i]`` is no ``-S``."""
    w = words[i].value
    nxt = words[i + 1] if i + 1 < len(words) else None
    if w in ("-S", "--split-string"):
        if nxt is None:
            return None, 1
        text, dynamic, used = nxt.value, nxt.dynamic, 2
    elif w.startswith("--split-string="):
        text, dynamic, used = w[len("--split-string="):], words[i].dynamic, 1
    elif w.startswith("-S"):
        text, dynamic, used = w[2:], words[i].dynamic, 1
    elif w.startswith("-") and not w.startswith("--") and "S" in w:
        return None, 1  # -iS...: a cluster
    else:
        return None
    if dynamic or not _ENV_SPECIAL.isdisjoint(text):
        return None, used
    return text.split(), used


def _xargs_replace(options: list[Word]) -> str | None:
    """The replacement string of xargs's ``-I STR``/``-ISTR``/``--replace[=STR]``/``-i``."""
    for k, w in enumerate(options):
        v = w.value
        if v == "-I" and k + 1 < len(options):
            return options[k + 1].value
        if v.startswith("-I") and len(v) > 2:
            return v[2:]
        if v in ("-i", "--replace"):
            return "{}"
        if v.startswith(("--replace=", "-i")):
            return v.split("=", 1)[1] if "=" in v else v[2:]
    return None


def _sudo_dir(inv: Inv, options: list[Word]) -> None:
    """Where sudo runs its command: ``-D DIR``/``--chdir DIR``/``--chdir=DIR``/``-DDIR``
    (sudo 1.9.3) from the current directory, the target user's home for ``-i`` (unknown)."""
    for k, w in enumerate(options):
        v = w.value
        if v in ("-i", "--login"):
            inv.cwd = None
        elif v in ("-D", "--chdir") and k + 1 < len(options):
            nxt = options[k + 1]
            inv.cwd = None if nxt.dynamic else resolve(inv.cwd, nxt.value)
        elif v.startswith("--chdir=") or (v.startswith("-D") and len(v) > 2):
            where = v[8:] if v.startswith("--chdir=") else v[2:]
            inv.cwd = None if w.dynamic else resolve(inv.cwd, where)


def change_dir(inv: Inv, scope: Scope, name: str) -> None:
    """Apply `cd`/`pushd`/`popd` to the scope (assumes the change succeeds)."""
    args = [w for w in inv.words[1:]]
    while args and args[0].value.startswith("-") and args[0].value not in ("-",):
        if args[0].value == "--":
            args = args[1:]
            break
        if name != "cd" and args[0].value[1:].isdigit():
            break
        args = args[1:]
    old = scope.cwd
    if name == "popd":
        scope.cwd = scope.dirstack.pop() if scope.dirstack and not args else None
        scope.oldpwd = old
        return
    if not args:
        new = scope.home if name == "cd" else None
    elif args[0].dynamic or (name == "pushd" and args[0].value.startswith(("+", "-"))):
        new = None
    elif args[0].value == "-" and name == "cd":
        new = scope.oldpwd
    else:
        new = resolve(scope.cwd, args[0].value)
    if name == "pushd":
        scope.dirstack.append(old)
    scope.cwd, scope.oldpwd = new, old


def command_option(inv: Inv, special: Special) -> None:
    """`script -c CMD`, `su -c CMD`, `runuser -c CMD` (also `--command CMD`/`--command=CMD`):
    the command string they hand to a shell."""
    words = inv.words
    for k, w in enumerate(words[1:], start=1):
        text: Word | None = None
        short_c = w.value.startswith("-") and not w.value.startswith("--") and w.value.endswith("c")
        if (short_c or w.value == "--command") and k + 1 < len(words):  # -c, -qc, --command
            text = words[k + 1]
        elif w.value.startswith("--command="):
            text = Word(w.value[len("--command="):], w.dynamic)
        if text is not None:
            if text.dynamic:
                special.reason = f"{_name(words[0])} runs a command string the guard cannot read"
            else:
                special.scripts.append((text.value, inv.forced_dynamic, False, None))
            return


def shell_scripts(inv: Inv, special: Special) -> None:
    """`bash -c STRING [NAME [ARGS...]]`, `bash [-s ARGS...] <<EOF`, `bash <<< STRING`,
    `... | bash`: the script it runs, with its positional parameters (``$0`` is NAME, else the
    shell's name; xargs may append more)."""
    words = inv.words
    i, has_c, has_s = 1, False, False
    if _name(words[0]) == "busybox":
        if len(words) < 2 or _name(words[1]) not in SHELLS - {"busybox"}:
            return
        i = 2
    while i < len(words):
        w = words[i].value
        if w in ("--", "-"):
            i += 1
            break
        if w in ("--rcfile", "--init-file"):
            special.reason = "a shell reads its startup commands from a file the guard does not read"
            i += 2
            continue
        if w in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if w.startswith("--"):
            i += 1
            continue
        if w.startswith(("-", "+")) and len(w) > 1:
            has_c = has_c or "c" in w[1:]
            has_s = has_s or (w[0] == "-" and "s" in w[1:])
            i += 2 if w[1:].endswith(("o", "O")) else 1
            continue
        break
    if has_c:
        if i >= len(words):
            return
        if words[i].dynamic:
            special.reason = "a shell runs a -c string the guard cannot read"
            return
        zero = words[i + 1] if i + 1 < len(words) else Word(words[0].value,
                                                             inv.forced_dynamic)
        special.scripts.append((words[i].value, inv.forced_dynamic, False,
                                (zero, *words[i + 2:])))
        return
    if i < len(words) and not has_s:
        if not words[i].dynamic:  # a script file (shell.scriptfile reads it)
            special.files.append((resolve(inv.cwd, words[i].value), False,
                                  (words[i], *words[i + 1:]), False))
        return
    args = (Word(words[0].value, False), *words[i:])
    feeds = [r for r in inv.redirects if r.op in _STDIN_OPS]
    if feeds:
        body = feeds[-1]
        special.scripts.append((body.body or "", body.dynamic or inv.forced_dynamic, False,
                                args))
    elif (piped := inv.piped_text()) is not None:
        special.scripts.append((piped, inv.forced_dynamic, False, args))
    elif inv.reads_pipe:
        special.reason = "a shell reads its commands from a pipe"
    elif any(r.op == "<" for r in inv.redirects):
        special.reason = "a shell reads its commands from a file or process substitution"


def classify_special(inv: Inv, scope: Scope) -> Special:
    """Strip wrappers from `inv`, then apply what its command does to the shell and to us."""
    special = Special(reason=strip_wrappers(inv, scope))
    if not inv.words:
        return special
    if inv.words[0].dynamic:
        special.reason = special.reason or "the command name comes from an expansion"
        return special
    name = _name(inv.words[0])
    if name in ("cd", "pushd", "popd"):
        change_dir(inv, scope, name)
    elif name in SHELLS:
        shell_scripts(inv, special)
    elif name in ("script", "su", "runuser"):
        command_option(inv, special)
    elif name == "eval":
        if any(w.dynamic for w in inv.words[1:]):
            special.reason = "eval of a string the guard cannot read"
        else:
            special.scripts.append((" ".join(w.value for w in inv.words[1:]), False, True, None))
    elif name in ("source", "."):
        if len(inv.words) == 2 and not inv.words[1].dynamic:  # read in this shell
            special.files.append((resolve(inv.cwd, inv.words[1].value), True, None, False))
        else:
            special.reason = f"{name} runs commands from a file the guard does not read"
    elif name in ("alias", "unalias"):
        special.reason = "defines an alias"
    elif name == "hash" and any(w.value.startswith("-") and "p" in w.value for w in inv.words[1:]):
        special.reason = "hash -p gives a program another command name"
    elif name == "trap" and len(inv.words) > 2 and not inv.words[1].value.startswith("-"):
        if inv.words[1].dynamic:
            special.reason = "a trap runs a string the guard cannot read"
        else:
            special.scripts.append((inv.words[1].value, False, True, None))
    elif name == "find":
        from branchkeeper.shell.find import find_exec  # only for a find: a lean hook path

        find_exec(inv, special)
    elif name == "parallel":
        from branchkeeper.shell.parallel import parallel_scripts

        parallel_scripts(inv, special)
    elif (lang := interpreter_language(name)) is not None:
        interpreter_scripts(inv, special, lang)
    elif "/" in inv.words[0].value:  # a program run by its path: read when it is a script
        special.files.append((resolve(inv.cwd, inv.words[0].value), False,
                              tuple(inv.words), True))
    return special


def interpreter_scripts(inv: Inv, special: Special, lang: str) -> None:
    """``python -c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, an awk program, or
    such code fed on stdin (a heredoc, a herestring): the shell commands it runs
    (:func:`branchkeeper.shell.interp.commands_in`). Code from a pipe or an expansion, or a
    command the code builds at run time, cannot be read (the reason says so); a script file
    is a program like any other. The code reader is imported here, only for a command that
    runs an interpreter (the hook imports the reader on every parsed command)."""
    from branchkeeper.shell import interp

    words = inv.words
    found = interp.code_of(lang, [w.value for w in words])
    if found is None:
        return
    index, code = found
    dynamic = False
    if found == interp.STDIN:
        feeds = [r for r in inv.redirects if r.op in _STDIN_OPS]
        if feeds:
            code, dynamic = feeds[-1].body or "", feeds[-1].dynamic
        elif (piped := inv.piped_text()) is not None:
            code = piped
        elif inv.reads_pipe:
            special.reason = f"{_name(words[0])} reads its code from a pipe"
            return
        else:
            return
    elif words[index].dynamic:
        special.reason = f"{_name(words[0])} runs code the guard cannot read"
        return
    reading = interp.commands_in(lang, code)
    if reading.unread or dynamic:
        special.reason = reading.unread or f"{_name(words[0])} runs code the guard cannot read"
    special.scripts.extend((c, inv.forced_dynamic, False, None) for c in reading.commands)


