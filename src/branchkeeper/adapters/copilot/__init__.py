"""The GitHub Copilot CLI (and cloud agent) adapter: ``host`` (the Protocol's constants and
functions), ``wire`` (both of its payload dialects and each answer) and ``install``
(``.github/hooks/branchkeeper.json``)."""
