"""The one rule that decides which ignored files may be lost with a worktree, or under a path.

``git worktree remove`` deletes a worktree's ignored files even without ``--force`` (first
document, section 11), and so does a recursive ``rm``. Every removal path (``worktree retire``,
``worktree reap``, ``sweep --clean``, the WorktreeRemove hook) and the command guard ask this
module, so they never disagree about a file.

Public API:

- :meth:`IgnoredRules.from_config`: the rules of a repository's configuration, in one of two
  polarities. ``strict`` (the default, fail safe, first document sections 7 and 11): only paths
  matching ``branches.cleanup_after_merge.regenerable`` (plus ``worktrees.disposable_ignored``)
  may go; everything else is kept. ``lenient`` (the second document's polarity, chosen with
  ``--ignored=lenient`` or ``worktrees.ignored: lenient``): every ignored path may go except
  those matching ``worktrees.protected_ignored``. In both, the agent-state directory
  (``worktrees.agent_state_dir``) is protected unless ``worktrees.agent_state_disposable`` or
  ``worktrees.salvage`` lists a path (salvaged paths are copied out before any removal), and a
  ``protected_ignored`` match always keeps a file.
- :func:`read_ignored`: one ``git status`` of a directory (optionally limited to pathspecs),
  its ignored paths judged by those rules: the answer for "may these ignored files go?".
- :func:`judge_ignored`: the same for ignored entries already read (lists the ignored
  directories whose contents decide, bounded).
- :func:`classify_ignored`: the pure classification underneath.

Glob semantics (``fnmatch`` per path component, case-sensitive):

- a glob without ``/`` (``.env*``) matches any single component at any depth, so it matches a
  file's basename (``a/b/.env.local``) and a directory and everything beneath it (gitignore's
  rule);
- a glob with a trailing ``/`` (``node_modules/``) matches only a directory, at any depth when it
  has no other ``/``, and covers everything beneath it;
- a glob with an inner ``/`` (``docs/planning/``) is anchored at the worktree root; a ``**``
  component matches any number of components; a trailing ``/**`` is the same as a trailing ``/``.

Precedence: a protected glob that matches any component of a path keeps it, at any depth (an
``.env`` inside ``node_modules/`` or ``build/`` is kept); otherwise, walking the components from
the root, the OUTERMOST component that a disposable glob matches decides (so a directory declared
regenerable goes as a whole). A directory entry (``dir/``, as ``git status --ignored=matching``
reports a wholly ignored directory) that no glob decides as a whole needs its contents listed;
until they are, it is counted as blocking (fail closed). A directory that goes as a whole is
still scanned (names only, bounded by :data:`SCAN_CAP` entries): a nested repository (a ``.git``
directory or file) or a protected file inside it keeps it, and so does a scan past the bound
(nothing inside can be ruled out).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from branchkeeper.git.parse import parse_status_z
from branchkeeper.git.run import DEFAULT_TIMEOUT_S, run_git

#: The two polarities (module docstring).
Polarity = Literal["strict", "lenient"]
POLARITIES: tuple[Polarity, ...] = ("strict", "lenient")

#: Most files one listing of an ignored directory examines.
DEFAULT_FILE_CAP = 20000

#: Most entries (names only) the scan of the directories that go as a whole reads, per call.
SCAN_CAP = 100_000

#: Why a repository found inside an ignored directory keeps it.
NESTED_REPOSITORY = "a repository inside an ignored directory: its commits and files are nowhere else"

#: Why an unmatched path is kept in the strict polarity.
NOT_REGENERABLE = "not regenerable: no branches.cleanup_after_merge.regenerable glob matches"


@dataclass(frozen=True, slots=True)
class Blocked:
    """One ignored path that blocks a removal, and why (one line)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class IgnoredVerdict:
    """The classification of ignored paths.

    ``protected``: paths that block removal, each with a reason. ``disposable``: paths that may be
    lost. ``needs_listing``: directory entries (ending in ``/``) whose contents decide; they also
    block until listed. ``unarchivable``: blocking entries that cannot be copied into an archive
    (a directory too large or unreadable, a nested checkout). ``unlisted``: directories a
    protected glob keeps as a whole, not listed yet (an archive needs their files).
    ``nested``: repositories (directories holding a ``.git``) found inside ignored directories;
    ``unscanned``: ignored directories too large (or unreadable) to rule one out. Both also
    block, as protected paths that cannot be archived. Paths are relative to the root, POSIX
    separators (a directory ends in ``/``).
    """

    protected: tuple[Blocked, ...]
    disposable: tuple[str, ...]
    needs_listing: tuple[str, ...]
    unarchivable: tuple[str, ...] = field(default=())
    unlisted: tuple[str, ...] = field(default=())
    nested: tuple[str, ...] = field(default=())
    unscanned: tuple[str, ...] = field(default=())

    @property
    def blocking(self) -> tuple[Blocked, ...]:
        """Every blocking entry: protected paths, then unlisted directories."""
        return self.protected + tuple(
            Blocked(d, "ignored directory not inspected") for d in self.needs_listing)

    @property
    def kept(self) -> tuple[str, ...]:
        """The ignored paths the rule keeps (what a removal would lose and an archive holds),
        in order, each once."""
        return tuple(dict.fromkeys(b.path for b in self.protected))

    @property
    def ok(self) -> bool:
        """True when every ignored path is disposable."""
        return not self.protected and not self.needs_listing

    @property
    def archivable(self) -> bool:
        """True when every blocking path is a file an archive can hold (``--archive-ignored``)."""
        return not self.needs_listing and not self.unarchivable and not self.unlisted


