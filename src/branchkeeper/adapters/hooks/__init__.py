"""The host-neutral half of the agent hooks (issue 14).

Every host adapter (``adapters/claude``, ``codex``, ``cursor``, ``gemini``, ``copilot``) maps its
wire input onto :class:`~branchkeeper.adapters.hooks.event.HookEvent` and renders an
:class:`~branchkeeper.adapters.hooks.answer.Answer` in its own wire format; nothing in this
package knows a host's format. ``event`` and ``answer`` are the two records, ``handlers`` maps
each event kind onto the guards, records and summaries (through ``glue``), ``worktrees`` answers
the worktree events, ``fast`` decides a command with no git from the raw stdin bytes, and
``host`` declares the Protocol every host module implements. The static table of hosts is
``branchkeeper.adapters.hosts``; the process entry point is ``branchkeeper.adapters.hookrun``.
"""
