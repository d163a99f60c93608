"""Denials of what the guard cannot read or may not take (issue 5 section 3; follow-ups).

``R-GIT-UNPARSED-DESTRUCTIVE``: a destructive route whose target cannot be known (an
expansion, a command the parser could not read in full, a git failure while proving it), and
a command whose unread part may run git or ``rm``. ``R-BRANCHKEEPER-CONSENT``: a command that
holds ``--allow-unproven``, which only a person at a terminal may pass. Pure text, no git.
"""

from __future__ import annotations

from branchkeeper.policy.decision import Decision, Verdict

R_UNPARSED = "R-GIT-UNPARSED-DESTRUCTIVE"
R_CONSENT = "R-BRANCHKEEPER-CONSENT"


def unparsed_decision(what: str, why: str) -> Decision:
    """A destructive route whose target cannot be proven (issue 5 section 3): deny, saying why.
    When git itself failed (``why`` starts ``git could not answer``: a broken config, a damaged
    object) the way out is to mend what git reports, not to rewrite the command."""
    way_out = (
        "git itself failed in this repository: run `git status` to see what it reports (a "
        "configuration file it cannot parse, a missing object), mend that, then run the "
        "command again; or ask a human." if why.startswith("git could not answer") else
        "Rewrite the command with literal names and paths (no $VAR, $(...), globs, xargs or "
        "eval), one destructive step per command, so it can be proven; or ask a human.")
    return Decision(
        Verdict.DENY, R_UNPARSED,
        f"{what}, but the guard cannot tell exactly what it would destroy: {why}.", way_out)


def consent_decision() -> Decision:
    """``R-BRANCHKEEPER-CONSENT``: a command that holds ``--allow-unproven`` (issue 5 follow-up).
    Only a person at a terminal may confirm an unproven delete; an agent that passes the flag,
    even through ``script``, ``expect`` or a pipe feeding the confirmation, consents for them."""
    return Decision(
        Verdict.DENY, R_CONSENT,
        "The command holds `--allow-unproven`: deleting work that branchkeeper cannot prove "
        "is preserved needs the consent of a person at a terminal, and an agent may not give "
        "it (directly, or through `script`, `expect`, a pseudo-terminal or a piped answer).",
        "Prove the work is preserved instead: merge or push it, then `branchkeeper delete -- "
        "NAME`. If it is truly unwanted, ask a human to run the delete at their terminal. A "
        "command that only mentions the flag (a commit message) must not hold it literally: "
        "write the text to a file (`git commit -F FILE`).")


def unread_decision(why: str) -> Decision:
    """A command the parser could not read in full that may run a destructive git route or
    ``rm`` it did not read (issue 5 section 3): deny, saying why and what to do instead."""
    return Decision(
        Verdict.DENY, R_UNPARSED,
        f"The guard could not read the whole command ({why}), and the part it could not read "
        "may run git or rm and destroy work.",
        "Split it into simple commands and run the git command directly (not through a pipe "
        "into a shell, eval, a string built at run time, or deep nesting), one destructive "
        "step per command, so it can be proven; or ask a human.")
