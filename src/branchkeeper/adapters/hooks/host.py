"""The Protocol every agent host implements (issue 14, point 1; STYLE.md: "a Protocol plus a
static table, not a plug-in seam").

A host is one module, ``branchkeeper.adapters.<host>.host``, whose module-level constants and
functions satisfy :class:`Host` (mypy checks each module against it where
``branchkeeper.adapters.hosts`` lists it). Three jobs:

1. **parse** the host's event into a :class:`~branchkeeper.adapters.hooks.event.HookEvent`;
2. **render** an :class:`~branchkeeper.adapters.hooks.answer.Answer` in its exact wire format
   (and say how malformed input fails open there);
3. **install** into its configuration files: which files, which entries, recognising its own.

Only type names are imported here (at type-checking time): the hook path never loads
``typing``.
"""

from __future__ import annotations

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

        # Read-only members (properties here, module constants in each host).
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
