"""The last sweep's per-branch summary, ``<common git dir>/branchkeeper/last-sweep.json``:
written by the inventory, read by the guards, the hook and the session summary.

Kept apart from the inventory so that the hook path can read it without importing it.

The file: ``{"version": 2, "time": unix s, "branches": {name: [tip, state, stage, containment,
age_days, worktree]}, "cleanup": {name: text}, "lost": {worktree path: [line]}, "order": "age",
"refs": KEY, "config": KEY, "complete": bool}``. ``lost`` holds the LOST WORK RISK lines the
sweep printed for what a worktree holds (``analysis.lost_work.risk_line``), where the writer
read the worktrees: a creation denial prints them beside the branch checked out there. Ages are
as of ``time``, and every reader brings them forward by the
time since (the product's clock, never the file's mtime), so the file is rewritten only when
what it says changes (:func:`write_last_sweep`). ``cleanup`` holds, for each proven branch (a
preserved state), what deletes it as the sweep prints it (``analysis.suggest.cleanup_suggestion``,
with the record of the linked worktree it is checked out in where the writer read the
worktrees): the command that deletes it, or ``not deleted: <refusal>`` and what lifts it; the
creation denials print it instead of judging again. A file without ``version`` is version 1: it
has no ``cleanup``, and a reader falls back to what it did before (:attr:`LastSweep.cleanup` is
None). The rows are
written oldest first (``order: "age"``: by age descending, then name), so a reader that needs
the oldest few branches of some kind walks them in order instead of sorting thousands;
``refs`` is :func:`refs_key` of the refs the sweep read and ``config`` the key of the
configuration it classified with (``state.config_cache.config_key``), so a reader can tell a
sweep that still describes the repository exactly (same refs, same config, ``complete``: no
branch left unknown by the budget) from one it must not take whole. A file written before these
fields existed has none of them and reads as "not known to be current".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from branchkeeper import clock
from branchkeeper.state.jsonfile import read_json, write_json_atomic

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from branchkeeper.git.locate import Repo
    from branchkeeper.model.records import BranchRecord

#: File name under ``<common git dir>/branchkeeper/``.
LAST_SWEEP = "last-sweep.json"
#: The format this module writes (``version``); 1 (no ``version`` key) had no ``cleanup``.
FORMAT_VERSION = 2


def read_last_sweep(common_dir: Path) -> dict[str, list[object]]:
    """``{name: [tip, state, stage, containment, age_days, worktree]}`` from the last sweep.

    Empty when there is none or it is unreadable. No git process. A reader trusts an entry
    only while the branch is still at the recorded tip.
    """
    return {k: v for k, v in read_last_sweep_rows(common_dir).items()
            if isinstance(v, list) and len(v) == 6}


def read_last_sweep_rows(common_dir: Path) -> dict[str, object]:
    """The ``branches`` mapping of the last sweep as written, rows not checked (the hook's
    creation decision checks only the rows it reads); empty when there is none or it is
    unreadable. No git process."""
    data = read_json(common_dir / "branchkeeper" / LAST_SWEEP)
    rows = data.get("branches") if isinstance(data, dict) else None
    return rows if isinstance(rows, dict) else {}


def read_sweep_file(common_dir: Path) -> dict[str, object] | None:
    """The whole last-sweep file (``time``, ``branches``, ``order``, ``refs``, ``config``,
    ``complete``: see the module docstring), rows not checked; None when there is none, it is
    unreadable, or it is not an object whose ``branches`` is an object. No git process."""
    data = read_json(common_dir / "branchkeeper" / LAST_SWEEP)
    if not isinstance(data, dict) or not isinstance(data.get("branches"), dict):
        return None
    return data


#: The ``order`` of the rows in a file written by :func:`last_sweep_summary`.
ORDER_AGE = "age"


def refs_key(remote_head: str, local: Mapping[str, str | None],
             remote: Mapping[str, str | None]) -> str:
    """A digest of a repository's branch refs: ``remote_head`` (the ``<remote>/HEAD`` target,
    ``""`` when none), ``local`` (branch name -> tip, ``refs/heads``) and ``remote`` (branch
    name -> tip under ``refs/remotes/<remote>``, symbolic refs excluded). Equal keys: the
    same refs at the same tips. 32 hex digits."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(remote_head.encode("utf-8", "surrogateescape") + b"\0")
    for mark, refs in ((b"L", local), (b"R", remote)):
        for name in sorted(refs):
            digest.update(mark + name.encode("utf-8", "surrogateescape") + b"\0"
                          + (refs[name] or "").encode("ascii", "replace") + b"\n")
    return digest.hexdigest()


