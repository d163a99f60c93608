"""``python -m branchkeeper``."""

from branchkeeper.adapters.cli import run

run()
