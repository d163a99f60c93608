"""The Gemini CLI adapter: ``host`` (the Protocol's constants and functions), ``wire`` (its hook
JSON and each answer) and ``install`` (``.gemini/settings.json``, timeouts in milliseconds)."""
