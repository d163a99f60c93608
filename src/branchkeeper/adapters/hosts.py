"""Every agent host branchkeeper answers, in one static table (issue 14; STYLE.md: "a Protocol
plus a static table, not a plug-in seam").

Each entry loads one module whose ``HOST`` implements :class:`~branchkeeper.adapters.hooks.host.Host`
(mypy checks it against the Protocol here); a loader imports its host only when called, so a
hook call loads the one host it answers. Adding a host is one folder under ``adapters/`` and
one line here.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from branchkeeper.adapters.hooks.host import Host


def _claude() -> "Host":
    from branchkeeper.adapters.claude import host

    return host.HOST


def _codex() -> "Host":
    from branchkeeper.adapters.codex import host

    return host.HOST


def _cursor() -> "Host":
    from branchkeeper.adapters.cursor import host

    return host.HOST


def _gemini() -> "Host":
    from branchkeeper.adapters.gemini import host

    return host.HOST


def _copilot() -> "Host":
    from branchkeeper.adapters.copilot import host

    return host.HOST


#: Host name (as ``--host`` spells it) -> the loader of its module, in the order ``--host
#: auto`` and the docs list them.
HOSTS: "dict[str, Callable[[], Host]]" = {
    "claude": _claude,
    "codex": _codex,
    "cursor": _cursor,
    "gemini": _gemini,
    "copilot": _copilot,
}
