"""undo and log, end to end on real repositories: a journaled, bundled, CAS delete is undone
from recorded tips, from the bundle after gc, with conflicts, twice, and after a crash."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from branchkeeper.actions.bundle import create_bundle
from branchkeeper.actions.refupdate import RefOutcome, delete_refs_cas
from branchkeeper.adapters.cli import main
from branchkeeper.git.types import Oid
from branchkeeper.state.journal import ItemOutcome, ItemResult, Journal, JournalItem, OpStatus
from branchkeeper.state.statedir import common_dir_of
from tests.gitrepo import GitRepo


def _delete(repo: GitRepo, refs: Mapping[str, str], *, remote_items: Mapping[str, str] = {}
            ) -> tuple[str, Path]:
    """What ``delete`` will do: bundle, journal begin, CAS delete, item results, end."""
    common = common_dir_of(repo.path)
    expected = {r: Oid(o) for r, o in refs.items()}
    bundle = create_bundle(repo.path, common, expected, base=Oid(repo.rev("main")),
                           label="delete")
    items = [JournalItem(r, o, None, bundle.restore_command(r)) for r, o in expected.items()]
    items += [JournalItem(r, Oid(o), "origin", shlex.join(["git", "push", "origin", f"{o}:{r}"]))
              for r, o in remote_items.items()]
    journal = Journal(common)
    op_id = journal.begin("delete", items, bundle=bundle, argv=["branchkeeper", "delete", "x"])
    results = delete_refs_cas(repo.path, expected)
    journal.record(op_id, *(ItemResult(r, ItemOutcome(res.outcome.value), res.reason)
                               for r, res in results.items()))
    journal.record(op_id, *(ItemResult(r, ItemOutcome.DELETED) for r in remote_items))
    assert all(res.outcome is RefOutcome.DELETED for res in results.values())
    journal.end(op_id, OpStatus.DONE)
    return op_id, bundle.path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _repo(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    repo = GitRepo.init(tmp_path / "repo")
    ids = {"c1": repo.commit("c1", files={"a": "1\n"}, days_ago=9)}
    repo.switch("x", create=True)
    ids["x1"] = repo.commit("x1", files={"x": "1\n", "big": "payload\n" * 50}, days_ago=8)
    ids["x2"] = repo.commit("x2", files={"x": "2\n"}, days_ago=7)
    repo.switch("main")
    repo.branch("y", ids["c1"])
    ids["c2"] = repo.commit("c2", files={"a": "2\n"}, days_ago=6)
    return repo, ids


def test_undo_from_recorded_tips_then_already_undone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    op_id, _bundle = _delete(repo, {"refs/heads/x": ids["x2"], "refs/heads/y": ids["c1"]})
    assert not repo.has_ref("refs/heads/x")

    code, out, err = _cli(capsys, "-C", str(repo.path), "undo", "--dry-run")
    assert (code, err) == (0, "")
    assert out == (
        f"dry run: undo {op_id} (delete, 2 refs)\n"
        f"  would restore refs/heads/x at {ids['x2'][:10]}: from the recorded tip\n"
        f"  would restore refs/heads/y at {ids['c1'][:10]}: from the recorded tip\n"
    )
    assert not repo.has_ref("refs/heads/x")

    code, out, err = _cli(capsys, "-C", str(repo.path), "undo")
    assert (code, err) == (0, "")
    assert out == (
        f"undo {op_id} (delete, 2 refs)\n"
        f"  restored      refs/heads/x at {ids['x2'][:10]}\n"
        f"  restored      refs/heads/y at {ids['c1'][:10]}\n"
    )
    assert repo.rev("refs/heads/x") == ids["x2"]
    assert repo.rev("refs/heads/y") == ids["c1"]

    code, out, _ = _cli(capsys, "-C", str(repo.path), "undo", op_id)
    undone_at = Journal(common_dir_of(repo.path)).get(op_id).undone.time  # type: ignore[union-attr]
    assert (code, out) == (
        4, f"operation {op_id} (delete) was already undone at {undone_at}; nothing to do\n")


def test_undo_from_bundle_after_gc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    tree = repo.git("rev-parse", "x^{tree}")
    op_id, _bundle = _delete(repo, {"refs/heads/x": ids["x2"]})
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    gone = subprocess.run(["git", "cat-file", "-e", ids["x2"]], cwd=repo.path)
    assert gone.returncode != 0  # the commit is really gone from the object store

    code, out, err = _cli(capsys, "-C", str(repo.path), "undo", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "id": op_id, "op": "delete", "dry_run": False, "already_undone": None,
        "passed_undone": [], "none_left": False, "status": "done",
        "items": [{"ref": "refs/heads/x", "old": ids["x2"], "remote": None,
                   "outcome": "restored", "reason": "", "command": ""}],
        "worktrees": [], "archives": [],
    }
    assert repo.rev("refs/heads/x") == ids["x2"]
    assert repo.git("rev-parse", "x^{tree}") == tree
    assert repo.git("log", "--format=%s", "x") == "x2\nx1\nc1"
    assert repo.git("show", "x~1:big") == ("payload\n" * 50).rstrip("\n")
    repo.git("fsck", "--no-dangling")


def test_undo_conflict_is_never_overwritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    op_id, _bundle = _delete(repo, {"refs/heads/x": ids["x2"], "refs/heads/y": ids["c1"]})
    repo.branch("x", ids["c2"])  # an agent made a new x meanwhile
    code, out, err = _cli(capsys, "-C", str(repo.path), "undo")
    assert (code, err) == (5, "")
    assert out == (
        f"undo {op_id} (delete, 2 refs)\n"
        f"  conflict      refs/heads/x at {ids['x2'][:10]}: exists at {ids['c2']}\n"
        f"      git branch x-restored {ids['x2']}\n"
        f"  restored      refs/heads/y at {ids['c1'][:10]}\n"
    )
    assert repo.rev("refs/heads/x") == ids["c2"]  # never overwritten
    repo.git("branch", "x-restored", ids["x2"])  # the printed command works
    operation = Journal(common_dir_of(repo.path)).get(op_id)
    assert operation is not None and operation.undone is None
    assert operation.undos[0].status == "partial"


def test_undo_prints_push_for_remote_items(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    op_id, _bundle = _delete(repo, {"refs/heads/y": ids["c1"]},
                             remote_items={"refs/heads/feat 1": ids["x2"]})
    code, out, _ = _cli(capsys, "-C", str(repo.path), "undo")
    assert code == 0
    assert out == (
        f"undo {op_id} (delete, 2 refs)\n"
        f"  restored      refs/heads/y at {ids['c1'][:10]}\n"
        f"  push          origin refs/heads/feat 1 at {ids['x2'][:10]}\n"
        f"      git push origin '{ids['x2']}:refs/heads/feat 1'\n"
    )


def test_undo_of_an_interrupted_operation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    common = common_dir_of(repo.path)
    journal = Journal(common)
    items = [JournalItem("refs/heads/x", Oid(ids["x2"]), None, "r"),
             JournalItem("refs/heads/y", Oid(ids["c1"]), None, "r")]
    op_id = journal.begin("prune", items, bundle=None)
    # Crash after the delete of x, before any result was journaled; y was never touched.
    repo.git("update-ref", "-d", "refs/heads/x", ids["x2"])
    code, out, _ = _cli(capsys, "-C", str(repo.path), "undo")
    assert code == 0
    assert out == (
        f"undo {op_id} (prune, 2 refs)\n"
        f"  restored      refs/heads/x at {ids['x2'][:10]}\n"
        f"  present       refs/heads/y at {ids['c1'][:10]}\n"
    )


def test_log_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    code, out, _ = _cli(capsys, "-C", str(repo.path), "log")
    assert (code, out) == (0, "no operations recorded\n")
    first, bundle1 = _delete(repo, {"refs/heads/y": ids["c1"]})
    second, bundle2 = _delete(repo, {"refs/heads/x": ids["x2"]})
    assert _cli(capsys, "-C", str(repo.path), "undo", second)[0] == 0
    ops = Journal(common_dir_of(repo.path)).operations()
    t1, t2 = ops[0].time, ops[1].time
    undone = ops[1].undone
    assert undone is not None

    code, out, err = _cli(capsys, "-C", str(repo.path), "log")
    assert (code, err) == (0, "")
    assert out == (
        f"ID                     TIME                  OP      STATUS       ITEMS  BUNDLE\n"
        f"{second}  {t2}  delete  done+undone  1      {bundle2}\n"
        f"{first}  {t1}  delete  done         1      {bundle1}\n"
    )
    code, out, _ = _cli(capsys, "-C", str(repo.path), "log", "--json", "-n", "1")
    assert json.loads(out) == [{
        "id": second, "time": t2, "op": "delete", "status": "done", "undone": undone.time,
        "items": 1, "results": {"refs/heads/x": "deleted"}, "bundle": str(bundle2),
        "bundles": [str(bundle2)], "steps": 1,
        "archives": [], "note": "", "argv": ["branchkeeper", "delete", "x"],
    }]


def test_nothing_to_undo_exits_as_the_empty_journal_so_an_undo_loop_ends(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``while branchkeeper undo; do :; done`` undoes every operation, newest first, then
    stops: nothing left to undo exits 4 (text and --json), as an empty journal does."""
    repo, ids = _repo(tmp_path)
    first = _delete(repo, {"refs/heads/x": ids["x2"]})[0]
    second = _delete(repo, {"refs/heads/y": ids["c1"]})[0]
    codes = []
    for _ in range(5):  # bounded: a loop that never ends fails here instead of hanging
        code, out, _ = _cli(capsys, "-C", str(repo.path), "undo")
        codes.append(code)
        if code != 0:
            break
    assert codes == [0, 0, 4]
    journal = Journal(common_dir_of(repo.path))
    newest = journal.get(second)
    assert newest is not None and newest.undone is not None
    assert out == (f"nothing to undo: every operation in the journal is undone already (the "
                   f"newest, {second} (delete), at {newest.undone.time}); see: branchkeeper "
                   "log\n")
    assert repo.rev("refs/heads/x") == ids["x2"] and repo.rev("refs/heads/y") == ids["c1"]
    code, out, _ = _cli(capsys, "-C", str(repo.path), "undo", "--json")
    doc = json.loads(out)
    assert (code, doc["id"], doc["passed_undone"], doc["none_left"], doc["status"]) == (
        4, second, [second, first], True, None)