def _age_key(r: BranchRecord) -> tuple[float, str]:
    return (-(r.age_days or 0.0), r.name)


def last_sweep_summary(records: list[BranchRecord], now: float, *, refs: str = "",
                       config: str = "", complete: bool = False,
                       cleanup: Mapping[str, str] | None = None,
                       lost: Mapping[str, Sequence[str]] | None = None) -> dict[str, object]:
    """What the guards read instead of a full inventory: per branch name, the state at a tip,
    oldest first, and ``cleanup`` (proven branch name -> what ``delete`` does with it; see
    the module docstring for the fields). A reader trusts an entry only while the branch is
    still at that tip."""
    from branchkeeper.model.records import branch_age  # not at the top: the hook reads this

    at = int(now)  # the ages are as of ``time`` exactly: a later sweep can tell it says the same
    return {
        "version": FORMAT_VERSION,
        "time": at,
        "branches": {
            r.name: [r.tip, r.state.value, r.stage.value if r.stage else None,
                     r.containment.value if r.containment else None,
                     r.age_days if r.tip_date is None else round(
                         branch_age(r.tip_date, r.created, at) or 0.0, 2), r.worktree]
            for r in sorted(records, key=_age_key)
        },
        "cleanup": dict(cleanup or {}),
        "lost": {path: list(lines) for path, lines in (lost or {}).items()},
        "order": ORDER_AGE,
        "refs": refs,
        "config": config,
        "complete": complete,
    }


def write_last_sweep(common_dir: Path, records: list[BranchRecord], now: float, *,
                     refs: str = "", config: str = "", complete: bool = False,
                     cleanup: Mapping[str, str] | None = None,
                     lost: Mapping[str, Sequence[str]] | None = None) -> bool:
    """Replace the last sweep's file with :func:`last_sweep_summary` of ``records`` (atomic;
    errors ignored, as for every small state file), unless the file there already says
    exactly that as of its own ``time`` (same rows, ages at that time, same keys): a warm
    sweep that found nothing new leaves it, and its ``time``, as they were (its readers bring
    the ages forward). ``refs``: :func:`refs_key` of the refs the sweep read; ``config``: the
    configuration's key; ``complete``: no record is unknown because the budget ran out;
    ``cleanup``: what ``delete`` does with each proven branch; ``lost``: the LOST WORK RISK
    lines of each worktree. Returns whether it wrote."""
    path = common_dir / "branchkeeper" / LAST_SWEEP
    old = read_json(path)
    written = old.get("time") if isinstance(old, dict) else None
    if type(written) is int and written <= now and old == last_sweep_summary(
            records, written, refs=refs, config=config, complete=complete, cleanup=cleanup,
            lost=lost):
        return False
    write_json_atomic(path, last_sweep_summary(records, now, refs=refs, config=config,
                                               complete=complete, cleanup=cleanup, lost=lost))
    return True


def previous_lost(common_dir: Path) -> dict[str, list[str]]:
    """The last-sweep file's ``lost`` map (worktree path -> its LOST WORK RISK lines), the
    entries of the right shape only; ``{}`` when there is no file or it has none. For a pass
    that reads no worktree, which keeps what the last one that did read them said. No git
    process."""
    data = read_sweep_file(common_dir)
    lost = data.get("lost") if data is not None else None
    if not isinstance(lost, dict):
        return {}
    return {path: lines for path, lines in lost.items()
            if type(path) is str and type(lines) is list
            and all(type(line) is str for line in lines)}


