"""The product's clock: the one place that reads "now" for ages, idle times and dates.

Every age branchkeeper reports (a branch's days idle, a worktree's hours idle, a worktree's age,
a hold's date) is measured against :func:`now`. It is the wall clock unless the environment
variable ``BRANCHKEEPER_NOW`` holds a unix time in seconds: then that time is "now". Tests build
their repositories relative to one fixed time and set the variable to it, so no verdict depends
on how long a test run takes; a person can set it to ask "what would this say tomorrow?".
Durations (budgets, timeouts) use ``time.monotonic`` and are not affected.
"""

from __future__ import annotations

import os
import time

#: When this process started, as far as branchkeeper can tell (``time.monotonic()`` when this
#: module was first imported; the command line imports it as it loads): a progress bar's delay
#: counts from here, so start-up counts toward "a run longer than a second".
STARTED = time.monotonic()

#: The environment variable that pins "now" (unix seconds, integer or decimal).
NOW_ENV = "BRANCHKEEPER_NOW"


def now() -> float:
    """Unix seconds: ``BRANCHKEEPER_NOW`` when it holds a number, else the wall clock.

    Read on every call (one environment lookup), so a change of the variable takes effect at
    once. A value that is not a finite number is ignored (the wall clock is used).
    """
    pinned = os.environ.get(NOW_ENV)
    if pinned:
        try:
            value = float(pinned)
        except ValueError:
            return time.time()
        if value == value and abs(value) != float("inf"):
            return value
    return time.time()
