"""The one place that runs git.

Every git process branchkeeper starts goes through :func:`run_git`. It never waits on a human
(stdin is a pipe or /dev/null, ``GIT_TERMINAL_PROMPT=0``), drops the inherited variables a hook
environment may carry (``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_WORK_TREE``), bounds every call with
a timeout, and raises :class:`GitError` carrying the argv, the exit code and both streams.

Every call runs offline except the few subcommands whose job is the network (``fetch``, ``push``,
``ls-remote``...): no sweep and no hook may start a network call, and in a partial clone reading
a missing object would otherwise fetch it from the promisor remote (issue 11, section 4).
``GIT_NO_LAZY_FETCH=1`` says so to git 2.45 and newer; older git ignores it, so
``GIT_ALLOW_PROTOCOL`` is also set to a list naming no real protocol, which makes git refuse
every transport whatever the user's ``protocol.*.allow`` settings: the command fails with
"could not fetch ... from promisor remote" instead of fetching.

A counter of processes started is kept so tests can assert that the number of git processes does
not grow with the number of branches.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from enum import IntEnum
from pathlib import Path
from typing import NamedTuple

from branchkeeper.errors import BranchkeeperError

#: Default timeout of one git call, in seconds.
DEFAULT_TIMEOUT_S = 60.0
#: Seconds a batched stream of a sweep (``diff-tree --stdin``, the patch-id pipeline,
#: ``merge-tree --stdin``) may go without output or CPU time before it is taken for hung: its
#: work grows with the repository, so it is bounded by silence, never by a fixed time.
STREAM_IDLE_S = 120.0
#: Options of every batched stream of a sweep, bounding what one git process holds in memory,
#: since a sweep runs two at once (issue 20: 500 MB for the whole sweep): at most 64 MiB of
#: pack files mapped at a time in 16 MiB windows (git's defaults map up to whole packs, which
#: on a large repository is most of a stream's resident memory) and a 32 MiB delta base cache
#: (default 96 MiB). Measured on a 380 MB pack: a stream's peak fell from 377 to 89 MB. The
#: smaller delta cache is kept for memory: on that repository's patch-id streams it cost no
#: CPU that two runs each could tell apart (8,889 branch commits: 5.1 s CPU at 32 MiB, 5.4 s at
#: 96 MiB; 169 whole branch diffs: 2.7-3.0 s both) and saved 65-80 MB per stream.
STREAM_MEMORY = ("-c", "core.packedGitLimit=64m", "-c", "core.packedGitWindowSize=16m",
                 "-c", "core.deltaBaseCacheLimit=32m")

# Variables a hook or an outer git process may export; any of them would point our git calls at
# the wrong repository or index (pre-commit's ``no_git_env``).
_DROPPED_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "GIT_WORK_TREE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_EXTERNAL_DIFF",
        "GIT_DIFF_OPTS",
        "GIT_PAGER",
    }
)


#: Subcommands that talk to a remote on purpose; every other git call runs offline.
NETWORK_SUBCOMMANDS = frozenset({"fetch", "push", "ls-remote", "pull", "clone", "remote",
                                 "submodule", "fetch-pack", "send-pack", "archive"})

#: The environment of an offline call: no lazy fetch (git 2.45+), no transport at all (older).
OFFLINE_ENV = {"GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": "branchkeeper-offline"}

# Global options that take the next word as their value (``git -C dir -c k=v status``).
_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                            "--exec-path", "--config-env"})


def subcommand(args: Sequence[str]) -> str:
    """The git subcommand of ``args`` (the argv after ``git``), past global options; ``""``
    when there is none."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _VALUE_OPTIONS:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return ""


class GitExit(IntEnum):
    """Exit codes of git that carry meaning, named where they are checked."""

    OK = 0
    #: ``merge-base --is-ancestor``: no; ``config --get``: key missing; ``diff --quiet``: differs.
    NO = 1
    #: ``config --get``: key missing (older spellings) / ``symbolic-ref -q``: not a symbolic ref.
    MISSING = 1
    #: git's generic fatal error.
    FATAL = 128
    #: ``show-ref --verify`` / ``ls-remote --exit-code``: nothing matched.
    NO_MATCH = 2


