"""Whether a process still runs: the one test that tells a stale file from a live one.

Used for the scratch object directories of ``git merge-tree`` (git/mergetree.py) and the
``reference-transaction`` hook's hand-off files (state/githook_pending.py), whose names carry
the process id that made them.
"""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True when a process with id ``pid`` exists (signal 0; a process of another user that we
    may not signal counts as alive, so its files are never taken for stale)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError, OSError):  # not a valid pid at all: nothing runs there
        return False
    return True
