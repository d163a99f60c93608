"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def compile_package(src: Path | None = None) -> None:
    """Byte-compile branchkeeper as ``pip install`` does for a regular install, so the figures
    are not compile time (an editable install writes the same files on its first run, unless
    PYTHONDONTWRITEBYTECODE is set, as it is on some CI machines; ``branchkeeper install``
    also writes them). ``src``: a baseline's package source (a directory holding
    ``branchkeeper/``) instead of the imported package, for the same reason."""
    if src is None:
        import branchkeeper

        where = Path(branchkeeper.__file__).parent
    else:
        where = src / "branchkeeper"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(where)], check=True)
