"""The one principle text every deny ends with (first document, section 12).

Kept as one constant so the wording cannot drift between the WIP-cap, dormancy, force-removal,
evacuation and remote-delete denials; a test asserts it ends every deny of the guard corpus.
"""

from __future__ import annotations

#: Section 12's text, verbatim.
BRANCH_LIMIT_PRINCIPLE = (
    "The limit exists so work FINISHES, never so it disappears. Finish a branch (merge it), park "
    "it with a reason, or delete it only when the guard proves nothing is lost. Work that serves "
    "another lane goes on that lane's branch, not a new one. A patch or copy saved under an "
    "ignored or untracked directory is lost work, not compliance. If the limit seems to force a "
    "choice between losing work and exceeding it, stop and ask a human."
)
