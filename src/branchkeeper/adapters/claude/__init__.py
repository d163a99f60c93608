"""The Claude Code adapter: hook wire format, session state, branch records, installer.

``wire`` parses event JSON and builds each event's answer; ``session`` keeps per-session state
under the common git dir; ``records`` writes and reads the ``branch.<name>.branchkeeper*`` git
config records; ``install`` merges our hook entries into a Claude Code settings file. The hook
entry point itself is ``branchkeeper.adapters.commands.hook``.
"""
