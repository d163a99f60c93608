"""The branch states as a person reads them (DESIGN.md, vocabulary): every count line, listing
and denial prints a state through :func:`state_word`, never an internal proof or rule name.

Kept free of imports: the guards' hot path reads it.
"""

from __future__ import annotations

#: The states whose value names a proof or a rule rather than what happened. A
#: ``patch_equivalent`` branch landed as copies of its commits (a rebase merge) or as one
#: commit (a squash merge), or inside a branch that did; its proof says which.
_WORDS = {
    "patch_equivalent": "rebase- or squash-merged",
    "merged_into_line": "merged into a line",
    "integration_line": "integration line",
}


def state_word(state: str) -> str:
    """The words for ``state`` (a :class:`~branchkeeper.model.records.BranchState` value):
    ``rebase- or squash-merged`` for ``patch_equivalent``, ``merged into a line`` for
    ``merged_into_line``, ``integration line`` for ``integration_line``; any other state as
    it is (``merged``, ``live``, ``dormant``, ...)."""
    return _WORDS.get(state, state)