def previous_cleanup(common_dir: Path) -> dict[tuple[str, str], str]:
    """The last-sweep file's ``cleanup`` texts keyed by (branch name, the tip its row
    records), for a writer that carries a text over for a branch still at that tip; empty when
    there is no file or it has none. No git process."""
    data = read_sweep_file(common_dir)
    cleanup = data.get("cleanup") if data is not None else None
    if data is None or not isinstance(cleanup, dict):
        return {}
    rows = data["branches"]
    assert isinstance(rows, dict)  # read_sweep_file checked it
    out: dict[tuple[str, str], str] = {}
    for name, text in cleanup.items():
        row = rows.get(name)
        if type(text) is str and type(row) is list and row and type(row[0]) is str:
            out[(name, row[0])] = text
    return out


#: Ages at or past this many days in a sweep file are unknown (a file written by hand, or
#: corrupt: ``1e999`` reads as infinity, which no day count can print).
MAX_AGE_DAYS = 1_000_000.0


class LastSweep(NamedTuple):
    """The last sweep's per-branch rows as written, ``{name: [tip, state, stage, containment,
    age_days, worktree]}`` (not validated here: thousands per hook call, so a reader checks the
    rows it uses, as :meth:`entry` does), and ``elapsed_days`` since the file was written. A row
    is trusted only while its branch is still at ``tip``."""

    rows: dict[str, object]
    elapsed_days: float
    #: proven branch name -> what ``delete`` does with it (its row at the same tip says which
    #: tip); None for a file of format 1, which had none
    cleanup: dict[str, object] | None = None
    #: worktree path -> the LOST WORK RISK lines the sweep printed for it (empty: none, or a
    #: file without them)
    lost: dict[str, object] = {}  # noqa: RUF012 (a NamedTuple default, never mutated)

    def entry(self, name: str, tip: str) -> SweepEntry | None:
        """The row of ``name`` when it is well formed and still at ``tip``, ages brought
        forward to now; None otherwise. A field of the wrong type, or an age that is not a
        number in [0, MAX_AGE_DAYS) (NaN, infinite, negative, absurd), reads as unknown (None)."""
        row = self.rows.get(name)
        if type(row) is not list or len(row) != 6 or row[0] != tip or type(row[1]) is not str:
            return None
        _, state, stage, cont, age, wt = row
        return SweepEntry(tip, state, stage if type(stage) is str else None,
                          cont if type(cont) is str else None,
                          age + self.elapsed_days if (type(age) is float or type(age) is int)
                          and 0 <= age < MAX_AGE_DAYS else None,
                          wt if type(wt) is str else None)


class SweepEntry(NamedTuple):
    """One branch of the last sweep, still at ``tip`` (see :meth:`LastSweep.entry`)."""

    tip: str
    state: str
    stage: str | None
    containment: str | None
    age_days: float | None
    worktree: str | None


#: No sweep yet (or an unreadable one).
NO_SWEEP = LastSweep({}, 0.0)


def read_sweep(repo: Repo) -> LastSweep:
    """The last sweep's per-branch summary and, from a file of the current format, its
    ``cleanup`` texts (no git); :data:`NO_SWEEP` when there was none or it is unreadable. One
    JSON read, no per-row work (see :class:`LastSweep`)."""
    path = Path(repo.common_dir) / "branchkeeper" / LAST_SWEEP
    data = read_json(path)
    rows = data.get("branches") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(rows, dict) or not rows:
        return NO_SWEEP
    # Ages were written at ``time``, by the same clock as now (``BRANCHKEEPER_NOW`` pins
    # both); the file's mtime is the wall clock's, and only a file without ``time`` uses it.
    written = data.get("time")
    try:
        at = written if type(written) is int else path.stat().st_mtime
    except OSError:
        return NO_SWEEP
    elapsed = max(0.0, (clock.now() - at) / 86400.0)
    cleanup = data.get("cleanup")
    lost = data.get("lost")
    return LastSweep(rows, elapsed, cleanup if data.get("version") == FORMAT_VERSION
                     and isinstance(cleanup, dict) else None,
                     lost if isinstance(lost, dict) else {})
