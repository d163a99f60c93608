"""The activity walk (a worktree's newest file mtime, its last-activity figure) costs one
``lstat`` per file: a survey that only lists local-only work (sweep, SessionStart) walks only
the worktrees that hold such work, the only ones whose idle figure it shows, and the walk
itself reads plain strings with ``os.scandir`` (issue 16: the survey dominated a warm
SessionStart). The figure is the one it always was."""

from __future__ import annotations

import os
from pathlib import Path

from branchkeeper.analysis.worktree_record import WorktreeSettings, survey_worktrees
from branchkeeper.analysis.worktree_status import Nested, _walk_activity
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config import Config
from tests.gitrepo import GitRepo


def _reference_walk(root: Path, ignored: list[str], nested: list[Nested], *,
                    cap: int) -> tuple[float | None, bool]:
    """The walk as it was written over ``os.walk`` and ``pathlib``: the figure to keep."""
    skip_dirs = {e.rstrip("/") for e in ignored if e.endswith("/")}
    skip_files = {e for e in ignored if not e.endswith("/")}
    skip_abs = {n.path for n in nested}
    newest: float | None = None
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        dirnames[:] = [d for d in dirnames if d != ".git" and f"{prefix}{d}" not in skip_dirs
                       and here / d not in skip_abs]
        names = [f for f in filenames if f != ".git" and f"{prefix}{f}" not in skip_files]
        for name in [*names, *([] if rel == "." else ["."])]:
            seen += 1
            if seen > cap:
                return newest, True
            try:
                stamp = (here / name).lstat().st_mtime
            except OSError:
                continue
            newest = stamp if newest is None else max(newest, stamp)
    return newest, False


def _tree(root: Path) -> tuple[list[str], list[Nested]]:
    """Files and directories with distinct mtimes, an ignored file and directory (holding the
    newest mtimes), a nested checkout, symbolic links to a directory and to nothing."""
    stamp = 1_700_000_000
    for i, rel in enumerate(["a.txt", "d/b.txt", "d/e/c.txt", "d/e/f/g.txt", "h/i.txt",
                             "build/out.o", "nested/x.txt", "nested/.git/HEAD", "junk.log"]):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
        os.utime(path, (stamp + i * 100, stamp + i * 100))
    (root / "link").symlink_to(root / "d")
    (root / "dangling").symlink_to(root / "nowhere")
    for link in ("link", "dangling"):
        os.utime(root / link, (stamp, stamp), follow_symlinks=False)
    for i, rel in enumerate(["d/e/f", "d/e", "d", "h"]):
        os.utime(root / rel, (stamp + 50 + i, stamp + 50 + i))
    return ["build/", "junk.log"], [Nested(root / "nested", "repository")]


def test_the_walk_gives_the_figure_it_always_gave(tmp_path: Path) -> None:
    ignored, nested = _tree(tmp_path)
    for cap in (1, 2, 3, 5, 8, 1000):
        assert _walk_activity(tmp_path, ignored, nested, cap=cap) == \
            _reference_walk(tmp_path, ignored, nested, cap=cap), cap
    newest, capped = _walk_activity(tmp_path, ignored, nested, cap=1000)
    assert (newest, capped) == (1_700_000_000 + 4 * 100, False)  # h/i.txt: the newest walked


def test_a_lost_work_survey_walks_only_the_worktrees_holding_work(
        remote_and_clone: tuple[GitRepo, GitRepo], tmp_path: Path) -> None:
    _, work = remote_and_clone
    clean = work.worktree_add(tmp_path / "clean", "-b", "clean")
    dirty = work.worktree_add(tmp_path / "dirty", "-b", "dirty")
    (dirty.path / "new.txt").write_text("work\n")
    facts, config = repo_facts(work.path), Config()
    lean = survey_worktrees(facts, config, settings=WorktreeSettings(walk_all=False, now=2e9),
                            asker=None, with_inventory=False)
    full = survey_worktrees(facts, config, settings=WorktreeSettings(now=2e9), asker=None,
                            with_inventory=False)
    walked = {Path(r.worktree.path).name: r.status.activity.walked
              for r in lean.records if r.status is not None}
    assert walked == {"work": False, "clean": False, "dirty": True}
    idle = {Path(r.worktree.path).name: r.idle_hours for r in lean.records}
    full_idle = {Path(r.worktree.path).name: r.idle_hours for r in full.records}
    assert idle["dirty"] == full_idle["dirty"] is not None  # the figure the list shows
    assert idle["clean"] is None and full_idle["clean"] is not None
    reap = {Path(r.worktree.path).name: r.reap for r in lean.records}
    assert reap["clean"] is None  # no inventory: no reap disposition judged either way
    assert clean.path.is_dir()
