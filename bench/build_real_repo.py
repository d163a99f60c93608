#!/usr/bin/env python3
"""Build a large real-world benchmark repository from a stored snapshot of a GitHub repository.

The shape mirrors how the scale issue was measured on rails/rails: every pull-request head
becomes a local branch of one clone, beside a long default branch. From a snapshot git
directory that carries ``refs/pull/N/head`` refs (``--source``) this builds, under ``--out``:

``OUT/remote.git``
    A bare repository standing in for ``origin``. Its only ref is the default branch (``main``
    for rails; tags only with ``--tags``); ``HEAD`` points at it. Its objects come from the
    snapshot without being rewritten (``--objects``):

    - ``hardlink`` (default): the snapshot's pack files (``.pack``/``.idx``/``.rev``) and loose
      objects are hard-linked in, so no object data is copied and the build stays complete even
      if the snapshot is later deleted or replaced (git never rewrites a pack in place). Falls
      back to copying, file by file, where a link is impossible (another file system).
    - ``alternates``: ``objects/info/alternates`` names the snapshot's ``objects`` directory.
      Cheapest, but the build works only while the snapshot stays where it is.
    - ``copy``: plain copies; independent of the snapshot, costs the pack's size again.

    The packs carry every object of the snapshot (pull heads included); objects that no ref of
    ``remote.git`` reaches are invisible to anything that walks from its refs. The snapshot's
    ``.promisor``/``.keep``/``.bitmap``/``.mtimes`` files, multi-pack index and commit-graph are
    not taken over.

``OUT/work``
    ``git clone OUT/remote.git OUT/work`` (a local clone, so its objects are hard links of
    ``remote.git``'s, or it inherits the alternates). ``main`` tracks ``origin/main``,
    ``refs/remotes/origin/HEAD`` points at ``origin/main``, ``main`` is checked out. Every
    ``refs/pull/N/head`` of the snapshot that names a commit becomes ``refs/heads/pr/N`` in one
    ``git update-ref --stdin`` transaction (with reflogs, as ``git fetch`` into local branches
    would leave them), then ``git pack-refs --all`` and, by default,
    ``git commit-graph write --reachable`` (what ``git gc``/``git maintenance`` leave behind).

``OUT/build-info.json``
    Options, source, tip ids, step timings and every figure printed. It also marks the
    directory as this script's, so ``--force`` deletes only a previous build.

Afterwards the script prints: local branches, ``git rev-list --count main``,
``git rev-list --count --all`` (each checked against the snapshot), the timings of
``git for-each-ref`` and ``git rev-list --count --all`` in ``OUT/work`` (the floor any
branch-hygiene tool pays on this repository), objects missing from the history, and disk used.

Heavy steps run at ``--nice`` (default 10); the floor timings run at normal priority.

Known property of GitHub snapshots: they may be partial clones that left out a few large
blobs (rails/rails: 7 historical blobs, none in ``main``'s tip tree). ``OUT/work`` is an
ordinary, non-partial clone, so commands that need such a blob (``git fsck``, ``git gc``'s
full repack, a checkout or diff of the few pull heads whose trees hold one) fail with
"missing blob"; ref listing, history walks, merge bases and patch ids of other commits are
unaffected. ``--check-objects`` (default on) counts them.

Safety: nothing is committed and nothing is pushed. Every git process runs with
``GIT_ALLOW_PROTOCOL=file`` (local paths only), ``GIT_TERMINAL_PROMPT=0`` and
``GIT_NO_LAZY_FETCH=1``, so no step can reach a network remote; the only input is ``--source``.

Usage::

    python3 bench/build_real_repo.py --source /path/to/rails.git --out /scratch/rails
    python3 bench/build_real_repo.py --source SNAPSHOT --out DIR --limit 500   # quick, small

Standard library only; Python 3.11+, git 2.30+.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "build-info.json"
PULL_HEAD = re.compile(r"refs/pull/([0-9]+)/head")
LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
LOOSE_FILE = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
PACK_SUFFIXES = (".idx", ".rev")  # taken with each .pack; .idx is required, .rev optional
# Environment variables that would point git at some other repository than the one named.
_REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
             "GIT_QUARANTINE_PATH", "GIT_REPLACE_REF_BASE")


class BuildError(Exception):
    """A precondition failed or a git command did something unexpected."""


class GitError(BuildError):
    """A git command exited non-zero; carries argv, exit code and both streams."""

    def __init__(self, argv: Sequence[str], code: int, out: bytes, err: bytes) -> None:
        self.argv, self.code, self.out, self.err = list(argv), code, out, err
        super().__init__(
            f"git failed (exit {code}): {' '.join(argv)}\n"
            f"stdout: {out[-2000:].decode(errors='replace')}\n"
            f"stderr: {err[-4000:].decode(errors='replace')}")


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_ENV}
    env.update(
        GIT_TERMINAL_PROMPT="0",   # never wait on a human
        GIT_ALLOW_PROTOCOL="file",  # local paths and file:// only: no network transport
        GIT_NO_LAZY_FETCH="1",     # never fetch a missing object from a promisor (git 2.45+)
        LC_ALL="C",                # stable messages
    )
    return env


_ENV = _git_env()


def git(args: Sequence[str], *, cwd: Path | None = None, git_dir: Path | None = None,
        stdin: bytes | None = None, nice: int = 0) -> bytes:
    """Run one git command; return its stdout. Raises GitError on a non-zero exit.

    ``git_dir`` passes ``--git-dir`` (for the snapshot and the bare remote); ``nice`` > 0 lowers
    the child's priority (heavy steps on a shared machine).
    """
    argv = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + list(args)
    proc = subprocess.run(
        argv, cwd=cwd, env=_ENV, input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, preexec_fn=(lambda: os.nice(nice)) if nice > 0 else None)
    if proc.returncode != 0:
        raise GitError(argv, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def lines(out: bytes) -> list[str]:
    return out.decode().splitlines()


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- the plan read from the snapshot -------------------------------------------------------


@dataclass(frozen=True)
class PullHead:
    number: int
    oid: str


@dataclass(frozen=True)
class Source:
    git_dir: Path
    objects: Path
    object_format: str
    default_branch: str  # short name, e.g. "main"
    default_oid: str
    pull_heads: tuple[PullHead, ...]
    skipped_pull_refs: int  # refs/pull/N/head that do not name a commit
    tags: tuple[tuple[str, str], ...]  # (refname, oid)


def read_source(path: Path, *, default_branch: str | None, limit: int | None,
                with_tags: bool) -> Source:
    """Resolve the snapshot's git directory, its default branch and its pull heads."""
    if not path.exists():
        raise BuildError(f"--source {path}: no such directory")
    git_dir = Path(lines(git(["rev-parse", "--absolute-git-dir"], cwd=path))[0])
    fmt = lines(git(["rev-parse", "--show-object-format"], git_dir=git_dir))[0]
    if default_branch is None:
        head = lines(git(["symbolic-ref", "-q", "HEAD"], git_dir=git_dir))[0]
        if not head.startswith("refs/heads/"):
            raise BuildError(f"snapshot HEAD is {head!r}; pass --default-branch")
        default_branch = head.removeprefix("refs/heads/")
    default_oid = lines(git(["rev-parse", "--verify", "--end-of-options",
                             f"refs/heads/{default_branch}^{{commit}}"], git_dir=git_dir))[0]
    heads: list[PullHead] = []
    skipped = 0
    fmt_arg = "--format=%(refname)%00%(objectname)%00%(objecttype)"
    for rec in lines(git(["for-each-ref", fmt_arg, "refs/pull/"], git_dir=git_dir)):
        fields = rec.split("\0")
        if len(fields) != 3:
            raise BuildError(f"unexpected for-each-ref record {rec!r}")
        ref, oid, kind = fields
        m = PULL_HEAD.fullmatch(ref)
        if not m:
            continue  # refs/pull/N/merge and anything else
        if kind != "commit":
            skipped += 1
            continue
        heads.append(PullHead(int(m.group(1)), oid))
    heads.sort(key=lambda h: h.number)
    if limit is not None:
        heads = heads[:limit]
    if not heads:
        raise BuildError(f"{git_dir} has no refs/pull/N/head refs")
    tags: list[tuple[str, str]] = []
    if with_tags:
        for rec in lines(git(["for-each-ref", "--format=%(refname)%00%(objectname)",
                              "refs/tags/"], git_dir=git_dir)):
            ref, oid = rec.split("\0")
            tags.append((ref, oid))
    return Source(git_dir, git_dir / "objects", fmt, default_branch, default_oid,
                  tuple(heads), skipped, tuple(tags))