@dataclass(frozen=True, slots=True)
class _Glob:
    text: str
    parts: tuple[str, ...]
    dir_only: bool
    anchored: bool


def _compile(text: str) -> _Glob:
    body = text.strip()
    dir_only = body.endswith("/") or body.endswith("/**")
    body = body.removesuffix("/**").rstrip("/")
    if body.startswith("**/"):
        body = body[3:]
    if body.startswith("/"):
        body = body[1:]
        parts = tuple(body.split("/"))
        return _Glob(text, parts, dir_only, True)
    parts = tuple(p for p in body.split("/") if p)
    return _Glob(text, parts, dir_only, len(parts) > 1)


def _match_parts(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match_parts(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match_parts(rest, parts[1:])


def _matches_at(glob: _Glob, parts: Sequence[str], k: int, *, is_dir: bool) -> bool:
    """Does ``glob`` match the prefix ``parts[:k]`` (a directory unless it is the whole path)?"""
    if glob.dir_only and not (k < len(parts) or is_dir):
        return False
    if not glob.parts:
        return False
    if glob.anchored:
        return _match_parts(glob.parts, parts[:k])
    return fnmatchcase(parts[k - 1], glob.parts[0])


def _first_match(globs: Sequence[_Glob], parts: Sequence[str], k: int, *,
                 is_dir: bool) -> _Glob | None:
    for glob in globs:
        if _matches_at(glob, parts, k, is_dir=is_dir):
            return glob
    return None


def _decide(parts: Sequence[str], *, is_dir: bool, protected: Sequence[_Glob],
            disposable: Sequence[_Glob]) -> tuple[str, str] | None:
    """('protected'|'disposable', glob text): a protected glob at any component, else the
    outermost component a disposable glob matches, or None."""
    for k in range(1, len(parts) + 1):
        hit = _first_match(protected, parts, k, is_dir=is_dir)
        if hit is not None:
            return "protected", hit.text
    for k in range(1, len(parts) + 1):
        hit = _first_match(disposable, parts, k, is_dir=is_dir)
        if hit is not None:
            return "disposable", hit.text
    return None


def classify_ignored(
    paths: Iterable[str],
    *,
    protected: Sequence[str],
    regenerable: Sequence[str],
    disposable: Sequence[str],
    strict: bool,
    agent_state_dir: str,
    agent_state_disposable: Sequence[str],
    listings: Mapping[str, Sequence[str] | None] | None = None,
) -> IgnoredVerdict:
    """Classify ignored ``paths`` (relative, POSIX; a trailing ``/`` marks a whole directory).

    ``protected``, ``regenerable``, ``disposable``: globs (module docstring for their syntax);
    ``regenerable`` and ``disposable`` act alike. ``strict``: a path no glob matches is protected
    (the default polarity) instead of disposable (lenient). ``agent_state_dir`` (e.g.
    ``.agentic``) is protected unless ``agent_state_disposable`` (globs relative to it) matches.
    ``listings`` maps a directory entry to the files under it (relative to the root) or to
    ``None`` when it could not be listed completely (too many files, unreadable, a checkout
    inside): such a directory is protected and cannot be archived. Returns an
    :class:`IgnoredVerdict`; raises nothing.
    """
    prot = [_compile(g) for g in protected]
    disp = [_compile(g) for g in (*regenerable, *disposable)]
    agent_disp = [_compile(g) for g in agent_state_disposable]
    agent_parts = tuple(p for p in agent_state_dir.strip("/").split("/") if p)
    listings = listings or {}
    out_prot: list[Blocked] = []
    out_disp: list[str] = []
    out_list: list[str] = []
    out_whole: list[str] = []
    out_unlisted: list[str] = []

    def one(path: str, *, listed: bool) -> None:
        is_dir = path.endswith("/")
        parts = tuple(p for p in path.split("/") if p and p != ".")
        if not parts:
            return
        n = len(agent_parts)
        in_agent = bool(agent_parts) and parts[:n] == agent_parts
        decided: tuple[str, str] | None
        if in_agent:
            decided = _decide(parts, is_dir=is_dir, protected=prot, disposable=())
            if decided is None and len(parts) > n:
                decided = _decide(parts[n:], is_dir=is_dir, protected=(), disposable=agent_disp)
            if decided is None and not is_dir:
                out_prot.append(Blocked(path, f"agent state ({agent_state_dir}/) not listed "
                                              "disposable"))
                return
        else:
            decided = _decide(parts, is_dir=is_dir, protected=prot, disposable=disp)
        if decided is not None:
            kind, glob = decided
            if kind == "disposable":
                out_disp.append(path)
            elif not is_dir:
                out_prot.append(Blocked(path, f"matches protected glob {glob!r}"))
            else:
                one_dir(path, listed=listed, why=f"matches protected glob {glob!r}")
            return
        if is_dir:
            one_dir(path, listed=listed, why=None)
            return
        if strict:
            out_prot.append(Blocked(path, NOT_REGENERABLE))
        else:
            out_disp.append(path)

    def one_dir(path: str, *, listed: bool, why: str | None) -> None:
        """A directory no disposable glob takes as a whole: its files decide (and are what an
        archive would hold); ``why`` is set when a protected glob holds it as a whole."""
        if listed:
            out_prot.append(Blocked(path, why or "ignored directory inside a listed directory"))
            out_whole.append(path)
            return
        if path not in listings:
            if why is None:
                out_list.append(path)
            else:  # kept as a whole: blocks now; its files are listed only for an archive
                out_prot.append(Blocked(path, why))
                out_unlisted.append(path)
            return
        contents = listings[path]
        if contents is None:
            out_prot.append(Blocked(path, "ignored directory too large, unreadable or holding "
                                          "a checkout"))
            out_whole.append(path)
            return
        if not contents:
            if why is None:
                out_disp.append(path)
            else:
                out_prot.append(Blocked(path, why))
                out_whole.append(path)
        for inner in contents:
            if why is not None:
                out_prot.append(Blocked(inner, why))
            else:
                one(inner, listed=True)

    for item in paths:
        one(item, listed=False)
    return IgnoredVerdict(tuple(out_prot), tuple(out_disp), tuple(out_list), tuple(out_whole),
                          tuple(out_unlisted))


@dataclass(frozen=True, slots=True)
class IgnoredRules:
    """The arguments of :func:`classify_ignored`, from one configuration and one polarity.

    Build it with :meth:`from_config`; ``regenerable`` already holds
    ``worktrees.disposable_ignored`` and ``agent_state_disposable`` the salvage list.
    """

    protected: tuple[str, ...] = (".env*", "*.local")
    regenerable: tuple[str, ...] = ()
    polarity: Polarity = "strict"
    agent_state_dir: str = ".agentic"
    agent_state_disposable: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: Any, *, polarity: Polarity | None = None) -> IgnoredRules:
        """The rules of a ``branchkeeper.model.config.Config``. ``polarity``: ``strict`` or
        ``lenient`` (a command-line choice); ``None`` takes ``worktrees.ignored``."""
        wt = config.worktrees
        regen = (*config.branches.cleanup_after_merge.regenerable, *wt.disposable_ignored)
        chosen: Polarity = polarity or wt.ignored
        return cls(protected=tuple(wt.protected_ignored), regenerable=tuple(regen),
                   polarity=chosen, agent_state_dir=wt.agent_state_dir,
                   agent_state_disposable=(*wt.agent_state_disposable, *wt.salvage))

    def classify(self, paths: Sequence[str],
                 listings: Mapping[str, Sequence[str] | None] | None = None) -> IgnoredVerdict:
        """:func:`classify_ignored` with these rules."""
        return classify_ignored(
            paths, protected=self.protected, regenerable=self.regenerable, disposable=(),
            strict=self.polarity == "strict", agent_state_dir=self.agent_state_dir,
            agent_state_disposable=self.agent_state_disposable, listings=listings)


def list_dir(root: Path, rel_dir: str, *, cap: int) -> tuple[tuple[str, ...] | None, list[str]]:
    """Files under ``root/rel_dir`` (relative to ``root``, symlinks as files, never followed),
    at most ``cap``; (``None``, ...) when over the cap or unreadable. Also returns nested
    ``.git`` holders found (relative dirs)."""
    files: list[str] = []
    nested: list[str] = []
    start = root / rel_dir

    def fail(exc: OSError) -> None:
        raise exc

    try:
        for dirpath, dirnames, filenames in os.walk(start, onerror=fail):
            rel = Path(dirpath).relative_to(root).as_posix()
            if ".git" in dirnames or ".git" in filenames:
                nested.append(rel + "/")
                dirnames[:] = []
                continue
            # os.walk lists a symlink to a directory among the directories (and does not
            # follow it): it is one entry, like a file
            links = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
            dirnames[:] = [d for d in dirnames if d not in links]
            for name in [*filenames, *links]:
                files.append(f"{rel}/{name}")
                if len(files) > cap:
                    return None, nested
    except OSError:
        return None, nested
    return tuple(sorted(files)), nested


@dataclass(slots=True)
class _Scan:
    """What the scans of one call found: nested repositories, protected paths inside, the
    directories a scan could not finish, and the entries left to read (the shared bound)."""

    left: int
    nested: list[str] = field(default_factory=list)
    protected: list[Blocked] = field(default_factory=list)
    over: list[str] = field(default_factory=list)


def _name_matcher(globs: Sequence[_Glob]) -> Callable[[str], re.Match[str] | None] | None:
    """One regular expression for the globs that match a single name (``fnmatch`` syntax),
    or ``None`` when there are none."""
    texts = [fnmatch.translate(g.parts[0]) for g in globs]
    return re.compile("|".join(texts)).match if texts else None


def _scan(root: Path, rel_dir: str, protected: Sequence[_Glob], found: _Scan) -> bool:
    """Scan ``root/rel_dir`` (names only: ``os.scandir``, symlinks not followed) into
    ``found``: a directory holding ``.git`` is a nested repository (not entered), a path a
    ``protected`` glob matches is kept (a directory as a whole). True when anything keeps it;
    past the bound, or unreadable, the directory is added to ``found.over``. Single-name globs
    are one regular expression each for files and directories (a scan reads every name)."""
    start = len(found.nested) + len(found.protected)
    single = [g for g in protected if not g.anchored and g.parts]
    anchored = [g for g in protected if g.anchored]
    any_name = _name_matcher([g for g in single if not g.dir_only])
    dir_name = _name_matcher(single)
    stack = [(str(root / rel_dir), rel_dir.rstrip("/"))]
    while stack:
        here, rel = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            found.over.append(rel_dir)
            return True
        found.left -= len(entries)
        if found.left < 0:
            found.over.append(rel_dir)
            return True
        if any(e.name == ".git" for e in entries):
            found.nested.append(rel + "/")
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            name = entry.name
            matcher = dir_name if is_dir else any_name
            hit = matcher is not None and matcher(name) is not None
            if not hit and anchored:
                parts = (*rel.split("/"), name)
                hit = _first_match(anchored, parts, len(parts), is_dir=is_dir) is not None
            if hit:
                path = f"{rel}/{name}" + ("/" if is_dir else "")
                glob = next((g.text for g in protected if _matches_at(
                    g, (*rel.split("/"), name), len(rel.split("/")) + 1, is_dir=is_dir)), "?")
                found.protected.append(Blocked(path, f"matches protected glob {glob!r} "
                                                     f"inside ignored directory {rel_dir}"))
            elif is_dir:
                stack.append((entry.path, f"{rel}/{name}"))
    return len(found.nested) + len(found.protected) > start


def _scan_whole(root: Path, verdict: IgnoredVerdict, rules: IgnoredRules, *, cap: int,
                nested: Sequence[str]) -> IgnoredVerdict:
    """``verdict`` with its directories that go as a whole scanned (:func:`_scan`, at most
    ``cap`` entries in all): each that holds a nested repository, a protected path or is past
    the bound is kept instead. ``nested``: repositories the listings already found."""
    found = _Scan(cap)
    protected = [_compile(g) for g in rules.protected]
    kept = {d for d in verdict.disposable if d.endswith("/") and _scan(root, d, protected, found)}
    blocked = [*found.protected, *(Blocked(n, NESTED_REPOSITORY) for n in found.nested),
               *(Blocked(d, f"more than {cap} entries to scan: a nested repository or a "
                            "protected file inside cannot be ruled out") for d in found.over)]
    return replace(
        verdict, protected=verdict.protected + tuple(blocked),
        disposable=tuple(d for d in verdict.disposable if d not in kept),
        unarchivable=verdict.unarchivable + tuple(found.nested) + tuple(found.over),
        nested=tuple(dict.fromkeys([*nested, *found.nested])), unscanned=tuple(found.over))


def judge_ignored(root: Path, entries: Sequence[str], rules: IgnoredRules, *,
                  file_cap: int = DEFAULT_FILE_CAP, scan_cap: int = SCAN_CAP) -> IgnoredVerdict:
    """Classify ignored ``entries`` under ``root`` (as ``git status --ignored=matching``
    printed them) with ``rules``, listing (bounded by ``file_cap``) only the ignored
    directories whose contents decide, and scanning (names only, at most ``scan_cap`` entries)
    those that go as a whole for a nested repository or a protected file. A checkout inside an
    ignored directory makes that directory protected (and is listed in ``nested``). Reads the
    filesystem; runs no git."""
    verdict = rules.classify(entries)
    nested: list[str] = []
    if verdict.needs_listing or verdict.unlisted:
        listings: dict[str, Sequence[str] | None] = {}
        for rel in (*verdict.needs_listing, *verdict.unlisted):
            files, inside = list_dir(root, rel, cap=file_cap)
            listings[rel] = None if inside else files
            nested += inside
        verdict = rules.classify(entries, listings)
    return _scan_whole(root, verdict, rules, cap=scan_cap, nested=nested)


def read_status(path: Path | str, *, pathspecs: Sequence[str] = (),
                timeout: float = DEFAULT_TIMEOUT_S) -> tuple[list[str], list[str], list[str]]:
    """(tracked changes, untracked files, ignored entries) of the work tree at ``path``, from
    one ``git status`` (limited to ``pathspecs`` when given, literal paths relative to
    ``path``). Raises :class:`~branchkeeper.git.run.GitError` when git fails,
    :class:`~branchkeeper.git.parse.ParseError` on output of an unexpected shape."""
    # quotePath=false: paths as bytes, not C-quoted; --no-renames: one path per entry;
    # -uall: every untracked file by name; --ignored=matching: a wholly ignored dir as "dir/".
    # --ignore-submodules=none: a submodule's edits show whatever .gitmodules' `ignore` says.
    args = ["-c", "core.quotePath=false", "status", "--porcelain=v1", "-z", "--no-renames",
            "--untracked-files=all", "--ignored=matching", "--ignore-submodules=none"]
    if pathspecs:
        args += ["--", *(f":(literal){p}" for p in pathspecs)]
    return parse_status_z(run_git(args, cwd=path, timeout=timeout).stdout)


def read_ignored(path: Path | str, config: Any, *, polarity: Polarity | None = None,
                 pathspecs: Sequence[str] = (), file_cap: int = DEFAULT_FILE_CAP,
                 timeout: float = DEFAULT_TIMEOUT_S) -> IgnoredVerdict:
    """May the ignored files under ``path`` (a work tree; only ``pathspecs`` in it when given)
    be lost? One ``git status``, then :func:`judge_ignored` with the rules of ``config``
    (:meth:`IgnoredRules.from_config`, ``polarity`` as there). The guard calls this for the
    targets of ``git worktree remove``, ``rm -r`` and ``find -delete``. Raises as
    :func:`read_status`."""
    _tracked, _untracked, ignored = read_status(path, pathspecs=pathspecs, timeout=timeout)
    rules = IgnoredRules.from_config(config, polarity=polarity)
    return judge_ignored(Path(path), ignored, rules, file_cap=file_cap)
