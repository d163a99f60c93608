"""List the work markers (``BKMARK-<name>``) still found in the world (run in the sandbox).

A marker counts as kept when it is in a file anywhere under ``/home``, ``/srv`` or ``/tmp``
(work trees, ignored files, copies), or in a blob that some repository there still holds:
reachable from a ref, from the HEAD of a worktree that still exists, or from a stash entry
(the ``refs/stash`` reflog), or in the index of a worktree that still exists. Reflogs
otherwise do not count, nor do the HEAD and index of a worktree whose directory is gone: a
commit held only by them is waiting for ``gc`` or ``worktree prune``, not kept. Prints the
sorted markers as one JSON list. Standard library only; the user's git configuration (which a
command may have changed) is ignored.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

MARKER = re.compile(rb"BKMARK-[A-Za-z0-9_.-]+")
ROOTS = ("/home", "/srv", "/tmp")
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}


def is_git_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))


def scan_files(found: set[bytes]) -> list[str]:
    """Markers in plain files; returns the repositories (common git dirs) met on the way."""
    git_dirs: list[str] = []
    for root in ROOTS:
        for top, dirs, files in os.walk(root):
            for d in list(dirs):
                full = os.path.join(top, d)
                if is_git_dir(full):
                    dirs.remove(d)
                    git_dirs.append(full)
            for name in files:
                path = os.path.join(top, name)
                try:
                    if os.path.islink(path) or os.path.getsize(path) > 1 << 20:
                        continue
                    with open(path, "rb") as f:
                        found.update(MARKER.findall(f.read()))
                except OSError:
                    continue
    return git_dirs


def git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    res = subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data,
                         capture_output=True, env=ENV, timeout=60)
    return res.stdout if res.returncode == 0 else b""


def live_worktrees(git_dir: str) -> list[str]:
    """The admin dirs of ``git_dir`` (itself for the main worktree) whose work tree exists."""
    out = [git_dir]
    admin = os.path.join(git_dir, "worktrees")
    for name in sorted(os.listdir(admin)) if os.path.isdir(admin) else []:
        try:
            with open(os.path.join(admin, name, "gitdir")) as f:
                dot_git = f.read().strip()
        except OSError:
            continue
        if os.path.exists(dot_git):
            out.append(os.path.join(admin, name))
    return out


def scan_repository(git_dir: str, found: set[bytes]) -> None:
    tips = git(git_dir, "for-each-ref", "--format=%(objectname)").split()
    tips += git(git_dir, "log", "-g", "--format=%H", "refs/stash").split()
    blobs: list[bytes] = []
    for admin in live_worktrees(git_dir):
        tips += git(admin, "rev-parse", "--verify", "-q", "HEAD").split()
        blobs += [line.split()[1] for line in git(admin, "ls-files", "-s").splitlines()
                  if len(line.split()) > 1]
    listing = git(git_dir, "rev-list", "--objects", *(t.decode() for t in set(tips)), "--") \
        if tips else b""
    oids = [line.split(b" ", 1)[0] for line in listing.splitlines() if line] + blobs
    if oids:
        batch = b"\n".join(dict.fromkeys(oids)) + b"\n"
        found.update(MARKER.findall(git(git_dir, "cat-file", "--batch", data=batch)))


def main() -> None:
    os.chdir("/")  # the command may have deleted the directory it ran in; git needs one
    found: set[bytes] = set()
    for git_dir in scan_files(found):
        scan_repository(git_dir, found)
    print(json.dumps(sorted(m.decode() for m in found)))


if __name__ == "__main__":
    main()
