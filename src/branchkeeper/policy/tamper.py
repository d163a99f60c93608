"""The guard cannot be switched off by the agent it guards (``R-BRANCHKEEPER-TAMPER``; issue 19).

Every change an agent asks for that could weaken branchkeeper in a repository goes to a person:
the policy (``.branchkeeper.yaml`` of every worktree, the user-level config directory), the
hooks of every host branchkeeper installs (Claude Code's ``.claude/settings*.json`` and plugin
files, Codex's, Cursor's, Gemini's and Copilot's hook files, git's ``reference-transaction``
hook), ``branchkeeper install``/``uninstall``, the package and the programs the hooks run
(uninstalling it, changing the mode of, moving or deleting ``branchkeeper``/``branchkeeper-hook``),
the escape hatches (the Stop guard's yield file,
under the common dir), and the records and safety copies (``branch.*.branchkeeper*`` git config
keys, refs under ``refs/branchkeeper/``, everything under ``<common dir>/branchkeeper/``: the
journal, bundles, archives, the cache of the config; and the object store's unreachable objects,
which ``gc --prune=now`` and ``reflog expire ...=now`` throw away).

The decision is :attr:`~branchkeeper.policy.decision.Verdict.ASK`: a host with a working ask puts
the question to the person at the keyboard; a host without one denies it, saying to ask a human
(each host's adapter maps it). Reading is free, and so is a write tool's change that only adds
protection: a Write (or an Edit, applied to the file as it is) of ``.branchkeeper.yaml`` whose
effective config keeps every setting at least as strict, or of a host's settings that keeps
every branchkeeper hook entry as ``install`` wrote it and does not set ``disableAllHooks``.
A person's own change outside the agent is never judged.
Filesystem and the parsed command only: no git process.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from branchkeeper.analysis.guard_facts import linked_worktree_paths
from branchkeeper.git.locate import locate
from branchkeeper.policy.decision import ALLOW, Decision, Verdict
from branchkeeper.policy.plan import describe, under
from branchkeeper.policy.strictness import config_not_weaker, hooks_kept
from branchkeeper.policy.targets import deletions
from branchkeeper.shell.model import (
    Invocation,
    ParsedCommand,
    interpreter_language,
    join_path,
    rm_operands,
)
from branchkeeper.shell.parse import git_invocation
from branchkeeper.shell.quoting import shell_quote

R_TAMPER = "R-BRANCHKEEPER-TAMPER"
CONFIG_NAME = ".branchkeeper.yaml"


class Protected(NamedTuple):
    """A path whose change could weaken branchkeeper: ``path`` (absolute; a directory covers
    everything under it), ``what`` it is (for the message) and ``kind``: ``config``,
    ``settings`` (a host's JSON hook settings), ``state``; ``repo``: the common git directory of
    the repository it serves (None for user-level items, which serve every repository)."""

    path: str
    what: str
    kind: str
    repo: str | None = None


#: Host hook files under a worktree (relative) or the home directory, with what they are.
_HOST_FILES = (
    (".claude/settings.json", "Claude Code's settings (branchkeeper's hooks)", "settings"),
    (".claude/settings.local.json", "Claude Code's local settings (branchkeeper's hooks)", "settings"),
    (".claude-plugin/plugin.json", "the Claude Code plugin manifest", "state"),
    ("hooks/hooks.json", "the plugin's hook file", "settings"),
    (".codex/hooks.json", "Codex's hook file", "settings"),
    (".codex/config.toml", "Codex's config (it can turn hooks off)", "state"),
    (".codex-plugin/plugin.json", "the Codex plugin manifest", "state"),
    (".cursor/hooks.json", "Cursor's hook file", "settings"),
    (".gemini/settings.json", "Gemini CLI's settings (its hooks)", "settings"),
    (".github/hooks", "Copilot's hook files", "state"),
    (".github/copilot/settings.json", "Copilot's settings (its hooks)", "settings"),
    (".github/copilot/settings.local.json", "Copilot's local settings (its hooks)", "settings"),
    (".copilot/hooks", "Copilot's user hook files", "state"),
    (".copilot/settings.json", "Copilot's user settings", "settings"),
)


def protected_paths(cwd: str, *, home: str | None,
                    env: Mapping[str, str] | None = None) -> list[Protected]:
    """What branchkeeper's protection rests on, for a command or a tool run in ``cwd``
    (module docstring), found on the filesystem alone."""
    out: list[Protected] = []
    repo = locate(cwd)
    tops: list[str] = []
    if repo is not None:
        tops = list(dict.fromkeys(t for t in (repo.toplevel, repo.main_root,
                                              *linked_worktree_paths(repo)) if t))
        common = repo.common_dir
        out += [Protected(posixpath.join(common, "branchkeeper"),
                          "branchkeeper's journal, bundles, archives and state", "state", common),
                Protected(posixpath.join(common, "refs", "branchkeeper"),
                          "branchkeeper's refs (pinned, kept, undo)", "state", common),
                Protected(posixpath.join(common, "packed-refs"), "the repository's refs", "state",
                          common),
                Protected(posixpath.join(common, "config"),
                          "the repository's git config (branchkeeper's branch records)", "state",
                          common),
                Protected(posixpath.join(common, "hooks", "reference-transaction"),
                          "branchkeeper's git hook", "state", common)]
    for top in tops:
        out.append(Protected(posixpath.join(top, CONFIG_NAME), "the branchkeeper policy",
                             "config", repo.common_dir if repo else None))
        out += [Protected(posixpath.join(top, rel), what, kind, repo.common_dir if repo else None)
                for rel, what, kind in _HOST_FILES]
    if home:
        out += [Protected(posixpath.join(home, rel), what.replace("settings", "user settings", 1),
                          kind) for rel, what, kind in _HOST_FILES if not rel.startswith("hooks/")]
        xdg = (env or {}).get("XDG_CONFIG_HOME") or posixpath.join(home, ".config")
        out.append(Protected(posixpath.join(xdg, "branchkeeper"),
                             "branchkeeper's user-level config", "state"))
    return out


def protected_at(path: str, protected: Iterable[Protected]) -> Protected | None:
    """The protected item ``path`` (absolute, normalised) is or lies under, if any."""
    real = os.path.realpath(path)
    for p in protected:
        if under(path, p.path) or under(real, os.path.realpath(p.path)):
            return p
    return None


def tamper_decision(how: str, item: Protected, path: str) -> Decision:
    """Ask a person: ``how`` would change ``item`` (at ``path``)."""
    return Decision(
        Verdict.ASK, R_TAMPER,
        f"`{how}` would change {item.what} ({shell_quote(path)}). An agent may not loosen "
        "or switch off the guard that keeps its work from being lost; a person decides.",
        "Ask a human to make this change (what a person runs outside the agent is never "
        "judged). A change that only adds protection can be written whole with the Write tool: "
        "the guard allows it when nothing weakens.")


def tamper_action(how: str, why: str) -> Decision:
    """Ask a person: ``how`` would ``why`` (a branchkeeper command or a git operation)."""
    return Decision(
        Verdict.ASK, R_TAMPER,
        f"`{how}` would {why}. An agent may not loosen or switch off the guard that keeps its "
        "work from being lost; a person decides.",
        "Ask a human to make this change (what a person runs outside the agent is never "
        "judged).")


# -- Bash: every way a command writes a protected path ---------------------------------------
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_EDITORS = frozenset({"vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "code", "subl", "micro"})
_IN_PLACE = {"sed": ("-i", "--in-place"), "perl": ("-i",), "ruby": ("-i",)}


def _operands(inv: Invocation) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    done = False
    for word, dyn in zip(inv.argv[1:], inv.dynamic_args[1:], strict=False):
        if not done and word == "--":
            done = True
        elif done or not word.startswith("-") or word == "-":
            out.append((word, dyn))
    return out


def written_paths(inv: Invocation) -> list[str]:
    """Paths ``inv`` writes, creates, moves or deletes (absolute; unknown ones left out):
    output redirects, ``tee``, ``sed -i``/``perl -i``, ``cp``/``mv``/``install``/``ln``
    destinations and ``mv``'s sources, ``rm``/``unlink``/``shred``, ``truncate``, ``dd of=``,
    ``touch``, ``mkdir``, ``chmod``/``chown``, editors given a file."""
    paths = [r.path for r in inv.redirects if r.op in _WRITE_OPS and r.path]
    name = inv.name
    ops = [join_path(inv.cwd, w) for w, d in _operands(inv) if not d]
    known = [p for p in ops if p is not None]
    if name in ("tee", "truncate", "touch", "mkdir", "chmod", "chown", "chgrp", *_EDITORS):
        paths += known[1:] if name in ("chmod", "chown", "chgrp") else known
    elif name in _IN_PLACE and any(w.startswith(_IN_PLACE[name]) for w in inv.argv[1:]):
        paths += known
    elif name in ("cp", "install", "ln", "rsync") and known:
        paths.append(known[-1])
        paths += [posixpath.join(known[-1], posixpath.basename(p)) for p in known[:-1]]
    elif name == "mv":
        paths += known
        paths += [posixpath.join(known[-1], posixpath.basename(p)) for p in known[:-1]] \
            if known else []
    elif name == "dd":
        paths += [p for w in inv.argv[1:] if w.startswith("of=")
                  if (p := join_path(inv.cwd, w[3:])) is not None]
    paths += [t.path for t in rm_operands(inv) if not t.dynamic]
    g = git_invocation(inv)
    if g is not None and g.subcommand in ("checkout", "restore", "rm", "mv") and g.cwd:
        # restoring, removing or moving a protected file changes it like a write
        paths += [p for a, d in zip(g.args, g.args_dynamic, strict=False)
                  if not d and not a.startswith("-") and (p := join_path(g.cwd, a)) is not None]
    return paths


def moved_sources(inv: Invocation) -> list[str]:
    """The paths ``mv SRC... DEST`` (or ``git mv``) moves away (absolute; unknown ones left
    out): a moved directory takes everything beneath it."""
    g = git_invocation(inv)
    if g is not None and g.subcommand == "mv" and g.cwd:
        words = [a for a, d in zip(g.args, g.args_dynamic, strict=False)
                 if not d and not a.startswith("-")]
        known = [p for a in words if (p := join_path(g.cwd, a)) is not None]
    elif inv.name == "mv":
        known = [p for w, d in _operands(inv) if not d if (p := join_path(inv.cwd, w))]
    else:
        return []
    return known[:-1]


#: ``git config`` keys (lower case) that hold branchkeeper's records or switch hooks.
def _record_key(key: str) -> bool:
    k = key.lower()
    return (k.startswith("branch.") and ".branchkeeper" in k) or k == "core.hookspath"


def _git_tamper(inv: Invocation) -> str | None:
    """What a git invocation would do to branchkeeper's records or safety copies, or None."""
    g = git_invocation(inv)
    if g is None or g.subcommand is None:
        return None
    sub, args = g.subcommand, g.args
    if sub == "config":
        names = [a for a in args if not a.startswith("-")]
        flags = {a.split("=", 1)[0] for a in args if a.startswith("-")}
        changing = {"--unset", "--unset-all", "--remove-section", "--rename-section", "--add",
                    "--replace-all"}
        reading = bool(flags & {"--get", "--get-all", "--get-regexp", "-l", "--list",
                                "--get-urlmatch", "--get-color", "--get-colorbool"}) or (
            len(names) == 1 and not flags & changing)
        if flags & {"--remove-section", "--rename-section"} and names and \
                names[0].lower().startswith("branch."):
            return "remove or rename a branch's records (git config section)"
        if not reading and names and _record_key(names[0]):
            return f"change the git config key {names[0]} (branchkeeper's records)"
        return None
    if sub == "update-ref":
        body = " ".join(r.body or "" for r in inv.redirects)
        if any(a.startswith("refs/branchkeeper/") for a in args) or "refs/branchkeeper/" in body:
            return "change refs under refs/branchkeeper/ (branchkeeper's safety copies)"
    if sub == "gc" and any(a.startswith("--prune") and a not in ("--prune", "--no-prune")
                           for a in args):
        return "prune unreachable objects now (what branchkeeper's undo may still need)"
    if sub == "prune" and not any(a in ("-n", "--dry-run") for a in args):
        return "prune unreachable objects (what branchkeeper's undo may still need)"
    if sub == "reflog" and (args[:1] == ("delete",) or (args[:1] == ("expire",) and any(
            a.split("=", 1)[-1] in ("now", "all") for a in args if a.startswith("--expire")))):
        return "expire reflog entries now (what branchkeeper's undo may still need)"
    return None


def _branchkeeper_verb(inv: Invocation) -> str | None:
    argv = list(inv.argv)
    if inv.name.startswith("python") and argv[1:3] == ["-m", "branchkeeper"]:
        argv = ["branchkeeper", *argv[3:]]
    if not argv or posixpath.basename(argv[0]) != "branchkeeper":
        return None
    words = [a for a in argv[1:] if not a.startswith("-")]
    if words[:1] in (["install"], ["uninstall"]):
        return f"run `branchkeeper {words[0]}` (it changes which hooks guard the agent)"
    if words[:2] == ["config", "init"]:
        return "write a new branchkeeper policy (`branchkeeper config init`)"
    return None


#: The programs the hooks run: removing one, or taking its execute bit, switches every guard off.
_PROGRAMS = frozenset({"branchkeeper", "branchkeeper-hook"})
#: Commands that change a file's mode, move or delete it.
_FILE_CHANGERS = frozenset({"chmod", "rm", "unlink", "mv", "shred", "truncate", "chattr"})
#: Package managers: (program, the words before the package names that uninstall).
_UNINSTALLERS = (("pip", ("uninstall",)), ("pip3", ("uninstall",)), ("pipx", ("uninstall",)),
                 ("uv", ("pip", "uninstall")), ("uv", ("tool", "uninstall")),
                 ("conda", ("remove",)), ("conda", ("uninstall",)))


def _program_removal(inv: Invocation) -> str | None:
    """Uninstalling the branchkeeper package, or changing, moving or deleting the programs the
    hooks run (``branchkeeper``, ``branchkeeper-hook``), however spelled (``python -m pip``)."""
    argv = list(inv.argv)
    if inv.name.startswith("python") and argv[1:2] == ["-m"] and len(argv) > 2:
        argv = argv[2:]
    if not argv:
        return None
    name = posixpath.basename(argv[0])
    words = [a for a in argv[1:] if not a.startswith("-")]
    for program, verb in _UNINSTALLERS:
        if name == program and tuple(words[:len(verb)]) == verb and any(
                w.split("==")[0].lower() == "branchkeeper" for w in words[len(verb):]):
            return "uninstall branchkeeper (every host's hooks run it)"
    if name in _FILE_CHANGERS and any(posixpath.basename(a) in _PROGRAMS for a in words):
        return "change or remove the program the hooks run (every host's guard runs it)"
    return None


#: What names a protected file in interpreter code, and what writes one.
_CODE_NAMES = (".branchkeeper.yaml", "settings.json", "settings.local.json", "hooks.json",
               "refs/branchkeeper", "/branchkeeper", "reference-transaction")
_CODE_WRITES = ("'w'", '"w"', "'a'", '"a"', "'x'", '"x"', "w+", "write", "rename", "replace",
                "remove", "unlink", "rmtree", "copy", "move", "rm_", "rmSync", "truncate", "dump",
                ">", "symlink")


def _code_writes_protected(inv: Invocation) -> bool:
    """An interpreter whose code (as given on its command line) both names a protected file
    and calls something that writes, moves or deletes files."""
    code = " ".join(inv.argv[1:])
    return any(n in code for n in _CODE_NAMES) and any(w in code for w in _CODE_WRITES)


#: What branchkeeper keeps in ``<common dir>/branchkeeper`` that is rebuilt on demand
#: (docs/architecture.md, "Where state lives"): the caches, the stored sweep result, the last
#: sweep's summary, the merges' scratch directory and the lock directory.
_REBUILT = frozenset({"config-cache.json", "cache.json", "commits.bin", "walk.bin",
                      "last-sweep.json", "sweep-result.json", "tmp", "locks"})


def _no_record_goes(item: Protected, gone: str) -> bool:
    """Whether deleting the directory ``gone`` whole, which holds the entire git directory of
    the repository ``item`` serves, deletes no branchkeeper record with ``item``: the state
    directory holds only what is rebuilt on demand (no journal, bundle, archive or hold), the
    git config and ``packed-refs`` name nothing of branchkeeper's. The repository's refs under
    ``refs/branchkeeper/`` and its git hook stay asked, as does anything a worktree holds."""
    common = item.repo
    if common is None or not under(common, gone) or not item.path.startswith(common + "/"):
        return False
    name = item.path[len(common) + 1:]
    try:
        if name == "branchkeeper":
            inside = os.listdir(item.path)
            return set(inside) <= _REBUILT and not os.listdir(os.path.join(item.path, "locks")) \
                if "locks" in inside else set(inside) <= _REBUILT
        if name in ("config", "packed-refs"):
            with open(item.path, "rb") as f:
                return b"branchkeeper" not in f.read(1 << 20)
    except OSError:
        return False
    return False


def tamper_in(parsed: ParsedCommand, cwd: str, *, home: str | None,
              env: Mapping[str, str] | None = None) -> list[Decision]:
    """``R-BRANCHKEEPER-TAMPER`` for a shell command: every protected path it writes (however
    spelled: through ``bash -c``, ``xargs``, interpreters' commands, ``sudo``...), every git
    operation on the records or safety copies, and ``branchkeeper install``/``uninstall``."""
    out: list[Decision] = []
    cache: dict[str, list[Protected]] = {}
    found = deletions(parsed, cwd)
    fed = {id(d.inv): d.files for d in found}  # e.g. `echo X | xargs rm`
    # a directory deleted with everything in it takes what is protected beneath it too
    wholes = {id(d.inv): [*d.paths, *(s for scope, _ in d.scopes if scope.names is None
                                     for s in scope.starts if s.startswith("/"))]
              for d in found}
    for inv in parsed.invocations:
        how = describe(inv)
        why = _git_tamper(inv) or _branchkeeper_verb(inv) or _program_removal(inv)
        if why is not None:
            out.append(tamper_action(how, why))
            continue
        if interpreter_language(inv.name) is not None and _code_writes_protected(inv):
            out.append(tamper_action(how, "let interpreter code write branchkeeper's policy, "
                                          "hooks or records"))
            continue
        where = inv.cwd or cwd
        protected = cache.setdefault(where, protected_paths(where, home=home, env=env))
        for path in [*written_paths(inv), *fed.get(id(inv), ())]:
            item = protected_at(path, protected)
            if item is not None:
                out.append(tamper_decision(how, item, path))
                break
        else:
            # a directory deleted or moved away takes what is protected beneath it along
            # (R-RM-REPOSITORY judges the commits of a repository deleted whole)
            gone = wholes.get(id(inv), ())
            beneath = [(p, w) for w in [*gone, *moved_sources(inv)]
                       for p in protected
                       if under(p.path, w) and os.path.lexists(p.path)
                       and not (w in gone and _no_record_goes(p, w))]
            if beneath:
                out.append(tamper_decision(how, beneath[0][0], beneath[0][0].path))
    return out


# -- Write tools ------------------------------------------------------------------------------
def _apply_edits(text: str, edits: Sequence[tuple[str, str, bool]]) -> str | None:
    """``text`` with each (old, new, replace all) edit applied as Claude Code's Edit does;
    None when an edit does not apply (the tool then fails)."""
    for old, new, every in edits:
        if old not in text or (not every and text.count(old) != 1):
            return None
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(1 << 20)
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        return None


def decide_write(path: str, *, cwd: str, content: str | None = None,
                 edits: Sequence[tuple[str, str, bool]] | None = None, tool: str = "Write",
                 home: str | None = None, env: Mapping[str, str] | None = None) -> Decision:
    """``R-BRANCHKEEPER-TAMPER`` for a file-write tool (Write, Edit, MultiEdit, NotebookEdit,
    Codex's ``apply_patch``...) about to write ``path`` (relative to ``cwd``): ALLOW when the
    path is not protected, or when the whole new content is known (``content``, or ``edits``
    applied to the file as it is) and keeps every protection (:func:`config_not_weaker`,
    :func:`hooks_kept`); else ASK."""
    full = join_path(cwd, path) or path
    item = protected_at(full, protected_paths(cwd, home=home, env=env))
    if item is None:
        return ALLOW
    before = _read(full)
    after = content
    if after is None and edits is not None and before is not None:
        after = _apply_edits(before, edits)
    if before is not None and after is not None:
        if item.kind == "config" and config_not_weaker(before, after):
            return ALLOW
        if item.kind == "settings" and hooks_kept(before, after):
            return ALLOW
    return tamper_decision(f"{tool} {path}", item, full)


def patch_paths(patch: str) -> list[str]:
    """The paths an ``apply_patch`` patch (Codex's file-edit tool: ``*** Add File: P``,
    ``*** Update File: P``, ``*** Delete File: P``, ``*** Move to: P``) writes, in order."""
    marks = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
    return [line[len(m):].strip() for line in patch.splitlines() for m in marks
            if line.startswith(m) and line[len(m):].strip()]


def decide_patch(patch: str, *, cwd: str, home: str | None = None,
                 env: Mapping[str, str] | None = None) -> Decision:
    """``R-BRANCHKEEPER-TAMPER`` for a patch tool: ASK when any path it writes is protected
    (a patch shows no whole new content, so nothing is proven to tighten)."""
    for path in patch_paths(patch):
        d = decide_write(path, cwd=cwd, tool="apply_patch", home=home, env=env)
        if d.verdict is not Verdict.ALLOW:
            return d
    return ALLOW
