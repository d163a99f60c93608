"""Run the real ``branchkeeper hook EVENT`` entry point as a subprocess (shared by hook tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_hook(event: str, payload: Any, *, raw: bytes | None = None,
             env: dict[str, str] | None = None, cwd: Path | None = None,
             ) -> subprocess.CompletedProcess[bytes]:
    """Run the hook with ``payload`` (JSON-encoded) or ``raw`` bytes on stdin."""
    data = raw if raw is not None else json.dumps(payload).encode()
    full_env = os.environ.copy()
    full_env.pop("BRANCHKEEPER_DEBUG", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "branchkeeper", "hook", event], input=data,
                          capture_output=True, env=full_env, cwd=cwd or Path("/"), timeout=60)