class GitError(BranchkeeperError):
    """A git call failed, timed out, or could not be started.

    Attributes: ``argv`` (the full command), ``returncode`` (``None`` on a timeout or a failure to
    start), ``stdout`` and ``stderr`` (bytes), ``summary`` (what happened, without the argv).
    """

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str],
        returncode: int | None,
        stdout: bytes = b"",
        stderr: bytes = b"",
    ) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.summary = message
        self.stdout = stdout
        self.stderr = stderr
        detail = stderr.decode("utf-8", "replace").strip()
        text = f"{message}: {' '.join(self.argv)}"
        if returncode is not None:
            text += f" (exit {returncode})"
        if detail:
            text += f"\n{detail}"
        super().__init__(text)


class GitResult(NamedTuple):
    """The outcome of one git process: exit code and raw streams (bytes). A NamedTuple, not a
    frozen dataclass: the hook imports this module."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        """stdout decoded as UTF-8 (invalid bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def path_text(self) -> str:
        """stdout decoded as the OS decodes a path (UTF-8, a byte that is not held as a
        surrogate escape): a path git printed round-trips to the same bytes when passed back
        to git or the OS, where :attr:`text` would name a path that does not exist."""
        return self.stdout.decode("utf-8", "surrogateescape")


class _Counter:
    """Number of git processes started in this Python process."""

    count = 0


class _Shield:
    """How many :func:`shielded` blocks are open in this process."""

    depth = 0


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Within the block, every local git child starts in its own session, so a terminal's
    Ctrl-C (a SIGINT to the foreground process group) reaches branchkeeper alone, which defers
    it; and a timeout ends any child with SIGTERM (git removes its lock files when it is
    terminated), then SIGKILL only if it does not exit within :data:`TERMINATE_GRACE_S`. A git
    child that holds ref locks is therefore never killed mid-transaction (issue 12, section 3).
    A network call (:data:`NETWORK_SUBCOMMANDS`) stays in the foreground group: Ctrl-C stops a
    slow fetch at once, and git cleans up after itself on SIGINT. Blocks nest."""
    _Shield.depth += 1
    try:
        yield
    finally:
        _Shield.depth -= 1


#: Seconds a shielded git child gets to exit after SIGTERM before it is killed.
TERMINATE_GRACE_S = 10.0


def _run_shielded(argv: list[str], *, cwd: Path | str, stdin: bytes | None, timeout: float,
                  env: dict[str, str], own_session: bool) -> GitResult:
    proc = subprocess.Popen(argv, cwd=str(cwd), env=env, start_new_session=own_session,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=TERMINATE_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise GitError(f"git timed out after {timeout:g} s", argv=argv, returncode=None,
                       stdout=out or b"", stderr=err or b"") from None
    return GitResult(proc.returncode, out, err)


def processes_started() -> int:
    """Return how many git processes this Python process has started so far."""
    return _Counter.count


def git_env(extra: Mapping[str, str] | None = None, *, offline: bool = True) -> dict[str, str]:
    """The environment every git call runs with: the caller's, minus repository overrides,
    plus :data:`OFFLINE_ENV` when ``offline``; ``extra`` last."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    if offline:
        env.update(OFFLINE_ENV)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ASKPASS"] = "true"
    env["SSH_ASKPASS"] = "true"
    env["GCM_INTERACTIVE"] = "never"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    if extra:
        env.update(extra)
    return env


def run_git(
    args: Sequence[str],
    *,
    cwd: Path | str,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` and return its exit code and streams.

    ``args`` excludes the leading ``git``. ``stdin`` bytes are piped in; otherwise stdin is
    /dev/null. ``timeout`` is in seconds. With ``check`` (the default) any non-zero exit raises
    :class:`GitError`; callers that give an exit code a meaning pass ``check=False`` and name the
    code with :class:`GitExit` where they test it.

    Raises :class:`GitError` on a timeout, when git cannot be started, or (with ``check``) on a
    non-zero exit. The call runs offline unless its subcommand is in
    :data:`NETWORK_SUBCOMMANDS`.
    """
    argv = ["git", *args]
    offline = subcommand(args) not in NETWORK_SUBCOMMANDS
    _Counter.count += 1
    if _Shield.depth:
        try:
            result = _run_shielded(argv, cwd=cwd, stdin=stdin, timeout=timeout,
                                   env=git_env(env, offline=offline), own_session=offline)
        except OSError as exc:
            raise GitError(f"could not run git ({exc.strerror})", argv=argv,
                           returncode=None) from None
        if check and result.returncode != 0:
            raise GitError("git failed", argv=argv, returncode=result.returncode,
                           stdout=result.stdout, stderr=result.stderr)
        return result
    try:
        proc = subprocess.run(
            argv,
            cwd=str(cwd),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=git_env(env, offline=offline),
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(
            f"git timed out after {timeout:g} s",
            argv=argv,
            returncode=None,
            stdout=exc.stdout or b"",
            stderr=exc.stderr or b"",
        ) from None
    except OSError as exc:
        raise GitError(f"could not run git ({exc.strerror})", argv=argv, returncode=None) from None
    if check and proc.returncode != 0:
        raise GitError("git failed", argv=argv, returncode=proc.returncode,
                       stdout=proc.stdout, stderr=proc.stderr)
    return GitResult(proc.returncode, proc.stdout, proc.stderr)


def run_git_pipeline(
    first: Sequence[str],
    second: Sequence[str],
    *,
    cwd: Path | str,
    stdin: bytes,
    timeout: float = DEFAULT_TIMEOUT_S,
    idle: float | None = None,
) -> GitResult:
    """Run ``git FIRST | git SECOND`` with ``stdin`` fed to the first; return the second's output.

    Used where the first process's output is large and only a digest of it is needed (for
    example ``diff-tree --stdin -p | patch-id --stable``): the patch text flows through an OS pipe
    and never sits in this process's memory. Both run offline. ``timeout`` (seconds) bounds the
    whole run; ``idle`` (seconds) replaces it with a bound on silence, as in
    :func:`stream_git`: the pair is ended only once neither has written output nor used CPU
    time for that long. Raises :class:`GitError` on a timeout or a stop (``returncode`` None)
    or when either process exits non-zero; the error carries the second's output up to that
    point (``stdout``), so the caller can keep what was answered.
    """
    from branchkeeper.git.watchdog import Watchdog, feed  # streams only: not the hook's path

    argv1 = ["git", *first]
    argv2 = ["git", *second]
    _Counter.count += 2
    env = git_env()
    session = bool(_Shield.depth)
    try:
        p1 = subprocess.Popen(argv1, cwd=str(cwd), stdin=subprocess.PIPE, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              start_new_session=session)
    except OSError as exc:
        raise GitError(f"could not run git ({exc.strerror})", argv=argv1, returncode=None) from None
    try:
        p2 = subprocess.Popen(argv2, cwd=str(cwd), stdin=p1.stdout, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              start_new_session=session)
    except OSError as exc:
        p1.kill()
        p1.wait()
        raise GitError(f"could not run git ({exc.strerror})", argv=argv2, returncode=None) from None
    assert p1.stdout is not None and p1.stderr is not None and p2.stdout is not None
    p1.stdout.close()  # p2 owns the read end now
    errs: dict[int, list[bytes]] = {1: [], 2: []}
    threads = [threading.Thread(target=feed, args=(p1, stdin), daemon=True),
               threading.Thread(target=lambda: errs[1].append(p1.stderr.read()),  # type: ignore[union-attr]
                                daemon=True),
               threading.Thread(target=lambda: errs[2].append(p2.stderr.read()),  # type: ignore[union-attr]
                                daemon=True)]
    watch = Watchdog([p1, p2], timeout, idle)
    for t in threads:
        t.start()
    watch.start()
    chunks: list[bytes] = []
    out = p2.stdout
    assert isinstance(out, io.BufferedReader)
    drained = False
    try:
        while chunk := out.read1(1 << 16):
            watch.answered()
            chunks.append(chunk)
        drained = True
    finally:
        watch.stop()
        if not drained:  # interrupted: end both
            for proc in (p1, p2):
                with contextlib.suppress(OSError):
                    proc.terminate()
        out.close()
        p2.wait()
        p1.wait()
        for t in threads:
            t.join()
    out2 = b"".join(chunks)
    if watch.expired.is_set():
        raise GitError(watch.message(), argv=[*argv1, "|", *argv2], returncode=None,
                       stdout=out2, stderr=b"".join(errs[1]))
    if p1.returncode != 0:
        raise GitError("git failed", argv=argv1, returncode=p1.returncode, stdout=out2,
                       stderr=b"".join(errs[1]))
    if p2.returncode != 0:
        raise GitError("git failed", argv=argv2, returncode=p2.returncode, stdout=out2,
                       stderr=b"".join(errs[2]))
    return GitResult(0, out2, b"".join(errs[2]))


def stream_git(
    args: Sequence[str],
    *,
    cwd: Path | str,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    idle: float | None = None,
    env: Mapping[str, str] | None = None,
    chunk_size: int = 1 << 16,
) -> Iterator[bytes]:
    """Run ``git ARGS`` offline and yield its stdout in chunks (bytes) as git writes them.

    For the large batched streams of a sweep (``diff-tree --stdin``): the output is parsed
    as it arrives, so it never sits whole in this process's memory, and parsing overlaps
    git's own work. ``stdin`` is fed from a thread; stderr is collected. ``timeout`` is in
    seconds for the whole run. ``idle`` (seconds) replaces it with a bound on silence: git is
    ended only once it has neither written output nor used CPU time for that long (a stream
    whose work grows with the repository keeps going while it answers; git buffers its output,
    so CPU time is the sign of life between chunks). Raises :class:`GitError` when git cannot
    be started, on a timeout (git is ended; ``returncode`` None), or after the last chunk when
    git exited non-zero (what was yielded before stands: the caller keeps what was answered).
    Closing the generator early ends git.
    """
    from branchkeeper.git.watchdog import Watchdog, feed  # streams only: not the hook's path

    argv = ["git", *args]
    _Counter.count += 1
    try:
        proc = subprocess.Popen(argv, cwd=str(cwd), env=git_env(env),
                                start_new_session=bool(_Shield.depth),
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise GitError(f"could not run git ({exc.strerror})", argv=argv, returncode=None) from None
    assert proc.stdout is not None and proc.stderr is not None
    err_chunks: list[bytes] = []
    threads = [threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()),  # type: ignore[union-attr]
                                daemon=True)]
    if stdin is not None:
        threads.append(threading.Thread(target=feed, args=(proc, stdin), daemon=True))
    watch = Watchdog([proc], timeout, idle)
    for t in threads:
        t.start()
    watch.start()
    drained = False
    out = proc.stdout
    assert isinstance(out, io.BufferedReader)
    try:
        while chunk := out.read1(chunk_size):
            watch.answered()
            yield chunk
        drained = True
    finally:
        watch.stop()
        if not drained and proc.poll() is None:  # closed early: end git
            proc.terminate()
        proc.stdout.close()
        proc.wait()
        for t in threads:
            t.join()
    if watch.expired.is_set():
        raise GitError(watch.message(), argv=argv, returncode=None,
                       stderr=b"".join(err_chunks))
    if proc.returncode != 0:
        raise GitError("git failed", argv=argv, returncode=proc.returncode,
                       stderr=b"".join(err_chunks))
