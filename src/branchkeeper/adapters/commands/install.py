"""``branchkeeper install`` and ``branchkeeper uninstall``: the hook entries of every agent host
(issue 6, section 3; issue 14, point 3), and with ``--git-hooks`` git's own
``reference-transaction`` hook (issue 15).

``install [--host HOST|auto] [--scope SCOPE] [--dry-run] [--command CMD]`` merges one entry per
hook event into the host's configuration file for the scope, keeping every other setting and
hook; running it twice changes nothing. ``uninstall`` removes only branchkeeper's entries and
gives a file back as ``install`` found it (:mod:`~branchkeeper.adapters.hooks.install_record`):
a file install created goes once it holds nothing else. Both check every file first
(:func:`~branchkeeper.adapters.hooks.install.check_hooks`) and print what they changed.
``--host auto`` means every host whose configuration directory exists (in the repository or the
home directory); a host without the scope asked for is skipped with a note.

``--command`` sets the program the entries run: ``branchkeeper-hook`` (the default: the hook
entry point installed next to ``branchkeeper``, found on PATH when the host runs the hook), any
shell-quoted prefix, or ``absolute`` for this installation's own entry point by absolute path,
for environments where PATH differs.

``install --git-hooks`` writes the git hook shim (:mod:`branchkeeper.adapters.git_hooks`) into
the directory git runs hooks from, chaining a hook that was there; its program defaults to
``absolute``, this installation's ``branchkeeper`` (git runs hooks with whatever PATH its caller
had, an editor's or a GUI's). ``uninstall --git-hooks`` removes only our shim and puts a
chained hook back.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.adapters.hooks import install_record as record
from branchkeeper.adapters.hooks.install import (
    ENTRY,
    Change,
    check_hooks,
    load_json,
    resolve_program,
    write_json,
)
from branchkeeper.adapters.hosts import HOSTS
from branchkeeper.errors import ConfigError, ExitCode, NotARepositoryError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from branchkeeper.adapters.git_hooks import Change as GitHookChange
    from branchkeeper.adapters.hooks.host import Host

SCOPES = ("project", "local", "user")


def _project_root(start: Path) -> Path | None:
    from branchkeeper.git.repo import repo_facts

    try:
        return repo_facts(start).toplevel
    except NotARepositoryError:
        return None


def _hosts(args: argparse.Namespace, root: Path | None, *, uninstall: bool) -> list[Host]:
    """The hosts ``--host`` names; for ``auto`` every host present (or, to uninstall, every
    host with our entries). Raises ConfigError when auto finds none."""
    if args.host != "auto":
        return [HOSTS[args.host]()]
    home = Path.home()
    found = [h for h in (load() for load in HOSTS.values())
             if (h.installed(project_root=root, home=home) if uninstall
                 else h.present(project_root=root, home=home))]
    if not found:
        raise ConfigError("--host auto: no agent host's configuration directory was found "
                          f"({', '.join(HOSTS)}); name one with --host" if not uninstall else
                          "--host auto: no host has branchkeeper hook entries; nothing to do")
    return found


def _finish(host: Host, path: Path, changes: list[Change], *, dry_run: bool,
            settings: dict[str, object], verb: str, text: str | None = None) -> bool:
    """Print the changes and write ``settings`` (``text`` exactly when given) unless
    ``dry_run``; whether it was written."""
    for change in changes:
        print(change.render())
    if not changes:
        print(f"{path}: already {verb}; nothing changed")
    elif dry_run:
        print(f"dry run: {path} was not written")
    else:
        write_json(path, settings, text=text)
        print(f"wrote {path}")
        if host.NAME in ("codex", "gemini") and verb == "installed":
            print(f"{host.TITLE} asks you to review and trust new or changed hooks once "
                  f"({'/hooks' if host.NAME == 'codex' else 'on its next start'}).")
        return True
    return False


#: One host's file, read and checked before anything is written: (host, path, content before,
#: its bytes before or None when missing, new content, changes).
_Plan = tuple["Host", Path, dict[str, object], "bytes | None", dict[str, object], list[Change]]


def _plan(host: Host, path: Path, *, uninstall: bool, program: str) -> _Plan:
    """Read and check ``path`` (:func:`check_hooks`, raising ConfigError) and compute the new
    content; for uninstall, given back the shape the user had (:mod:`install_record`)."""
    before = path.read_bytes() if path.is_file() else None
    current = load_json(path)
    check_hooks(current, path)
    if not uninstall:
        settings, changes = host.merge(current, program)
        return host, path, current, before, settings, changes
    settings, changes = host.unmerge(current)
    settings = record.restore(settings, current, record.recorded(path, before))
    return host, path, current, before, settings, changes


def _apply(plan: _Plan, *, uninstall: bool, dry_run: bool) -> None:
    """Write (or remove) one planned file and keep the install record true."""
    host, path, current, before, settings, changes = plan
    shape = record.recorded(path, before)
    if uninstall and changes and not settings and shape is not None and shape.created:
        _remove(path, changes, dry_run=dry_run)
        if not dry_run:
            record.forget(path)
        return
    verb = "uninstalled" if uninstall else "installed"
    text = record.original_text(settings, shape) if uninstall else None
    if not _finish(host, path, changes, dry_run=dry_run, settings=settings, verb=verb,
                   text=text):
        return
    if uninstall:
        record.forget(path)
        return
    if shape is None:
        unmerged, removed = host.unmerge(current)
        shape = record.found(current, unmerged, before=before, had_ours=bool(removed))
    record.remember(path, shape, path.read_bytes())


def _each(args: argparse.Namespace, *, uninstall: bool) -> int:
    """Install into (or uninstall from) each host's file for the scope. Every file is read and
    checked (:func:`check_hooks`) before any is written, so a file of the wrong shape stops the
    command with nothing changed anywhere."""
    start = Path(getattr(args, "directory", None) or ".").resolve()
    root = None if args.scope == "user" and args.host != "auto" else _project_root(start)
    hosts = _hosts(args, root, uninstall=uninstall)
    program = "" if uninstall else resolve_program(args.command or ENTRY,
                                                   executable=sys.executable)
    plans: list[_Plan | str] = []
    for host in hosts:
        if args.scope not in host.SCOPES:
            if args.host != "auto":
                raise ConfigError(f"{host.TITLE} has no --scope {args.scope} "
                                  f"({' or '.join(host.SCOPES)})")
            plans.append(f"{host.TITLE}: no --scope {args.scope}; skipped")
            continue
        path = host.config_path(args.scope, project_root=root, home=Path.home())
        if uninstall and not path.exists():
            plans.append(f"{path}: does not exist; nothing changed")
            continue
        plans.append(_plan(host, path, uninstall=uninstall, program=program))
    for plan in plans:
        if isinstance(plan, str):
            print(plan)
        else:
            _apply(plan, uninstall=uninstall, dry_run=args.dry_run)
    return int(ExitCode.OK)


def _remove(path: Path, changes: list[Change], *, dry_run: bool) -> None:
    """A file install created, emptied again, says no more than no file: it goes, rather than
    staying behind as ``{}``."""
    for change in changes:
        print(change.render())
    if dry_run:
        print(f"dry run: {path} would be removed (branchkeeper created it; it holds nothing "
              "else)")
        return
    path.unlink()
    print(f"removed {path} (branchkeeper created it; it held nothing else)")


def _byte_compile() -> None:
    """Byte-compile branchkeeper's modules, as ``pip install`` does for a regular install, so
    no hook call compiles source: an editable install under ``PYTHONDONTWRITEBYTECODE`` never
    writes bytecode itself, and compiling the hook path costs ~80 ms on every tool call. Best
    effort and silent: a read-only installation stays as it is."""
    import compileall
    import contextlib
    import io

    import branchkeeper

    with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
        compileall.compile_dir(Path(branchkeeper.__file__).parent, quiet=2)


# -- git's own hook (issue 15) ----------------------------------------------------------------
def _hooks_dir(args: argparse.Namespace) -> Path:
    from branchkeeper.adapters import git_hooks
    from branchkeeper.git.repo import repo_facts

    start = Path(getattr(args, "directory", None) or ".").resolve()
    git_hooks.check_git_version(start if start.is_dir() else Path("/"))
    facts = repo_facts(start)
    directory, note = git_hooks.hooks_dir(facts.root)
    if note:
        print(f"note: {note}")
    return directory


def _git_hook_program(value: str | None) -> str:
    """The program the git hook shim runs: ``absolute`` (the default) is this installation's
    ``branchkeeper`` next to the running interpreter, else ``<python> -m branchkeeper``."""
    import shlex

    if value is None or value == "absolute":
        script = Path(sys.executable).parent / "branchkeeper"
        if script.is_file():
            return shlex.quote(str(script))
        return f"{shlex.quote(sys.executable)} -m branchkeeper"
    return resolve_program(value, executable=sys.executable)


def _finish_git(changes: Sequence[GitHookChange], directory: Path, *, dry_run: bool,
                verb: str) -> int:
    for change in changes:
        print(change.render())
    if not changes:
        print(f"{directory}: git hook already {verb}; nothing changed")
    elif dry_run:
        print(f"dry run: {directory} was not changed")
    return int(ExitCode.OK)


def run_install_git_hooks(args: argparse.Namespace) -> int:
    """``install --git-hooks``: the reference-transaction shim."""
    from branchkeeper.adapters import git_hooks

    directory = _hooks_dir(args)
    changes = git_hooks.install(directory, _git_hook_program(args.command), dry_run=args.dry_run)
    if not args.dry_run:
        _byte_compile()
    return _finish_git(changes, directory, dry_run=args.dry_run, verb="installed")


def run_uninstall_git_hooks(args: argparse.Namespace) -> int:
    """``uninstall --git-hooks``: remove only our shim, restore a chained hook."""
    from branchkeeper.adapters import git_hooks

    directory = _hooks_dir(args)
    changes = git_hooks.uninstall(directory, dry_run=args.dry_run)
    return _finish_git(changes, directory, dry_run=args.dry_run, verb="uninstalled")


def run_install(args: argparse.Namespace) -> int:
    """Merge our hook entries into each host's configuration file (and byte-compile the
    package for the hook path, see :func:`_byte_compile`); with ``--git-hooks`` git's own
    hook instead."""
    if args.git_hooks:
        return run_install_git_hooks(args)
    if not args.dry_run:
        _byte_compile()
    return _each(args, uninstall=False)


def run_uninstall(args: argparse.Namespace) -> int:
    """Remove our hook entries (only ours) from each host's configuration file; with
    ``--git-hooks`` git's own hook instead."""
    if args.git_hooks:
        return run_uninstall_git_hooks(args)
    return _each(args, uninstall=True)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", choices=[*HOSTS, "auto"], default="claude",
                        help="the agent host: claude (default), codex, cursor, gemini, copilot, "
                             "or auto for every host whose configuration directory exists")
    parser.add_argument("--scope", choices=SCOPES, default="project",
                        help="project (default): the repository's file (.claude/settings.json, "
                             ".codex/hooks.json, .cursor/hooks.json, .gemini/settings.json, "
                             ".github/hooks/branchkeeper.json); local: "
                             ".claude/settings.local.json (Claude Code only); user: the file "
                             "in your home directory")
    parser.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    parser.add_argument("--git-hooks", action="store_true",
                        help="git's reference-transaction hook (the git-level safety net for "
                             "branch deletions and rewinds, docs/git-hook.md) instead of an agent "
                             "host's hooks")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``install`` and ``uninstall`` commands."""
    install = subparsers.add_parser(
        "install", help="install the agent-host hooks (--git-hooks: git's own hook)",
        description="Merge one branchkeeper entry per hook event into the agent host's "
                    "configuration file for the scope (Claude Code by default: "
                    ".claude/settings.json), keeping every other setting and hook; running it "
                    "twice changes nothing. Each entry runs `branchkeeper-hook HOST EVENT`. "
                    "See docs/hosts.md. With --git-hooks, write git's reference-transaction "
                    "hook instead: every branch deletion or rewind that would lose commits is "
                    "kept (or refused, branches.git_hook.mode), whoever runs it "
                    "(docs/git-hook.md).")
    _common(install)
    install.add_argument("--command", default=None, metavar="CMD",
                         help=f"program the hooks run: '{ENTRY}' (default for an agent host, "
                              "on PATH), a shell-quoted prefix, or 'absolute' for this "
                              "installation's absolute path (the default for --git-hooks, "
                              "with 'branchkeeper')")
    install.set_defaults(func=run_install)
    uninstall = subparsers.add_parser(
        "uninstall", help="remove the agent-host hooks (--git-hooks: git's own hook)",
        description="Remove branchkeeper's entries (only those) from the agent host's "
                    "configuration file for the scope; a file install created is removed once "
                    "it holds nothing else, a file you had is given back as it was (recorded "
                    "in $XDG_CONFIG_HOME/branchkeeper/installed-hooks.json). Every other "
                    "setting and hook stays. With --git-hooks, remove "
                    "git's reference-transaction hook if it is branchkeeper's, and put back a "
                    "hook it had chained.")
    _common(uninstall)
    uninstall.set_defaults(func=run_uninstall)
