"""Verified recovery bundles: save before destroy (DESIGN.md guarantee 3; issue 3, section 3;
second document, "The unproven class: archive, don't accumulate").

:func:`create_bundle` writes ``<state dir>/bundles/<id>-<label>.bundle`` holding the requested
refs at exactly the requested tips, then :func:`verify_bundle` proves it: ``git bundle verify``
(header and prerequisites), the list of heads (every requested ref at its requested oid), and an
actual unbundle into a scratch repository that borrows this repository's objects, which makes
``index-pack`` check every byte of the pack (``git bundle verify`` alone does not read the pack).
A failed create or verify deletes the file and raises :class:`BundleError`; nothing destructive
may follow.

Bundles are compact by default: commits already reachable from ``base`` (the default branch) are
left out and git records the commits they hang from as prerequisites. The negative revisions are
the boundary of ``rev-list ^base TIPS`` (the fork points of unmerged tips) and the parents of tips
already merged into ``base`` (so such a tip is still carried, as one commit). Every one of them is
reachable from ``base``. When no base is given, the base is unverifiable, or a compact bundle
cannot carry every ref, the bundle falls back to full history and says why in ``note``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.objects import bundle_negatives, tips_missing_objects
from branchkeeper.git.run import GitError, run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.bundles import BundleInfo, remove_debris
from branchkeeper.state.statedir import bundles_dir

_LABEL_BAD = re.compile(r"[^A-Za-z0-9._-]+")
_HEAD_LINE = re.compile(r"\A([0-9a-f]{40}(?:[0-9a-f]{24})?) (\S.*)\Z")
_BUNDLE_TIMEOUT_S = 600.0

COMPACT_NOTE = (
    "compact bundle: restoring needs its prerequisite commits present in the repository "
    "(they are on the base branch)"
)


class BundleError(BranchkeeperError):
    """A bundle could not be written or did not verify; the partial file was deleted."""


class BundleRaceError(BundleError):
    """A ref moved between the caller's read and the bundle: ``moved`` maps ref -> (expected,
    found). The caller may drop those refs (report them raced) and try again."""

    def __init__(self, moved: Mapping[str, tuple[Oid, Oid | None]]) -> None:
        self.moved = dict(moved)
        names = ", ".join(sorted(self.moved))
        super().__init__(f"refs moved while the recovery bundle was written: {names}")


class BundleMissingError(BundleError):
    """Some refs cannot be bundled: what a bundle of them carries includes an object this
    repository lacks (a partial clone, an omitted or deleted blob, a damaged pack). ``missing``
    maps each such ref to that object's id; the other refs can be bundled without them."""

    def __init__(self, missing: Mapping[str, str]) -> None:
        self.missing = dict(missing)
        names = ", ".join(f"{ref} (object {oid})" for ref, oid in sorted(self.missing.items()))
        super().__init__(f"objects missing from this repository for: {names}")


def _check_refs(refs: Mapping[str, Oid]) -> None:
    if not refs:
        raise ValueError("create_bundle needs at least one ref")
    for ref in refs:
        # Full names only: never a word git could read as an option, never a line break on stdin.
        if not ref.startswith("refs/") or any(c in ref for c in "\n\r\0 ^:"):
            raise ValueError(f"not a full ref name: {ref!r}")


def parse_header(path: Path) -> tuple[tuple[Oid, ...], dict[str, Oid]]:
    """Read a bundle's header: (prerequisite oids, {ref: oid}).

    Format (v2/v3): a signature line, ``@capability`` lines (v3), ``-<oid> [comment]`` per
    prerequisite, ``<oid> <ref>`` per head, then an empty line and the pack. Raises
    :class:`BundleError` when the header is unreadable.
    """
    prereqs: list[Oid] = []
    heads: dict[str, Oid] = {}
    try:
        with path.open("rb") as fh:
            signature = fh.readline()
            if signature not in (b"# v2 git bundle\n", b"# v3 git bundle\n"):
                raise BundleError(f"not a git bundle: {path}")
            while True:
                raw = fh.readline()
                if raw in (b"\n", b""):
                    break
                line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
                if line.startswith("@"):
                    continue
                if line.startswith("-"):
                    prereqs.append(Oid.parse(line[1:].split(" ", 1)[0]))
                    continue
                match = _HEAD_LINE.match(line)
                if not match:
                    raise BundleError(f"unreadable bundle header line in {path}: {line[:200]!r}")
                heads[match.group(2)] = Oid(match.group(1))
    except (OSError, ValueError) as exc:
        raise BundleError(f"cannot read bundle {path}: {exc}") from None
    return tuple(prereqs), heads


def _commit_or_none(repo: Path, rev: str) -> Oid | None:
    result = run_git(["rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"],
                     cwd=repo, check=False)
    if result.returncode != 0:  # 1: not a commit / does not exist
        return None
    return Oid.parse(result.text)


def _write(repo: Path, path: Path, refs: Mapping[str, Oid], negatives: list[Oid]) -> str | None:
    """Run ``git bundle create``; return git's stderr when it refused, None on success."""
    stdin = "".join(f"{ref}\n" for ref in refs) + "".join(f"^{n}\n" for n in negatives)
    result = run_git(["bundle", "create", "-q", str(path), "--stdin"], cwd=repo,
                     stdin=stdin.encode("utf-8", "surrogateescape"), check=False,
                     timeout=_BUNDLE_TIMEOUT_S)
    if result.returncode != 0:
        path.unlink(missing_ok=True)
        return result.stderr.decode("utf-8", "replace").strip() or f"exit {result.returncode}"
    return None


