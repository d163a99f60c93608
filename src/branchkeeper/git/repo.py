"""Repository facts: where the repository is, which git runs it, and its worktrees.

Implements issue 2, section 2 ("Repository facts"). Two git processes in the common case
(``git version`` is cached per process; one ``rev-parse`` for the layout), plus one
``worktree list --porcelain -z`` when worktrees are asked for.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from branchkeeper.errors import BranchkeeperError, GitTooOldError, NotARepositoryError
from branchkeeper.git.locate import checked_common_dir
from branchkeeper.git.parse import zsplit
from branchkeeper.git.run import GitError, GitResult, run_git
from branchkeeper.git.types import Oid

#: The oldest git branchkeeper runs on (DESIGN.md, "Dependencies").
MIN_GIT = (2, 30, 0)


@dataclass(frozen=True, slots=True)
class GitVersion:
    """The running git's version and the features branchkeeper may use with it."""

    major: int
    minor: int
    patch: int
    text: str

    @property
    def tuple(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    @property
    def has_ahead_behind(self) -> bool:
        """``for-each-ref --format=%(ahead-behind:REF)`` (git 2.41)."""
        return self.tuple >= (2, 41, 0)

    @property
    def has_merge_tree_write_tree(self) -> bool:
        """``merge-tree --write-tree`` (git 2.38)."""
        return self.tuple >= (2, 38, 0)

    @property
    def has_merge_tree_stdin(self) -> bool:
        """``merge-tree --write-tree --stdin``: many merges in one process (git 2.39; the
        merge-based proofs need it)."""
        return self.tuple >= (2, 39, 0)

    @property
    def has_no_lazy_fetch(self) -> bool:
        """``GIT_NO_LAZY_FETCH`` / ``git --no-lazy-fetch`` (git 2.45); older git is kept off the
        network by ``GIT_ALLOW_PROTOCOL`` instead (see :mod:`branchkeeper.git.run`)."""
        return self.tuple >= (2, 45, 0)

    @property
    def has_worktree_list_z(self) -> bool:
        """``worktree list --porcelain -z`` (git 2.36)."""
        return self.tuple >= (2, 36, 0)

    @property
    def has_path_format(self) -> bool:
        """``rev-parse --path-format=absolute`` (git 2.31)."""
        return self.tuple >= (2, 31, 0)

    def features(self) -> dict[str, bool]:
        """Feature name -> available, for reports."""
        return {
            "ahead_behind": self.has_ahead_behind,
            "merge_tree_write_tree": self.has_merge_tree_write_tree,
            "merge_tree_stdin": self.has_merge_tree_stdin,
            "no_lazy_fetch": self.has_no_lazy_fetch,
            "worktree_list_z": self.has_worktree_list_z,
            "path_format": self.has_path_format,
        }


_VERSION_RE = re.compile(r"git version (\d+)\.(\d+)(?:\.(\d+))?")


def parse_git_version(text: str) -> GitVersion:
    """Parse ``git version 2.39.5`` (vendor suffixes allowed); raise ValueError otherwise."""
    match = _VERSION_RE.search(text)
    if not match:
        raise ValueError(f"unrecognised git version: {text.strip()!r}")
    return GitVersion(int(match[1]), int(match[2]), int(match[3] or 0), text.strip())


#: Environment variable that makes branchkeeper use only the features of an older git than the
#: one installed (``2.38.1``): how the fallbacks for old git are tested. A version newer than
#: the installed one is ignored; one that is not a version is an error (it would silently test the
#: installed git's paths instead of the fallback asked for).
ASSUME_VERSION_ENV = "BRANCHKEEPER_ASSUME_GIT_VERSION"


@functools.lru_cache(maxsize=1)
def git_version() -> GitVersion:
    """The running git's version (one process, cached), or the older one named by
    :data:`ASSUME_VERSION_ENV`.

    Raises :class:`GitTooOldError` below :data:`MIN_GIT` and when git cannot be run at all, and
    :class:`BranchkeeperError` when :data:`ASSUME_VERSION_ENV` is set to something that is not a
    version.
    """
    try:
        out = run_git(["version"], cwd=os.getcwd() if os.path.isdir(os.getcwd()) else "/").text
    except GitError as exc:
        raise GitTooOldError(f"git could not be run: {exc}") from None
    version = parse_git_version(out)
    raw = os.environ.get(ASSUME_VERSION_ENV, "")
    assumed = raw.strip()
    if assumed:  # set but empty is unset, as for git's own variables
        try:
            older = parse_git_version(f"git version {assumed}")
        except ValueError:
            raise BranchkeeperError(
                f"{ASSUME_VERSION_ENV}={raw!r} is not a git version (expected one like "
                f"2.38.1); unset it to use the installed {version.text}") from None
        if older.tuple < version.tuple:
            version = GitVersion(older.major, older.minor, older.patch,
                                 f"git version {assumed} (assumed; installed: {version.text})")
    if version.tuple < MIN_GIT:
        need = ".".join(map(str, MIN_GIT))
        raise GitTooOldError(f"{version.text} is too old: branchkeeper needs git {need} or newer")
    return version


def patch_id_mode() -> str:
    """``verbatim`` where git has ``patch-id --verbatim`` (2.39): whitespace is part of the
    patch, so a branch whose change differs from a base commit only in whitespace is never
    taken as landed. Older git: ``stable`` (whitespace-insensitive, git's default)."""
    return "verbatim" if git_version().tuple >= (2, 39, 0) else "stable"


@dataclass(frozen=True, slots=True)
class Worktree:
    """One entry of ``git worktree list --porcelain``.

    ``branch`` is the full ref (``refs/heads/x``) or ``None`` when detached or bare.
    """

    path: Path
    head: Oid | None
    branch: str | None
    bare: bool = False
    detached: bool = False
    locked: bool = False
    lock_reason: str = ""
    prunable: bool = False
    prunable_reason: str = ""
    is_main: bool = False


def parse_worktree_porcelain(data: bytes, *, nul: bool) -> list[Worktree]:
    """Parse ``worktree list --porcelain`` output (``-z`` when ``nul``) into :class:`Worktree`.

    The first entry is the main worktree. Raises ``ValueError`` on an entry without a path.
    """
    fields = zsplit(data) if nul else data.decode("utf-8", "surrogateescape").split("\n")
    entries: list[list[str]] = [[]]
    for item in fields:
        if item == "":
            if entries[-1]:
                entries.append([])
            continue
        entries[-1].append(item)
    out: list[Worktree] = []
    for index, entry in enumerate(e for e in entries if e):
        attrs: dict[str, str] = {}
        for line in entry:
            key, _, value = line.partition(" ")
            attrs[key] = value
        if "worktree" not in attrs:
            raise ValueError(f"worktree entry without a path: {entry!r}")
        head = attrs.get("HEAD")
        out.append(
            Worktree(
                path=Path(attrs["worktree"]),
                head=Oid.parse(head) if head and head.strip("0") else None,
                branch=attrs.get("branch"),
                bare="bare" in attrs,
                detached="detached" in attrs,
                locked="locked" in attrs,
                lock_reason=attrs.get("locked", ""),
                prunable="prunable" in attrs,
                prunable_reason=attrs.get("prunable", ""),
                is_main=index == 0,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """Where a repository lives.

    ``toplevel`` is the work tree the command runs in (``None`` for a bare repository);
    ``git_dir`` that worktree's git dir; ``common_dir`` the directory shared by all worktrees
    (where branchkeeper keeps its state).
    """

    toplevel: Path | None
    git_dir: Path
    common_dir: Path
    bare: bool
    shallow: bool
    version: GitVersion

    @property
    def root(self) -> Path:
        """The directory config is read from: the top level, or the common dir when bare."""
        return self.toplevel or self.common_dir

    @property
    def main_root(self) -> Path:
        """The main worktree's top level (where ``.branchkeeper.yaml`` lives), or the common dir."""
        if self.bare:
            return self.common_dir
        if self.common_dir.name == ".git":
            return self.common_dir.parent
        return self.toplevel or self.common_dir


def repo_facts(path: Path | str) -> RepoFacts:
    """Discover the repository containing ``path``.

    Raises :class:`NotARepositoryError` when ``path`` is not inside a git repository (or does
    not exist), :class:`GitTooOldError` when git is missing or too old.
    """
    version = git_version()
    where = Path(path)
    if not where.is_dir():
        raise NotARepositoryError(f"{where}: no such directory")
    args = ["rev-parse", "--is-bare-repository", "--is-shallow-repository",
            "--absolute-git-dir", "--git-common-dir", "--show-toplevel"]
    result = run_git(args, cwd=where, check=False)
    lines = result.path_text.splitlines()  # paths: bytes that are not UTF-8 must survive
    if result.returncode != 0 and len(lines) == 4:
        lines.append("")  # bare, or inside the git dir: --show-toplevel has no answer
    elif result.returncode != 0 or len(lines) != 5:
        raise NotARepositoryError.from_git(where.resolve(), result.stderr)
    bare = lines[0] == "true"
    inside_git_dir = lines[4] == "" and not bare
    git_dir = Path(lines[2])
    common = Path(lines[3])
    if not common.is_absolute():
        common = (where / common).resolve()
    toplevel = None if bare or inside_git_dir else Path(lines[4])
    return RepoFacts(
        toplevel=toplevel,
        git_dir=git_dir,
        common_dir=checked_common_dir(common.resolve()),
        bare=bare,
        shallow=lines[1] == "true",
        version=version,
    )


def worktree_list_args(facts: RepoFacts) -> list[str]:
    """The arguments of the ``worktree list`` :func:`list_worktrees` runs."""
    return ["worktree", "list", "--porcelain"] + (["-z"] if facts.version.has_worktree_list_z
                                                  else [])


def list_worktrees(facts: RepoFacts, *, output: bytes | None = None) -> list[Worktree]:
    """Every worktree, main first (one ``git worktree list --porcelain [-z]``; none when
    ``output``, that command's output, was already read)."""
    if output is None:
        output = run_git(worktree_list_args(facts), cwd=facts.root).stdout
    return parse_worktree_porcelain(output, nul=facts.version.has_worktree_list_z)


def branch_worktrees(worktrees: list[Worktree]) -> dict[str, str]:
    """Branch name -> the path of the worktree that has it checked out (detached and bare
    worktrees name no branch)."""
    return {w.branch[len("refs/heads/"):]: str(w.path) for w in worktrees
            if w.branch and w.branch.startswith("refs/heads/")}


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    """What the configuration says about remotes: whether ``remote`` has a URL, and the
    promisor remotes of a partial clone (``remote.<name>.promisor``, or the remote named by
    ``extensions.partialClone``)."""

    configured: bool
    promisors: tuple[str, ...]

    @property
    def partial_clone(self) -> bool:
        return bool(self.promisors)


#: The ``git config`` :func:`read_remote_config` runs (exit 1: nothing matched).
REMOTE_CONFIG_ARGS = ("config", "-z", "--get-regexp",
                      r"^(remote\..+\.(url|promisor)|extensions\.partialclone)$")


def read_remote_config(root: Path, remote: str, *, result: GitResult | None = None
                       ) -> RemoteConfig:
    """One ``git config --get-regexp`` for remote URLs, promisor flags and
    ``extensions.partialClone`` (issue 11, section 4: a partial clone is said so); none when
    ``result``, that command's result (:data:`REMOTE_CONFIG_ARGS`, unchecked), was already
    read."""
    res = result if result is not None else run_git(list(REMOTE_CONFIG_ARGS), cwd=root,
                                                    check=False)
    # exit 1: nothing matched; other codes: an unreadable config (treated as nothing set)
    configured = False
    promisors: list[str] = []
    for item in zsplit(res.stdout) if res.returncode == 0 else []:
        key, _, value = item.partition("\n")
        if key == "extensions.partialclone" and value:
            promisors.append(value)
            continue
        name, _, var = key[len("remote."):].rpartition(".")
        if var == "url" and name == remote:
            configured = True
        elif var == "promisor" and value.lower() in ("true", "yes", "on", "1"):
            promisors.append(name)
    return RemoteConfig(configured, tuple(dict.fromkeys(promisors)))


def worktree_counts(where: Path) -> dict[str, int]:
    """Counts from ONE ``git worktree list --porcelain -z`` run in ``where`` (no repository
    discovery, no network): total, linked, locked, prunable. A git too old for ``-z`` costs a
    second call without it. Raises :class:`GitError` when git fails."""
    res = run_git(["worktree", "list", "--porcelain", "-z"], cwd=where, check=False)
    nul = True
    if res.returncode == 129:  # usage error: git before 2.36 has no -z here
        res = run_git(["worktree", "list", "--porcelain"], cwd=where)
        nul = False
    elif res.returncode != 0:
        run_git(["worktree", "list", "--porcelain", "-z"], cwd=where)  # raises with the detail
    wts = parse_worktree_porcelain(res.stdout, nul=nul)
    return {"total": len(wts), "linked": sum(1 for w in wts if not w.is_main),
            "locked": sum(1 for w in wts if w.locked),
            "prunable": sum(1 for w in wts if w.prunable)}
