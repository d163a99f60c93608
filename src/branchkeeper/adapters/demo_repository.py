"""The demo repository: what a team of coding agents leaves behind after a few weeks.

:func:`build_demo_repository` builds, under a root directory, a bare remote ``origin.git`` and a
clone-like ``work/`` whose 41 branches are a scaled-down copy of a real triage of 154 leftover
agent branches (issue 2, section 7): 104 merged or contained in an integration branch and never
deleted, 15 superseded, 14 finished but never merged, 11 stopped midway by sub-agents, 3 waiting
on a human, 7 other; scaled to 27 / 4 / 4 / 3 / 1 / 2.

The branches are one data table, :data:`DEMO_BRANCHES`, read by a small interpreter. It covers
merge commits, squash merges, rebase merges (cherry-picks), a fast-forward, an integration line
``release/1.x`` (declared in ``.branchkeeper.yaml``), a parked branch, every dormancy stage
(2, 9, 20, 45 days and more), remote copies kept, deleted after merging (upstream gone) or never
made, branches that exist only on the remote, a branch pushed and then committed to again,
worktrees under ``.claude/worktrees/`` (one clean, one dirty, one detached with a commit no ref
holds), branches whose work a later branch redid, two of them ``superseded`` (the successor was
built on them, dropped one of their lines and was squash-merged), and two branches at one tip.

Git runs with an environment built from scratch (fixed identity, no system or global config,
signing off) so the user's own git settings never change or break the result. No network.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from branchkeeper import clock
from branchkeeper.git.run import GitError

#: The identity every demo commit carries.
DEMO_NAME = "Demo Agent"
DEMO_EMAIL = "agent@example.invalid"
#: Park marker of the waiting branch (first document, section 5).
PARK_REASON = "waiting for design review"
#: The integration line of the demo (``.branchkeeper.yaml`` declares ``release/*``).
RELEASE_LINE = "release/1.x"
#: The detached worktree's directory name under ``.claude/worktrees/``.
DETACHED_WORKTREE = "agent-5b8e2f10"

_CONFIG_FILE = """\
# branchkeeper policy for this repository (see docs/configuration.md)
branches:
  integration_lines: ["release/*"]
