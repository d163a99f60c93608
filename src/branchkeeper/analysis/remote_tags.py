"""Tags a remote on this machine holds: what local refs cannot tell (issue 17, section 1).

``git push origin v1`` leaves no trace in the pushing clone: git keeps no remote-tracking ref
for tags, so a tag that was pushed looks, from local refs alone, like the only ref holding its
commit. A remote whose URL is a directory on this machine (``/srv/origin.git``,
``../origin.git``, ``file:///srv/origin.git``) can be read without a network call: its refs are
files. :func:`tags_held_by` reads them, for the guard's ``R-RM-REPOSITORY`` and ``R-GIT-TAG-DELETE``
proofs; :func:`path_remotes` also tells which remotes a deletion takes with it (their tracking
refs then hold nothing). A remote reached over the network (``https://``, ``ssh://``,
``host:path``) is never asked; its tags still count as held here only. Nothing here decides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from branchkeeper.analysis.guard_facts import GUARD_TIMEOUT_S
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import Repo
from branchkeeper.git.run import run_git


def path_remote(url: str, base: str) -> str | None:
    """The directory ``url`` names when it is a path on this machine (absolute, relative to
    ``base``, or ``file://``), as git reads a remote URL; None for a network URL (``scheme://``
    other than ``file``, or scp-like ``host:path``: a ``:`` before the first ``/``)."""
    if url.startswith("file://"):
        path = url[len("file://"):]
        return path if path.startswith("/") else None
    if "://" in url:
        return None
    colon, slash = url.find(":"), url.find("/")
    if colon != -1 and (slash == -1 or colon < slash):
        return None
    return os.path.normpath(os.path.join(base, os.path.expanduser(url)))


def _git_dir(path: str) -> str | None:
    """The git directory of the repository at ``path`` (bare, or with ``.git``), or None."""
    if os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects")):
        return path
    dot = os.path.join(path, ".git")
    return dot if os.path.exists(dot) else None


def path_remotes(repo: Repo) -> dict[str, str]:
    """Remote name -> git directory, for the remotes of ``repo`` whose URL is a path on this
    machine naming a repository (one ``git config``). None are returned when a
    ``url.*.insteadOf`` rule exists (it could send a path-looking URL over the network) or the
    config cannot be read. Raises nothing."""
    try:
        res = run_git(["config", "-z", "--get-regexp", r"^(remote\..*\.url|url\..*)$"],
                      cwd=repo.root, timeout=GUARD_TIMEOUT_S, check=False)
    except BranchkeeperError:
        return {}
    if res.returncode not in (0, 1):  # 1: no such key
        return {}
    dirs: dict[str, str] = {}
    for item in res.text.split("\0"):
        key, _, value = item.partition("\n")
        if key.startswith("url."):
            return {}
        name = key[len("remote."):-len(".url")] if key.endswith(".url") else ""
        path = path_remote(value, repo.root) if name else None
        git_dir = _git_dir(path) if path else None
        if git_dir and os.path.realpath(git_dir) != os.path.realpath(repo.common_dir):
            dirs.setdefault(name, git_dir)
    return dirs


def tags_held_by(remotes: Mapping[str, str], tags: Mapping[str, str]) -> frozenset[str]:
    """Which of ``tags`` (full ref ``refs/tags/NAME`` -> the commit it peels to) one of
    ``remotes`` (name -> git directory on this machine, :func:`path_remotes`) holds: the same
    tag name peeling to the same commit there, so the commit stays reachable on the remote.
    One ``for-each-ref refs/tags`` per remote; none when ``tags`` is empty. A remote that
    cannot be read holds nothing (no error is raised: the caller keeps denying)."""
    held: set[str] = set()
    for git_dir in dict.fromkeys(remotes.values()) if tags else ():
        try:
            out = run_git([f"--git-dir={git_dir}", "for-each-ref",
                           "--format=%(refname)%00%(objectname)%00%(*objectname)", "refs/tags"],
                          cwd=git_dir, timeout=GUARD_TIMEOUT_S).text
        except BranchkeeperError:
            continue
        for line in out.splitlines():
            ref, oid, peeled = [*line.split("\0"), "", ""][:3]
            if tags.get(ref) == (peeled or oid):
                held.add(ref)
    return frozenset(held)
