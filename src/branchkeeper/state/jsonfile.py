"""Small JSON files under the common git dir: atomic writes, forgiving reads.

Kept apart from the inventory cache so the hook path can use them without importing it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path


def write_json_atomic(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file + replace); errors ignored."""
    import tempfile  # here, not at the top: the hook path reads these files on every call

    tmp = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, separators=(",", ":")))  # dumps: the C encoder
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:  # also on Ctrl-C or SIGTERM between the two steps: no temp file is left behind
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def read_json(path: Path) -> object:
    """The JSON in ``path``, or ``None`` when absent, unreadable or corrupt."""
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return None
