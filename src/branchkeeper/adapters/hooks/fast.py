"""The no-git fast path, decided from the raw stdin bytes (issue 16): a shell command that
mentions none of ``git``, ``rm``, ``-delete``, ``unlink``, ``shred``, ``truncate`` and could not
spell them, empties no file and runs no script by name (:func:`may_truncate`,
:func:`may_run_script`), names nothing ``R-BRANCHKEEPER-TAMPER`` protects and does not run
inside such a directory, is answered before ``json`` (and with it ``re``) is imported.

Sound only where the bytes say the same as the decoded JSON would, so it applies only when
the payload holds **no backslash at all** (no JSON escape, so every string is the literal bytes
between two quotes, and no ``\\"`` can hide a quote in the command), is one well-formed JSON
object (:func:`scan` checks the structure and takes the last of duplicate keys, as
``json.loads`` does), names the host's shell tool, and carries the command as a string. Anything
else goes the full way, where every fail-open rule applies as before.

The words and characters are :data:`GUARD_WORDS` and :data:`HIDDEN_SPELLING`, the same the full
path's textual pre-check (``glue.might_matter``) reads. This module imports nothing.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from branchkeeper.adapters.hooks.host import FastSpec

#: Words whose presence sends a command to the guard (``-delete``: find's delete action;
#: ``unlink`` and ``shred`` delete files as ``rm`` does; ``truncate`` empties them).
GUARD_WORDS = ("git", "rm", "-delete", "unlink", "shred", "truncate")
#: Characters through which bash can run a command whose name the text does not spell out:
#: quoting and escapes (``g\\it``, ``g''it``, ``"r"m``, ``$'\\x67'it``), expansions (``$x``,
#: ``$(...)``, backquotes, ``{g,}it``) and globs (``/usr/bin/g?t``).
HIDDEN_SPELLING = "\\'\"$`?*[{"
#: Only a person at a terminal consents to an unproven deletion; the guard says so.
CONSENT_FLAG = "--allow-unproven"
#: Text that every path ``R-BRANCHKEEPER-TAMPER`` protects holds (issue 19: the policy, each
#: host's hook files, git's hook, the records under the common dir, the user-level config;
#: ``branchkeeper install``/``uninstall`` too): a command naming one, or run in a directory
#: whose path holds one (a relative write there needs no such word), goes to the guard.
PROTECTED_HINTS = ("branchkeeper", ".claude", ".codex", ".cursor", ".gemini", ".github",
                   ".copilot", "hooks", ".git/", "/.git", "plugin.json")
#: Words, in any case, of a command that may switch git's own hook off (the hooks directory,
#: ``core.hooksPath``, the hook file, our own deletes' variable): always judged by the guard
#: (``R-GIT-HOOKS-BYPASS``), even with no git or rm in them.
BYPASS_WORDS = ("hooks", "reference-transaction", "branchkeeper_own_delete")

_WORDS = tuple(w.encode() for w in (*GUARD_WORDS, *PROTECTED_HINTS))
_HINTS = tuple(w.encode() for w in PROTECTED_HINTS)
_CWD = (b"cwd",)
_HIDDEN = frozenset(HIDDEN_SPELLING.encode())
_CONSENT = CONSENT_FLAG.encode()
_BYPASS = tuple(w.encode() for w in BYPASS_WORDS)
_SPACE = frozenset(b" \t\r\n")
_MAX_DEPTH = 32
#: A wanted key whose value is not a string.
NOT_STRING = b"\0not a string"


def scan(data: bytes, wanted: "frozenset[tuple[bytes, ...]]") -> "dict[tuple[bytes, ...], bytes] | None":
    """The string values at the ``wanted`` key paths of the JSON object ``data``, or None when
    ``data`` holds a backslash or is not one well-formed object.

    A wanted key present with a value that is not a string maps to :data:`NOT_STRING`; an
    absent key is missing from the result. Duplicate keys: the last one counts (its earlier
    values and everything under them are dropped), as with ``json.loads``.
    """
    if b"\\" in data:
        return None
    parts = data.split(b'"')
    if len(parts) % 2 == 0:
        return None
    found: dict[tuple[bytes, ...], bytes] = {}
    # One entry per open container: is it an object, its key path, its current key (full
    # path), its state: 0 expect a key, 1 expect ":", 2 expect a value, 3 after a value.
    objects: list[bool] = []
    paths: list[tuple[bytes, ...]] = []
    keys: list[tuple[bytes, ...]] = []
    states: list[int] = []
    started = False
    scalar = False
    for i, part in enumerate(parts):
        if i % 2:  # a string token
            scalar = False
            if not states:
                return None
            if objects[-1] and states[-1] == 0:
                key = (*paths[-1], part)
                keys[-1] = key
                states[-1] = 1
                for path in [p for p in found if p[:len(key)] == key]:
                    del found[path]
            elif states[-1] == 2:
                if objects[-1] and keys[-1] in wanted:
                    found[keys[-1]] = part
                states[-1] = 3
            else:
                return None
            continue
        for c in part:
            if c in _SPACE:
                scalar = False
                continue
            if not states:
                # before the top-level object (only "{" may open it) or after it (nothing)
                if c != 0x7B or started:
                    return None
                started = True
                objects.append(True)
                paths.append(())
                keys.append(())
                states.append(0)
                continue
            if c == 0x7B or c == 0x5B:  # { [
                scalar = False
                if states[-1] != 2 or len(states) >= _MAX_DEPTH:
                    return None
                if objects[-1] and keys[-1] in wanted:
                    found[keys[-1]] = NOT_STRING
                path = keys[-1] if objects[-1] else (*paths[-1], b"[]")
                states[-1] = 3
                objects.append(c == 0x7B)
                paths.append(path)
                keys.append(())
                states.append(0 if c == 0x7B else 2)
            elif c == 0x7D or c == 0x5D:  # } ]
                scalar = False
                if objects[-1] != (c == 0x7D) or states[-1] == 1 or \
                        (objects[-1] and states[-1] == 2):
                    return None  # a mismatched bracket, or a key without its value
                objects.pop()
                paths.pop()
                keys.pop()
                states.pop()
            elif c == 0x3A:  # :
                scalar = False
                if not objects[-1] or states[-1] != 1:
                    return None
                states[-1] = 2
            elif c == 0x2C:  # ,
                scalar = False
                if states[-1] != 3:
                    return None
                states[-1] = 0 if objects[-1] else 2
            elif not scalar:  # the first character of a number, true, false or null
                if states[-1] != 2:
                    return None
                if objects[-1] and keys[-1] in wanted:
                    found[keys[-1]] = NOT_STRING
                states[-1] = 3
                scalar = True
    return found if started and not states else None


#: Words of a command that writes nothing, so that a ``>`` redirect of it empties the file
#: (``shell.model.truncated_files``); ``echo`` and ``printf`` only with no argument but options.
_SILENT_WORDS = frozenset((b":", b"true", b"false", b"exec"))
_QUIET_PRINTERS = frozenset((b"echo", b"printf"))
#: Words that run a script file named after them (``shell.scriptfile``): ``source``, ``.``
#: and the shells (``shell.wrappers.SHELLS``).
SCRIPT_RUNNERS = ("source", ".", "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox",
                  "fish")
#: The wrapper prefixes the reader strips (``shell.wrappers``, without ``{``, a character
#: that already sends a command to the guard): a program run by its path may follow one.
WRAPPER_WORDS = ("sudo", "doas", "nice", "timeout", "stdbuf", "time", "exec", "xargs", "env",
                 "setsid", "ionice", "taskset", "flock", "chronic", "unbuffer", "strace",
                 "ltrace", "watch", "command", "builtin", "nohup", "coproc")
_RUNNERS = frozenset(w.encode() for w in SCRIPT_RUNNERS)
_WRAPPERS = frozenset(w.encode() for w in WRAPPER_WORDS)
_SEPARATORS = bytes.maketrans(b";|&()", b"\n\n\n\n\n")


def may_truncate(command: bytes) -> bool:
    """Whether ``command`` (text with none of :data:`HIDDEN_SPELLING`, so words are split as
    bash splits them) may empty a file: ``/dev/null`` as an operand (``cp /dev/null f``,
    ``cat /dev/null > f``, ``dd if=/dev/null``; not the target of a redirect), or a ``>``
    redirect (not ``>>``) in a simple command with no word, or one of :data:`_SILENT_WORDS`,
    or ``echo``/``printf`` followed by options only. A superset of what the guard judges."""
    at = command.find(b"/dev/null")
    while at >= 0:
        if command[:at].rstrip()[-1:] not in (b">", b"<"):
            return True
        at = command.find(b"/dev/null", at + 1)
    if b">" not in command:
        return False
    return any(truncating and _silent(words) for words, truncating in _commands(command))


def may_run_script(command: bytes) -> bool:
    """Whether ``command`` (as for :func:`may_truncate`) may run a script file the guard
    reads: a word of :data:`SCRIPT_RUNNERS`, a command named by a path (``./x.sh``), or a
    word holding ``/`` after a :data:`WRAPPER_WORDS` prefix. A superset of what it reads."""
    for words, _ in _commands(command):
        if not _RUNNERS.isdisjoint(words) or (words and b"/" in words[0]):
            return True
        if words and words[0] in _WRAPPERS and any(b"/" in w for w in words[1:]):
            return True
    return False


def _commands(command: bytes) -> "list[tuple[list[bytes], bool]]":
    """Each simple command of ``command`` as (its words without redirects and leading
    assignments, whether a redirect of it opens a file for writing from its start)."""
    text = command.replace(b">>", b" ").replace(b"&>", b" >").translate(_SEPARATORS)
    out = []
    for segment in text.split(b"\n"):
        words: list[bytes] = []
        skip = False
        for token in segment.split():
            if skip:
                skip = False
            elif b">" in token or b"<" in token:
                skip = token.endswith((b">", b"<"))  # the target is the next word
            elif words or b"=" not in token:
                words.append(token)
        out.append((words, b">" in segment))
    return out


def _silent(words: "list[bytes]") -> bool:
    if not words or not _SILENT_WORDS.isdisjoint(words):
        return True
    return any(word in _QUIET_PRINTERS and all(w.startswith(b"-") for w in words[i + 1:])
               for i, word in enumerate(words))


def risky(command: bytes) -> bool:
    """Whether the guard may have something to judge in the shell ``command``: it names a
    :data:`GUARD_WORDS` or :data:`PROTECTED_HINTS` word, :data:`CONSENT_FLAG`, a
    :data:`HIDDEN_SPELLING` character or (in any case) a :data:`BYPASS_WORDS` word, or may
    empty a file or run a script (:func:`may_truncate`, :func:`may_run_script`)."""
    for word in _WORDS:
        if word in command:
            return True
    if _CONSENT in command or not _HIDDEN.isdisjoint(command) or may_truncate(command) or \
            may_run_script(command):
        return True
    lowered = command.lower()
    return any(word in lowered for word in _BYPASS)


def silent(data: bytes, spec: "FastSpec") -> "bytes | None":
    """The host's silent answer (``spec[4]``) when ``data`` is a shell event the guard has
    nothing to judge in; None when the full path must decide.

    ``spec``: (tool-name key or None, the shell tool's names, command key path, ``"pre"`` or
    ``"post"``, silent bytes, tool names with nothing to judge or record). Before a tool, the
    command must hold none of :data:`GUARD_WORDS`, :data:`PROTECTED_HINTS`,
    :data:`CONSENT_FLAG` and :data:`HIDDEN_SPELLING`, and the payload's ``cwd`` must be a string
    holding no :data:`PROTECTED_HINTS`, nor :data:`BYPASS_WORDS` in any case; after a tool, no
    ``git`` (nothing else is recorded).
    """
    tool_key, tools, command_path, when, quiet, ignored = spec
    command_key = tuple(k.encode() for k in command_path)
    wanted = {command_key, _CWD}
    tool_path = (tool_key.encode(),) if tool_key is not None else None
    if tool_path is not None:
        wanted.add(tool_path)
    found = scan(data, frozenset(wanted))
    if found is None:
        return None
    if tool_path is not None:
        tool = found.get(tool_path)
        if tool is None or tool == NOT_STRING:
            return None
        name = tool.decode("utf-8", "replace")
        if name in ignored:
            return quiet
        if name not in tools:
            return None
    command = found.get(command_key)
    if command is None or command == NOT_STRING:
        return None
    if when == "post":
        return None if b"git" in command else quiet
    cwd = found.get(_CWD)
    if cwd is None or cwd == NOT_STRING or any(h in cwd for h in _HINTS):
        return None
    return None if risky(command) else quiet
