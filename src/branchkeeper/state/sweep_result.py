"""The stored whole-sweep result, ``<common git dir>/branchkeeper/sweep-result.json`` (issue 16:
a warm sweep in half a second at 5,000 branches).

Two lines: a header (a JSON object: ``version``, the ``key`` the result was stored under,
``digest``: blake2b of the second line, and whatever else the writer puts there), then the body
(one JSON value). A reader compares the key before it parses the body, and takes the body only
when its digest matches, so a torn, flipped or hand-edited file, or one of another version, reads
as no result (the sweep computes again). Writes are atomic (temp file, replace). What the values
mean is the analysis layer's business (:mod:`branchkeeper.analysis.sweep_reuse`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

#: File name under ``<common git dir>/branchkeeper/``.
FILE_NAME = "sweep-result.json"
#: Bump when the layout of header or body changes: an older file then reads as none.
FORMAT_VERSION = 1


def result_path(common_dir: Path) -> Path:
    return common_dir / "branchkeeper" / FILE_NAME


def _digest(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def load_result(common_dir: Path, key: str) -> tuple[dict[str, Any], Any] | None:
    """``(header, body)`` of the stored result when it was stored under ``key``, is of this
    format and is whole; None otherwise (absent, unreadable, corrupt, another key). Never
    raises."""
    try:
        with open(result_path(common_dir), "rb") as fh:
            head = fh.readline()
            header = json.loads(head)
            if not isinstance(header, dict) or header.get("version") != FORMAT_VERSION \
                    or header.get("key") != key:
                return None
            body = fh.read()
        if header.get("digest") != _digest(body):
            return None
        return header, json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None


def save_result(common_dir: Path, key: str, header: dict[str, Any], body: Any) -> None:
    """Store ``body`` under ``key`` with the other ``header`` fields (JSON values), atomically;
    errors are ignored (it is a cache)."""
    # ASCII: a branch name git gave in bytes that are not UTF-8 (held as surrogates) round-trips
    data = json.dumps(body, separators=(",", ":")).encode("ascii")
    head = json.dumps({**header, "version": FORMAT_VERSION, "key": key, "digest": _digest(data)},
                      separators=(",", ":"))
    _write(result_path(common_dir), head.encode("ascii") + b"\n" + data)


def drop_result(common_dir: Path) -> None:
    """Remove the stored result (nothing to remove is fine)."""
    with contextlib.suppress(OSError):
        result_path(common_dir).unlink()


def _write(path: Path, data: bytes) -> None:
    import tempfile

    tmp = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:  # Ctrl-C or SIGTERM between the two steps leaves no temp file behind
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
