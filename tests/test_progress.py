"""The progress bar of a long pass and the ``--stats`` line (issue 20).

On a terminal the bar draws the phases of the pass (``BRANCHKEEPER_PROGRESS_DELAY_S=0`` draws
every change at once, so a small repository shows them all); on a pipe, in ``--json`` and on the
hook path there is none; ``--stats`` prints one timing line on stderr at the end.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from branchkeeper.model.progress import Meter, metering
from branchkeeper.render.progress import DELAY_S, delay_s, stats_line
from tests.gitrepo import GitRepo

PHASES = ("reading refs", "walking unmerged history", "proving: ancestry",
          "reading the default branch's history", "proving: changed paths",
          "proving: content on the base", "counting (dates, lines, commits behind)",
          "building records", "saving the cache")


def _repo(remote_and_clone: tuple[GitRepo, GitRepo]) -> GitRepo:
    """A clone with a merged branch, a squash-merged one and unmerged work (every tier runs)."""
    _, w = remote_and_clone
    w.switch("feat-merged", create=True)
    w.commit("merged work", files={"m.txt": "m\n"})
    w.switch("main")
    w.merge("feat-merged")
    w.switch("feat-squash", create=True)
    w.commit("squash work", files={"s.txt": "s\n"})
    w.switch("main")
    w.squash_merge("feat-squash")
    w.git("push", "-q", "origin", "main")
    w.switch("feat-live", create=True)
    w.commit("live work", files={"l.txt": "l\n"})
    w.switch("main")
    return w


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BRANCHKEEPER_DEBUG"}
    env.update(extra)
    return env


def _in_pty(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal; (exit code, all it drew)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal (EIO on Linux)
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


SWEEP = [sys.executable, "-m", "branchkeeper", "sweep"]


def test_a_terminal_run_draws_every_phase_then_the_report(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone)
    code, drawn = _in_pty(SWEEP, w.path, _env(BRANCHKEEPER_PROGRESS_DELAY_S="0", COLUMNS="160"))
    assert code == 0, drawn
    for phase in PHASES:
        assert phase in drawn, (phase, drawn)
    assert re.search(r"\d+/\d+ tips", drawn), drawn  # done/total of a phase
    # the bar is transient: the report is the last thing on the screen
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn).replace("\r\n", "\n").rstrip()
    assert plain.endswith("4 branches: 1 merged, 1 rebase- or squash-merged, 1 live; LOST WORK RISK: 1\n"
                          "clean up every proven local branch at once: branchkeeper sweep "
                          "--clean (add --dry-run to see the plan)"), plain[-400:]


def test_a_terminal_json_run_draws_no_bar(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone)
    code, drawn = _in_pty([*SWEEP, "--json"], w.path, _env(BRANCHKEEPER_PROGRESS_DELAY_S="0"))
    assert code == 0, drawn
    assert not any(phase in drawn for phase in PHASES), drawn[:400]
    assert json.loads(drawn)["summary"]["live"] == 1


def test_a_fast_terminal_run_draws_nothing_before_the_delay(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    # the delay is an hour here: whatever the machine's load, the pass ends before it
    w = _repo(remote_and_clone)
    code, drawn = _in_pty(SWEEP, w.path, _env(BRANCHKEEPER_PROGRESS_DELAY_S="3600"))
    assert code == 0, drawn
    assert not any(phase in drawn for phase in PHASES), drawn[:400]


def test_a_piped_run_draws_no_bar(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone)
    for extra in ([], ["--json"]):
        ran = subprocess.run([*SWEEP, *extra], cwd=w.path, capture_output=True, text=True,
                             env=_env(BRANCHKEEPER_PROGRESS_DELAY_S="0"))
        assert (ran.returncode, ran.stderr) == (0, ""), ran


STATS = re.compile(
    r"branchkeeper: stats: \d+\.\d\d s; reading refs \d+\.\d\d s, walking unmerged history "
    r"\d+\.\d\d s, proving: ancestry \d+\.\d\d s, reading the default branch's history "
    r"\d+\.\d\d s, proving: changed paths \d+\.\d\d s, proving: rebase merges by patch-id "
    r"\d+\.\d\d s, proving: squash merges by patch-id \d+\.\d\d s, (proving: squash merges "
    r"by merge \d+\.\d\d s, )?proving: content on the base \d+\.\d\d s, proving: inside a "
    r"landed branch \d+\.\d\d s, counting \(dates, lines, commits behind\) \d+\.\d\d s, "
    r"building records \d+\.\d\d s, saving the cache \d+\.\d\d s, reading local-only work "
    r"\d+\.\d\d s; (\d+) git processes; 4 branches(; cache hits: .*)?\n")


def test_stats_prints_one_timing_line_on_stderr_also_with_json(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone)
    cold = subprocess.run([*SWEEP, "--json", "--stats"], cwd=w.path, capture_output=True,
                          text=True, env=_env())
    assert cold.returncode == 0, cold
    assert STATS.fullmatch(cold.stderr), cold.stderr
    assert json.loads(cold.stdout)["summary"]["merged"] == 1
    warm = subprocess.run([*SWEEP, "--stats"], cwd=w.path, capture_output=True, text=True,
                          env=_env())
    # warm: the stored result of the cold run, no proof tier, no record built
    assert re.fullmatch(
        r"branchkeeper: stats: \d+\.\d\d s; reading refs \d+\.\d\d s, reading local-only "
        r"work \d+\.\d\d s, rendering the report \d+\.\d\d s; \d+ git processes; 4 branches; "
        r"cache hits: 1 stored result\n", warm.stderr), warm.stderr
    (w.path / ".git" / "branchkeeper" / "sweep-result.json").unlink()
    warm = subprocess.run([*SWEEP, "--stats"], cwd=w.path, capture_output=True, text=True,
                          env=_env())
    # without it: every verdict from the cache, no proof tier runs
    assert re.fullmatch(
        r"branchkeeper: stats: \d+\.\d\d s; reading refs \d+\.\d\d s, walking unmerged "
        r"history \d+\.\d\d s, proving: ancestry \d+\.\d\d s, proving: inside a landed branch "
        r"\d+\.\d\d s, counting \(dates, lines, commits behind\) \d+\.\d\d s, building records "
        r"\d+\.\d\d s, saving the cache \d+\.\d\d s, reading local-only work \d+\.\d\d s, "
        r"rendering the report \d+\.\d\d s; \d+ git processes; 4 branches; cache hits: 2 "
        r"verdicts\n", warm.stderr), warm.stderr
    assert warm.stdout.endswith("(add --dry-run to see the plan)\n"), warm.stdout


def test_sweep_clean_and_prune_take_stats(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    w = _repo(remote_and_clone)
    for argv in (["sweep", "--clean", "--dry-run", "--stats"],
                 ["prune", "--dry-run", "--no-fetch", "--stats"]):
        ran = subprocess.run([sys.executable, "-m", "branchkeeper", *argv], cwd=w.path,
                             capture_output=True, text=True, env=_env())
        assert ran.returncode == 0, ran
        assert re.fullmatch(r"branchkeeper: stats: \d+\.\d\d s; reading refs .*; \d+ git "
                            r"processes; 4 branches(; cache hits: .*)?\n", ran.stderr), ran.stderr


class _Clock:
    """A clock that moves only when told (the meter's figures, exactly)."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class _Sink:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int | None, str]] = []
        self.closed = 0

    def update(self, phase: str, done: int, total: int | None, unit: str) -> None:
        self.seen.append((phase, done, total, unit))

    def close(self) -> None:
        self.closed += 1


def test_meter_phases_counters_and_the_stats_line() -> None:
    clock, sink = _Clock(), _Sink()
    meter = Meter(sink, clock=clock)
    with metering(meter):
        meter.phase("reading refs", unit="refs")
        clock.t += 0.25
        meter.phase("proving", 10, unit="tips")
        meter.advance(4)
        meter.advance(6)
        meter.count("branches", 12)
        meter.count("verdicts", 3)
        meter.count("verdicts", 2)
        clock.t += 1.5
        meter.phase("reading refs", unit="refs")  # a second repository
        clock.t += 0.5
    assert sink.seen == [("reading refs", 0, None, "refs"), ("proving", 0, 10, "tips"),
                         ("proving", 4, 10, "tips"), ("proving", 10, 10, "tips"),
                         ("reading refs", 0, None, "refs")]
    assert sink.closed == 1
    meter.finish()  # idempotent
    assert sink.closed == 1
    assert stats_line(meter, seconds=2.25, git=7) == (
        "branchkeeper: stats: 2.25 s; reading refs 0.75 s, proving 1.50 s; 7 git processes; "
        "12 branches; cache hits: 5 verdicts")


def test_the_delay_comes_from_the_environment(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    for value, expected in (("0", 0.0), ("2.5", 2.5), ("-1", DELAY_S), ("x", DELAY_S),
                            ("nan", DELAY_S), ("inf", DELAY_S)):
        monkeypatch.setenv("BRANCHKEEPER_PROGRESS_DELAY_S", value)
        assert delay_s() == expected, value
    monkeypatch.delenv("BRANCHKEEPER_PROGRESS_DELAY_S")
    assert delay_s() == DELAY_S == 1.0


def test_the_counts_move_as_the_work_is_done(remote_and_clone: tuple[GitRepo, GitRepo],
                                             tmp_path: Path) -> None:
    """The counting callback: a real sweep (inventory, then the worktree reads) under a meter
    whose sink records every change. The commits of the changed-path stream, the records
    and the worktrees are counted one by one as each is done, not in one jump at the end."""
    from branchkeeper.analysis.inventory import build_inventory
    from branchkeeper.analysis.lost_work import inventory_lost_work
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.model.config import Config

    w = _repo(remote_and_clone)
    for n in (1, 2):
        w.switch(f"more-{n}", create=True, start="main")
        w.commit(f"more {n}", files={f"more{n}.txt": f"{n}\n"})
        w.switch("main")
        w.git("worktree", "add", "-q", str(tmp_path / f"wt-{n}"), f"more-{n}")
    sink = _Sink()
    meter = Meter(sink)
    with metering(meter):
        inv = build_inventory(repo_facts(w.path), Config())
        meter.phase("reading local-only work", len(inv.worktrees), unit="worktrees")
        inventory_lost_work(inv)
    by_phase: dict[str, list[tuple[int, int | None, str]]] = {}
    for phase, done, total, unit in sink.seen:
        by_phase.setdefault(phase, []).append((done, total, unit))
    # four tips to prove; their five commits streamed, counted as they come
    assert by_phase["proving: changed paths"] == [
        (0, 4, "tips"), (0, 5, "commits"), (1, 5, "commits"), (2, 5, "commits"),
        (3, 5, "commits"), (4, 5, "commits"), (5, 5, "commits"), (5, 5, "commits")]
    assert by_phase["building records"] == [
        (0, 6, "branches"), (1, 6, "branches"), (2, 6, "branches"), (3, 6, "branches"),
        (4, 6, "branches"), (5, 6, "branches"), (6, 6, "branches"), (6, 6, "branches")]
    assert by_phase["reading local-only work"] == [
        (0, 3, "worktrees"), (1, 3, "worktrees"), (2, 3, "worktrees"), (3, 3, "worktrees")]


class _Recorder:
    """Stands in for the bar: records what it is told, and when it was made to start."""

    made: ClassVar[list[_Recorder]] = []

    def __init__(self, console: object, delay: float, started: float | None = None) -> None:
        self.delay, self.started = delay, started
        self.seen: list[tuple[str, int, int | None, str]] = []
        self.closed = 0
        _Recorder.made.append(self)

    def update(self, phase: str, done: int, total: int | None, unit: str) -> None:
        self.seen.append((phase, done, total, unit))

    def close(self) -> None:
        self.closed += 1


def test_a_terminal_sweep_tracks_every_phase_to_its_total_and_the_rendering(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The phase sequence a terminal user sees: every phase with a total ends at N/N before
    the next one starts (counting moves one count at a time), the report's rendering is the
    last phase, the bar goes before the report is written, and its delay counts from the
    start of the process."""
    from branchkeeper import clock
    from branchkeeper.adapters import cli
    from branchkeeper.render import progress as render_progress

    w = _repo(remote_and_clone)
    monkeypatch.setattr(render_progress, "DelayedBar", _Recorder)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _Recorder.made.clear()
    assert cli.main(["-C", str(w.path), "sweep"]) == 0
    out = capsys.readouterr().out
    (bar,) = _Recorder.made
    assert (bar.delay, bar.started, bar.closed) == (DELAY_S, clock.STARTED, 1)
    assert out.rstrip().endswith("--clean (add --dry-run to see the plan)")
    order: list[str] = []
    last: dict[str, tuple[int, int | None, str]] = {}
    for phase, done, total, unit in bar.seen:
        if not order or order[-1] != phase:
            order.append(phase)
        last[phase] = (done, total, unit)
    assert order[0] == "reading refs" and set(PHASES) <= set(order)
    assert order[-2:] == ["reading local-only work", "rendering the report"]
    assert len(order) == len(set(order))  # no phase comes back after the next one began
    assert [u[1:] for u in bar.seen if u[0].startswith("counting")] == [
        (0, 3, "counts"), (1, 3, "counts"), (2, 3, "counts"), (3, 3, "counts")]
    for phase, (done, total, _unit) in last.items():
        assert total is None or done == total, (phase, done, total)
    assert last["rendering the report"] == (4, 4, "branches")


def test_the_bar_waits_only_what_is_left_of_the_delay() -> None:
    """A process that has already run past the delay draws at once: the timer gets what is
    left of the delay since ``started``, never less than zero."""
    import io
    import time

    from rich.console import Console

    from branchkeeper.render.progress import DelayedBar

    console = Console(file=io.StringIO(), force_terminal=True)
    late = DelayedBar(console, 1.0, started=time.monotonic() - 5.0)
    early = DelayedBar(console, 3600.0, started=time.monotonic())
    try:
        assert late._timer is not None and late._timer.interval == 0.0
        assert early._timer is not None and 3599.0 < early._timer.interval <= 3600.0
    finally:
        late.close()
        early.close()
