"""The one ``for-each-ref`` every inventory starts from, and default-branch resolution.

Implements the first document, section 2 step 1 (one process for names, tips, dates, upstreams
and park markers of every ref) and section 1 ``branches.default`` (issue 2, section 2).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from branchkeeper.git.parse import ParseError
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid

_SEP = "%00"
#: Field order of :data:`REF_FORMAT`; each record ends with NUL, 0x01, newline.
_FIELDS = (
    "%(refname)",
    "%(objectname)",
    "%(objecttype)",
    "%(committerdate:unix)",
    "%(upstream)",
    "%(symref)",
    # One trailers atom: git before 2.4x shares key= filters between atoms of one format.
    "%(trailers:only=true,unfold=true)",
    "%(subject)",
)
REF_FORMAT = _SEP.join(_FIELDS) + "%00%01"
_RECORD_END = b"\0\x01\n"


class RefInfo(NamedTuple):
    """One ref as ``for-each-ref`` reports it. ``date`` is the tip's committer date (unix s).

    A NamedTuple, not a frozen dataclass: thousands are built per run, on the hook path too.
    """

    ref: str
    oid: Oid | None
    objecttype: str
    date: int | None
    upstream: str
    upstream_gone: bool
    symref: str
    parked_reason: str
    parked_by: str
    unparked: str
    subject: str


class RefTable(NamedTuple):
    """Every local branch and every remote-tracking branch of one remote.

    ``local`` maps a branch name to its ``refs/heads`` entry, ``remote`` a branch name to its
    ``refs/remotes/<remote>`` entry (``<remote>/HEAD`` excluded and kept as ``remote_head``,
    the symref target, or ``""``).
    """

    remote_name: str
    local: dict[str, RefInfo]
    remote: dict[str, RefInfo]
    remote_head: str
    by_ref: dict[str, RefInfo]

    def names(self) -> list[str]:
        """Every branch name, local or remote, sorted."""
        return sorted(set(self.local) | set(self.remote))

    def tip(self, ref: str) -> Oid | None:
        info = self.by_ref.get(ref)
        return info.oid if info else None


def parse_trailers(text: str) -> dict[str, list[str]]:
    """``Key: value`` lines (unfolded trailers) -> ``{lower-case key: [values]}``."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and " " not in key.strip():
            out.setdefault(key.strip().lower(), []).append(value.strip())
    return out


def _parse_ref_records(data: bytes) -> list[RefInfo]:
    out: list[RefInfo] = []
    if not data:
        return out
    chunks = data.split(_RECORD_END)
    if chunks and chunks[-1] in (b"", b"\n"):
        chunks.pop()
    for chunk in chunks:
        parts = chunk.decode("utf-8", "surrogateescape").split("\0")
        if len(parts) != len(_FIELDS):
            raise ParseError(f"for-each-ref: expected {len(_FIELDS)} fields, got {len(parts)}")
        ref, oid, otype, date, up, symref, trailers, subject = parts
        values = parse_trailers(trailers)
        out.append(
            RefInfo(
                ref=ref,
                oid=Oid.parse(oid) if oid else None,
                objecttype=otype,
                date=int(date) if date.strip().lstrip("-").isdigit() else None,
                upstream=up,
                upstream_gone=False,
                symref=symref,
                parked_reason="; ".join(values.get("parked-reason", [])),
                parked_by="; ".join(values.get("parked-by", [])),
                unparked="; ".join(values.get("unparked", [])),
                subject=subject,
            )
        )
    return out


class TipFactStore(Protocol):
    """Where :func:`read_refs` keeps tip facts: ``tip -> [date or None, trailers, subject]``."""

    def get(self, tip: str) -> list[Any] | None: ...

    def put(self, tip: str, value: list[Any]) -> None: ...


#: The lean listing: no field that makes git parse the commit.
LEAN_FORMAT = "%(refname)%00%(objectname)%00%(objecttype)%00%(upstream)%00%(symref)%00%01"
#: The same facts ``REF_FORMAT`` reads from a commit, as ``log`` prints them.
_TIP_FORMAT = "%H%x00%ct%x00%(trailers:only=true,unfold=true)%x00%s%x00%x01"


