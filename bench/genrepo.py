"""Generate a large repository of realistic agent branches, fast, with its ground truth.

Issue 2, section 8. One ``git fast-import`` process streams every commit; no per-branch git
process runs. The shape:

- ``main``: a line of up to 3,000 commits touching many shared files (``src/modNN/fileNNN.py``,
  only their first ten lines), dated evenly over the past year.
- branches forked from ``main`` at varied depths, 1-4 commits each, each writing a file of its
  own (``areas/..../bN.txt``); about one in six also changes one line of a shared file in a
  "slot" of its own (line 20 + 7 * slot, so no two changes share diff context and main's edits
  never come near them).
- about a third ``merged``: a ``--no-ff`` merge commit on main (ancestor of main);
- about a third preserved without ancestry: half ``squash_merged`` (one main commit made on the
  then-current main whose diff equals the branch's merge-base..tip diff, line for line, so the
  patch-ids are equal) and half ``rebase_merged`` (one main commit per branch commit carrying
  the identical patch). Of the squash-merged branches that change a shared file, half are
  ``squash_moved`` (field case C12): just before the squash, main edits a line two above the
  branch's, inside its diff context, so the patch-ids differ and only merging proves it;
- ``superseded`` (field case C11): about one in eight squash-merged branches is built on another
  branch and rewrites that branch's file before it lands; the branch it was built on never
  lands, and its own version of that file is on no base, so it must never be called
  preserved;
- about a third ``unmerged``: unique commits; about half older than 30 days; about one in ten
  parked (tip is an empty commit with ``Parked-Reason``/``Parked-By`` trailers); about one in ten
  "partially landed" (all but the last commit rebase-merged: still NOT preserved).

About half the branches also get a ``refs/remotes/origin/<name>`` copy (with upstream config);
``refs/remotes/origin/main`` and the symbolic ``refs/remotes/origin/HEAD`` exist. The ground truth
is written to ``DIR/ground-truth.json`` and returned.

CLI: ``python bench/genrepo.py DIR --branches N [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DAY = 86400
_WORDS = ("retry", "cache", "login", "search", "export", "parser", "metrics", "billing", "upload",
          "timeout", "i18n", "docs", "webhook", "audit", "schema", "queue", "auth", "csv",
          "pagination", "logging", "config", "health", "index", "session", "theme", "email")
MAIN_ZONE = 10  # main's filler commits edit only lines 0..9 of a shared file
SLOT_START, SLOT_STEP = 20, 7  # a branch's slot line; 7 apart keeps 3-line contexts disjoint


@dataclass
class _Branch:
    name: str
    index: int
    kind: str  # merged | squash_merged | squash_moved | rebase_merged | superseded | unmerged
    fork: int
    land: int  # step of landing; -1 = never (unmerged and not partial)
    commits: int
    sub: str = ""  # parked | partial | "" (unmerged only)
    follows: _Branch | None = None  # the branch this one is built on (a superseded one)
    slot: tuple[int, int] | None = None  # (shared file, slot) this branch changes
    remote: bool = False
    marks: list[int] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)  # unique file content after each commit
    tip_time: int = 0

    @property
    def path(self) -> str:
        return f"areas/{self.index % 64:02d}/{(self.index // 64) % 64:02d}/b{self.index}.txt"


def _hermetic_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tempfile.gettempdir(),
        "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=_hermetic_env(), capture_output=True,
                          stdin=subprocess.DEVNULL, check=False, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode()


def _names(rng: random.Random, count: int) -> list[str]:
    names: list[str] = []
    for i in range(count):
        w1, w2 = rng.choice(_WORDS), rng.choice(_WORDS)
        shape = i % 6
        if shape == 0:
            names.append(f"agent/issue-{1000 + i}-{w1}")
        elif shape == 1:
            names.append(f"worktree-{w1}-{w2}-{rng.getrandbits(32):08x}")
        elif shape == 2:
            names.append(f"feat/{w1}-{w2}-{i}")
        elif shape == 3:
            names.append(f"fix/{w1}-{i}")
        elif shape == 4:
            names.append(f"claude/{w1}-{w2}-{rng.getrandbits(24):06x}")
        else:
            names.append(f"chore/{w1}-{i}")
    assert len(set(names)) == count
    return names


class _Stream:
    """Builds the fast-import stream and writes it to the process in chunks."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.parts: list[str] = []
        self.size = 0
        self.mark = 0
        self.commits = 0

    def emit(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 1 << 20:
            self.flush()

    def flush(self) -> None:
        self.sink.write("".join(self.parts).encode("ascii"))
        self.parts.clear()
        self.size = 0

    def commit(self, ref: str, when: int, message: str, files: list[tuple[str, str]], *,
               parent: int | None = None, merge: int | None = None) -> int:
        self.mark += 1
        self.commits += 1
        who = f"Bench Agent <agent@example.invalid> {when} +0000"
        out = [f"commit {ref}\nmark :{self.mark}\nauthor {who}\ncommitter {who}\n",
               f"data {len(message)}\n{message}\n"]
        if parent is not None:
            out.append(f"from :{parent}\n")
        if merge is not None:
            out.append(f"merge :{merge}\n")
        for path, content in files:
            out.append(f"M 100644 inline {path}\ndata {len(content)}\n{content}\n")
        out.append("\n")
        self.emit("".join(out))
        return self.mark


def _plan(rng: random.Random, branches: int, steps: int) -> list[_Branch]:
    merged = branches // 3
    patch = branches // 3
    squash = patch - patch // 2
    kinds = (["merged"] * merged + ["squash_merged"] * squash
             + ["rebase_merged"] * (patch - squash) + ["unmerged"] * (branches - merged - patch))
    rng.shuffle(kinds)
    recent = max(0, min(steps - 2, int(steps * (1 - 30 / 364)) + 1))  # first step < 30 days old
    plan: list[_Branch] = []
    for i, (name, kind) in enumerate(zip(_names(rng, branches), kinds, strict=True)):
        commits = rng.choice((1, 1, 1, 2, 2, 3, 4))
        sub = ""
        if kind == "unmerged":
            roll = rng.random()
            sub = "parked" if roll < 0.1 else "partial" if roll < 0.2 else ""
            if sub == "partial":
                commits = max(2, commits)
            fork = rng.randrange(recent, steps - 1) if rng.random() < 0.5 else rng.randrange(
                0, max(1, recent - 1))
        else:
            fork = rng.randrange(0, steps - 1)
        land = min(steps - 1, fork + rng.randint(1, 60)) if kind != "unmerged" or sub == "partial" \
            else -1
        plan.append(_Branch(name, i, kind, fork, land, commits, sub,
                            remote=rng.random() < 0.5))
    # C11: some squash-merged branches are built on a plain unmerged one, which then never
    # lands: it forks where its follower does and is made first.
    plain = [b for b in plan if b.kind == "unmerged" and not b.sub]
    followers = [b for b in plan if b.kind == "squash_merged"][::8]
    for first, follower in zip(plain, followers, strict=False):
        first.kind, first.fork = "superseded", follower.fork
        follower.follows = first
    return plan


def generate(path: Path, branches: int, seed: int = 1, *,
             main_steps: int | None = None) -> dict[str, Any]:
    """Build a repository at ``path`` (new or empty) with ``branches`` branches; return the truth.

    ``main_steps``: the number of main's own commits (default: 3 per branch, 150 to 3,000);
    landings add to it. The returned dict (also written to ``path/ground-truth.json``) holds
    ``counts`` and ``categories`` (``merged``, ``squash_merged``, ``squash_moved``,
    ``rebase_merged``, ``superseded``, ``unmerged``: sorted branch names), ``squash_landed_as``
    (branch -> main commit id), ``parked``, ``partially_landed``,
    ``older_than_30_days`` (unmerged names), ``shared_file`` (branches that also change a shared
    file), ``remote_copies`` (count), ``commits``, ``main_commits`` and ``seconds``.
    Deterministic for a given ``seed`` except for dates (relative to now). Raises
    ``FileExistsError`` if ``path`` is a non-empty directory, ``RuntimeError`` if git fails.
    """
    t0 = time.monotonic()
    if path.exists() and any(path.iterdir()):
        raise FileExistsError(f"{path} is not empty")
    rng = random.Random(seed)
    steps = main_steps or min(3000, max(150, 3 * branches))
    now = int(time.time())
    start = now - 365 * DAY
    step_len = 364 * DAY // steps
    n_shared = min(200, max(20, branches // 5))
    plan = _plan(rng, branches, steps)
    # one slot per shared-file-touching branch, never two on one line
    touching = [b for b in plan if rng.random() < 0.17]
    per_file = len(touching) // n_shared + 1
    for k, b in enumerate(touching):
        if b.kind == "superseded":
            continue  # its follower lands only its own slot: keep the shared files out of it
        b.slot = (k % n_shared, k // n_shared)
        if b.kind == "squash_merged" and b.follows is None and k % 2:
            b.kind = "squash_moved"
    lines_per_file = SLOT_START + SLOT_STEP * per_file + 3
    shared = [[f"# shared file {f} line {i}" for i in range(lines_per_file)]
              for f in range(n_shared)]

    def shared_path(f: int) -> str:
        return f"src/mod{f // 10:02d}/file{f:03d}.py"

    def shared_text(f: int, slot_line: tuple[int, str] | None = None) -> str:
        lines = list(shared[f])
        if slot_line is not None:
            lines[slot_line[0]] = slot_line[1]
        return "\n".join(lines) + "\n"

    forks: dict[int, list[_Branch]] = {}
    lands: dict[int, list[_Branch]] = {}
    for b in sorted(plan, key=lambda b: b.follows is not None):  # a followed branch first
        forks.setdefault(b.fork, []).append(b)
        if b.land >= 0:
            lands.setdefault(b.land, []).append(b)

    path.mkdir(parents=True, exist_ok=True)
    _git(path, "-c", "init.defaultBranch=main", "init", "-q", str(path))
    marks_file = path / ".git" / "bench-marks"
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done", f"--export-marks={marks_file}",
         "--active-branches=64"],
        cwd=path, env=_hermetic_env(), stdin=subprocess.PIPE, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL)
    assert proc.stdin is not None
    out = _Stream(proc.stdin)
    main = out.commit("refs/heads/main", start, "Initial import\n",
                      [(shared_path(f), shared_text(f)) for f in range(n_shared)])
    main_commits = 1
    squash_marks: dict[str, int] = {}

    def slot_change(b: _Branch) -> tuple[str, str] | None:
        """The shared file as main has it now, with ``b``'s slot line changed."""
        if b.slot is None:
            return None
        f, s = b.slot
        return shared_path(f), shared_text(f, (SLOT_START + SLOT_STEP * s, f"SLOT = {b.name!r}"))

    for t in range(steps):
        when = start + t * step_len
        files = []
        for f in rng.sample(range(n_shared), min(n_shared, rng.randint(1, 3))):
            shared[f][rng.randrange(MAIN_ZONE)] = f"# main change {t} in file {f}"
            files.append((shared_path(f), shared_text(f)))
        main = out.commit("refs/heads/main", when, f"area {t % 17}: change {t}\n", files)
        main_commits += 1
        for b in forks.get(t, ()):
            parent = main if b.follows is None else b.follows.marks[-1]
            ref = f"refs/heads/{b.name}"
            for j in range(1, b.commits + 1):
                content = "".join(f"{b.name} step {k}\n" for k in range(1, j + 1))
                b.contents.append(content)
                files = [(b.path, content)]
                if j == 1 and b.follows is not None:  # rewrites what it was built on
                    files.append((b.follows.path, f"rewritten by {b.name}\n"))
                change = slot_change(b) if j == 1 else None
                if change is not None:
                    files.append(change)
                b.tip_time = when + 600 * j
                parent = out.commit(ref, b.tip_time, f"{b.name}: step {j}\n", files,
                                    parent=parent)
                b.marks.append(parent)
            if b.sub == "parked":
                b.tip_time = min(now - 3600, b.tip_time + DAY)
                msg = ("park: waiting for review\n\nParked-Reason: waiting for review\n"
                       "Parked-By: Bench Agent\n")
                parent = out.commit(ref, b.tip_time, msg, [], parent=parent)
                b.marks.append(parent)
            if b.remote:
                out.emit(f"reset refs/remotes/origin/{b.name}\nfrom :{parent}\n\n")
        for b in lands.get(t, ()):
            land_when = when + 3000
            if b.kind == "squash_moved" and b.slot is not None:  # main moves inside the context
                f, s = b.slot
                shared[f][SLOT_START + SLOT_STEP * s - 2] = f"# moved under {b.name}"
                main = out.commit("refs/heads/main", land_when - 60, f"tidy before {b.name}\n",
                                  [(shared_path(f), shared_text(f))])
                main_commits += 1
            change = slot_change(b)
            final = [(b.path, b.contents[-1])] + ([change] if change else [])
            if b.follows is not None:
                final.append((b.follows.path, f"rewritten by {b.name}\n"))
            if b.kind in ("merged", "squash_merged", "squash_moved"):
                msg = (f"Merge branch '{b.name}'\n" if b.kind == "merged"
                       else f"{b.name} (#{b.index})\n")
                main = out.commit("refs/heads/main", land_when, msg, final,
                                  merge=b.marks[-1] if b.kind == "merged" else None)
                main_commits += 1
                if b.kind != "merged":
                    squash_marks[b.name] = main
            else:  # rebase merge, or the partial landing of all but the last commit
                count = b.commits if b.kind == "rebase_merged" else b.commits - 1
                for j in range(count):
                    files = [(b.path, b.contents[j])]
                    if j == 0 and change is not None:
                        files.append(change)
                    main = out.commit("refs/heads/main", land_when + j, f"{b.name}: step "
                                      f"{j + 1}\n", files)
                    main_commits += 1
            if change is not None:
                f, s = b.slot  # type: ignore[misc]
                shared[f][SLOT_START + SLOT_STEP * s] = f"SLOT = {b.name!r}"
    out.emit(f"reset refs/remotes/origin/main\nfrom :{main}\n\ndone\n")
    out.flush()
    proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {err.decode(errors='replace')}")

    oids = dict(line.split() for line in marks_file.read_text().splitlines())
    marks_file.unlink()
    _git(path, "remote", "add", "origin", "https://example.invalid/bench.git")
    _git(path, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    with (path / ".git" / "config").open("a", encoding="ascii") as cfg:  # upstreams, as a clone
        cfg.write("[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n")
        for b in plan:
            if b.remote:
                cfg.write(f"[branch \"{b.name}\"]\n\tremote = origin\n"
                          f"\tmerge = refs/heads/{b.name}\n")
    _git(path, "pack-refs", "--all")
    _git(path, "reset", "-q", "--hard", "main")

    categories: dict[str, list[str]] = {
        k: sorted(b.name for b in plan if b.kind == k)
        for k in ("merged", "squash_merged", "squash_moved", "rebase_merged", "superseded",
                  "unmerged")
    }
    truth: dict[str, Any] = {
        "branches": branches,
        "seed": seed,
        "counts": {k: len(v) for k, v in categories.items()},
        "categories": categories,
        "squash_landed_as": {n: oids[f":{m}"] for n, m in sorted(squash_marks.items())},
        "parked": sorted(b.name for b in plan if b.sub == "parked"),
        "partially_landed": sorted(b.name for b in plan if b.sub == "partial"),
        "older_than_30_days": sorted(b.name for b in plan
                                     if b.kind == "unmerged" and b.tip_time < now - 30 * DAY),
        "shared_file": sorted(b.name for b in plan if b.slot is not None),
        "remote_copies": sum(b.remote for b in plan),
        "commits": out.commits,
        "main_commits": main_commits,
        "seconds": round(time.monotonic() - t0, 2),
    }
    (path / "ground-truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return truth


def main(argv: list[str] | None = None) -> int:
    """``python bench/genrepo.py DIR --branches N [--seed S]``: print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--branches", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--main-commits", type=int, default=None,
                        help="main's own commits (default: 3 per branch, 150 to 3,000)")
    args = parser.parse_args(argv)
    try:
        truth = generate(args.dir, args.branches, args.seed, main_steps=args.main_commits)
    except (FileExistsError, RuntimeError) as exc:
        print(f"genrepo: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({k: truth[k] for k in ("counts", "commits", "main_commits", "seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
