"""The Cursor adapter: ``host`` (the Protocol's constants and functions), ``wire`` (its hook
JSON and each answer) and ``install`` (``.cursor/hooks.json``)."""