def _check_objects(repo: Path, refs: Mapping[str, Oid], negatives: list[Oid]) -> None:
    """Before git is asked to write a bundle of ``refs`` less ``negatives``: one that needs a
    missing object would fail whole (in a partial clone, try to fetch it); raise
    :class:`BundleMissingError` naming the refs that need one, so the caller goes on without
    them."""
    lacking = tips_missing_objects(repo, [str(t) for t in dict.fromkeys(refs.values())],
                                   [str(n) for n in negatives])
    if lacking:
        raise BundleMissingError({ref: lacking[str(oid)] for ref, oid in refs.items()
                                  if str(oid) in lacking})


def _fsync(path: Path) -> None:
    """Flush the bundle and its directory entry to disk before any ref is deleted, as the
    journal's lines are: a crash right after the deletion must not find a torn bundle."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def create_bundle(repo: Path, common_dir: Path, refs: Mapping[str, Oid], *, base: Oid | None,
                  label: str) -> BundleInfo:
    """Write and verify a recovery bundle of ``refs`` (full ref name -> expected tip).

    ``repo`` is a work tree (or git dir) of the repository, ``common_dir`` its common git dir,
    ``base`` the default branch's tip (``None``: full bundle), ``label`` a short word for the file
    name. Returns the verified :class:`BundleInfo`. Raises :class:`BundleMissingError` (before
    anything is written) naming the refs whose bundle needs an object the repository lacks,
    :class:`BundleRaceError` when a ref no longer points at its expected tip,
    :class:`BundleError` when git cannot write it or it fails verification (the file is
    deleted either way), ``ValueError`` for a ref that is not a full name. Implements issue 3
    section 3, issue 11 section 4 and the second document's compact-bundle paragraph.
    """
    _check_refs(refs)
    remove_debris(common_dir)  # what an interrupted earlier write left (we hold the lock)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe_label = _LABEL_BAD.sub("-", label).strip("-.")[:40] or "refs"
    path = bundles_dir(common_dir) / f"{stamp}-{secrets.token_hex(2)}-{safe_label}.bundle"
    tips = list(dict.fromkeys(refs.values()))

    note = ""
    negatives: list[Oid] | None = None
    if base is None:
        note = "full bundle: no base branch given"
    else:
        base_commit = _commit_or_none(repo, base)
        if base_commit is None:
            note = "full bundle: base unverifiable"
        else:
            try:
                negatives = bundle_negatives(repo, base_commit, tips)
            except GitError as exc:
                note = f"full bundle: base history unreadable ({exc.returncode})"

    _check_objects(repo, refs, negatives or [])
    compact = False
    if negatives is not None:
        error = _write(repo, path, refs, negatives)
        if error is None:
            _prereqs, heads = parse_header(path)
            if all(ref in heads for ref in refs):
                compact = True
            else:
                path.unlink(missing_ok=True)
                note = ("full bundle: a smaller bundle without the default branch's history would "
                        "have left out some branches")
        else:
            note = "full bundle: git refused a compact bundle"
    if not compact:
        if negatives:
            _check_objects(repo, refs, [])  # a full bundle carries the whole history
        error = _write(repo, path, refs, [])
        if error is not None:
            raise BundleError(f"could not write recovery bundle {path}:\n{error}")
    try:
        verify_bundle(repo, path, expected=refs)
        prereqs, heads = parse_header(path)
        size = path.stat().st_size
        _fsync(path)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if compact:
        note = COMPACT_NOTE
    return BundleInfo(path=path, compact=compact, prerequisites=prereqs, heads=heads, note=note,
                      size_bytes=size)


def verify_bundle(repo: Path, path: Path, *, expected: Mapping[str, Oid] | None = None) -> None:
    """Prove ``path`` restores: ``git bundle verify``, the heads, and a trial unbundle.

    ``expected`` (full ref -> oid) must all be listed at those oids; a ref at another oid raises
    :class:`BundleRaceError`, a missing one :class:`BundleError`. The trial unbundle runs in a
    scratch bare repository whose alternates point at ``repo``'s objects, so the pack is read and
    checksummed in full without touching ``repo``. Raises :class:`BundleError` on any failure.
    Does not delete ``path`` (the caller decides).
    """
    result = run_git(["bundle", "verify", "-q", str(path)], cwd=repo, check=False,
                     timeout=_BUNDLE_TIMEOUT_S)
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip()
        raise BundleError(f"recovery bundle failed git bundle verify: {path}\n{detail}")
    _prereqs, heads = parse_header(path)
    if expected:
        missing = sorted(ref for ref in expected if ref not in heads)
        if missing:
            raise BundleError(f"recovery bundle {path} lacks refs: {', '.join(missing)}")
        moved = {ref: (oid, heads[ref]) for ref, oid in expected.items() if heads[ref] != oid}
        if moved:
            raise BundleRaceError(moved)
    # --git-path may print a path relative to ``repo`` (--path-format needs git 2.31).
    objects = (repo / run_git(["rev-parse", "--git-path", "objects"], cwd=repo).path_text.strip())
    scratch = Path(tempfile.mkdtemp(prefix=".verify-", dir=path.parent))
    try:
        run_git(["init", "-q", "--bare", str(scratch)], cwd=path.parent)
        (scratch / "objects" / "info").mkdir(parents=True, exist_ok=True)
        # bytes: a repository path that is not UTF-8 must reach git as its own bytes
        alternates = scratch / "objects" / "info" / "alternates"
        alternates.write_bytes(os.fsencode(objects.resolve()) + b"\n")
        trial = run_git(["bundle", "unbundle", str(path)], cwd=scratch, check=False,
                        timeout=_BUNDLE_TIMEOUT_S)
        if trial.returncode != 0:
            detail = trial.stderr.decode("utf-8", "replace").strip()
            raise BundleError(f"recovery bundle does not unpack: {path}\n{detail}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
