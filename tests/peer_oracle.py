"""The oracle for the peer corpus: run a command for real and see whether work was lost.

Two worlds are built once (tests/oracle/world.py, inside the sandbox of tests/sandbox.py):
``risk``, with work planted that exists nowhere else, and ``safe``, where everything is
committed and pushed. For one command in one world, :func:`run_live` copies the world, runs
the command in the main worktree ``/home/agent/project`` (10 s at most, in a pid namespace of
its own, so nothing it leaves behind survives), then lists the work markers still found
(tests/oracle/check.py); the markers of the untouched world that are gone are what the
command lost. :func:`guard_decisions` asks the guard about commands on an untouched copy, in
the same sandbox paths, so both see the same ``HOME``, ``TMPDIR`` and files.

The corpus and the recorded outcomes are in tests/corpus/ (README.md there cites the peers).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from tests import sandbox

HERE = Path(__file__).resolve().parent
ORACLE = HERE / "oracle"
CORPUS = HERE / "corpus" / "peer-corpus.json"
OUTCOMES = HERE / "corpus" / "peer-oracle.json"
STATES = ("risk", "safe")
PROJECT = "/home/agent/project"
#: Longest a corpus command may run, seconds.
COMMAND_TIMEOUT_S = 10

#: Worktrees of both worlds. A copied file has a new inode and ctime, so git would take every
#: tracked file for modified until its index is refreshed, as any ``git status`` does; each
#: copy is refreshed first (else ``reset --merge`` refuses, for one).
WORKTREES = (PROJECT, "/home/agent/other-worktree", "/tmp/wt")
_REFRESH = "; ".join(f"git -C {w} update-index -q --refresh >/dev/null 2>&1" for w in WORKTREES)
# Inside the sandbox: run the command in a pid namespace of its own (its leftovers die with
# it), stdin empty, output discarded; report its exit status; then list the markers kept.
_LIVE = (_REFRESH + '; unshare --pid --fork --kill-child -- timeout -k 2 {t} /bin/bash -c "$1" '
         '</dev/null >/dev/null 2>&1; echo "$?" >&2; exec /usr/bin/python3 -I /oracle/check.py')


class Outcome(NamedTuple):
    """What running a command did to a world: its ``exit`` status and the markers ``lost``."""

    exit: int
    lost: tuple[str, ...]


class Worlds:
    """The two untouched worlds, built once under ``base``, and their markers."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.markers: dict[str, frozenset[str]] = {}
        for state in STATES:
            world = base / state
            if world.exists():
                shutil.rmtree(world)
            res = sandbox.run(world, ["/usr/bin/python3", "-I", "/oracle/world.py", state],
                              oracle_dir=ORACLE, scratch=base / "mnt", cwd="/")
            if res.returncode != 0:
                raise RuntimeError(f"building the {state} world failed: {res.stderr.decode()}")
            res = sandbox.run(world, ["/usr/bin/python3", "-I", "/oracle/check.py"],
                              oracle_dir=ORACLE, scratch=base / "mnt", copy=True)
            self.markers[state] = frozenset(json.loads(res.stdout))

    def world(self, state: str) -> Path:
        """The untouched ``state`` world (sandboxes work on copies of it)."""
        return self.base / state