# --- building ---------------------------------------------------------------------------------


@dataclass
class Report:
    steps: dict[str, float] = field(default_factory=dict)
    figures: dict[str, object] = field(default_factory=dict)


@contextmanager
def step(report: Report, name: str) -> Iterator[None]:
    log(f"... {name}")
    t0 = time.perf_counter()
    yield
    report.steps[name] = round(time.perf_counter() - t0, 3)
    log(f"    {report.steps[name]:8.2f}s  {name}")


def prepare_out(out: Path, *, source: Path, force: bool) -> None:
    """Make sure ``out`` is absent or empty; with ``force``, delete an earlier build."""
    if out == source or source.is_relative_to(out) or out.is_relative_to(source):
        raise BuildError(f"--out {out} overlaps --source {source}")
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        out.mkdir(parents=True, exist_ok=True)
        return
    if not force:
        raise BuildError(f"{out} exists and is not empty; pass --force to rebuild it")
    if not (out / MARKER).is_file():
        # Only ever delete what this script built.
        raise BuildError(f"{out} has no {MARKER}: not a build of this script, not deleting it")
    log(f"... removing previous build {out}")
    shutil.rmtree(out)
    out.mkdir(parents=True)


def _link_or_copy(src: Path, dst: Path, mode: str) -> str:
    if mode == "hardlink":
        try:
            os.link(src, dst)
            return "hardlink"
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
    shutil.copyfile(src, dst)
    return "copy"


