"""Creator and touch records in git config (spec section 6, with branchkeeper's key names).

Keys, on the branch's own config section (shared by every worktree; git renames the section with
``branch -m`` and removes it with ``branch -d/-D``):

- ``branch.<name>.branchkeeperCreator``: ``<session_id>:<agent_id>`` (agent empty on the main
  thread);
- ``branch.<name>.branchkeeperCreated``: unix time of the creation, in seconds;
- ``branch.<name>.branchkeeperRoute``: the creation route (``bash``, ``agent``,
  ``worktree_create``, ...);
- ``branch.<name>.branchkeeperTouchedBy``: multi-valued, one ``<session>:<agent>`` per thread
  that touched the branch.

A touch is added with ``git config --replace-all --fixed-value KEY V V`` (git 2.30+): it
replaces the value where it already is and appends it where it is not, in one process under
git's own config lock, so two parallel hooks never add the same value twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from branchkeeper import clock
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.run import GitError, GitExit, run_git
from branchkeeper.state.creators import CREATOR, RECORD_TIMEOUT_S

CREATED = "branchkeeperCreated"
ROUTE = "branchkeeperRoute"
TOUCHED_BY = "branchkeeperTouchedBy"

#: Creation routes written to ``branchkeeperRoute``.
ROUTE_BASH = "bash"
ROUTE_AGENT = "agent"
ROUTE_WORKTREE_CREATE = "worktree_create"

#: Attempts at a config write that finds ``config.lock`` taken, and the first pause (seconds).
LOCK_ATTEMPTS = 5
_FIRST_PAUSE_S = 0.02


class RecordWriteError(BranchkeeperError):
    """A record could not be written (config stayed locked, or git failed)."""


@dataclass(frozen=True, slots=True)
class BranchRecords:
    """The records of one branch. ``branch`` is the short name (``feature/x``)."""

    branch: str
    creator: str | None = None
    created: int | None = None
    route: str | None = None
    touched_by: tuple[str, ...] = ()

    @property
    def threads(self) -> frozenset[str]:
        """Every ``<session>:<agent>`` that created or touched the branch."""
        found = set(self.touched_by)
        if self.creator is not None:
            found.add(self.creator)
        return frozenset(found)


def thread_value(session_id: str, agent_id: str) -> str:
    """``<session_id>:<agent_id>``, the value of the creator and touch keys."""
    return f"{session_id}:{agent_id}"


def _key(branch: str, name: str) -> str:
    if not branch or "\n" in branch or "\0" in branch:
        raise ValueError(f"not a branch name: {branch!r}")
    return f"branch.{branch}.{name}"


def _config_write(repo: Path, args: list[str]) -> None:
    pause = _FIRST_PAUSE_S
    for attempt in range(LOCK_ATTEMPTS):
        result = run_git(["config", *args], cwd=repo, check=False, timeout=RECORD_TIMEOUT_S)
        if result.returncode == 0:
            return
        # 255 with "could not lock config file": another writer holds config.lock; retry.
        locked = b"could not lock config file" in result.stderr
        if not locked or attempt == LOCK_ATTEMPTS - 1:
            detail = result.stderr.decode("utf-8", "replace").strip()
            raise RecordWriteError(f"git config {' '.join(args[:2])} failed: {detail}")
        time.sleep(pause)
        pause *= 2


def branch_exists(repo: Path, branch: str) -> bool:
    """Whether ``refs/heads/<branch>`` exists (one ``show-ref --verify -q``)."""
    result = run_git(["show-ref", "--verify", "-q", f"refs/heads/{branch}"], cwd=repo,
                     check=False, timeout=RECORD_TIMEOUT_S)
    # 0: exists; 1 (or 2 on some versions): no such ref; anything else is an error.
    if result.returncode == GitExit.OK:
        return True
    if result.returncode in (GitExit.NO, GitExit.NO_MATCH):
        return False
    raise GitError("git show-ref failed", argv=["git", "show-ref", branch],
                   returncode=result.returncode, stderr=result.stderr)


def write_creator(repo: Path, branch: str, *, session_id: str, agent_id: str, route: str,
                  now: float | None = None) -> bool:
    """Record who created ``branch``, when and by which route (three config writes).

    The ref must exist first (one ``show-ref``); returns False, writing nothing, when it does
    not. Raises :class:`RecordWriteError` when a write fails after the lock retries.
    """
    if not branch_exists(repo, branch):
        return False
    stamp = int(clock.now() if now is None else now)
    _config_write(repo, [_key(branch, CREATOR), thread_value(session_id, agent_id)])
    _config_write(repo, [_key(branch, CREATED), str(stamp)])
    _config_write(repo, [_key(branch, ROUTE), route])
    return True


def bind_creator_agent(repo: Path, branch: str, *, session_id: str, agent_id: str) -> bool:
    """Bind a WorktreeCreate creator record (``<session>:``) to the agent now working there.

    Rewrites ``branchkeeperCreator`` from ``<session>:`` to ``<session>:<agent>`` only when the
    route is ``worktree_create`` and the creator has no agent yet (section 6). Returns True when
    it rewrote the record.
    """
    if not agent_id:
        return False
    key = _key(branch, CREATOR)
    current = run_git(["config", "--get", key], cwd=repo, check=False, timeout=RECORD_TIMEOUT_S)
    if current.returncode != 0 or current.text.rstrip("\n") != thread_value(session_id, ""):
        return False
    route = run_git(["config", "--get", _key(branch, ROUTE)], cwd=repo, check=False,
                    timeout=RECORD_TIMEOUT_S)
    if route.text.rstrip("\n") != ROUTE_WORKTREE_CREATE:
        return False
    old = thread_value(session_id, "")
    _config_write(repo, ["--fixed-value", key, thread_value(session_id, agent_id), old])
    return True


def add_touch(repo: Path, branch: str, *, session_id: str, agent_id: str) -> None:
    """Add ``<session>:<agent>`` to ``branchkeeperTouchedBy`` unless it is already there.

    One ``git config --replace-all --fixed-value`` (see the module docstring). Raises
    :class:`RecordWriteError` when the write fails after the lock retries.
    """
    value = thread_value(session_id, agent_id)
    _config_write(repo, ["--replace-all", "--fixed-value", _key(branch, TOUCHED_BY), value, value])


def parse_records(data: bytes) -> dict[str, BranchRecords]:
    """Parse ``git config --null --get-regexp`` output into records per branch.

    Each entry is ``KEY\\nVALUE\\0``; the key is ``branch.<name>.<variable>`` with the variable
    lower-cased by git and the name kept as written (it may contain dots, so the variable is
    split off at the LAST dot). Unknown variables and malformed entries are skipped.
    """
    fields: dict[str, dict[str, list[str]]] = {}
    for entry in data.split(b"\0"):
        if not entry:
            continue
        key_bytes, sep, value_bytes = entry.partition(b"\n")
        key = key_bytes.decode("utf-8", "surrogateescape")
        if not key.startswith("branch.") or "." not in key[len("branch."):]:
            continue
        branch, _, variable = key[len("branch."):].rpartition(".")
        value = value_bytes.decode("utf-8", "surrogateescape") if sep else ""
        fields.setdefault(branch, {}).setdefault(variable.lower(), []).append(value)
    out: dict[str, BranchRecords] = {}
    for branch, vars_ in fields.items():
        created_text = (vars_.get(CREATED.lower()) or [""])[-1]
        try:
            created: int | None = int(created_text)
        except ValueError:
            created = None
        creators = vars_.get(CREATOR.lower())
        routes = vars_.get(ROUTE.lower())
        out[branch] = BranchRecords(
            branch=branch,
            creator=creators[-1] if creators else None,
            created=created,
            route=routes[-1] if routes else None,
            touched_by=tuple(dict.fromkeys(vars_.get(TOUCHED_BY.lower(), []))),
        )
    return out


def read_records(repo: Path) -> dict[str, BranchRecords]:
    """Every branch's records, from ONE ``git config --null --get-regexp``.

    Returns ``{}`` when no branch has records (git exits 1). Raises
    :class:`~branchkeeper.git.run.GitError` on any other failure.
    """
    result = run_git(["config", "--null", "--get-regexp", r"^branch\..*\.branchkeeper"],
                     cwd=repo, check=False, timeout=RECORD_TIMEOUT_S)
    if result.returncode == GitExit.NO:  # no matching key
        return {}
    if result.returncode != 0:
        raise GitError("git config --get-regexp failed", argv=["git", "config", "--get-regexp"],
                       returncode=result.returncode, stderr=result.stderr)
    return parse_records(result.stdout)
