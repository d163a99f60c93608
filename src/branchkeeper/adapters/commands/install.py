"""``branchkeeper install`` and ``branchkeeper uninstall``: Claude Code hook entries (issue 6,
section 3).

``install [--scope project|local|user] [--dry-run] [--command CMD]`` merges one entry per hook
event into the scope's settings file, keeping every other setting and hook; running it twice
changes nothing. ``uninstall`` removes only branchkeeper's entries. Both print what they changed.

``--command`` sets the program the entries run: ``branchkeeper`` (the default: found on PATH
when Claude Code runs the hook), any shell-quoted prefix, or ``absolute`` for this installation's
own entry point by absolute path (the ``branchkeeper`` script next to the running interpreter,
else ``<python> -m branchkeeper``), for environments where PATH differs.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from branchkeeper.adapters.claude import install as core
from branchkeeper.errors import ExitCode, NotARepositoryError

SCOPES = ("project", "local", "user")


def _program(value: str) -> str:
    if value != "absolute":
        # A path to an existing program is quoted for the user ("/opt/my tools/branchkeeper");
        # anything else is taken as the shell-quoted prefix it is documented to be.
        if os.path.isfile(value):
            return shlex.quote(value)
        try:
            words = shlex.split(value)
        except ValueError:
            words = []
        # A path with spaces written without quotes ("/opt/my tools/branchkeeper") would run
        # "/opt/my" from a shell: a value that starts like a path and splits is one path.
        if len(words) > 1 and value.startswith(("/", "~", "./", "../")) and \
                not os.path.exists(os.path.expanduser(words[0])) and \
                not any(q in value for q in "'\"\\"):
            return shlex.quote(value)
        return value
    script = Path(sys.executable).parent / core.DEFAULT_PROGRAM
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m {core.DEFAULT_PROGRAM}"


def _project_root(start: Path) -> Path | None:
    from branchkeeper.git.repo import repo_facts

    try:
        return repo_facts(start).toplevel
    except NotARepositoryError:
        return None


def _target(args: argparse.Namespace) -> Path:
    start = Path(getattr(args, "directory", None) or ".").resolve()
    root = None if args.scope == "user" else _project_root(start)
    return core.settings_path(args.scope, project_root=root, home=Path.home())


def _finish(path: Path, changes: list[core.Change], *, dry_run: bool, settings: dict[str, object],
            verb: str) -> int:
    for change in changes:
        print(change.render())
    if not changes:
        print(f"{path}: already {verb}; nothing changed")
        return int(ExitCode.OK)
    if dry_run:
        print(f"dry run: {path} was not written")
        return int(ExitCode.OK)
    core.write_settings(path, settings)
    print(f"wrote {path}")
    return int(ExitCode.OK)


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


def run_install(args: argparse.Namespace) -> int:
    """Merge our hook entries into the scope's settings file (and byte-compile the package
    for the hook path, see :func:`_byte_compile`)."""
    path = _target(args)
    settings, changes = core.merge(core.load_settings(path), _program(args.command))
    if not args.dry_run:
        _byte_compile()
    return _finish(path, changes, dry_run=args.dry_run, settings=settings, verb="installed")


def run_uninstall(args: argparse.Namespace) -> int:
    """Remove our hook entries (only ours) from the scope's settings file."""
    path = _target(args)
    if not path.exists():
        print(f"{path}: does not exist; nothing changed")
        return int(ExitCode.OK)
    settings, changes = core.unmerge(core.load_settings(path))
    if changes and not settings:
        # Nothing but our entries was in it (install created it): an empty settings file says
        # no more than no file, so it goes rather than staying behind as "{}".
        for change in changes:
            print(change.render())
        if args.dry_run:
            print(f"dry run: {path} would be removed (it holds only branchkeeper's hooks)")
            return int(ExitCode.OK)
        path.unlink()
        print(f"removed {path} (it held only branchkeeper's hooks)")
        return int(ExitCode.OK)
    return _finish(path, changes, dry_run=args.dry_run, settings=settings, verb="uninstalled")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", choices=SCOPES, default="project",
                        help="project: .claude/settings.json (default); local: "
                             ".claude/settings.local.json; user: ~/.claude/settings.json")
    parser.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``install`` and ``uninstall`` commands."""
    install = subparsers.add_parser(
        "install", help="install the Claude Code hooks",
        description="Merge one branchkeeper entry per Claude Code hook event into the scope's "
                    "settings file (project: .claude/settings.json), keeping every other setting "
                    "and hook; running it twice changes nothing. Each entry runs "
                    "`branchkeeper hook EVENT`. See docs/claude-code-hooks.md.")
    _common(install)
    install.add_argument("--command", default=core.DEFAULT_PROGRAM, metavar="CMD",
                         help="program the hooks run: 'branchkeeper' (default), a shell-quoted "
                              "prefix, or 'absolute' for this installation's absolute path")
    install.set_defaults(func=run_install)
    uninstall = subparsers.add_parser(
        "uninstall", help="remove the Claude Code hooks",
        description="Remove branchkeeper's entries (only those) from the scope's settings file; "
                    "a file left holding nothing else is removed. Every other setting and hook "
                    "stays.")
    _common(uninstall)
    uninstall.set_defaults(func=run_uninstall)