def _lean_records(root: Path, data: bytes, tip_facts: TipFactStore) -> list[RefInfo]:
    """:func:`_parse_ref_records` for the lean listing, the commit facts from ``tip_facts``
    (filled from one ``log --no-walk --stdin`` for the tips it lacks)."""
    rows: list[list[str]] = []
    chunks = data.split(_RECORD_END) if data else []
    if chunks and chunks[-1] in (b"", b"\n"):
        chunks.pop()
    for chunk in chunks:
        parts = chunk.decode("utf-8", "surrogateescape").split("\0")
        if len(parts) != 5:
            raise ParseError(f"for-each-ref: expected 5 fields, got {len(parts)}")
        rows.append(parts)
    facts: dict[str, list[Any]] = {}
    missing: list[str] = []
    for _, oid, otype, _, _ in rows:
        if otype == "commit" and oid not in facts:
            known = tip_facts.get(oid)
            if known is None:
                missing.append(oid)
                facts[oid] = [None, "", ""]
            else:
                facts[oid] = known
    if missing:
        out = run_git(["log", "--no-walk=unsorted", "--stdin", f"--format={_TIP_FORMAT}"],
                      cwd=root, stdin=("\n".join(missing) + "\n").encode()).stdout
        for chunk in out.split(_RECORD_END):
            parts = chunk.lstrip(b"\n").decode("utf-8", "surrogateescape").split("\0")
            if len(parts) != 4:
                continue
            oid, when, text, subj = parts
            value = [int(when) if when.strip().lstrip("-").isdigit() else None, text, subj]
            facts[oid] = value
            tip_facts.put(oid, value)
    out_records: list[RefInfo] = []
    for ref, oid, otype, up, symref in rows:
        fact = facts.get(oid)
        date: int | None = fact[0] if fact is not None and isinstance(fact[0], int) else None
        trailers: str = fact[1] if fact is not None else ""
        subject: str = fact[2] if fact is not None else ""
        values = parse_trailers(trailers) if trailers else {}
        out_records.append(RefInfo(
            ref=ref, oid=Oid.parse(oid) if oid else None, objecttype=otype, date=date,
            upstream=up, upstream_gone=False, symref=symref,
            parked_reason="; ".join(values.get("parked-reason", [])),
            parked_by="; ".join(values.get("parked-by", [])),
            unparked="; ".join(values.get("unparked", [])), subject=subject))
    return out_records


class _NoTipFacts:
    """A :class:`TipFactStore` that keeps nothing (the facts are read for this call only)."""

    def get(self, tip: str) -> list[Any] | None:
        return None

    def put(self, tip: str, value: list[Any]) -> None:
        return None


#: The lean listing without ``%(objecttype)``: it reads no object at all.
_UNTYPED_FORMAT = "%(refname)%00%(objectname)%00%(upstream)%00%(symref)%00%01"


def _listing_typed_apart(root: Path, patterns: Sequence[str]) -> bytes:
    """The lean listing (:data:`LEAN_FORMAT`'s bytes) of a repository where a ref names a
    missing object, which makes ``for-each-ref`` die on any format that reads objects (issue 11,
    section 4): the names from a listing that reads none, the types from one ``cat-file
    --batch-check`` (``missing`` for an object git lacks; in a partial clone, where an offline
    ``cat-file`` dies on a promisor object, from one ``--batch-all-objects`` listing of what is
    local). A missing tip then has the type ``missing`` and its branch is ``unknown: object
    missing (<oid>)``. Raises :class:`GitError`."""
    out = run_git(["for-each-ref", f"--format={_UNTYPED_FORMAT}", *patterns], cwd=root).stdout
    rows = [c.decode("utf-8", "surrogateescape").split("\0") for c in out.split(_RECORD_END)
            if c not in (b"", b"\n")]
    oids = sorted({r[1] for r in rows if len(r) == 4 and r[1]})
    types = _object_types(root, oids)
    data = bytearray()
    for parts in rows:
        if len(parts) != 4:
            raise ParseError(f"for-each-ref: expected 4 fields, got {len(parts)}")
        ref, oid, up, symref = parts
        data += "\0".join((ref, oid, types.get(oid, "missing"), up, symref)).encode(
            "utf-8", "surrogateescape") + _RECORD_END
    return bytes(data)


def _object_types(root: Path, oids: Sequence[str]) -> dict[str, str]:
    """``{oid: type}`` of the ``oids`` git has (absent: missing), in one process."""
    if not oids:
        return {}
    check = "--batch-check=%(objectname) %(objecttype)"
    res = run_git(["cat-file", check], cwd=root, check=False,
                  stdin="".join(f"{o}\n" for o in oids).encode("ascii"))
    if res.returncode != 0:  # a partial clone: list what is local, ask nothing of the remote
        res = run_git(["cat-file", "--batch-all-objects", check], cwd=root)
    wanted = set(oids)
    types: dict[str, str] = {}
    for line in res.stdout.decode("ascii", "replace").splitlines():
        oid, _, kind = line.partition(" ")
        if oid in wanted and kind and kind != "missing":
            types[oid] = kind
    return types


