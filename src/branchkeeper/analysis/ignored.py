"""Which ignored files in a worktree may be lost with it, and which block its removal.

Pure functions (no git, no filesystem). Implements the second document, "Cleanup: isolation
worktrees" and "Ad-hoc cleanup obligation + the automatic reaper" (protected ignored content, the
``--strict-ignored`` polarity, the inverted polarity of the agent-state directory), and the first
document, section 11 (a removal without ``--force`` still deletes ignored files, so each must be
disposable).

Glob semantics (``fnmatch`` per path component, case-sensitive):

- a glob without ``/`` (``.env*``) matches any single component at any depth, so it matches a
  file's basename (``a/b/.env.local``) and a directory and everything beneath it (gitignore's
  rule);
- a glob with a trailing ``/`` (``node_modules/``) matches only a directory, at any depth when it
  has no other ``/``, and covers everything beneath it;
- a glob with an inner ``/`` (``docs/planning/``) is anchored at the worktree root; a ``**``
  component matches any number of components; a trailing ``/**`` is the same as a trailing ``/``.

Precedence: walking a path's components from the root, the OUTERMOST component that some glob
matches decides (so a directory declared regenerable is disposable as a whole, whatever lies
inside); at one component a protected glob beats a disposable one. Inside the agent-state
directory the polarity inverts: protected unless ``agent_state_disposable`` (globs relative to that
directory) matches. A path no glob matches is disposable by default, protected with ``strict``.
A directory entry (``dir/``, as ``git status --ignored=matching`` reports a wholly ignored
directory) that no glob decides as a whole needs its contents listed; until they are, it is
counted as blocking (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True, slots=True)
class Blocked:
    """One ignored path that blocks a removal, and why (one line)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class IgnoredVerdict:
    """The classification of a worktree's ignored paths.

    ``protected``: paths that block removal, each with a reason. ``disposable``: paths that may be
    lost. ``needs_listing``: directory entries (ending in ``/``) whose contents decide; they also
    block until listed. Paths are relative to the worktree root, POSIX separators.
    """

    protected: tuple[Blocked, ...]
    disposable: tuple[str, ...]
    needs_listing: tuple[str, ...]

    @property
    def blocking(self) -> tuple[Blocked, ...]:
        """Every blocking entry: protected paths, then unlisted directories."""
        return self.protected + tuple(
            Blocked(d, "ignored directory not inspected") for d in self.needs_listing)

    @property
    def ok(self) -> bool:
        """True when every ignored path is disposable."""
        return not self.protected and not self.needs_listing


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
    """('protected'|'disposable', glob text) from the outermost matching component, or None."""
    for k in range(1, len(parts) + 1):
        hit = _first_match(protected, parts, k, is_dir=is_dir)
        if hit is not None:
            return "protected", hit.text
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
    ``regenerable`` and ``disposable`` act alike. ``strict``: the ``--strict-ignored`` polarity
    (a path no glob matches is protected instead of disposable). ``agent_state_dir`` (e.g.
    ``.agentic``) inverts the polarity inside it; ``agent_state_disposable`` are globs relative
    to it. ``listings`` maps a directory entry to the files under it (relative to the worktree
    root) or to ``None`` when it could not be listed completely (too many files, unreadable): such
    a directory is protected. Returns an :class:`IgnoredVerdict`; raises nothing.
    """
    prot = [_compile(g) for g in protected]
    disp = [_compile(g) for g in (*regenerable, *disposable)]
    agent_disp = [_compile(g) for g in agent_state_disposable]
    agent_parts = tuple(p for p in agent_state_dir.strip("/").split("/") if p)
    listings = listings or {}
    out_prot: list[Blocked] = []
    out_disp: list[str] = []
    out_list: list[str] = []

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
            if kind == "protected":
                out_prot.append(Blocked(path, f"matches protected glob {glob!r}"))
            else:
                out_disp.append(path)
            return
        if is_dir:
            if listed:
                out_prot.append(Blocked(path, "ignored directory inside a listed directory"))
                return
            if path not in listings:
                out_list.append(path)
                return
            contents = listings[path]
            if contents is None:
                out_prot.append(Blocked(path, "ignored directory too large, unreadable or "
                                              "holding a checkout"))
                return
            if not contents:
                out_disp.append(path)
            for inner in contents:
                one(inner, listed=True)
            return
        if strict:
            out_prot.append(Blocked(path, "not listed disposable (--strict-ignored)"))
        else:
            out_disp.append(path)

    for item in paths:
        one(item, listed=False)
    return IgnoredVerdict(tuple(out_prot), tuple(out_disp), tuple(out_list))
