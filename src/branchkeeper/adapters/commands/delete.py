"""``branchkeeper delete NAME...``: delete branches behind their proofs, a verified bundle and the
journal (issue 3, section 3; DESIGN.md guarantees 1-5).

Exit 0: every named branch deleted (dry run: every one would be); 5: the batch was refused (a
refusal, an unproven or unknown name) or a tip raced; 4: an error (lock busy, bundle failure).
"""

from __future__ import annotations

import argparse
import json
import sys

from branchkeeper.actions.cleanup import Plan
from branchkeeper.actions.cleanup_exec import Outcome
from branchkeeper.actions.cleanup_run import run_delete
from branchkeeper.adapters.common import open_repository
from branchkeeper.errors import ExitCode, RefusedError, UsageError
from branchkeeper.render.cleanup import outcome_json, render_text

#: The word a person types to delete unproven work.
CONFIRM_WORD = "DELETE"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "delete", help="delete branches whose work is proven preserved (bundle, journal, undo)",
        description=(
            "Classify every NAME (refusals, then the verdict sweep shows, from the proof ladder: "
            "ancestor, patch_equivalent, squash_merged, tip_subsumed, content_on_base); any "
            "refused, unknown, unproven or superseded name refuses the whole batch (an unstarted "
            "branch, at the default branch's tip, loses nothing and is deleted). Otherwise "
            "write one verified recovery bundle, journal the "
            "operation, delete with compare-and-swap at the proven tips and print the command "
            "that restores each branch. Exit 0 deleted, 5 refused or raced, 4 error."),
    )
    p.add_argument("names", nargs="+", metavar="NAME",
                   help="branch names (put -- before a name that starts with '-')")
    p.add_argument("--dry-run", action="store_true", help="classify and show; delete nothing")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--remote", action="store_true",
                   help="also delete each branch on the remote (branches.remote) when its "
                        "remote-tracking tip is proven and the live tip still matches")
    p.add_argument("--allow-unproven", action="store_true",
                   help="delete unproven branches too (bundled first); needs --reason and a "
                        "person typing a confirmation word at a terminal")
    p.add_argument("--reason", default=None, metavar="TEXT",
                   help="why unproven work may go (recorded in the journal)")
    p.set_defaults(func=run)


def confirm_at_terminal(plan: Plan) -> None:
    """Ask a person at the controlling terminal to type :data:`CONFIRM_WORD`.

    Raises :class:`RefusedError` when stdin or stdout is not a terminal (an agent cannot consent
    for itself), when ``/dev/tty`` cannot be opened, or when the word typed differs.
    """
    unproven = [i for i in plan.deletions if i.proof is None]
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise RefusedError(
            f"--allow-unproven would delete {len(unproven)} unproven branch"
            f"{'es' if len(unproven) != 1 else ''} and needs a person to confirm at a terminal; "
            "an agent cannot consent for itself. Nothing was deleted.")
    try:
        # Two handles: a text-mode "r+" file on a terminal is not seekable and cannot be used.
        with open("/dev/tty", "w", encoding="utf-8") as out, \
                open("/dev/tty", encoding="utf-8") as inp:
            out.write("These branches have NO proof that their work is preserved:\n")
            for item in unproven:
                out.write(f"  {item.name}  {item.tip.short if item.tip else '-'}  "
                          f"{item.reason}\n")
            out.write(f"A recovery bundle is written first. Type {CONFIRM_WORD} to delete: ")
            out.flush()
            answer = inp.readline().strip()
    except OSError as exc:
        raise RefusedError(f"cannot read a confirmation from the terminal ({exc}); "
                           "nothing was deleted") from None
    if answer != CONFIRM_WORD:
        raise RefusedError("not confirmed; nothing was deleted")


def exit_code(outcome: Outcome) -> int:
    """0 when everything planned went (or would go), 5 when refused or raced, 130 when a
    signal stopped it at a safe point."""
    if outcome.interrupted:
        return int(ExitCode.INTERRUPTED)
    return int(ExitCode.OK if outcome.all_done else ExitCode.REFUSED)


def emit(outcome: Outcome, *, as_json: bool, code: int) -> None:
    """Print the outcome; an interrupted one also says so on stderr."""
    if as_json:
        json.dump(outcome_json(outcome, exit_code=code), sys.stdout, indent=2,
                  ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(outcome))
    if outcome.interrupted:
        print(f"branchkeeper: {outcome.interrupted}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.allow_unproven and not (args.reason or "").strip():
        raise UsageError("--allow-unproven needs --reason TEXT")
    if args.reason and not args.allow_unproven:
        raise UsageError("--reason is only used with --allow-unproven")
    facts, loaded = open_repository(args)
    outcome = run_delete(
        facts, loaded.config, args.names, remote=args.remote,
        allow_unproven=args.allow_unproven, dry=args.dry_run,
        confirm=confirm_at_terminal, reason=args.reason)
    code = exit_code(outcome)
    emit(outcome, as_json=args.json, code=code)
    return code
