"""The Claude Code adapter: ``host`` (the Protocol's constants and functions, and who really
ran an entry), ``wire`` (its hook JSON and each answer) and ``install`` (the settings files).
The event glue, the session state and the records are host-neutral
(``branchkeeper.adapters.hooks``, ``branchkeeper.state``); the hook process is
``branchkeeper.adapters.hookrun``.
"""
