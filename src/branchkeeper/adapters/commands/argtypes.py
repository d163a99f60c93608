"""Argument types for the command line: numbers that must be positive or not negative.

argparse turns the ``ArgumentTypeError`` these raise into a usage error (exit 2) naming the
option: ``argument -n: must be a whole number of at least 1, not '0'``.
"""

from __future__ import annotations

import argparse
import math


def positive_int(text: str) -> int:
    """``"5"`` -> 5; ``"0"``, ``"-1"`` or ``"x"`` -> ArgumentTypeError (a count or a budget)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """``"0.5"`` -> 0.5; ``"-1"``, ``"nan"``, ``"inf"`` or ``"x"`` -> ArgumentTypeError
    (seconds or hours; 0 allowed)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number of at least 0, not {text!r}")
    return value
