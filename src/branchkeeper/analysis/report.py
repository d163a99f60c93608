"""Many repositories, worst first (issue 4, section 5; second document, ``--multi-repo --report``).

Read-only. :func:`discover` finds repositories (explicit ``--repo`` paths, a bounded scan of root
directories, or the user's ``repos.json``) and caps the de-duplicated list BEFORE any git work.
:func:`analyse` judges one repository (full tier: the inventory plus one ``status`` per linked
worktree; fast tier: one ``for-each-ref`` and one ``worktree list``); a broken repository gives a
row with its error, never an exception. :func:`rank` orders rows worst first: a repository that
could not be read (its work cannot be ruled out, as the sweep keeps what it cannot judge), work at LOST WORK
RISK (every kind: unpushed branches, detached commits, dirty worktrees, stashes, our refs, kept
ignored files), then dirty or unproven worktrees, then branches at the dormancy block stage,
then the rest (merged-not-deleted plus superseded plus dormant), and says why. Every count reads
the inventory's records as ``sweep`` shows them (one verdict): merged-not-deleted counts
remote-only branches too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from branchkeeper import clock
from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.analysis.lost_work import LostKind, read_lost_work
from branchkeeper.analysis.worktree_record import WorktreeSettings, survey_worktrees
from branchkeeper.errors import BranchkeeperError, ConfigError
from branchkeeper.git.repo import parse_worktree_porcelain, repo_facts
from branchkeeper.git.run import GitError, run_git
from branchkeeper.model.config_file import load_config
from branchkeeper.model.records import BranchState, Stage

#: How deep a root directory is scanned for repositories.
SCAN_DEPTH = 3
#: Directory names never descended into.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                       ".mypy_cache", ".pytest_cache", "site-packages", ".cache"})
#: Repositories analysed at once.
WORKERS = 4



def config_path() -> Path:
    """``$XDG_CONFIG_HOME/branchkeeper/repos.json`` (default ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "branchkeeper" / "repos.json"


def init_config(path: Path) -> bool:
    """Write an empty ``{"repos": [], "roots": []}`` at ``path``; False (untouched) when a file
    is already there. Raises ``OSError`` when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8") as fh:
            fh.write(json.dumps({"repos": [], "roots": []}, indent=2) + "\n")
    except FileExistsError:
        return False
    return True


def read_config(path: Path) -> tuple[list[Path], list[Path]]:
    """(repos, roots) from ``repos.json``; raises :class:`ConfigError` when malformed."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or set(data) - {"repos", "roots"}:
        raise ConfigError(f"{path}: must be an object with keys 'repos' and 'roots'")
    out: list[list[Path]] = []
    for key in ("repos", "roots"):
        items = data.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ConfigError(f"{path}: {key} must be a list of paths")
        out.append([Path(os.path.expanduser(i)) for i in items])
    return out[0], out[1]


def _is_linked_worktree(dotgit: Path) -> bool:
    try:
        text = dotgit.read_text("utf-8", "replace")
    except OSError:
        return False
    return text.startswith("gitdir:") and "/worktrees/" in text.replace("\\", "/")


def _looks_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def scan(root: Path, *, depth: int = SCAN_DEPTH) -> list[Path]:
    """Repositories under ``root`` (itself included), at most ``depth`` levels down, sorted.

    A directory holding ``.git`` (a directory, or a file that is not a linked worktree's) or a
    bare layout is a repository and is not descended into; :data:`SKIP_DIRS` and virtualenvs
    (``pyvenv.cfg``) are skipped. Reads the filesystem only.
    """
    found: list[Path] = []

    def walk(here: Path, level: int) -> None:
        dotgit = here / ".git"
        if dotgit.is_dir() or (dotgit.is_file() and not _is_linked_worktree(dotgit)):
            found.append(here)
            return
        if dotgit.is_file() or (here / "pyvenv.cfg").exists():
            return
        if _looks_bare(here):
            found.append(here)
            return
        if level >= depth:
            return
        try:
            children = sorted(p for p in here.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            return
        for child in children:
            if child.name not in SKIP_DIRS:
                walk(child, level + 1)

    walk(root, 0)
    return found


def discover(repos: Sequence[Path], roots: Sequence[Path], *, max_repos: int | None,
             empty: Callable[[Path], None] | None = None) -> list[Path]:
    """``repos`` then every repository under ``roots``, de-duplicated by resolved path, capped
    at ``max_repos`` before any git runs. ``empty`` is called with each root under which no
    repository was found (missing, not a directory, or none within :data:`SCAN_DEPTH`)."""
    seen: dict[Path, None] = {}
    found_under: list[Path] = []
    for root in roots:
        under = scan(root)
        if not under and empty is not None:
            empty(root)
        found_under += under
    for p in [*repos, *found_under]:
        seen.setdefault(Path(os.path.abspath(p)).resolve(), None)
    found = list(seen)
    return found[:max_repos] if max_repos is not None else found


@dataclass
class RepoReport:
    """One repository's row. Counts are ``None`` in the fast tier where not computed.
    ``error`` is set (and counts left empty) when the repository could not be read."""

    path: str
    error: str | None = None
    lost_work: int | None = None
    lost_work_by_kind: dict[str, int] = field(default_factory=dict)
    dirty_worktrees: int | None = None
    unproven_worktrees: int | None = None
    block_stage: int | None = None
    merged_not_deleted: int | None = None
    superseded: int | None = None
    dormant: int | None = None
    branches: int | None = None
    remote_branches: int | None = None
    worktrees: int | None = None
    locked: int | None = None
    prunable: int | None = None
    why: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def analyse(path: Path, *, count_only: bool) -> RepoReport:
    """Judge the repository at ``path`` (see the module docstring); never raises for a broken
    repository: its row carries the error."""
    row = RepoReport(str(path))
    try:
        if count_only:
            return _fast(path, row)
        facts = repo_facts(path)
        config = load_config(facts.main_root).config
        inv = build_inventory(facts, config, budget_ms=config.branches.sweep.budget_ms,
                              reuse=True)
        recs = inv.records
        row.block_stage = sum(1 for r in recs if r.stage is Stage.BLOCK)
        row.merged_not_deleted = sum(1 for r in recs if r.state.preserved)
        row.superseded = sum(1 for r in recs if r.state is BranchState.SUPERSEDED)
        row.dormant = sum(1 for r in recs if r.state is BranchState.DORMANT)
        row.branches = sum(1 for r in recs if r.local_tip is not None)
        row.remote_branches = sum(1 for r in recs if r.remote_tip is not None)
        survey = survey_worktrees(facts, config, settings=WorktreeSettings(), asker=None,
                                  inventory=inv)
        records = survey.records
        row.worktrees = len(records)
        row.locked = sum(1 for r in records if r.worktree.locked)
        row.prunable = sum(1 for r in records if r.worktree.prunable)
        linked = [r for r in records if not (r.worktree.is_main or r.worktree.bare
                                             or r.worktree.prunable)]
        # the worktree records' own verdicts: one status read each, the reaper's dispositions;
        # dirty counts the main worktree too, as the lost-work kinds do
        row.dirty_worktrees = sum(1 for r in records if not (r.worktree.bare or r.worktree.prunable)
                                  and (r.status is None or r.status.dirty))
        row.unproven_worktrees = sum(1 for r in linked if r.reap is not None and any(
            g.name == "preserved" and not g.passed for g in r.reap.gates))
        lost = read_lost_work(facts.root, recs, records,
                              remote=inv.remote if inv.remote_configured else None,
                              now=clock.now())
        row.lost_work = len(lost)
        row.lost_work_by_kind = {k: n for k, n in
                                 ((k.value, sum(1 for i in lost if i.kind is k))
                                  for k in LostKind) if n}
    except (BranchkeeperError, OSError, ValueError) as exc:
        row.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return row
    row.why = _why(row)
    return row


def _fast(path: Path, row: RepoReport) -> RepoReport:
    if not path.is_dir():
        raise BranchkeeperError(f"{path}: no such directory")
    # A ref name never holds a line break, so one name per line is exact.
    names = run_git(["for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes"],
                    cwd=path).text.splitlines()
    row.branches = sum(1 for n in names if n.startswith("refs/heads/"))
    row.remote_branches = sum(1 for n in names if n.startswith("refs/remotes/")
                              and not n.endswith("/HEAD"))
    out = run_git(["worktree", "list", "--porcelain", "-z"], cwd=path).stdout
    wts = parse_worktree_porcelain(out, nul=True)
    row.worktrees = len(wts)
    row.locked = sum(1 for w in wts if w.locked)
    row.prunable = sum(1 for w in wts if w.prunable)
    row.why = [f"{row.branches} local branch(es), {row.worktrees - 1} linked worktree(s)"]
    return row


def _why(row: RepoReport) -> list[str]:
    why: list[str] = []
    if row.lost_work:
        kinds = ", ".join(f"{n} {_KIND_WORDS[k]}" for k, n in row.lost_work_by_kind.items())
        why.append(f"{row.lost_work} piece(s) of work at LOST WORK RISK, only in this clone "
                   f"({kinds})")
    if row.dirty_worktrees:
        why.append(f"{row.dirty_worktrees} dirty worktree(s)")
    if row.unproven_worktrees:
        why.append(f"{row.unproven_worktrees} worktree(s) on unproven branches")
    if row.block_stage:
        why.append(f"{row.block_stage} branch(es) dormant at the block stage")
    rest = []
    if row.merged_not_deleted:
        rest.append(f"{row.merged_not_deleted} merged, not deleted")
    if row.superseded:
        rest.append(f"{row.superseded} superseded (changes that did not land)")
    if row.dormant:
        rest.append(f"{row.dormant} dormant")
    why.extend(rest)
    return why or ["nothing to clean"]


_KIND_WORDS = {"unpushed_branch": "unpushed branch(es)", "detached_commit": "detached commit(s)",
               "worktree_ref": "worktree ref(s)", "submodule_store": "submodule store(s)",
               "dirty_worktree": "dirty worktree(s)", "stash": "stash(es)",
               "kept_ref": "ref(s) of ours", "ignored_files": "worktree(s) holding ignored files"}


def rank_key(row: RepoReport) -> tuple[int, ...]:
    """Sort key, worst first: unreadable rows first (their work is not ruled out); then lost
    work, dirty+unproven worktrees,
    block-stage branches, merged-not-deleted+superseded+dormant (fast tier: linked worktrees,
    branches)."""
    if row.error is not None:
        return (0, 0, 0, 0, 0)
    if row.lost_work is None:
        return (1, -((row.worktrees or 1) - 1), -(row.branches or 0), 0, 0)
    return (1, -row.lost_work, -((row.dirty_worktrees or 0) + (row.unproven_worktrees or 0)),
            -(row.block_stage or 0),
            -((row.merged_not_deleted or 0) + (row.superseded or 0) + (row.dormant or 0)))


def run_all(paths: Iterable[Path], *, count_only: bool, workers: int = WORKERS,
            progress: Callable[[RepoReport], None] | None = None) -> list[RepoReport]:
    """Analyse ``paths`` on a thread pool of ``workers``; return the rows ranked worst first
    (ties keep discovery order). ``progress`` is called once per finished repository."""
    ordered = list(paths)

    def one(p: Path) -> RepoReport:
        try:
            row = analyse(p, count_only=count_only)
        except GitError as exc:  # analyse catches these; a belt for the thread pool
            row = RepoReport(str(p), error=str(exc).splitlines()[0])
        if progress is not None:
            progress(row)
        return row

    with ThreadPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(one, ordered))
    return sorted(rows, key=rank_key)
