"""The project's error types and exit codes.

Every error a user can cause (not a repository, a broken config, a git too old, a refused
operation) is a :class:`BranchkeeperError`; the CLI's one error handler prints its message and
exits with its code. Nothing else reaches a user as a traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit statuses of the ``branchkeeper`` command (documented in README.md)."""

    OK = 0
    #: ``sweep --fail-on-risk`` found a risk; ``check``: warn.
    FINDINGS = 1
    #: ``check``: deny; also argparse's usage error.
    DENY = 2
    #: a command-line usage error (the same status as argparse's).
    USAGE = 2
    #: ``worktree retire``: a hold was recorded instead of removing.
    HELD = 3
    #: an error the user can act on (message printed).
    ERROR = 4
    #: an operation was refused because a proof did not hold.
    REFUSED = 5
    #: interrupted (Ctrl-C).
    INTERRUPTED = 130


class BranchkeeperError(Exception):
    """An error with a message meant for a person, and the exit code to leave with."""

    exit_code: ExitCode = ExitCode.ERROR


class UsageError(BranchkeeperError):
    """The command line is incomplete or contradictory (a missing option, two that exclude each
    other); exits 2 like argparse's own usage errors."""

    exit_code = ExitCode.USAGE


class NotARepositoryError(BranchkeeperError):
    """The directory is not inside a git repository."""

    @classmethod
    def from_git(cls, where: object, stderr: bytes) -> NotARepositoryError:
        """The error for a ``rev-parse`` that found no repository at ``where`` (a path), from
        git's own last line (``stderr``). A configuration file git cannot parse is named as
        such: the directory is a repository, and the fix is that file, not ``git init``."""
        detail = stderr.decode("utf-8", "replace").strip().splitlines()
        hint = detail[-1] if detail else "not a git repository"
        if "bad config" in hint:
            return cls(f"{where}: git cannot read the repository's configuration ({hint}); "
                       "fix that file, then run again")
        return cls(f"{where}: not inside a git repository ({hint})")


class GitTooOldError(BranchkeeperError):
    """The installed git lacks a feature branchkeeper cannot do without."""


class ConfigError(BranchkeeperError):
    """``.branchkeeper.yaml`` is unreadable or invalid; the message names file, key and problem."""


class StateDirError(BranchkeeperError):
    """``<common dir>/branchkeeper`` exists but is not a directory, so no state can be kept."""


class RefusedError(BranchkeeperError):
    """A destructive operation was refused (no proof, a protected name, a raced tip)."""

    exit_code = ExitCode.REFUSED
