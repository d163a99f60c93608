"""The Claude Code adapter: hook wire format, worktree events, installer.

``wire`` parses event JSON and builds each event's answer; ``worktrees`` answers WorktreeCreate
and WorktreeRemove; ``install`` merges our hook entries into a Claude Code settings file. The
session state and the ``branch.<name>.branchkeeper*`` records the hook keeps are host-neutral
and live in ``branchkeeper.state`` (``session``, ``branch_records``). The hook entry point
itself is ``branchkeeper.adapters.commands.hook``.
"""