def lean_listing(root: Path, remote: str, extra_patterns: Sequence[str] = ()) -> bytes:
    """The lean listing :func:`read_refs` reads with ``tip_facts`` (:data:`LEAN_FORMAT`'s
    bytes), one ``for-each-ref``; where a ref names a missing object, the names and types read
    apart (:func:`_listing_typed_apart`). Raises :class:`GitError`. A caller that needs the raw
    bytes (the stored sweep result's key) passes them back as ``listing``."""
    patterns = ["refs/heads", f"refs/remotes/{remote}", *extra_patterns]
    argv = ["for-each-ref", f"--format={LEAN_FORMAT}", *patterns]
    res = run_git(argv, cwd=root, check=False)
    if res.returncode == 0:
        return res.stdout
    if b"missing object" in res.stderr:
        return _listing_typed_apart(root, patterns)
    raise GitError(f"git failed (exit {res.returncode})", argv=["git", *argv],
                   returncode=res.returncode, stdout=res.stdout, stderr=res.stderr)


def read_refs(root: Path, remote: str, *, extra_patterns: Sequence[str] = (),
              tip_facts: TipFactStore | None = None, listing: bytes | None = None) -> RefTable:
    """Read every ``refs/heads`` and ``refs/remotes/<remote>`` ref with ONE ``for-each-ref``.

    ``root`` is any directory of the repository. With ``tip_facts`` (a cache of each tip
    commit's date, trailers and subject, which never change) the listing reads only names,
    ids, types and upstreams, which costs git no commit parsing, and the facts of tips not in
    the cache come from one ``log --no-walk --stdin`` (none on a warm run); a tip that is not
    a commit (never judged) then has no subject. ``listing``: :func:`lean_listing` already
    read (with ``tip_facts`` only). Raises
    :class:`GitError` when git fails.
    """
    patterns = ["refs/heads", f"refs/remotes/{remote}", *extra_patterns]
    if tip_facts is not None:
        if listing is None:
            listing = lean_listing(root, remote, extra_patterns)
        records = _lean_records(root, listing, tip_facts)
    else:
        fmt = REF_FORMAT
        res = run_git(["for-each-ref", f"--format={fmt}", *patterns], cwd=root, check=False)
        if res.returncode == 0:
            records = _parse_ref_records(res.stdout)
        elif b"missing object" in res.stderr:
            records = _lean_records(root, _listing_typed_apart(root, patterns), _NoTipFacts())
        else:
            raise GitError(f"git failed (exit {res.returncode})", argv=["git", "for-each-ref",
                           f"--format={fmt}", *patterns], returncode=res.returncode,
                           stdout=res.stdout, stderr=res.stderr)
    local: dict[str, RefInfo] = {}
    remote_refs: dict[str, RefInfo] = {}
    by_ref: dict[str, RefInfo] = {}
    remote_head = ""
    remote_prefix = f"refs/remotes/{remote}/"
    for info in records:
        by_ref[info.ref] = info
        if info.ref.startswith("refs/heads/"):
            local[info.ref[len("refs/heads/"):]] = info
        elif info.ref.startswith(remote_prefix):
            name = info.ref[len(remote_prefix):]
            if name == "HEAD":
                remote_head = info.symref
                continue
            if info.symref:
                continue  # another symbolic ref under the remote: not a branch
            remote_refs[name] = info
    # An upstream under our remote that no longer exists is "gone" (computed here: asking
    # for-each-ref for %(upstream:track) would walk history once per branch).
    for name, info in list(local.items()):
        if info.upstream.startswith(remote_prefix) and info.upstream not in by_ref:
            local[name] = info._replace(upstream_gone=True)
            by_ref[info.ref] = local[name]
    return RefTable(remote, local, remote_refs, remote_head, by_ref)


class DefaultBranch(NamedTuple):
    """The resolved default branch.

    ``name`` is the branch name; ``refs`` the existing full refs that stand for it, the
    remote-tracking copy first (``refs/remotes/origin/main``, ``refs/heads/main``); ``how`` says
    which rule resolved it. ``name`` is ``None`` when nothing resolved, and ``reason`` says why.
    """

    name: str | None
    refs: tuple[str, ...]
    how: str
    reason: str = ""

    @property
    def resolved(self) -> bool:
        return self.name is not None and bool(self.refs)


