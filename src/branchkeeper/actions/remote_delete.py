"""Remote branch deletion with a live check and a lease (issue 3, section 3 ``--remote``; first
document, section 7 "Integration lines in R-GIT-PUSH-DELETE-REMOTE").

ONE ``git ls-remote <remote> refs/heads/a refs/heads/b ...`` confirms every live tip equals the
remote-tracking tip that was proven; then ONE ``git push --porcelain <remote>
--force-with-lease=refs/heads/x:<expected> :refs/heads/x ...`` deletes them, each under a lease on
its expected tip, so a branch moved on the server since is left alone (git rejects it as stale).
Names are data: every refspec starts with ``refs/`` or ``:``, never with ``-``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid

_HEADS = "refs/heads/"


@dataclass(frozen=True, slots=True)
class PushResult:
    """One remote branch: ``deleted`` or not, and git's reason when not."""

    name: str
    deleted: bool
    reason: str = ""


def push_restore_command(remote: str, name: str, old: Oid) -> str:
    """``git push <remote> <old>:refs/heads/<name>``, shell-quoted (what undo prints)."""
    return shlex.join(["git", "push", remote, f"{old}:{_HEADS}{name}"])


def live_tips(repo: str | object, remote: str, names: Sequence[str], *,
              timeout: float) -> dict[str, Oid | None]:
    """The tips the remote has now for ``names`` (one ``ls-remote``): name -> oid, ``None`` when
    the remote has no such branch. Raises :class:`GitError` on a network or git failure, or a
    timeout (``timeout`` in seconds)."""
    if not names:
        return {}
    wanted = {f"{_HEADS}{n}": n for n in names}
    out = run_git(["ls-remote", "--heads", "--", remote, *wanted], cwd=str(repo),
                  timeout=timeout).stdout
    found: dict[str, Oid | None] = dict.fromkeys(names)
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, _, ref = line.partition("\t")
        if ref in wanted:  # ls-remote matches patterns by tail: keep exact names only
            found[wanted[ref]] = Oid.parse(oid)
    return found


def push_delete(repo: str | object, remote: str, expected: Mapping[str, Oid], *,
                timeout: float) -> dict[str, PushResult]:
    """Delete each remote branch of ``expected`` (name -> expected tip) under a lease.

    Returns name -> :class:`PushResult`. A branch git did not report as deleted (stale lease,
    hook rejection, no such ref) is ``deleted=False`` with git's words. Raises
    :class:`GitError` only when git cannot run or times out.
    """
    if not expected:
        return {}
    args = ["push", "--porcelain", remote]
    args += [f"--force-with-lease={_HEADS}{n}:{oid}" for n, oid in expected.items()]
    args += [f":{_HEADS}{n}" for n in expected]
    result = run_git(args, cwd=str(repo), check=False, timeout=timeout)
    by_ref = {f"{_HEADS}{n}": n for n in expected}
    seen: dict[str, PushResult] = {}
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        flag, spec, summary = parts[0], parts[1], parts[2]
        ref = spec.rpartition(":")[2]
        if ref not in by_ref:
            continue
        name = by_ref[ref]
        seen[name] = PushResult(name, flag == "-", "" if flag == "-" else summary.strip())
    err = result.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = err[-1] if err else f"git push exited {result.returncode}"
    return {n: seen.get(n, PushResult(n, False, detail)) for n in expected}
