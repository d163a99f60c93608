"""Run one batched git stream over many items and isolate the items a missing object breaks.

Issue 11, section 4: a single missing blob must not blind a whole sweep. Every batched stream
branchkeeper runs (``diff-tree --stdin``, the patch-id pipeline, ``merge-tree --stdin``) answers
its input in order and dies at the first item whose object is missing. So a failed run still
settles every item before the failure point; the first unsettled item is run alone (a probe):
if it fails alone it is the culprit and is reported with the object id parsed from git's error,
and the stream resumes after it. Each missing object costs about two extra processes, never one
per item, and the process count stays flat in the number of items. Past ``max_failures`` the
remaining items are reported failed without probing (a partial clone may miss every blob), so
a badly damaged repository cannot start thousands of processes.

Nothing here runs git itself: callers pass a function that runs one batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, NamedTuple, TypeVar

from branchkeeper.git.run import GitError, subcommand

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")

#: Stop probing after this many failed items in one stream (a partial clone misses every blob).
MAX_FAILURES = 32

# git's messages for an object it cannot read: "unable to read <oid>", "unable to read blob
# object <oid>", "could not fetch <oid> from promisor remote", "bad object <oid>",
# "missing blob object '<oid>'", "Could not read <oid>", "corrupt ... <oid>".
_MISSING = re.compile(
    r"(?:unable to read|could not fetch|bad object|missing \w+ object|could not read|corrupt|"
    r"not a valid object name|invalid object)\D{0,40}?\b([0-9a-f]{40}(?:[0-9a-f]{24})?)\b",
    re.IGNORECASE)
_ANY_OID = re.compile(r"\b([0-9a-f]{40}(?:[0-9a-f]{24})?)\b")

#: In the message of every item a stream left unanswered because it stopped answering (was
#: ended after its idle bound): such a verdict is never cached, so the next sweep retries.
STOPPED_MARK = "stopped answering"


class Failure(NamedTuple):
    """Why one item could not be answered: ``oid`` is the object git could not read (None when
    git's message names none) and ``message`` git's first error line."""

    oid: str | None
    message: str

    @property
    def reason(self) -> str:
        """``object missing (<oid>)``, or ``git error: <message>``: an ``unknown`` reason."""
        if self.oid is not None:
            return f"object missing ({self.oid})"
        return f"git error: {self.message}"


class Attempt(NamedTuple, Generic[K, R]):
    """One run of a batch: ``results`` for the items it settled, ``settled`` how many leading
    items of the batch are final (answered, or known to have no answer), ``error`` the git
    failure that stopped it (None: the whole batch is settled)."""

    results: dict[K, R]
    settled: int
    error: GitError | None


def stopped(exc: GitError) -> bool:
    """The stream was ended (its idle bound or timeout) or never started: ``returncode``
    None. Nothing it left unanswered is about an item, so nothing is probed."""
    return exc.returncode is None


def stop_failure(exc: GitError) -> Failure:
    """The :class:`Failure` of every item a stopped stream (:func:`stopped`) left unanswered:
    ``git error: <what happened> (<subcommand>)``, always holding :data:`STOPPED_MARK`."""
    sub = subcommand(exc.argv[1:]) or "git"
    if STOPPED_MARK in exc.summary:
        return Failure(None, f"{exc.summary} ({sub})")
    return Failure(None, f"{sub} {STOPPED_MARK}: {exc.summary}")


def failure_of(exc: GitError) -> Failure:
    """The :class:`Failure` a git error stands for: the missing object it names, if any."""
    text = exc.stderr.decode("utf-8", "replace")
    match = _MISSING.search(text) or _ANY_OID.search(text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[-1] if lines else str(exc).splitlines()[0]
    return Failure(match.group(1) if match else None, first)


def run_isolated(items: Sequence[K], run: Callable[[Sequence[K]], Attempt[K, R]], *,
                 max_failures: int = MAX_FAILURES,
                 group: Callable[[K], Hashable] | None = None
                 ) -> tuple[dict[K, R], dict[K, Failure]]:
    """Answer every item of ``items`` through ``run`` (one git process or pipeline per call).

    Returns ``(results, failures)``: every item is in exactly one of them, or in neither when
    ``run`` settles it without a result (an empty diff). ``run`` must raise for a failure that
    is not about the items (a timeout) and return an :class:`Attempt` with ``error`` set when
    git exited non-zero; its ``settled`` prefix must be exact. Items that produce no output
    (merge commits in a ``diff-tree`` stream) should be left out by the caller: a failure
    after a run of them is found one probe at a time. ``group``: items of one group need the
    same objects (the merges of one tip), so when one fails on a missing object the others
    fail with it, unprobed. An attempt whose error is a stop (:func:`stopped`) fails every
    item it left unanswered with :func:`stop_failure`, unprobed. Raises what ``run`` raises.
    """
    results: dict[K, R] = {}
    failures: dict[K, Failure] = {}
    queue = list(items)
    while queue:
        attempt = run(queue)
        results.update(attempt.results)
        if attempt.error is None:
            break
        rest = queue[attempt.settled:]
        if not rest:
            break
        if stopped(attempt.error):
            failures.update((item, stop_failure(attempt.error)) for item in rest)
            break
        if len(failures) >= max_failures:
            for item in rest:
                failures[item] = Failure(None, f"not isolated: more than {max_failures} items "
                                               "of one stream failed")
            break
        head = rest[0]
        if len(rest) == 1:  # the only unsettled item stopped the stream: no probe needed
            failures[head] = failure_of(attempt.error)
        else:
            probe = run([head])
            results.update(probe.results)
            if probe.error is not None:
                failures[head] = failure_of(probe.error)
        queue = rest[1:]
        if head in failures and group is not None and failures[head].oid is not None:
            lost = group(head)
            for item in queue:
                if group(item) == lost:
                    failures[item] = failures[head]
            queue = [item for item in queue if item not in failures]
    return results, failures
