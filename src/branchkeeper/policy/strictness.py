"""What "at least as strict" means for a protected file's new text: a policy
(``.branchkeeper.yaml``) whose every setting is no looser, a host's settings that keep every
branchkeeper hook entry. The tamper rule (:mod:`branchkeeper.policy.tamper`) allows a write
to a protected file only when its whole new content passes these (second document, the
tamper-resistance section)."""

from __future__ import annotations

import json
from typing import Any

from branchkeeper.model.hook_command import our_entries

_RANK = {"block": 3, "act": 2, "warn": 2, "advise": 1, "off": 0}
#: Keys where a smaller number is stricter, and where a larger one is.
_SMALLER = ("branches.wip.cap", "branches.dormancy.advisory_days", "branches.dormancy.noisy_days",
            "branches.dormancy.block_days", "branches.stop_guard.noisy_interval_minutes")
_LARGER = ("branches.stop_guard.max_blocks",)
#: List keys where only removing entries is stricter, and where only adding is.
_SUBSET = ("branches.exempt", "branches.cleanup_after_merge.regenerable",
           "worktrees.disposable_ignored", "worktrees.agent_state_disposable")
_SUPERSET = ("branches.protected_names", "worktrees.protected_ignored")
#: Keys that weaken nothing whatever their value (how long a sweep may take, and the like).
_FREE = ("branches.sweep.", "branches.dormancy.preset")  # the preset's days are compared


def _effective(text: str) -> dict[str, object] | None:
    """The effective values of a policy's text (:func:`effective_values`), the defaults when it
    is empty; None when it is not a valid policy (the guard would then fall back to the
    defaults, which may be looser than what it replaces)."""
    import yaml

    from branchkeeper.model.config import Config, effective_values

    try:
        raw = yaml.safe_load(text) if text.strip() else {}
        return effective_values(Config.model_validate(raw or {}))
    except Exception:  # any invalid text: not provably as strict
        return None


def _not_weaker(key: str, before: Any, after: Any) -> bool:
    if before == after or key.startswith(_FREE):
        return True
    if key in _SMALLER or key in _LARGER:
        if not isinstance(before, int | float) or not isinstance(after, int | float):
            return False
        return after <= before if key in _SMALLER else after >= before
    if key in _SUBSET or key in _SUPERSET:
        b, a = set(before or ()), set(after or ())
        return a <= b if key in _SUBSET else a >= b
    if key.endswith(".mode") or key.endswith(".unpushed_subagent"):
        return _RANK.get(str(after), -1) >= _RANK.get(str(before), 99)
    return False


def config_not_weaker(before: str, after: str) -> bool:
    """Whether the policy text ``after`` keeps every setting of ``before`` at least as strict:
    each mode at least as strict (block > warn > advise > off), counts and day limits no
    looser, no new exempt branch or regenerable glob, no protected name dropped; any other
    setting unchanged (sweep bounds are free)."""
    old, new = _effective(before), _effective(after)
    if old is None or new is None:
        return False
    return all(_not_weaker(k, old.get(k), new.get(k)) for k in old.keys() | new.keys())


def hooks_kept(before: str, after: str) -> bool:
    """Whether a host's settings text ``after`` keeps every branchkeeper hook entry that
    ``before`` has, each exactly as it was (event, matcher, command, timeout: the entries
    ``install`` writes, recognised by :func:`branchkeeper.model.hook_command.our_entries`),
    and does not switch every hook off (``disableAllHooks`` true, Claude Code's and Copilot's
    switch, where it was not before). Anything else may change; a text that is not a JSON
    object keeps nothing."""
    old, new = _settings(before), _settings(after)
    if old is None or new is None:
        return False
    switch = new.get("disableAllHooks")
    if switch not in (None, False) and switch != old.get("disableAllHooks"):
        return False
    return our_entries(old) <= our_entries(new)


def _settings(text: str) -> dict[str, Any] | None:
    """A JSON settings text parsed (``{}`` when blank); None when it is not a JSON object."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