"""


@dataclass(frozen=True, slots=True)
class DemoBranch:
    """One row of the demo table.

    ``kind``: how the work ends: ``merge`` (``--no-ff`` merge commit into ``base``), ``squash``
    (``merge --squash`` + commit), ``rebase`` (each commit cherry-picked), ``ff`` (fast-forward),
    ``open`` (never landed), ``park`` (never landed, tip is a park commit), ``copy`` (a second
    name at ``same_as``'s tip). ``day``: days before now of the branch's last commit of work.
    ``remote``: ``kept`` (pushed, remote copy still there), ``gone`` (pushed, then deleted on the
    remote after landing, as a forge does: upstream configured but gone), ``none`` (never
    pushed), ``only`` (pushed, no local branch), ``ahead`` (first commit pushed, the rest not).
    ``topic``: the file stem the work touches (shared by a superseded branch and its successor).
    ``worktree``: ``clean`` or ``dirty`` for a branch checked out under ``.claude/worktrees/``.
    ``group``: the triage group it stands for. ``on``: start the work at this branch's tip instead
    of ``base`` (a successor that rewrote its predecessor's lines before it landed, which leaves
    the predecessor ``superseded``).
    """

    name: str
    kind: str
    day: float
    group: str
    commits: int = 1
    remote: str = "kept"
    base: str = "main"
    topic: str = ""
    worktree: str = ""
    same_as: str = ""
    on: str = ""


_M, _S, _F, _P, _W, _O = "merged", "superseded", "finished", "stopped", "waiting", "other"
_B = DemoBranch
#: The demo's branches (the default and integration line are made by the interpreter).
DEMO_BRANCHES: tuple[DemoBranch, ...] = (
    # 27 merged or contained, never deleted
    _B("fix/null-config", "merge", 44, _M, remote="gone"),
    _B("agent/issue-97-rate-limit", "squash", 40, _M, 2, "gone", topic="rate-limit",
       on="agent/issue-97-rate-limit-v1"),
    _B("chore/bump-deps", "ff", 38, _M, remote="none"),
    _B("agent/issue-101-cache-headers", "squash", 33, _M, remote="only"),
    _B("agent/issue-104-healthcheck", "rebase", 30, _M, 2, "only"),
    _B("feat/dark-mode", "squash", 28, _M, 3, "only"),
    _B("hotfix/1.x-null-deref", "merge", 27, _M, base=RELEASE_LINE),
    _B("feat/search-v2", "merge", 25, _M, 2, "gone", topic="search"),
    _B("fix/1.x-timezone", "merge", 24, _M, remote="only", base=RELEASE_LINE),
    _B("docs/api-examples", "squash", 22, _M, remote="only"),
    _B("agent/issue-110-i18n", "merge", 21, _M, 2, "only", topic="i18n"),
    _B("agent/issue-115-backport", "rebase", 20, _M, remote="gone", base=RELEASE_LINE),
    _B("agent/issue-112-timeouts", "rebase", 19, _M, 3),
    _B("agent/issue-123-retry", "merge", 18, _M, 3),
    _B("fix/retry-jitter", "copy", 18, _M, same_as="agent/issue-123-retry"),
    _B("worktree-refactor-auth-9e21c7d4", "merge", 16, _M, 2),
    _B("claude/tidy-logging-2b7f", "rebase", 15, _M, remote="gone"),
    _B("agent/issue-118-metrics", "squash", 14, _M, 2, "only"),
    _B("feat/webhook-retries", "merge", 13, _M, 2, "gone"),
    _B("worktree-fix-login-4f3a9c21", "squash", 12, _M, 2, topic="login", worktree="clean",
       on="worktree-fix-login-0c9d33aa"),
    _B("agent/issue-120-pagination-fix", "squash", 11, _M),
    _B("fix/flaky-ci", "ff", 10, _M, remote="gone"),
    _B("agent/issue-125-upload-limit", "merge", 8, _M, 2, "only"),
    _B("worktree-typo-sweep-5d0e8a13", "squash", 6, _M, remote="none"),
    _B("agent/issue-129-csv-escape", "rebase", 5, _M, 2, "only"),
    _B("feat/audit-log", "squash", 4, _M, 2),
    _B("agent/issue-131-error-pages", "merge", 3, _M),
    # 4 superseded: a later branch redid the work (same topic file)
    _B("agent/issue-97-rate-limit-v1", "open", 45, _S, topic="rate-limit"),
    _B("feat/search-v1", "open", 30, _S, 2, topic="search"),
    _B("agent/issue-110-i18n-draft", "open", 24, _S, 2, "only", topic="i18n"),
    _B("worktree-fix-login-0c9d33aa", "open", 20, _S, topic="login"),
    # 4 finished but never merged
    _B("fix/slow-query-index", "open", 45, _F),
    _B("agent/issue-142-bulk-edit", "open", 20, _F, 3),
    _B("agent/issue-138-docs-search", "open", 16, _F, 2, "only"),
    _B("feat/export-csv", "open", 9, _F, 2),
    # 3 stopped midway by sub-agents
    _B("worktree-refactor-db-7c2d41e9", "open", 20, _P, 2, "none"),
    _B("agent/issue-150-parser", "open", 3, _P, 2, "ahead"),
    _B("worktree-agent-a3f9e0c1", "open", 2, _P, remote="none", worktree="dirty"),
    # 1 waiting on a human
    _B("feat/billing-webhooks", "park", 45, _W, 2),
    # 2 other
    _B("experiment/json-streaming", "open", 60, _O),
    _B("tmp/debug-ci", "open", 9, _O, remote="none"),
)

#: Days between the parked branch's last work and its park commit.
PARK_AFTER_DAYS = 7
#: Age of the first commit on ``main`` and of the integration line's creation.
_START_DAY, _LINE_DAY = 62.0, 35.5


def triage_counts() -> dict[str, int]:
    """Branches per triage group: {"merged": 27, "superseded": 4, ...}."""
    return dict(Counter(b.group for b in DEMO_BRANCHES))


def _hermetic_env(root: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_EDITOR": "true",
        "GIT_AUTHOR_NAME": DEMO_NAME,
        "GIT_AUTHOR_EMAIL": DEMO_EMAIL,
        "GIT_COMMITTER_NAME": DEMO_NAME,
        "GIT_COMMITTER_EMAIL": DEMO_EMAIL,
    }
    if "SYSTEMROOT" in os.environ:  # Windows needs it to start processes
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return env


_CONFIG_ARGS = (
    "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always",
    "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "core.hooksPath=/dev/null",
    "-c", "advice.detachedHead=false", "-c", "core.autocrlf=false", "-c", "gc.auto=0",
)


class _Builder:
    """Interprets :data:`DEMO_BRANCHES` into a repository (one instance per build)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.origin = root / "origin.git"
        self.work = root / "work"
        self.env = _hermetic_env(root)
        self.now = int(clock.now())
        self.clock = _START_DAY + 1.0  # days before now; only moves forward in time
        self.tips: dict[str, str] = {}
        self.pushed_early: dict[str, str] = {}  # "ahead" rows: name -> pushed commit
        self.serial = 0

    # -- running git ---------------------------------------------------------------------------
    def git(self, *args: str, cwd: Path | None = None, day: float | None = None) -> str:
        env = dict(self.env)
        if day is not None:
            stamp = f"@{int(self.now - day * 86400)} +0000"
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
        argv = ["git", *_CONFIG_ARGS, *args]
        try:
            proc = subprocess.run(argv, cwd=cwd or self.work, env=env, capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"demo: could not run git ({exc})", argv=argv, returncode=None) from None
        if proc.returncode != 0:
            raise GitError("demo: git failed", argv=argv, returncode=proc.returncode,
                           stdout=proc.stdout, stderr=proc.stderr)
        return proc.stdout.decode("utf-8", "replace").strip()

    def at(self, day: float) -> float:
        """The commit time for an event meant at ``day``: never earlier than the last event."""
        self.clock = min(day, self.clock - 0.01)
        return self.clock

    def write(self, rel: str, text: str, *, cwd: Path | None = None,
              replace: bool = False) -> None:
        path = (cwd or self.work) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w" if replace else "a", encoding="utf-8") as fh:
            fh.write(text)

    def commit(self, message: str, day: float, *, cwd: Path | None = None) -> str:
        self.git("add", "-A", cwd=cwd)
        self.git("commit", "-q", "-m", message, cwd=cwd, day=day)
        return self.git("rev-parse", "HEAD", cwd=cwd)

    # -- the story -------------------------------------------------------------------------------
    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "--bare", str(self.origin), cwd=self.root)
        self.git("init", "-q", str(self.work), cwd=self.root)
        self.git("remote", "add", "origin", str(self.origin))
        files = {
            "README.md": "# shop\n\nA small web shop that coding agents work on.\n",
            ".gitignore": ".claude/worktrees/\n__pycache__/\n",
            ".branchkeeper.yaml": _CONFIG_FILE,
            "CHANGELOG.md": "# Changelog\n",
            "src/app.py": "def main() -> None:\n    print('shop')\n",
        }
        for rel, text in files.items():
            self.write(rel, text)
        self.commit("Initial import of the shop", self.at(_START_DAY))

    def mainline_commit(self) -> None:
        """A commit made straight on main between agent branches (main moves on)."""
        self.serial += 1
        self.write("CHANGELOG.md", f"- release note {self.serial}\n")
        self.commit(f"chore: changelog entry {self.serial}", self.at(self.clock))

    def make_line(self) -> None:
        day = self.at(_LINE_DAY)
        self.git("switch", "-q", "-c", RELEASE_LINE, "main", day=day)
        self.write("VERSION", "1.0.0\n")
        self.commit("release: 1.0.0", day)
        self.git("switch", "-q", "main")

    def do_work(self, row: DemoBranch) -> None:
        topic = row.topic or row.name.rsplit("/", 1)[-1]
        first = self.at(row.day + 0.1 * row.commits)
        self.git("switch", "-q", "-c", row.name, row.on or row.base, day=first)
        subject = row.name.rsplit("/", 1)[-1].replace("-", " ")
        for i in range(1, row.commits + 1):
            # a successor's first step drops its predecessor's lines (L) and adds its own (M)
            self.write(f"src/{topic}.py", f"# {row.name}: step {i}\nSTEP_{i} = {i}\n",
                       replace=bool(row.on) and i == 1)
            day = self.at(row.day + 0.1 * (row.commits - i))
            suffix = f" ({i}/{row.commits})" if row.commits > 1 else ""
            tip = self.commit(f"{subject}{suffix}", day)
            if row.remote == "ahead" and i == 1:
                self.pushed_early[row.name] = tip
        self.tips[row.name] = tip
        if row.kind == "park":
            self.park(row.name, tip, row.day - PARK_AFTER_DAYS)
        self.git("switch", "-q", row.base)

    def park(self, name: str, tip: str, day: float) -> None:
        """The park marker of section 5: an empty commit (tree = parent's) with trailers."""
        tree = self.git("rev-parse", f"{tip}^{{tree}}")
        message = (f"park: {PARK_REASON}\n\nParked-Reason: {PARK_REASON}\n"
                   f"Parked-By: {DEMO_NAME}\n")
        new = self.git("commit-tree", tree, "-p", tip, "-m", message, day=day)
        self.git("update-ref", "-m", "branchkeeper park", f"refs/heads/{name}", new, tip, day=day)
        self.tips[name] = new

    def land(self, row: DemoBranch) -> None:
        """Bring a finished branch into its base the way ``row.kind`` says (base checked out)."""
        day = self.at(row.day - 0.05)
        if row.base != "main":
            self.git("switch", "-q", row.base)
        if row.kind == "merge":
            self.git("merge", "-q", "--no-ff", "-m", f"Merge branch '{row.name}'", row.name,
                     day=day)
        elif row.kind == "ff":
            self.git("merge", "-q", "--ff-only", row.name, day=day)
        elif row.kind == "squash":
            self.git("merge", "-q", "--squash", row.name)
            subject = row.name.rsplit("/", 1)[-1].replace("-", " ")
            self.git("commit", "-q", "-m", f"{subject} (#{100 + len(self.tips)})", day=day)
        elif row.kind == "rebase":
            commits = self.git("rev-list", "--reverse", f"{row.base}..{row.name}").split()
            self.git("cherry-pick", *commits, day=day)
        if row.base != "main":
            self.git("switch", "-q", "main")

    def build_rows(self) -> None:
        line_made = False
        for row in sorted(DEMO_BRANCHES, key=lambda r: -r.day):
            if not line_made and row.day < _LINE_DAY:
                self.make_line()
                line_made = True
            if row.kind == "copy":
                self.git("branch", row.name, self.tips[row.same_as], day=self.at(row.day))
                self.tips[row.name] = self.tips[row.same_as]
                continue
            if row.base == "main" and row.kind != "ff":
                self.mainline_commit()
            self.do_work(row)
            if row.kind in ("merge", "squash", "rebase", "ff"):
                self.land(row)
        self.mainline_commit()

    def publish(self) -> None:
        """Push what the table says, delete what a forge deleted, drop remote-only locals."""
        names = [b.name for b in DEMO_BRANCHES if b.remote in ("kept", "gone", "only")]
        self.git("push", "-q", "-u", "origin", "main", RELEASE_LINE, *names)
        for name, oid in self.pushed_early.items():
            self.git("push", "-q", "origin", f"{oid}:refs/heads/{name}")
            self.git("branch", "-q", "-u", f"origin/{name}", name)
        gone = [b.name for b in DEMO_BRANCHES if b.remote == "gone"]
        self.git("push", "-q", "origin", "--delete", *gone)
        only = [b.name for b in DEMO_BRANCHES if b.remote == "only"]
        self.git("branch", "-q", "-D", *only)
        self.git("remote", "set-head", "origin", "main")
        self.git("symbolic-ref", "HEAD", "refs/heads/main", cwd=self.origin)

    def worktrees(self) -> None:
        """Agent worktrees: clean and dirty ones on branches, one detached with a lone commit."""
        base = self.work / ".claude" / "worktrees"
        for row in DEMO_BRANCHES:
            if not row.worktree:
                continue
            path = base / row.name.removeprefix("worktree-")
            self.git("worktree", "add", "-q", str(path), row.name)
            if row.worktree == "dirty":
                topic = row.topic or row.name.rsplit("/", 1)[-1]
                self.write(f"src/{topic}.py", "# half-finished edit, never committed\n", cwd=path)
                self.write("notes/plan.md", "- [ ] finish the refactor\n", cwd=path)
        path = base / DETACHED_WORKTREE
        self.git("worktree", "add", "-q", "--detach", str(path), "main")
        self.write("src/experiment.py", "PROBE = True\n", cwd=path)
        self.commit("wip: probe the cache layer", 1.0, cwd=path)


def build_demo_repository(root: Path) -> Path:
    """Build the demo under ``root`` and return the clone's work tree (``root / "work"``).

    ``root`` is created if missing; ``root/origin.git`` (bare remote, ``HEAD`` -> main) and
    ``root/work`` must not exist yet. Commit dates are relative to the current clock. Takes about
    a second; runs about 300 git processes; no network (the remote is a local path).

    Raises ``FileExistsError`` if ``origin.git`` or ``work`` exists under ``root``, and
    :class:`~branchkeeper.git.run.GitError` if a git command fails (issue 2, section 7).
    """
    builder = _Builder(root)
    for path in (builder.origin, builder.work):
        if path.exists():
            raise FileExistsError(f"{path} already exists")
    builder.start()
    builder.build_rows()
    builder.publish()
    builder.worktrees()
    return builder.work