class BranchNames(Protocol):
    """What :func:`resolve_default_branch` reads: a :class:`RefTable`, or the guard's lean
    name -> tip view of the same refs."""

    @property
    def remote_name(self) -> str: ...
    @property
    def local(self) -> Mapping[str, object]: ...
    @property
    def remote(self) -> Mapping[str, object]: ...
    @property
    def remote_head(self) -> str: ...


def resolve_default_branch(configured: str, table: BranchNames) -> DefaultBranch:
    """Resolve ``branches.default`` against the ref table (no git process).

    ``auto``: the target of ``refs/remotes/<remote>/HEAD``, then local ``main``, then local
    ``master``; anything else names the branch. Nothing is guessed past that (field case C06).
    """
    remote = table.remote_name

    def refs_for(name: str) -> tuple[str, ...]:
        found = []
        if name in table.remote:
            found.append(f"refs/remotes/{remote}/{name}")
        if name in table.local:
            found.append(f"refs/heads/{name}")
        return tuple(found)

    if configured != "auto":
        refs = refs_for(configured)
        if refs:
            return DefaultBranch(configured, refs, "branches.default")
        return DefaultBranch(
            None, (), "branches.default",
            f"branches.default names '{configured}', which exists neither locally nor on "
            f"'{remote}'",
        )
    prefix = f"refs/remotes/{remote}/"
    if table.remote_head.startswith(prefix):
        name = table.remote_head[len(prefix):]
        refs = refs_for(name)
        if refs:
            return DefaultBranch(name, refs, f"{remote}/HEAD")
    for name in ("main", "master"):
        if name in table.local:
            return DefaultBranch(name, refs_for(name), f"local {name}")
    return DefaultBranch(
        None, (), "auto",
        f"no {remote}/HEAD and no local main or master; set branches.default in "
        ".branchkeeper.yaml (or run: git remote set-head " + remote + " --auto)",
    )


def matches_any(name: str, globs: Iterable[str]) -> bool:
    """True when ``name`` matches one of the shell globs (``fnmatchcase``; ``*`` spans ``/``)."""
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def protected_role(name: str, branches: Any, default_name: str | None) -> str | None:
    """Why branch ``name`` is never judged as work to finish (and its checkout never retired,
    reaped or listed removable): ``"the default branch"``, ``"an integration line
    (branches.integration_lines)"``, ``"exempt (branches.exempt)"`` or ``"a protected name
    (branches.protected_names)"``; ``None`` for a work branch. ``branches`` is the
    ``branches:`` config block. First document, sections 1, 7 and 8."""
    if default_name is not None and name == default_name:
        return "the default branch"
    if matches_any(name, branches.integration_lines):
        return "an integration line (branches.integration_lines)"
    if matches_any(name, branches.exempt):
        return "exempt (branches.exempt)"
    if name in branches.protected_names:
        return "a protected name (branches.protected_names)"
    return None


def remember_session_default(common_dir: Path, session_id: str, configured: str, remote: str,
                             remote_head: str, default: DefaultBranch) -> bool:
    """Store ``default`` (resolved for ``branches.default`` = ``configured`` from refs whose
    ``<remote>/HEAD`` target was ``remote_head``, ``""`` for none) as the session's resolution
    (:mod:`~branchkeeper.state.session_base`), when the filesystem shows that same remote HEAD
    (else a later reader could not tell the two apart). True when stored. No git process."""
    from branchkeeper.git.locate import loose_symref_target
    from branchkeeper.state.session_base import SessionBase, save_session_base

    head = loose_symref_target(common_dir, f"refs/remotes/{remote}/HEAD")
    if not session_id or head is None or head != remote_head:
        return False
    save_session_base(common_dir, session_id, SessionBase(
        configured, remote, head, default.name, default.refs, default.how, default.reason))
    return True


def session_default(common_dir: Path, session_id: str, configured: str, remote: str
                    ) -> DefaultBranch | None:
    """The default branch this session resolved at SessionStart, while ``branches.default``
    (``configured``), ``remote`` and the ``<remote>/HEAD`` target are what it was resolved
    with; None otherwise (resolve it from the refs). No git process (issue 18: the base branch
    is resolved once per session)."""
    from branchkeeper.git.locate import loose_symref_target
    from branchkeeper.state.session_base import load_session_base

    head = loose_symref_target(common_dir, f"refs/remotes/{remote}/HEAD")
    if not session_id or head is None:
        return None
    base = load_session_base(common_dir, session_id, default=configured, remote=remote,
                             remote_head=head)
    if base is None:
        return None
    return DefaultBranch(base.name, base.refs, base.how, base.reason)