def populate_objects(src: Source, dest_objects: Path, mode: str) -> dict[str, int]:
    """Give ``dest_objects`` the snapshot's objects by hard link, copy or alternates."""
    info = dest_objects / "info"
    info.mkdir(parents=True, exist_ok=True)
    alternates: list[str] = []
    src_alt = src.objects / "info" / "alternates"
    if src_alt.is_file():  # the snapshot's own alternates must stay reachable
        for line in src_alt.read_text().splitlines():
            if line and not line.startswith("#"):
                alternates.append(str((src.objects / line).resolve()))
    counts = {"hardlink": 0, "copy": 0}
    if mode == "alternates":
        alternates.insert(0, str(src.objects.resolve()))
    else:
        pack_dir = src.objects / "pack"
        for pack in sorted(pack_dir.glob("pack-*.pack")) if pack_dir.is_dir() else []:
            if not pack.with_suffix(".idx").is_file():
                continue  # a pack being written, or garbage
            for f in [pack] + [pack.with_suffix(s) for s in PACK_SUFFIXES]:
                if f.is_file():
                    counts[_link_or_copy(f, dest_objects / "pack" / f.name, mode)] += 1
        for d in sorted(src.objects.iterdir()):
            if d.is_dir() and LOOSE_DIR.fullmatch(d.name):
                for f in d.iterdir():
                    if LOOSE_FILE.fullmatch(f.name):
                        (dest_objects / d.name).mkdir(exist_ok=True)
                        counts[_link_or_copy(f, dest_objects / d.name / f.name, mode)] += 1
    if alternates:
        (info / "alternates").write_text("".join(a + "\n" for a in alternates))
    return counts


def build_remote(src: Source, remote: Path, *, mode: str, nice: int) -> dict[str, int]:
    """``remote.git``: bare, default branch only (plus tags if asked), objects from the snapshot."""
    git(["init", "--quiet", "--bare", f"--object-format={src.object_format}",
         f"--initial-branch={src.default_branch}", str(remote)])
    counts = populate_objects(src, remote / "objects", mode)
    cmds = [f"create refs/heads/{src.default_branch} {src.default_oid}\n"]
    cmds += [f"create {ref} {oid}\n" for ref, oid in src.tags]
    git(["update-ref", "-m", "build_real_repo: from snapshot", "--stdin"], git_dir=remote,
        stdin="".join(cmds).encode(), nice=nice)
    git(["symbolic-ref", "HEAD", f"refs/heads/{src.default_branch}"], git_dir=remote)
    git(["pack-refs", "--all"], git_dir=remote)
    return counts


