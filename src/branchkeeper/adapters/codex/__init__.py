"""The OpenAI Codex CLI adapter: ``host`` (the Protocol's constants and functions), ``wire``
(its hook JSON, ``apply_patch`` bodies, and each answer in the exact shape Codex accepts) and
``install`` (``.codex/hooks.json``)."""
