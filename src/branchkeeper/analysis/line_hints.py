"""Which shared branches look like integration lines the configuration has not declared (issue
12, section 5; first document, section 10: "the sweep's first report lists long-lived branches
that look like lines (names matching ``release*``, ``epic*``, ``develop*``, ``hotfix*``) as
'declare these?'").

A branch is suggested when its name (or its first ``/`` component) starts with one of those
words, it is shared (a copy is on the remote: a line lives there), and the configuration does
not settle it yet (it is not the default branch, a declared line or exempt). The suggestion stands until the
configuration declares it (``branches.integration_lines``) or dismisses it
(``branches.not_integration_lines``, for work branches that merely carry such a name). A merged
one is suggested too: undeclared, ``sweep --clean`` would delete it. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from branchkeeper.analysis.refs import matches_any
from branchkeeper.model.records import BranchRecord, BranchState

#: The words a line's name starts with (first document, section 10).
LINE_WORDS = ("release", "epic", "develop", "hotfix")
_LIKE_A_LINE = re.compile(r"\A(?:release|epic|develop|hotfix)", re.IGNORECASE)
#: States of a branch the configuration already settled (a merged line-like branch is still
#: suggested: it is what ``sweep --clean`` would otherwise delete).
_DECLARED = frozenset({BranchState.DEFAULT, BranchState.INTEGRATION_LINE, BranchState.EXEMPT})


@dataclass(frozen=True, slots=True)
class LineHint:
    """The suggestion: the branches, the globs that would declare them, and the exact config
    lines that declare (``declare``) or dismiss (``dismiss``) them: each the whole key, the
    globs the config already lists first, so it replaces that key under ``branches:``."""

    branches: tuple[str, ...]
    globs: tuple[str, ...]
    declare: str
    dismiss: str

    def to_json(self) -> dict[str, object]:
        return {"branches": list(self.branches), "globs": list(self.globs),
                "declare": self.declare, "dismiss": self.dismiss}


def _glob(name: str) -> str:
    head, sep, _rest = name.partition("/")
    return f"{head}/*" if sep else name


def _flow(key: str, globs: Sequence[str]) -> str:
    return f"branches: {{{key}: [{', '.join(json.dumps(g) for g in globs)}]}}"


def line_hint(records: Sequence[BranchRecord], branches: object) -> LineHint | None:
    """The suggestion for ``records`` under the ``branches:`` config block, or ``None`` when
    nothing looks like an undeclared line."""
    dismissed = list(getattr(branches, "not_integration_lines", ()))
    found = sorted(r.name for r in records
                   if r.state not in _DECLARED and r.remote_tip is not None
                   and _LIKE_A_LINE.match(r.name) and not matches_any(r.name, dismissed))
    if not found:
        return None
    globs = tuple(dict.fromkeys(_glob(n) for n in found))
    # the whole key as it would read: what the file already declares, then the new globs, so
    # the line replaces the key in place without dropping a declared glob
    lines = list(getattr(branches, "integration_lines", ()))
    return LineHint(tuple(found), globs,
                    _flow("integration_lines", tuple(dict.fromkeys([*lines, *globs]))),
                    _flow("not_integration_lines", tuple(dict.fromkeys([*dismissed, *globs]))))