def clone_work(src: Source, remote: Path, work: Path, *, nice: int) -> None:
    """``work``: a local clone of ``remote.git`` with the default branch checked out."""
    # A local path: git hard-links remote.git's objects (or copies its alternates), no transport.
    git(["clone", "--quiet", "--origin", "origin", "--branch", src.default_branch,
         "--", str(remote), str(work)], nice=nice)
    b = src.default_branch
    upstream = lines(git(["rev-parse", "--symbolic-full-name", f"{b}@{{upstream}}"], cwd=work))
    if upstream != [f"refs/remotes/origin/{b}"]:
        raise BuildError(f"{b} tracks {upstream!r}, expected refs/remotes/origin/{b}")
    try:
        origin_head = lines(git(["symbolic-ref", "refs/remotes/origin/HEAD"], cwd=work))
    except GitError:  # exit 128/1: not set (clone leaves it out when the remote HEAD is odd)
        origin_head = []
    if origin_head != [f"refs/remotes/origin/{b}"]:
        git(["symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{b}"], cwd=work)


def add_pull_branches(src: Source, work: Path, *, prefix: str, nice: int) -> int:
    """Every pull head as ``refs/heads/<prefix>N``, in one ``update-ref --stdin`` transaction."""
    cmds = "".join(f"create refs/heads/{prefix}{h.number} {h.oid}\n" for h in src.pull_heads)
    git(["update-ref", "-m", "build_real_repo: pull head", "--stdin"], cwd=work,
        stdin=cmds.encode(), nice=nice)
    return len(src.pull_heads)


# --- measuring --------------------------------------------------------------------------------


def count_lines(args: Sequence[str], *, cwd: Path) -> int:
    return len(lines(git(args, cwd=cwd)))


def rev_count(args: Sequence[str], *, cwd: Path | None = None, git_dir: Path | None = None,
              stdin: bytes | None = None, nice: int = 0) -> int:
    return int(lines(git(["rev-list", "--count", *args], cwd=cwd, git_dir=git_dir,
                         stdin=stdin, nice=nice))[0])


def time_command(args: Sequence[str], *, cwd: Path, runs: int) -> dict[str, float]:
    """Wall seconds of ``git ARGS`` (stdout captured as a caller would), after one warm-up."""
    git(args, cwd=cwd)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        git(args, cwd=cwd)
        samples.append(time.perf_counter() - t0)
    return {"min": round(min(samples), 3), "median": round(statistics.median(samples), 3),
            "max": round(max(samples), 3), "runs": runs}


def missing_objects(work: Path, *, nice: int) -> dict[str, int]:
    """Objects reachable from any ref but absent (left out of a partial snapshot)."""
    # --missing=print lists an absent object as "?OID" instead of dying on it.
    history = [x for x in lines(git(["rev-list", "--objects", "--missing=print", "--all"],
                                    cwd=work, nice=nice)) if x.startswith("?")]
    tips = [x for x in lines(git(["rev-list", "--objects", "--missing=print", "--no-walk",
                                  "--all"], cwd=work, nice=nice)) if x.startswith("?")]
    default_tip = [x for x in lines(git(["rev-list", "--objects", "--missing=print",
                                         "--no-walk", "HEAD"], cwd=work, nice=nice))
                   if x.startswith("?")]
    return {"in_history": len(history), "in_branch_tip_trees": len(tips),
            "in_default_tip_tree": len(default_tip)}


def disk_usage(root: Path, *, shared_with: Path) -> dict[str, int]:
    """Bytes allocated under ``root`` (each inode once), and how many are shared with the
    snapshot's objects (hard links: no new space)."""
    def inodes(top: Path) -> dict[tuple[int, int], int]:
        seen: dict[tuple[int, int], int] = {}
        for dirpath, _dirs, files in os.walk(top):
            for name in files:
                st = os.lstat(os.path.join(dirpath, name))
                seen[(st.st_dev, st.st_ino)] = st.st_blocks * 512
        return seen
    mine, theirs = inodes(root), inodes(shared_with)
    total = sum(mine.values())
    shared = sum(v for k, v in mine.items() if k in theirs)
    return {"allocated": total, "shared_with_source": shared, "new": total - shared}


def gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


# --- entry point ------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Build OUT/remote.git (default branch only) and OUT/work (a clone with every "
                    "refs/pull/N/head of the snapshot as a local branch pr/N), then print its "
                    "counts and floor timings.")
    p.add_argument("--source", required=True, type=Path,
                   help="snapshot git directory carrying refs/pull/N/head (the only input)")
    p.add_argument("--out", type=Path, default=Path("scale/rails"),
                   help="directory to build in (default: %(default)s)")
    p.add_argument("--objects", choices=("hardlink", "alternates", "copy"), default="hardlink",
                   help="how remote.git gets the snapshot's objects (default: %(default)s)")
    p.add_argument("--default-branch", default=None,
                   help="default branch name (default: the snapshot's HEAD)")
    p.add_argument("--branch-prefix", default="pr/",
                   help="local branch name prefix for pull heads (default: %(default)s)")
    p.add_argument("--limit", type=int, default=None,
                   help="take only the N lowest-numbered pull heads (quick builds)")
    p.add_argument("--tags", action="store_true", help="also give remote.git the snapshot's tags")
    p.add_argument("--commit-graph", action=argparse.BooleanOptionalAction, default=True,
                   help="write a commit-graph in work (default: on)")
    p.add_argument("--check-objects", action=argparse.BooleanOptionalAction, default=True,
                   help="count objects missing from the history (default: on)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per floor command")
    p.add_argument("--nice", type=int, default=10, help="niceness of heavy git steps")
    p.add_argument("--force", action="store_true",
                   help="delete and rebuild OUT if it holds an earlier build of this script")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        p.error("--limit must be at least 1")
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if not re.fullmatch(r"([A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]*", args.branch_prefix):
        p.error("--branch-prefix: letters, digits, '_', '.', '-' and '/' only")
    return args


