"""``branchkeeper hook [--host HOST] EVENT``: answer one agent-host hook event (issue 6,
section 1; issue 14).

The same answer as the installed entry point ``branchkeeper-hook HOST EVENT``
(:mod:`branchkeeper.adapters.hookrun`); HOST defaults to ``claude``, which keeps the command
earlier versions installed (``branchkeeper hook PreToolUse``) working. The CLI calls
:func:`main_fast` before it builds any parser.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

DEFAULT_HOST = "claude"


def main_fast(argv: list[str]) -> int:
    """Run ``branchkeeper hook [--host HOST] EVENT`` with the event JSON on stdin; return the
    exit status (a usage problem fails open: one line on stderr, exit 0)."""
    from branchkeeper.adapters import hookrun

    if argv[:1] in (["-h"], ["--help"]):
        import argparse

        parser = argparse.ArgumentParser(prog="branchkeeper hook")
        _configure(parser)
        parser.print_help()
        return 0
    host = DEFAULT_HOST
    if argv[:1] == ["--host"] and len(argv) >= 2:
        host, argv = argv[1], argv[2:]
    elif argv[:1] and argv[0].startswith("--host="):
        host, argv = argv[0][len("--host="):], argv[1:]
    if not argv:
        return hookrun.emit_text("branchkeeper hook: ignored: no hook event given")
    if len(argv) > 1:
        return hookrun.emit_text(f"branchkeeper hook {argv[0]}: ignored: unexpected arguments "
                                 f"{argv[1:]!r}")
    return hookrun.run(host, argv[0])


def _configure(parser: argparse.ArgumentParser) -> None:
    from branchkeeper.adapters.hosts import HOSTS

    parser.description = (
        "Answer one agent-host hook event: reads the event JSON on stdin and prints that "
        "event's answer in the host's format. Installed (as `branchkeeper-hook HOST EVENT`) by "
        "`branchkeeper install --host HOST`; not meant to be run by hand.")
    parser.add_argument("--host", choices=list(HOSTS), default=DEFAULT_HOST,
                        help="the agent host whose event this is (default: claude)")
    parser.add_argument("event", help="the hook event name, in the host's spelling")


def register(subparsers: Any) -> None:
    """Add the ``hook`` command (listed in ``branchkeeper --help``)."""
    parser = subparsers.add_parser("hook", help="answer one agent-host hook event (stdin JSON)")
    _configure(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """argparse path (normally bypassed by :func:`main_fast`)."""
    from branchkeeper.adapters import hookrun

    return hookrun.run(str(args.host), str(args.event))
