"""Property: every command agrees with the one verdict, and no branch called preserved holds a
change that is on no base (issue 11, section 5).

Random histories: branches of one or two commits, follow-up branches made from another branch
that keep or drop the line it added (field case C11), merges, squash and rebase merges, main
moving under a branch (field case C12), files a later base commit deletes, stacks and worktrees.
Then ``sweep --json``, ``sweep --clean --dry-run``, ``prune --dry-run`` and ``delete --dry-run``
of every branch. Invariants:

1. every branch any command would delete is ``preserved`` in the sweep (``delete`` may also
   delete an unstarted branch, at the default branch's tip: nothing to lose, and its record
   says so), and its record's disposition for that command is ``delete``;
1b. each record's dispositions are what ``sweep --clean --dry-run``, ``prune --dry-run`` and
   ``delete --dry-run`` really do, refusals (stacks, checked-out branches) included;
2. every preserved branch is deleted by ``sweep --clean`` and ``prune`` unless a refusal or a
   worktree that holds work says why; where ``sweep --clean`` deletes a branch with its
   worktree, the ``prune``/``delete`` refusal and a ``reap`` kept by the activity window name
   the command that does it, and the sweep's suggestion under each preserved branch is a
   command its record says deletes it (never one that refuses): every suggested command is
   run at the end, and every step of it succeeds;
3. the oracle, independent of the ladder: a branch called preserved has a commit ``M`` on the
   default branch such that ``git merge-tree --write-tree M <branch>`` is clean and gives
   ``M``'s tree exactly (merging it into the default branch's history loses nothing).

Examples: ``BK_VERDICT_EXAMPLES`` (default 12).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.adapters.cli import main
from tests.gitrepo import GitRepo

EXAMPLES = int(os.environ.get("BK_VERDICT_EXAMPLES", "12"))
PRESERVED = {"merged", "merged_into_line", "patch_equivalent"}
SHARED = [f"shared line {i}" for i in range(40)]

_STEP = st.tuples(st.sampled_from(["branch", "followup", "merge", "squash", "rebase", "main",
                                   "extend", "worktree", "delete_on_base", "stack"]),
                  st.integers(0, 11))


def _shared(edits: dict[int, str]) -> str:
    return "".join(edits.get(i, line) + "\n" for i, line in enumerate(SHARED))


class World:
    """The repository being built and what the steps know of it."""

    def __init__(self, root: Path) -> None:
        self.repo = GitRepo.init(root / "repo")
        self.root = root
        self.main_edits: dict[int, str] = {}
        self.repo.commit("init", files={"shared.txt": _shared({}), "keep.txt": "k\n"},
                         days_ago=40)
        (self.repo.path / ".git" / "info").mkdir(exist_ok=True)
        (self.repo.path / ".git" / "info" / "exclude").write_text("*.keep\n")
        self.names: list[str] = []
        self.own: dict[str, str] = {}  # branch -> the file whose line it added
        self.checked: set[str] = set()
        self.day = 39.0

    def tick(self) -> float:
        self.day -= 0.25
        return self.day

    def new_branch(self, name: str, start: str, k: int) -> None:
        r = self.repo
        r.git("branch", name, start)
        r.switch(name)
        path = f"{name}.txt"
        r.commit(f"{name}-1", files={path: f"L{name}\n"}, days_ago=self.tick())
        if k % 3 == 1:  # also change a line of the shared file, near lines main edits
            text = (r.path / "shared.txt").read_text().splitlines()
            text[10 + 2 * (k % 5)] = f"{name} was here"
            r.commit(f"{name}-2", files={"shared.txt": "\n".join(text) + "\n"},
                     days_ago=self.tick())
        r.switch("main")
        self.names.append(name)
        self.own[name] = path

    def followup(self, name: str, parent: str, *, drop: bool) -> None:
        r = self.repo
        r.git("branch", name, parent)
        r.switch(name)
        files: dict[str, str | None] = {f"{name}.txt": f"L{name}\n"}
        if drop:
            files[self.own[parent]] = "dropped\n"
        r.commit(f"{name} follows {parent}", files=files, days_ago=self.tick())
        r.switch("main")
        self.names.append(name)
        self.own[name] = f"{name}.txt"

    def land(self, op: str, pick: str) -> None:
        r = self.repo
        try:
            if op == "merge":
                r.merge(pick, days_ago=self.tick())
            elif op == "squash":
                r.squash_merge(pick, days_ago=self.tick())
            else:
                r.rebase_merge(pick, days_ago=self.tick())
        except AssertionError:
            r.git("merge", "--abort", check=False)
            r.git("cherry-pick", "--abort", check=False)
            r.git("reset", "-q", "--hard", "HEAD")

    def step(self, n: int, op: str, k: int) -> None:
        r = self.repo
        pick = self.names[k % len(self.names)] if self.names else None
        if op == "branch" or pick is None:
            self.new_branch(f"b{n}", "main", k)
        elif op == "followup":
            self.followup(f"f{n}", pick, drop=k % 2 == 0)
        elif op == "stack" and pick not in self.checked:
            self.new_branch(f"s{n}", pick, k)
            r.git("config", f"branch.s{n}.remote", ".")
            r.git("config", f"branch.s{n}.merge", f"refs/heads/{pick}")
        elif op in ("merge", "squash", "rebase"):
            self.land(op, pick)
        elif op == "extend" and pick not in self.checked:
            r.switch(pick)
            r.commit(f"extra {n}", files={f"x{n}.txt": "x\n"}, days_ago=self.tick())
            r.switch("main")
        elif op == "worktree" and pick not in self.checked:
            r.git("worktree", "add", "-q", str(self.root / f"wt-{pick}"), pick)
            self.checked.add(pick)
            if k % 2:
                (self.root / f"wt-{pick}" / "scratch.txt").write_text("dirty\n")
            elif k % 4 == 2:  # an ignored file no glob calls regenerable: archived, or kept
                (self.root / f"wt-{pick}" / "notes.keep").write_text("mine\n")
        elif op == "delete_on_base" and (r.path / self.own[pick]).exists():
            r.commit(f"drop {pick}", files={self.own[pick]: None}, days_ago=self.tick())
        else:  # main moves: a shared line near the branches' lines, or another file
            self.main_edits[10 + 2 * (k % 5) + 1] = f"main {n}"
            r.commit(f"main {n}", files={"shared.txt": _shared(self.main_edits)},
                     days_ago=self.tick())


def _json(repo: GitRepo, capsys: pytest.CaptureFixture[str], *argv: str, names: tuple[str, ...] = ()
          ) -> Any:
    code = main(["-C", str(repo.path), *argv, "--json", *(["--", *names] if names else [])])
    out, err = capsys.readouterr()
    assert code in (0, 1, 5), (argv, out, err)
    assert "Traceback" not in err
    return json.loads(out)


def _oracle(repo: GitRepo, names: list[str]) -> dict[str, bool]:
    """name -> some commit M on main with ``merge-tree M name`` clean and equal to M's tree
    (one ``merge-tree --stdin`` for every pair; the result objects go to a scratch store)."""
    history = repo.git("rev-list", "main").split()
    trees = dict(line.split() for line in repo.git(
        "log", "--format=%H %T", "main").splitlines())
    tips = {n: repo.rev(n) for n in names}
    pairs = [(m, n) for n in names for m in history]
    if not pairs:
        return {}
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, GIT_OBJECT_DIRECTORY=scratch,
                   GIT_ALTERNATE_OBJECT_DIRECTORIES=str(repo.path / ".git" / "objects"))
        out = subprocess.run(["git", "merge-tree", "--write-tree", "--stdin", "--no-messages"],
                             cwd=repo.path, env=env, capture_output=True, check=True,
                             input="".join(f"{m} {tips[n]}\n" for m, n in pairs).encode()).stdout
    fields = out.split(b"\0")
    ok = {n: False for n in names}
    i = 0
    for m, n in pairs:
        clean, tree = fields[i] == b"1", fields[i + 1].decode()
        i += 2
        while fields[i] != b"":
            i += 1
        i += 1
        if clean and tree == trees[m]:
            ok[n] = True
    return ok


def _dispositions_are_what_the_commands_do(
        steps: list[tuple[str, int]], sweep: dict[str, Any], clean: dict[str, Any],
        prune: dict[str, Any], delete: dict[str, Any]) -> None:
    """Each local branch's record says what ``sweep --clean``, ``prune`` and ``delete`` (of
    every local branch at once) really do, refusals included; the only differences are the
    two facts only a command has, and the record says so: a worktree that holds work blocks
    its branch (and refuses the branches it stacks on), and a batch of names lifts a
    ``delete NAME`` stack refusal."""
    blocked = {n for n, i in clean.items() if i["action"] == "blocked"}
    for command, items in (("sweep_clean", clean), ("prune", prune), ("delete", delete)):
        for name, item in items.items():
            want = sweep[name]["actions"][command]
            why = (steps, command, name, item, want)
            if want["action"] == "refused":
                assert want["refusal"] is not None, why
                if command == "delete" and want["refusal"] == "stack":
                    assert item["action"] in ("delete", "refused"), why
                    continue
                assert (item["action"], item["reason"]) == (
                    "refused", f"refused: {want['reason']}"), why
            elif command == "sweep_clean" and item["action"] == "blocked":
                assert want["action"] == "delete" and "its worktree" in want["reason"], why
            elif command == "sweep_clean" and item["action"] == "refused":
                # the stack rule again, without a branch whose worktree holds work
                assert want["action"] == "delete" and blocked, why
                assert item["reason"].startswith("refused: the worktree "), why
                keeper = item["reason"].split(" of branch ", 1)[1].split(",", 1)[0]
                assert clean[keeper]["action"] == "blocked", why  # the real blocker, named
            else:
                assert item["action"] == want["action"], why
                if item["action"] == "delete" and command == "sweep_clean":
                    assert want["reason"].startswith(item["reason"]), why
                elif "UNPROVEN" not in item["reason"]:
                    assert item["reason"] == want["reason"], why
            if item["action"] == "delete":
                assert want["action"] == "delete" or want["refusal"] == "stack", why


def _worktree_and_branch_differences_say_why(
        steps: list[tuple[str, int]], sweep: dict[str, Any], clean: dict[str, Any],
        reaped: dict[str, Any]) -> None:
    """A branch that ``sweep --clean`` deletes together with its worktree: ``prune`` and
    ``delete`` refuse it and their reason names the commands that do it; ``reap``, when the
    activity window keeps the worktree, says that ``sweep --clean`` removes it now."""
    for name, item in clean.items():
        if item["action"] != "delete" or not item["worktree"]:
            continue
        wt = item["worktree"]
        for command in ("prune", "delete"):
            want = sweep[name]["actions"][command]
            if command == "delete" and want["refusal"] == "stack":
                # branches stacked on it survive `delete NAME` alone: the stack rule names
                # both refusals, and what removes the checkout and the stack together
                assert want["reason"] == (
                    f"checked out in worktree {wt} and the upstream of surviving branch "
                    f"{want['reason'].split('surviving branch ', 1)[1].split(' ', 1)[0]} (a "
                    "stack): `branchkeeper sweep --clean` removes the worktree (unless it holds "
                    "work) and deletes the stack with it when every branch of it is proven"), (
                    steps, name, want)
                continue
            assert (want["action"], want["refusal"]) == ("refused", "checked_out"), (
                steps, command, name, want)
            assert want["reason"].endswith(
                ": `branchkeeper sweep --clean` removes the worktree (unless it holds work) "
                f"and then the branch; or `branchkeeper worktree retire {wt}` first, then "
                "delete it"), (steps, command, name, want)
        reap = reaped[wt]
        if reap["disposition"] == "SKIP_ACTIVE":
            assert reap["reason"].endswith(
                "; `branchkeeper sweep --clean` removes it now with its proven branch unless "
                "it holds work (it does not wait for the window)"), (steps, name, reap)


def _suggestions_never_refuse(repo: GitRepo, capsys: pytest.CaptureFixture[str],
                              steps: list[tuple[str, int]], sweep: dict[str, Any]) -> list[str]:
    """The sweep's text suggests, under each preserved branch, only a command its record
    says deletes it: ``delete NAME`` exactly when ``delete`` deletes it, the worktree
    retire first exactly when only ``sweep --clean`` does because of that worktree and the
    worktree's own record lets ``retire`` (with ``--archive-ignored`` when ignored files are
    in the way) remove it, else the refusal (a stack that ``sweep --clean`` takes whole is
    refused for ``delete`` alone; a worktree holding uncommitted work is the user's to decide).
    The ``cleanup`` object of ``sweep --json`` says the same. Returns the commands printed
    (:func:`_run_suggestions` runs them)."""
    assert main(["-C", str(repo.path), "sweep"]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    commands = []
    for name, b in sweep.items():
        if b["state"] not in PRESERVED or not b["local_tip"]:
            assert b["cleanup"] is None or b["state"] in PRESERVED, (steps, name, b)
            continue
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {name}  "))
        hint = lines[at + 1]
        acts = b["actions"]
        retire = f"    branchkeeper worktree retire {b['worktree']} && "
        if acts["delete"]["action"] == "delete":
            assert hint == f"    branchkeeper delete -- {name}", (steps, name, hint)
        elif acts["sweep_clean"]["action"] == "delete" and b["worktree"] and \
                acts["delete"]["refusal"] == "checked_out":
            wt = Path(b["worktree"])
            if (wt / "scratch.txt").exists():
                assert hint.startswith(f"    not deleted: checked out in worktree {wt}, which "
                                       "retire keeps (1 untracked file(s): scratch.txt)"), (
                    steps, name, hint)
            elif (wt / "notes.keep").exists():
                assert hint == (f"    branchkeeper worktree retire --archive-ignored {wt} && "
                                f"branchkeeper delete -- {name}"), (steps, name, hint)
            else:
                assert hint == f"{retire}branchkeeper delete -- {name}", (steps, name, hint)
        else:
            assert hint.startswith(f"    not deleted: {acts['delete']['reason']}"), (
                steps, name, hint)
        command = hint.strip() if hint.startswith("    branchkeeper ") else None
        assert b["cleanup"] == {"command": command, "why": None if command else hint.strip()}, (
            steps, name, b["cleanup"])
        if command:
            commands.append(command)
    return commands


def _run_suggestions(repo: GitRepo, capsys: pytest.CaptureFixture[str],
                     steps: list[tuple[str, int]], commands: list[str]) -> None:
    """Every suggested command line is run, each step in turn, and every step succeeds."""
    for line in commands:
        for part in line.split(" && "):
            argv = shlex.split(part)
            assert argv[0] == "branchkeeper", (steps, line)
            code = main(["-C", str(repo.path), *argv[1:]])
            out, err = capsys.readouterr()
            assert code == 0, (steps, line, part, out, err)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=2, max_size=10))
def test_every_command_agrees_and_preserved_loses_nothing(
        steps: list[tuple[str, int]], capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        for n, (op, k) in enumerate(steps):
            world.step(n, op, k)
        repo = world.repo
        capsys.readouterr()
        sweep = {b["name"]: b for b in _json(repo, capsys, "sweep")["branches"]}
        preserved = {n for n, b in sweep.items() if b["state"] in PRESERVED}
        main_tip = repo.rev("main")
        unstarted = {n for n, b in sweep.items()
                     if b["state"] == "unstarted" and b["local_tip"] == main_tip}
        local = [n for n, b in sweep.items() if b["local_tip"] and n != "main"]
        clean = {b["name"]: b for b in _json(repo, capsys, "sweep", "--clean",
                                             "--dry-run")["branches"]}
        prune = {b["name"]: b for b in _json(repo, capsys, "prune", "--no-fetch",
                                             "--dry-run")["branches"]}
        delete = ({b["name"]: b for b in _json(repo, capsys, "delete", "--dry-run",
                                               names=tuple(local))["branches"]} if local else {})
        _dispositions_are_what_the_commands_do(steps, sweep, clean, prune, delete)
        if world.checked:  # worktree list shows the reap disposition reap really has
            listed = _json(repo, capsys, "worktree", "list")["worktrees"]
            reaped = {w["path"]: w for w in _json(repo, capsys, "worktree", "reap",
                                                  "--dry-run")["worktrees"]}
            for row in listed:
                if row["path"] in reaped:
                    got = reaped[row["path"]]
                    assert (row["reap"]["disposition"], row["reap"]["reason"]) == (
                        got["disposition"], got["reason"]), (steps, row["path"])
            _worktree_and_branch_differences_say_why(steps, sweep, clean, reaped)
        commands = _suggestions_never_refuse(repo, capsys, steps, sweep)
        for name, item in [*clean.items(), *prune.items()]:
            if item["action"] == "delete":
                assert name in preserved, (steps, name, item, sweep[name])
        for name, item in delete.items():
            if item["action"] == "delete":
                assert name in preserved | unstarted, (steps, name, item, sweep[name])
        for name in preserved & set(local):
            for command, items in (("sweep_clean", clean), ("prune", prune),
                                   ("delete", delete)):
                item = items[name]
                assert item["action"] in ("delete", "refused", "blocked"), (
                    steps, command, name, item)
                if item["action"] != "delete":
                    assert item["reason"].startswith("refused:") or "its worktree" in \
                        item["reason"], (steps, command, name, item)
            # every preserved branch goes with sweep --clean unless its record says why not
            if clean[name]["action"] != "delete":
                want = sweep[name]["actions"]["sweep_clean"]
                assert want["action"] == "refused" or "its worktree" in want["reason"] or \
                    clean[name]["action"] == "refused", (steps, name, clean[name], want)
        for b in sweep.values():
            if b["state"] == "superseded":
                assert b["superseded"]["changes"] or b["superseded"]["conflicted"], (steps, b)
        loses = {n for n, ok in _oracle(repo, sorted(preserved & set(local))).items() if not ok}
        assert not loses, (steps, {n: sweep[n] for n in loses})
        _run_suggestions(repo, capsys, steps, commands)