def build(args: argparse.Namespace) -> dict[str, object]:
    t_start = time.perf_counter()
    report = Report()
    out = args.out.resolve()
    with step(report, "read snapshot"):
        src = read_source(args.source.resolve(), default_branch=args.default_branch,
                          limit=args.limit, with_tags=args.tags)
    log(f"    {src.git_dir}: {src.default_branch} {src.default_oid}, "
        f"{len(src.pull_heads)} pull heads")
    prepare_out(out, source=src.git_dir, force=args.force)
    remote, work = out / "remote.git", out / "work"
    info: dict[str, object] = {
        "status": "building", "tool": "build_real_repo.py",
        "git": lines(git(["version"]))[0],
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "source": {"git_dir": str(src.git_dir), "default_branch": src.default_branch,
                   "default_oid": src.default_oid, "pull_heads": len(src.pull_heads),
                   "pull_heads_not_commits": src.skipped_pull_refs, "tags": len(src.tags)},
        "remote": str(remote), "work": str(work),
    }
    (out / MARKER).write_text(json.dumps(info, indent=2) + "\n")  # marks OUT as ours early

    with step(report, "remote.git: init, objects, default branch"):
        linked = build_remote(src, remote, mode=args.objects, nice=args.nice)
    with step(report, "work: clone and checkout"):
        clone_work(src, remote, work, nice=args.nice)
    with step(report, "work: pull heads as local branches (update-ref --stdin)"):
        add_pull_branches(src, work, prefix=args.branch_prefix, nice=args.nice)
    with step(report, "work: pack-refs --all"):
        git(["pack-refs", "--all"], cwd=work, nice=args.nice)
    if args.commit_graph:
        with step(report, "work: commit-graph write --reachable"):
            git(["commit-graph", "write", "--reachable", "--no-progress"], cwd=work,
                nice=args.nice)
    build_seconds = round(time.perf_counter() - t_start, 1)

    fig = report.figures
    with step(report, "counts"):
        fig["local_branches"] = count_lines(["for-each-ref", "--format=%(refname)",
                                             "refs/heads/"], cwd=work)
        fig["all_refs"] = count_lines(["for-each-ref", "--format=%(refname)"], cwd=work)
        fig["loose_refs"] = sum(len(f) for _, _, f in os.walk(work / ".git" / "refs"))
        fig["commits_default_branch"] = rev_count([src.default_branch], cwd=work)
        fig["commits_all"] = rev_count(["--all"], cwd=work, nice=args.nice)
        # What the snapshot says the same refs reach: the build must agree.
        expect_main = rev_count([src.default_oid], git_dir=src.git_dir, nice=args.nice)
        expect_all = rev_count([src.default_oid, "--stdin"], git_dir=src.git_dir, nice=args.nice,
                               stdin="".join(h.oid + "\n" for h in src.pull_heads).encode())
        if (fig["commits_default_branch"], fig["commits_all"]) != (expect_main, expect_all):
            raise BuildError(f"counts differ from the snapshot: work has "
                             f"{fig['commits_default_branch']}/{fig['commits_all']}, snapshot "
                             f"{expect_main}/{expect_all} (default branch / all)")
        expect_branches = len(src.pull_heads) + 1
        if fig["local_branches"] != expect_branches:
            raise BuildError(f"{fig['local_branches']} local branches, expected {expect_branches}")
        fig["commit_graph"] = any((work / ".git/objects/info" / n).exists()
                                  for n in ("commit-graph", "commit-graphs"))
    if args.check_objects:
        with step(report, "missing objects (rev-list --objects --missing=print)"):
            fig["missing_objects"] = missing_objects(work, nice=args.nice)
    with step(report, "floor timings"):
        fig["floor"] = {
            "git for-each-ref": time_command(["for-each-ref"], cwd=work, runs=args.runs),
            "git rev-list --count --all": time_command(["rev-list", "--count", "--all"],
                                                       cwd=work, runs=args.runs),
        }
    with step(report, "disk usage"):
        fig["disk"] = disk_usage(out, shared_with=src.objects)
    fig["objects_from_source"] = linked if args.objects != "alternates" else "alternates"
    fig["build_seconds"] = build_seconds
    fig["total_seconds"] = round(time.perf_counter() - t_start, 1)
    info.update(status="done", steps=report.steps, figures=fig)
    (out / MARKER).write_text(json.dumps(info, indent=2) + "\n")
    return info


def render(info: dict[str, object]) -> str:
    fig = info["figures"]
    assert isinstance(fig, dict)
    rows = [
        f"work:                      {info['work']}",
        f"remote:                    {info['remote']}",
        f"local branches:            {fig['local_branches']:,}",
        f"commits on default branch: {fig['commits_default_branch']:,}",
        f"commits in all:            {fig['commits_all']:,}",
        f"all refs / loose refs:     {fig['all_refs']:,} / {fig['loose_refs']:,}",
        f"commit-graph:              {'yes' if fig['commit_graph'] else 'no'}",
    ]
    for cmd, t in fig["floor"].items():
        rows.append(f"floor {cmd + ':':28}min {t['min']:.3f}s  median {t['median']:.3f}s  "
                    f"max {t['max']:.3f}s  ({t['runs']} runs)")
    if "missing_objects" in fig:
        m = fig["missing_objects"]
        rows.append(f"missing objects:           {m['in_history']} in history, "
                    f"{m['in_branch_tip_trees']} in branch tip trees, "
                    f"{m['in_default_tip_tree']} in the checked-out tree")
    d = fig["disk"]
    rows.append(f"disk:                      {gib(d['allocated'])} allocated, "
                f"{gib(d['shared_with_source'])} of it shared with the snapshot, "
                f"{gib(d['new'])} new")
    rows.append(f"build time:                {fig['build_seconds']}s "
                f"(with checks and timings {fig['total_seconds']}s)")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        info = build(args)
    except BuildError as e:
        print(f"build_real_repo: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("build_real_repo: interrupted; rerun with --force to rebuild", file=sys.stderr)
        return 130
    print(json.dumps(info, indent=2) if args.json else render(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
