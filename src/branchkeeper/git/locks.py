"""Lock files git holds (or left behind) under the refs a transaction will touch (issue 12,
section 3).

Git takes ``<ref>.lock`` (and ``packed-refs.lock``) for the length of a ref update and removes
it when it exits, even on SIGINT or SIGTERM; only a process killed outright (SIGKILL, a power
cut) leaves one behind, and then every later update of that ref fails with "cannot lock ref".
Git's lock files carry no process id, so whether one is still owned is judged from two facts:
its age (a ref transaction takes milliseconds to seconds; :data:`STALE_AFTER_S`) and whether a
git process is running in this repository right now (``/proc`` on Linux: a ``git`` process whose
working directory is inside the repository). Nothing here deletes a lock: the caller refuses and
names the command that clears them.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

#: A lock this old (seconds), with no git running in the repository, is left over.
STALE_AFTER_S = 60.0

#: At most this many lock files are named one by one in a message.
MAX_NAMED = 5


class RefLock(NamedTuple):
    """A lock file under the refs: its path and age in seconds (by its mtime)."""

    path: Path
    age_s: float


def ref_lock_files(common_dir: Path, refs: Iterable[str], *, now: float) -> list[RefLock]:
    """The lock files present for ``refs`` (full names) and for ``packed-refs``, under
    ``common_dir``; ``now`` is unix seconds. One ``lstat`` per ref, no git process."""
    found: list[RefLock] = []
    paths = [common_dir / f"{ref}.lock" for ref in dict.fromkeys(refs)]
    for path in [*paths, common_dir / "packed-refs.lock"]:
        try:
            mtime = path.lstat().st_mtime
        except OSError:
            continue
        found.append(RefLock(path, max(now - mtime, 0.0)))
    return found


def git_running_in(places: Sequence[Path]) -> bool:
    """True when a ``git`` process is running with its working directory inside one of
    ``places`` (the repository's worktrees and common dir). Reads ``/proc``; where there is
    none (not Linux) or a process cannot be read, that process does not count."""
    roots = [p.resolve() for p in places]
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return False
    me = str(os.getpid())
    for pid in pids:
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
                if not fh.read().strip().startswith("git"):
                    continue
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if any(cwd == r or cwd.is_relative_to(r) for r in roots):
            return True
    return False


def repository_places(common_dir: Path) -> list[Path]:
    """Where a git working in this repository would have its working directory: the common
    dir, the main worktree (the common dir's parent when it is ``.git``) and each linked
    worktree (the ``gitdir`` files under ``<common dir>/worktrees/``). Filesystem only."""
    places = [common_dir]
    if common_dir.name == ".git":
        places.append(common_dir.parent)
    try:
        entries = list((common_dir / "worktrees").iterdir())
    except OSError:
        entries = []
    for entry in entries:
        try:
            gitdir = (entry / "gitdir").read_text("utf-8", "surrogateescape").strip()
        except OSError:
            continue
        if gitdir:
            places.append(Path(gitdir).parent)
    return places


def clear_command(locks: Sequence[RefLock], common_dir: Path) -> str:
    """The shell-quoted command that removes ``locks``: ``rm -f -- <paths>`` for a few, else a
    ``find`` of every ref lock older than a minute (and ``packed-refs.lock`` when it is one)."""
    if len(locks) <= MAX_NAMED:
        return shlex.join(["rm", "-f", "--", *(str(lock.path) for lock in locks)])
    command = shlex.join(["find", str(common_dir / "refs"), "-name", "*.lock", "-type", "f",
                          "-mmin", "+1", "-delete"])
    packed = common_dir / "packed-refs.lock"
    if any(lock.path == packed for lock in locks):
        command += " && " + shlex.join(["rm", "-f", "--", str(packed)])
    return command


def describe(locks: Sequence[RefLock], common_dir: Path, *, stale: bool) -> str:
    """One line naming ``locks`` (the first few) and what to do about them."""
    named = ", ".join(str(lock.path) for lock in locks[:MAX_NAMED])
    more = f" and {len(locks) - MAX_NAMED} more" if len(locks) > MAX_NAMED else ""
    if stale:
        return (f"{len(locks)} stale git lock file(s) under the refs this would change, left by "
                f"a git that was killed (no git process is running here; the newest is "
                f"{min(lock.age_s for lock in locks):.0f} s old): {named}{more}; nothing was "
                f"changed. Clear them with: {clear_command(locks, common_dir)}")
    return (f"another git command is updating the refs this would change right now (lock "
            f"file(s) {named}{more}); nothing was changed; try again when it has finished. If "
            f"no git is running, a killed git left them: clear them with: "
            f"{clear_command(locks, common_dir)}")
