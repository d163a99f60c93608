"""``branchkeeper log``: list the operations in the journal (issue 3, section 6)."""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from branchkeeper.adapters.commands.argtypes import positive_int
from branchkeeper.errors import ExitCode
from branchkeeper.state.bundles import orphans
from branchkeeper.state.journal import Journal, Operation
from branchkeeper.state.statedir import common_dir_of


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``log`` to the command parser."""
    parser = subparsers.add_parser(
        "log", help="list the destructive operations branchkeeper journaled (newest first)",
        description="List journaled operations, newest first: id, time, kind, status, number of "
                    "refs and the recovery bundle. Undo one with: branchkeeper undo ID",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array")
    parser.add_argument("-n", dest="limit", type=positive_int, metavar="N", default=None,
                        help="show only the N newest operations")
    parser.set_defaults(func=run)


def status_word(operation: Operation) -> str:
    """The operation's status, with ``+undone`` once a complete undo was recorded."""
    word = operation.status.value
    return f"{word}+undone" if operation.undone is not None else word


def operation_json(operation: Operation) -> dict[str, Any]:
    """The JSON record of one operation as ``log --json`` prints it."""
    return {
        "id": operation.id,
        "time": operation.time,
        "op": operation.op,
        "status": operation.status.value,
        "undone": operation.undone.time if operation.undone is not None else None,
        "items": len(operation.items),
        "results": {ref: r.outcome.value for ref, r in operation.results.items()},
        "bundle": str(operation.bundle.path) if operation.bundle is not None else None,
        "bundles": [str(b.path) for b in operation.bundles],
        "steps": len(operation.parts),
        "archives": [str(a.path) for a in operation.archives],
        "note": operation.note,
        "argv": list(operation.argv),
    }


def _bundle_cell(operation: Operation) -> str:
    """The first bundle's path, ``(+N more)`` when the steps wrote more; ``-`` for none."""
    bundles = operation.bundles
    if not bundles:
        return "-"
    more = f" (+{len(bundles) - 1} more)" if len(bundles) > 1 else ""
    return f"{bundles[0].path}{more}"


def render_text(operations: list[Operation]) -> str:
    """A table, one operation per line; ``no operations recorded`` when empty."""
    if not operations:
        return "no operations recorded\n"
    header = ("ID", "TIME", "OP", "STATUS", "ITEMS", "BUNDLE")
    rows = [header] + [
        (o.id, o.time, o.op, status_word(o), str(len(o.items)), _bundle_cell(o))
        for o in operations
    ]
    widths = [max(len(r[c]) for r in rows) for c in range(len(header) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        + "\n"
        for r in rows
    )


def orphan_rows(repo: Path, common: Path, operations: Sequence[Operation]) -> list[dict[str, Any]]:
    """Every bundle and archive no journal operation lists (written just before a crash),
    each verified here: ``{"id": null, "op": "orphan bundle"|"orphan archive", "status":
    "verified"|"damaged: <why>", "bundle": path, ...}``. They are kept, never deleted."""
    from branchkeeper.actions.bundle import BundleError, verify_bundle

    listed = {b.path for o in operations for b in o.bundles}
    listed |= {a.path for o in operations for a in o.archives}
    rows: list[dict[str, Any]] = []
    for path in orphans(common, listed):
        kind = "orphan bundle" if path.suffix == ".bundle" else "orphan archive"
        status = "verified"
        try:
            if kind == "orphan bundle":
                verify_bundle(repo, path)
            else:
                with tarfile.open(path, "r:") as tar:
                    tar.getmembers()
        except (BundleError, OSError, tarfile.TarError) as exc:
            status = "damaged: " + str(exc).splitlines()[0]
        rows.append({"id": None, "time": None, "op": kind, "status": status, "undone": None,
                     "items": 0, "results": {}, "bundle": str(path), "bundles": [str(path)],
                     "steps": 0, "archives": [],
                     "note": "no journal operation lists it; kept", "argv": []})
    return rows


def run(args: argparse.Namespace) -> int:
    """List the journal's operations newest first, then any orphan bundle or archive; exit 0."""
    repo = Path(args.directory or ".").resolve()
    common = common_dir_of(repo)
    journal = Journal(common)
    contents = journal.load()
    for skipped in contents.skipped:
        print(f"branchkeeper: warning: journal {journal.path} line {skipped.lineno} skipped: "
              f"{skipped.reason}", file=sys.stderr)
    stray = orphan_rows(repo, common, contents.operations)
    operations = list(reversed(contents.operations))
    if args.limit is not None:
        operations = operations[: max(args.limit, 0)]
    if args.json:
        print(json.dumps([*(operation_json(o) for o in operations), *stray], indent=2))
    else:
        sys.stdout.write(render_text(operations))
        for row in stray:
            print(f"{row['op']}  {row['bundle']}  {row['status']}; no journal operation lists "
                  "it; kept (restore from it with git fetch, or delete it by hand)")
    return int(ExitCode.OK)
