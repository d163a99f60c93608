"""Which branches a session here created: the ``branchkeeperCreator`` records alone, read for
the creation decision's ways out (first document section 4: a branch nobody here created may be
someone else's). The full records are :mod:`branchkeeper.state.branch_records`; this reader
sits on the hook's path, so it imports no more than running git needs (no dataclasses)."""

from __future__ import annotations

from pathlib import Path

from branchkeeper.git.run import GitError, GitExit, run_git

#: The creator record's variable (``branch_records`` re-exports it with the other keys).
CREATOR = "branchkeeperCreator"
#: Timeout of a record read or write, seconds.
RECORD_TIMEOUT_S = 10.0

#: The canonical key git matches ``--get-regexp`` against: section and variable lower-cased,
#: the branch name (the subsection) as written.
_PATTERN = rf"^branch\..*\.{CREATOR.lower()}$"
_SUFFIX = "." + CREATOR.lower()


def read_creators(repo: Path) -> frozenset[str]:
    """The names of the branches whose last ``branch.<name>.branchkeeperCreator`` value is not
    empty (the branches :func:`~branchkeeper.state.branch_records.read_records` gives a
    creator), from ONE ``git config --null --get-regexp`` of that key only. Empty when no
    branch has one (git exits 1). Raises :class:`~branchkeeper.git.run.GitError` on any other
    failure."""
    result = run_git(["config", "--null", "--get-regexp", _PATTERN], cwd=repo, check=False,
                     timeout=RECORD_TIMEOUT_S)
    if result.returncode == GitExit.NO:
        return frozenset()
    if result.returncode != 0:
        raise GitError("git config --get-regexp failed", argv=["git", "config", "--get-regexp"],
                       returncode=result.returncode, stderr=result.stderr)
    last: dict[str, str] = {}
    for entry in result.stdout.split(b"\0"):
        key_bytes, _, value = entry.partition(b"\n")
        key = key_bytes.decode("utf-8", "surrogateescape")
        if key.startswith("branch.") and key.endswith(_SUFFIX) and len(key) > 7 + len(_SUFFIX):
            last[key[7:-len(_SUFFIX)]] = value.decode("utf-8", "surrogateescape")
    return frozenset(name for name, value in last.items() if value)
