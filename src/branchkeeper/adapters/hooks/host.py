"""The Protocol every agent host implements (issue 14, point 1; STYLE.md: "a Protocol plus a
static table, not a plug-in seam").

A host is one module, ``branchkeeper.adapters.<host>.host``, whose ``HOST`` satisfies
:class:`Host` (mypy checks each against it where ``branchkeeper.adapters.hosts`` lists it).
Three jobs:

1. **parse** the host's event into a :class:`~branchkeeper.adapters.hooks.event.HookEvent`;
2. **render** an :class:`~branchkeeper.adapters.hooks.answer.Answer` in its exact wire format
   (and say how malformed input fails open there);
3. **install** into its configuration files: which files, which entries, recognising its own.

:class:`Delegate` is the base of every host: it hands each call on to the host's own ``wire``
or ``install`` module, imported when first called.

Only type names are imported here (at type-checking time): the hook path never loads
``typing``.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Protocol

    from branchkeeper.adapters.hooks.answer import Answer, HookResponse
    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.adapters.hooks.install import Change

    #: Where a shell command sits in one wire event, for the no-git fast path
    #: (:mod:`branchkeeper.adapters.hooks.fast`): (key of the tool name or None when the event
    #: is shell-only, the shell tool's names, key path of the command, "pre" or "post", the
    #: host's silent answer as bytes, tool names answered silently whatever their input).
    FastSpec = tuple[str | None, frozenset[str], tuple[str, ...], str, bytes, frozenset[str]]

    class Host(Protocol):
        """One agent host (see the module docstring)."""

        # Read-only members (properties here, attributes of each host's Delegate).
        @property
        def NAME(self) -> str:
            """Short name, as ``--host`` spells it (``claude``)."""

        @property
        def TITLE(self) -> str:
            """Name for people (``Claude Code``)."""

        @property
        def EVENTS(self) -> Mapping[str, str]:
            """Wire event name -> event kind (``branchkeeper.adapters.hooks.event.KINDS``)."""

        @property
        def FAST(self) -> Mapping[str, FastSpec]:
            """Wire events the fast path may answer from the raw bytes (see ``FastSpec``)."""

        @property
        def CLAUDE_EVENTS(self) -> Mapping[str, str]:
            """For a host that also runs Claude Code's hook entries: Claude event -> its
            event."""

        @property
        def SCOPES(self) -> tuple[str, ...]:
            """Install scopes, the first is the default (``project``, ``local``, ``user``)."""

        def parse(self, event: str, payload: dict[str, Any]) -> HookEvent:
            """Map wire event ``event`` with its decoded ``payload``; raises InputError."""

        def render(self, event: HookEvent, answer: Answer) -> HookResponse:
            """The exact wire output of ``answer`` to ``event``."""

        def fail_open(self, event: str, message: str) -> HookResponse:
            """What malformed input or an internal error answers (allow, in the host's sense),
            with ``message`` for the person."""

        def caller(self, payload: dict[str, Any], env: Mapping[str, str]) -> str:
            """The host that really ran this entry (another host may read our config files)."""

        def config_path(self, scope: str, *, project_root: Path | None, home: Path) -> Path:
            """The configuration file ``install --scope`` writes; raises ConfigError."""

        def present(self, *, project_root: Path | None, home: Path) -> bool:
            """Whether the host's configuration directory exists (``install --host auto``)."""

        def installed(self, *, project_root: Path | None, home: Path) -> bool:
            """Whether any file this host reads already holds a branchkeeper entry."""

        def merge(self, settings: dict[str, Any], program: str
                  ) -> tuple[dict[str, Any], list[Change]]:
            """``settings`` with our entries in place (a new dict), and the changes; idempotent.
            Raises ConfigError when the file's hook block has a shape we cannot merge into."""

        def unmerge(self, settings: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
            """``settings`` without our entries (a new dict), and the changes."""


class Delegate:
    """A host built from its constants, whose calls hand on to its own modules:
    ``branchkeeper.adapters.<name>.wire`` (``parse``, ``render``, ``fail_open``) and
    ``branchkeeper.adapters.<name>.install`` (``config_path``, ``config_files``, ``merge``,
    ``unmerge``), each imported when first called, so the fast path loads neither.

    The constants are those of :class:`Host`; ``command_keys`` are the keys of a hook entry that
    hold its command in the host's files. ``present`` looks for the directory ``.<name>`` in the
    home and project directories; ``caller`` is ``name``. A host whose rules differ subclasses
    it (issue 14, point 1).
    """

    def __init__(self, name: "str", *, title: "str", events: "Mapping[str, str]",
                 fast: "Mapping[str, FastSpec]", claude_events: "Mapping[str, str]",
                 scopes: "tuple[str, ...]", command_keys: "tuple[str, ...]" = ("command",)
                 ) -> None:
        self.NAME = name
        self.TITLE = title
        self.EVENTS = events
        self.FAST = fast
        self.CLAUDE_EVENTS = claude_events
        self.SCOPES = scopes
        self.COMMAND_KEYS = command_keys

    def _module(self, leaf: "str") -> "Any":
        return __import__(f"branchkeeper.adapters.{self.NAME}.{leaf}", fromlist=(leaf,))

    def parse(self, event: "str", payload: "dict[str, Any]") -> "HookEvent":
        """Map wire event ``event`` with its decoded ``payload``; raises InputError for an event
        the host does not have."""
        if event not in self.EVENTS:
            from branchkeeper.adapters.hooks.event import InputError

            raise InputError(f"unknown hook event {event!r}")
        parsed: HookEvent = self._module("wire").parse(event, self.EVENTS[event], payload)
        return parsed

    def render(self, event: "HookEvent", answer: "Answer") -> "HookResponse":
        """The exact wire output of ``answer`` to ``event``."""
        response: HookResponse = self._module("wire").render(event, answer)
        return response

    def fail_open(self, event: "str", message: "str") -> "HookResponse":
        """The host's allow, with ``message`` for the person."""
        response: HookResponse = self._module("wire").fail_open(event, message)
        return response

    def caller(self, payload: "dict[str, Any]", env: "Mapping[str, str]") -> "str":
        """This host: no other host runs its entries."""
        return self.NAME

    def config_path(self, scope: "str", *, project_root: "Path | None", home: "Path") -> "Path":
        """The file ``install --scope`` writes; raises ConfigError."""
        path: Path = self._module("install").config_path(
            scope, project_root=project_root, home=home)
        return path

    def present(self, *, project_root: "Path | None", home: "Path") -> "bool":
        """Whether ``.<NAME>`` is a directory in ``home`` or ``project_root``."""
        dot = "." + self.NAME
        return (home / dot).is_dir() or (project_root is not None
                                         and (project_root / dot).is_dir())

    def installed(self, *, project_root: "Path | None", home: "Path") -> "bool":
        """Whether any file the host reads holds a branchkeeper entry."""
        from branchkeeper.adapters.hooks.install import file_has_ours

        files = self._module("install").config_files(project_root=project_root, home=home)
        return any(file_has_ours(p, self.COMMAND_KEYS) for p in files)

    def merge(self, settings: "dict[str, Any]", program: "str"
              ) -> "tuple[dict[str, Any], list[Change]]":
        """``settings`` with our entries in place, and the changes; raises ConfigError."""
        merged: tuple[dict[str, Any], list[Change]] = self._module("install").merge(
            settings, program)
        return merged

    def unmerge(self, settings: "dict[str, Any]") -> "tuple[dict[str, Any], list[Change]]":
        """``settings`` without our entries, and the changes."""
        unmerged: tuple[dict[str, Any], list[Change]] = self._module("install").unmerge(settings)
        return unmerged
