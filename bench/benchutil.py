"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def compile_package() -> None:
    """Byte-compile branchkeeper as ``pip install`` does for a regular install, so the figures
    are not compile time (an editable install writes the same files on its first run, unless
    PYTHONDONTWRITEBYTECODE is set, as it is on some CI machines; ``branchkeeper install``
    also writes them)."""
    import branchkeeper

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(branchkeeper.__file__).parent)],
                   check=True)
