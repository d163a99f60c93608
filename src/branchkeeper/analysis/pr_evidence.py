"""PR evidence: what a forge says about a branch head (open, merged, closed, none).

Issue 4, section 4; second document ("SKIP_PR_OPEN", "degraded gh mode"). The interface is one
method so other forges can be added; :class:`GhProvider` asks the ``gh`` CLI when it is installed
and logged in. Without a provider the reaper runs in degraded mode and says so. Evidence never
proves a branch preserved on its own ("a bare 'a PR merged' signal is never sufficient").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from branchkeeper.git.types import Oid

#: Timeout of one ``gh`` call, seconds.
GH_TIMEOUT_S = 20.0


class PrState(StrEnum):
    """The state of the newest PR whose head is the branch."""

    OPEN = "open"
    MERGED = "merged"
    CLOSED = "closed"
    NONE = "none"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class PrAnswer:
    """A provider's full answer: state, the PR number (if any), whether its head differs from the
    local tip (``stale``), and a one-line detail."""

    state: PrState
    number: int | None = None
    stale: bool = False
    detail: str = ""


class PrEvidence(Protocol):
    """A source of PR state for a branch head."""

    def available(self) -> tuple[bool, str]:
        """(usable, one-line reason)."""
        ...

    def state(self, branch: str, head: Oid | None) -> PrState:
        """The PR state of ``branch`` (short name); ``head`` is the local tip, if known."""
        ...


class NoProvider:
    """Degraded mode: no PR evidence; every answer is :attr:`PrState.ERROR`."""

    def __init__(self, reason: str = "PR evidence disabled") -> None:
        self.reason = reason

    def available(self) -> tuple[bool, str]:
        return False, self.reason

    def state(self, branch: str, head: Oid | None) -> PrState:
        return PrState.ERROR


# Precedence when a branch has several PRs: any open one wins, then merged, then closed.
_RANK = {PrState.OPEN: 0, PrState.MERGED: 1, PrState.CLOSED: 2}


class GhProvider:
    """PR evidence from the ``gh`` CLI, run in ``repo`` with a timeout.

    ``available()`` is ``gh auth status`` exiting 0 (cached). ``answer()`` runs
    ``gh pr list --head BRANCH --state all --json number,state,headRefOid,mergedAt --limit 20``;
    garbage output, a timeout or a non-zero exit give :attr:`PrState.ERROR` with the reason.
    """

    def __init__(self, repo: Path, *, timeout: float = GH_TIMEOUT_S, gh: str = "gh") -> None:
        self.repo = repo
        self.timeout = timeout
        self.gh = gh
        self._available: tuple[bool, str] | None = None

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        env = dict(os.environ)
        env["GH_PROMPT_DISABLED"] = "1"
        env["GH_NO_UPDATE_NOTIFIER"] = "1"
        env["NO_COLOR"] = "1"
        return subprocess.run([self.gh, *args], cwd=self.repo, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=self.timeout, env=env, check=False)

    def available(self) -> tuple[bool, str]:
        """(True, "gh logged in") or (False, why: not installed, not logged in, timed out)."""
        if self._available is None:
            self._available = self._probe()
        return self._available

    def _probe(self) -> tuple[bool, str]:
        if shutil.which(self.gh) is None:
            return False, "gh is not installed (degraded mode: no PR evidence)"
        try:
            proc = self._run(["auth", "status"])
        except subprocess.TimeoutExpired:
            return False, f"gh auth status timed out after {self.timeout:g} s (degraded mode)"
        except OSError as exc:
            return False, f"gh could not be run ({exc.strerror}) (degraded mode)"
        if proc.returncode != 0:
            return False, "gh is not logged in (degraded mode: no PR evidence)"
        return True, "gh logged in"

    def state(self, branch: str, head: Oid | None) -> PrState:
        """The PR state of ``branch``; see :meth:`answer` for the detail."""
        return self.answer(branch, head).state

    def answer(self, branch: str, head: Oid | None) -> PrAnswer:
        """The PR state of ``branch`` with its number, staleness and a one-line detail."""
        ok, why = self.available()
        if not ok:
            return PrAnswer(PrState.ERROR, detail=why)
        args = ["pr", "list", "--head", branch, "--state", "all",
                "--json", "number,state,headRefOid,mergedAt", "--limit", "20"]
        try:
            proc = self._run(args)
        except subprocess.TimeoutExpired:
            return PrAnswer(PrState.ERROR, detail=f"gh pr list timed out after {self.timeout:g} s")
        except OSError as exc:
            return PrAnswer(PrState.ERROR, detail=f"gh could not be run ({exc.strerror})")
        if proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return PrAnswer(PrState.ERROR, detail=f"gh pr list failed (exit {proc.returncode})"
                            + (f": {msg[-1]}" if msg else ""))
        return parse_pr_list(proc.stdout, head)


def parse_pr_list(data: bytes, head: Oid | None) -> PrAnswer:
    """Interpret ``gh pr list --json number,state,headRefOid,mergedAt`` output.

    The chosen PR is the first by precedence open > merged > closed (then highest number).
    ``stale`` is True when its ``headRefOid`` differs from ``head``. Garbage gives ERROR.
    """
    try:
        items = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return PrAnswer(PrState.ERROR, detail="gh printed output that is not JSON")
    if not isinstance(items, list):
        return PrAnswer(PrState.ERROR, detail="gh printed JSON that is not a list")
    found: list[tuple[int, int, PrState, str]] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("number"), int):
            return PrAnswer(PrState.ERROR, detail="gh printed a PR record of an unexpected shape")
        raw = str(item.get("state", "")).upper()
        state = {"OPEN": PrState.OPEN, "MERGED": PrState.MERGED,
                 "CLOSED": PrState.CLOSED}.get(raw)
        if state is None:
            return PrAnswer(PrState.ERROR, detail=f"gh reported an unknown PR state {raw!r}")
        if state is PrState.CLOSED and item.get("mergedAt"):
            state = PrState.MERGED
        found.append((_RANK[state], -item["number"], state, str(item.get("headRefOid") or "")))
    if not found:
        return PrAnswer(PrState.NONE, detail="no PR has this branch as its head")
    _, neg_number, state, pr_head = min(found)
    number = -neg_number
    stale = head is not None and pr_head != "" and pr_head != head
    detail = f"PR #{number} is {state.value}"
    if stale and head is not None:
        detail += f" (stale: its head {pr_head[:10]} is not the local tip {head.short})"
    return PrAnswer(state, number=number, stale=stale, detail=detail)