def test_undo_with_empty_journal_and_unknown_id(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, ids = _repo(tmp_path)
    assert _cli(capsys, "-C", str(repo.path), "undo") == (
        4, "", "branchkeeper: error: the journal has no operations to undo\n")
    _delete(repo, {"refs/heads/y": ids["c1"]})
    assert _cli(capsys, "-C", str(repo.path), "undo", "nope") == (
        4, "", "branchkeeper: error: no operation 'nope' in the journal (see: branchkeeper log)\n")


def test_undo_of_sweep_clean_adds_the_removed_worktree_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sweep --clean removed a clean worktree, then deleted its merged branch: undo brings the
    branch back and the worktree at its path, on that branch, as a reap's undo does."""
    repo, ids = _repo(tmp_path)
    repo.git("merge", "-q", "--no-ff", "-m", "merge x", "x")
    wt_path = tmp_path / "wt-x"
    repo.git("worktree", "add", "-q", str(wt_path), "x")
    code, out, _ = _cli(capsys, "-C", str(repo.path), "sweep", "--clean", "--json")
    assert code == 0, out
    op_id = json.loads(out)["operation"]
    assert not wt_path.exists() and not repo.has_ref("refs/heads/x")
    code, out, err = _cli(capsys, "-C", str(repo.path), "undo", "--dry-run")
    assert (code, err) == (0, "")
    assert out == (f"dry run: undo {op_id} (sweep-clean, 2 refs)\n"
                   f"  would restore refs/heads/x at {ids['x2'][:10]}: from the recorded tip\n"
                   f"  would restore refs/heads/y at {ids['c1'][:10]}: from the recorded tip\n"
                   f"  would add     worktree {wt_path} (x)\n")
    assert not wt_path.exists()
    code, out, err = _cli(capsys, "-C", str(repo.path), "undo", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "id": op_id, "op": "sweep-clean", "dry_run": False, "already_undone": None,
        "passed_undone": [], "none_left": False, "status": "done",
        "items": [{"ref": "refs/heads/x", "old": ids["x2"], "remote": None,
                   "outcome": "restored", "reason": "", "command": ""},
                  {"ref": "refs/heads/y", "old": ids["c1"], "remote": None,
                   "outcome": "restored", "reason": "", "command": ""}],
        "worktrees": [{"path": str(wt_path), "branch": "x", "commit": None,
                       "outcome": "restored", "reason": "added back", "command": ""}],
        "archives": [],
    }
    assert repo.rev("refs/heads/x") == ids["x2"]
    assert repo.git("-C", str(wt_path), "symbolic-ref", "HEAD") == "refs/heads/x"


def test_undo_says_when_the_worktree_path_or_branch_is_taken(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Undo never overwrites: a path taken by another directory, or the branch checked out in
    another worktree, keeps the worktree out; undo says which, prints the command, exits 5,
    and a later bare undo (the operation is not undone yet) finishes the job once freed."""
    repo, ids = _repo(tmp_path)
    repo.git("merge", "-q", "--no-ff", "-m", "merge x", "x")
    repo.git("branch", "-q", "z", "x")
    wx, wz = tmp_path / "wt x", tmp_path / "wt-z"
    repo.git("worktree", "add", "-q", str(wx), "x")
    repo.git("worktree", "add", "-q", str(wz), "z")
    code, out, _ = _cli(capsys, "-C", str(repo.path), "sweep", "--clean", "--json")
    op_id = json.loads(out)["operation"]
    assert code == 0 and not wx.exists() and not wz.exists()
    repo.branch("z", ids["x2"])
    other = tmp_path / "elsewhere"
    repo.git("worktree", "add", "-q", str(other), "z")
    wx.mkdir()
    (wx / "mine.txt").write_text("someone else's\n")
    code, out, err = _cli(capsys, "-C", str(repo.path), "undo")
    add_x = f"git worktree add '{wx}' x"
    add_z = f"git worktree add {wz} z"
    assert (code, err) == (5, "")
    assert out == (
        f"undo {op_id} (sweep-clean, 3 refs)\n"
        f"  restored      refs/heads/x at {ids['x2'][:10]}\n"
        f"  restored      refs/heads/y at {ids['c1'][:10]}\n"
        f"  present       refs/heads/z at {ids['x2'][:10]}\n"
        f"  conflict      worktree {wx} (x): not added back: {wx} is taken by something that "
        "is not this worktree; free it, then run the command below\n"
        f"      {add_x}\n"
        f"  conflict      worktree {wz} (z): not added back: branch z is checked out at "
        f"{other} (one checkout per branch); free it, then run the command below\n"
        f"      {add_z}\n")
    assert (wx / "mine.txt").read_text() == "someone else's\n"
    shutil.rmtree(wx)
    repo.git("worktree", "remove", str(other))
    code, out, err = _cli(capsys, "-C", str(repo.path), "undo", "--json")
    assert (code, err) == (0, "")
    assert [(w["path"], w["outcome"]) for w in json.loads(out)["worktrees"]] == [
        (str(wx), "restored"), (str(wz), "restored")]
    assert repo.git("-C", str(wz), "symbolic-ref", "HEAD") == "refs/heads/z"