def run_live(worlds: Worlds, state: str, command: str, scratch: Path) -> Outcome:
    """Run ``command`` in a fresh copy of the ``state`` world; the markers it destroyed."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    try:
        script = _LIVE.format(t=COMMAND_TIMEOUT_S)
        res = sandbox.run(worlds.world(state), ["/bin/bash", "-c", script, "live", command],
                          oracle_dir=ORACLE, scratch=work, copy=True, cwd=PROJECT,
                          timeout=COMMAND_TIMEOUT_S + 60)
        kept = set(json.loads(res.stdout))
        status = int(res.stderr.decode().strip().splitlines()[-1])
        return Outcome(status, tuple(sorted(worlds.markers[state] - kept)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def guard_decisions(worlds: Worlds, state: str, commands: Sequence[str], scratch: Path,
                    src: str | None = None) -> list[dict[str, str]]:
    """The guard's decision (and the hook's answer) for each command on an untouched copy of
    the ``state`` world, in one Python process inside the sandbox. ``src``: the ``src``
    directory of another checkout whose guard to ask instead of this one."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    try:
        res = sandbox.run(worlds.world(state), ["/bin/sh", "-c", _REFRESH + '; exec "$0" "$@"',
                                                sys.executable, "/oracle/guard.py"],
                          oracle_dir=ORACLE, scratch=work, copy=True, cwd=PROJECT,
                          timeout=60 + 2 * len(commands),
                          stdin=json.dumps(list(commands)).encode(),
                          env={"PYTHONPATH": src} if src else None,
                          read_only=[src] if src else ())
        if res.returncode != 0:
            raise RuntimeError(f"the guard failed in the sandbox: {res.stderr.decode()[-2000:]}")
        return list(json.loads(res.stdout))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scratch_root() -> str | None:
    """Where throwaway worlds go: memory (``/dev/shm``) when it is there, since a copy per
    command on disk costs several times more; else the default temporary directory."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class CorpusCommand(NamedTuple):
    """One distinct command of the peer corpus: its ``category`` (the corpus's tag for its
    destructive core), the ``peers`` that test it with their verdicts, and ``tools``: programs
    it names that a fresh machine of this project's kind lacks (:data:`OPTIONAL_TOOLS`)."""

    command: str
    category: str
    peers: tuple[tuple[str, str], ...]
    tools: tuple[str, ...]


#: Programs the corpus runs that are not on a fresh machine (Debian packages of the same
#: names); a command naming one is run live only where it is installed.
OPTIONAL_TOOLS = ("parallel", "ruby", "busybox", "zsh", "gawk", "ksh", "expect")
_WORD = re.compile(r"[A-Za-z0-9_.+-]+")


def corpus_commands() -> list[CorpusCommand]:
    """The distinct commands of tests/corpus/peer-corpus.json, in the file's order."""
    entries = json.loads(CORPUS.read_text("utf-8"))
    grouped: dict[str, list[dict[str, object]]] = {}
    for e in entries:
        grouped.setdefault(str(e["command"]), []).append(e)
    out = []
    for command, group in grouped.items():
        category = Counter(str(e["category"]) for e in group).most_common(1)[0][0]
        peers = tuple(sorted({(str(e["peer"]), str(e["peer_verdict"])) for e in group}))
        words = set(_WORD.findall(command))
        out.append(CorpusCommand(command, category, peers,
                                 tuple(t for t in OPTIONAL_TOOLS if t in words)))
    return out


class Recorded(NamedTuple):
    """A corpus command with the outcome the oracle recorded in each world."""

    command: str
    category: str
    tools: tuple[str, ...]
    outcomes: dict[str, Outcome]


def write_outcomes(worlds: Worlds, commands: Sequence[CorpusCommand],
                   results: dict[str, dict[str, Outcome]]) -> None:
    """Write tests/corpus/peer-oracle.json: the worlds' markers and each command's outcome."""
    doc = {
        "about": "What each distinct command of peer-corpus.json lost when run for real in the "
                 "two worlds of tests/oracle/world.py (recorded by bench/guard_corpus.py record).",
        "markers": {s: sorted(worlds.markers[s]) for s in STATES},
        "commands": [{"command": c.command, "category": c.category, "tools": list(c.tools),
                      **{s: {"exit": results[c.command][s].exit,
                             "lost": list(results[c.command][s].lost)} for s in STATES}}
                     for c in commands],
    }
    OUTCOMES.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")


def read_outcomes() -> list[Recorded]:
    """The recorded outcomes, in the corpus's order."""
    doc = json.loads(OUTCOMES.read_text("utf-8"))
    return [Recorded(c["command"], c["category"], tuple(c["tools"]),
                     {s: Outcome(c[s]["exit"], tuple(c[s]["lost"])) for s in STATES})
            for c in doc["commands"]]
