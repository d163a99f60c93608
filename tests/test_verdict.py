"""One sound verdict per branch (issue 11): superseded work is not preserved (C11), squash merges
on a moved base are verified by merging (C12), and every command reads the same record."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from branchkeeper.analysis.inventory import Inventory, build_inventory
from branchkeeper.git.repo import repo_facts
from branchkeeper.model.config import Config
from branchkeeper.render.sweep import record_json, render_text
from tests.cleanuputil import branches, cli, cli_json
from tests.gitrepo import NOW, GitRepo

LIB = "import os\n\n\ndef connect(url):\n    return url\n"
DOCS = "# Library\n\nUsage: connect(url)\n"


def inventory(repo: GitRepo) -> Inventory:
    return build_inventory(repo_facts(repo.path), Config(), now=NOW)


def record(inv: Inventory, name: str) -> dict[str, Any]:
    return record_json(inv.by_name()[name])


def c11(w: GitRepo, *, b2_keeps_the_line: bool) -> dict[str, str]:
    """Field case C11: B1 adds ``proxies = None`` to lib.py; B2, made from B1, removes that
    line (or keeps it) and edits the docs; B2 is squash-merged into main, which is pushed."""
    w.commit("library", files={"lib.py": LIB, "docs.md": DOCS}, days_ago=12)
    w.git("push", "-q", "origin", "main")
    ids = {"fork": w.rev("main")}
    w.switch("B1", create=True, days_ago=11)
    ids["B1"] = w.commit("add proxies", files={"lib.py": LIB + "proxies = None\n"}, days_ago=11)
    w.switch("B2", create=True, days_ago=10)
    lib = LIB + "proxies = None\n" if b2_keeps_the_line else LIB
    ids["B2"] = w.commit("docs, drop proxies", files={
        "lib.py": lib, "docs.md": DOCS + "Proxies: see the environment.\n"}, days_ago=10)
    w.switch("main")
    ids["S"] = w.squash_merge("B2", days_ago=9)
    w.git("push", "-q", "origin", "main")
    return ids


def test_c11_superseded_whole_records(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    ids = c11(w, b2_keeps_the_line=False)
    inv = inventory(w)
    ways_out = ("park it (branchkeeper park --reason '...' -- B1) or delete it deliberately "
                "(branchkeeper delete --allow-unproven --reason '...' -- B1)")
    reason = f"superseded: 1 changed line(s) in 1 path(s) did not land with B2 as {ids['S'][:10]}; {ways_out}"
    assert record(inv, "B1") == {
        "name": "B1", "state": "superseded", "proof": None, "containment": "nowhere",
        "containing_ref": None, "stage": "advisory", "ahead": 1, "behind": 1, "unpushed": 1,
        "lines": 1, "age_days": 11.0, "local_tip": ids["B1"], "remote_tip": None,
        "worktree": None, "upstream": None, "upstream_gone": False, "parked": None,
        "number": None, "same_tip_as": [],
        "superseded": {"by": ["B2"], "holder_tip": ids["B2"], "base": "refs/remotes/origin/main",
                       "landed_as": ids["S"], "lines": 1, "conflicted": False,
                       "changes": [{"path": "lib.py", "added": 1, "deleted": 0}]},
        "refusal": None,
        "actions": {"sweep_clean": {"action": "kept", "reason": reason, "refusal": None},
                    "prune": {"action": "SKIP_UNPROVEN", "reason": reason, "refusal": None},
                    "delete": {"action": "SKIP_UNPROVEN", "reason": reason, "refusal": None},
                    "delete_remote": None},
        "reason": reason,
    }
    squash = f"squash-merged into origin/main as {ids['S'][:10]}"
    assert record(inv, "B2") == {
        "name": "B2", "state": "patch_equivalent",
        "proof": {"kind": "squash_merged", "base": "refs/remotes/origin/main",
                  "landed_as": ids["S"], "verified": "patch-id"},
        "containment": None, "containing_ref": None, "stage": None, "ahead": 2, "behind": 1,
        "unpushed": 2, "lines": None, "age_days": 10.0, "local_tip": ids["B2"],
        "remote_tip": None, "worktree": None, "upstream": None, "upstream_gone": False,
        "parked": None, "number": None, "same_tip_as": [], "superseded": None,
        "refusal": None,
        "actions": {"sweep_clean": {"action": "delete", "reason": squash, "refusal": None},
                    "prune": {"action": "delete", "reason": squash, "refusal": None},
                    "delete": {"action": "delete", "reason": squash, "refusal": None},
                    "delete_remote": None},
        "reason": squash,
    }
    assert inv.summary()["superseded"] == 1


def test_c11_superseded_in_the_text_report(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    ids = c11(w, b2_keeps_the_line=False)
    out = io.StringIO()
    render_text(inventory(w), Console(file=out, width=1000, highlight=False, color_system=None))
    text = out.getvalue()
    start = text.index("Superseded (1)")
    assert text[start:text.index("\n\n", start)] == (
        "Superseded (1): inside a branch that landed, but changes of their own did not land "
        "(never deleted by a proof)\n"
        f"  B1  1 changed line(s) did not land with B2 as {ids['S'][:10]}, 11d old\n"
        "    lib.py  +1 -0\n"
        "    park it: branchkeeper park --reason '...' -- B1\n"
        "    or delete it deliberately: branchkeeper delete --allow-unproven --reason '...' -- B1")
    assert "1 rebase- or squash-merged, 1 superseded" in text


def test_c11_every_command_keeps_b1(remote_and_clone: tuple[GitRepo, GitRepo],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = c11(w, b2_keeps_the_line=False)
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert code == 0
    actions = {b["name"]: (b["action"], b["reason"].split(";")[0]) for b in doc["branches"]}
    assert actions == {
        "B1": ("kept", f"superseded: 1 changed line(s) in 1 path(s) did not land with B2 as "
                       f"{ids['S'][:10]}"),
        "B2": ("delete", f"squash-merged into origin/main as {ids['S'][:10]}"),
        "main": ("kept", "default")}
    code, doc = cli_json(capsys, w, "prune", "--no-fetch", "--dry-run")
    assert code == 0
    assert {b["name"]: b["action"] for b in doc["branches"]} == {
        "B1": "SKIP_UNPROVEN", "B2": "delete", "main": "refused"}
    code, out, _ = cli(capsys, w, "delete", "B1")
    assert code == 5
    assert "SKIP_UNPROVEN  B1" in out and "nothing was deleted" in out
    code, _, _ = cli(capsys, w, "sweep", "--clean")
    assert code == 0
    assert branches(w) == ["B1", "main"]
    code, doc = cli_json(capsys, w, "sweep")
    assert {b["name"]: b["state"] for b in doc["branches"]} == {"B1": "dormant",
                                                                "main": "default"}


def test_c11_kept_line_means_preserved(remote_and_clone: tuple[GitRepo, GitRepo],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = c11(w, b2_keeps_the_line=True)
    # main moves on in lib.py, so the file is no longer byte-identical (no content proof):
    # only the merge of B1 into the squash commit shows that B1 landed
    w.commit("later", files={"lib.py": "# header\n" + LIB + "proxies = None\n"}, days_ago=8)
    w.git("push", "-q", "origin", "main")
    inv = inventory(w)
    b1 = record(inv, "B1")
    assert (b1["state"], b1["proof"], b1["superseded"], b1["reason"]) == (
        "patch_equivalent",
        {"kind": "tip_subsumed", "base": "refs/remotes/origin/main", "landed_as": ids["S"],
         "verified": "merge"},
        None,
        f"inside a branch that landed on origin/main as {ids['S'][:10]}; merging it there "
        f"changes nothing (an ancestor of {ids['B2'][:10]}, proven squash_merged)")
    assert b1["actions"]["prune"] == {
        "action": "delete", "refusal": None,
        "reason": f"inside a branch that landed on origin/main as {ids['S'][:10]}; merging it "
                  "there changes nothing"}
    code, _, _ = cli(capsys, w, "prune", "--no-fetch")
    assert code == 0
    assert branches(w) == ["main"]


def c12(w: GitRepo) -> dict[str, str]:
    """Field case C12: a branch edits line 15; main then edits line 12; the branch is
    squash-merged onto the new main (the squash's context lines differ)."""
    lines = [f"line {i}" for i in range(1, 31)]
    w.commit("file", files={"f.txt": "\n".join(lines) + "\n"}, days_ago=20)
    w.git("push", "-q", "origin", "main")
    w.switch("feature", create=True, days_ago=19)
    mine = list(lines)
    mine[14] = "line 15, edited on the branch"
    tip = w.commit("edit 15", files={"f.txt": "\n".join(mine) + "\n"}, days_ago=19)
    w.switch("main")
    moved = list(lines)
    moved[11] = "line 12, edited on main"
    w.commit("edit 12", files={"f.txt": "\n".join(moved) + "\n"}, days_ago=18)
    squash = w.squash_merge("feature", days_ago=17)
    w.git("push", "-q", "origin", "main")
    return {"tip": tip, "S": squash}


def test_c12_squash_on_a_moved_base_is_verified_by_merge(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = c12(w)
    # the whole-diff patch-ids really differ (the proof is not a patch-id match)
    whole = w.git("diff", f"{ids['tip']}~1", ids["tip"])
    landed = w.git("diff", f"{ids['S']}~1", ids["S"])
    assert whole != landed
    rec = record(inventory(w), "feature")
    proof = {"kind": "squash_merged", "base": "refs/remotes/origin/main", "landed_as": ids["S"],
             "verified": "merge"}
    merged = (f"squash-merged into origin/main as {ids['S'][:10]} (verified by merge: merging "
              "the branch into the landing commit's parent reproduces it)")
    assert (rec["state"], rec["proof"], rec["reason"]) == ("patch_equivalent", proof, merged)
    code, doc = cli_json(capsys, w, "delete", "--dry-run", "feature")
    assert code == 0
    assert doc["branches"][0]["proof"] == proof
    assert doc["branches"][0]["reason"] == merged


def test_c12_a_merge_check_that_stops_answering_is_unknown_and_retried(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge stream hangs (its scratch store's alternates file is a FIFO nobody writes):
    it is ended once silent for the idle bound, the branch is ``unknown`` naming why, never
    proven, and the verdict is not cached: the next sweep proves it."""
    from branchkeeper.git import mergetree

    _, w = remote_and_clone
    ids = c12(w)
    enter = mergetree.ScratchObjects.__enter__

    def hanging(self: mergetree.ScratchObjects) -> mergetree.ScratchObjects:
        scratch = enter(self)
        assert scratch.path is not None
        (scratch.path / "info").mkdir()
        os.mkfifo(scratch.path / "info" / "alternates")
        return scratch

    with monkeypatch.context() as patch:
        patch.setattr(mergetree, "IDLE_S", 0.5)
        patch.setattr(mergetree.ScratchObjects, "__enter__", hanging)
        rec = record(inventory(w), "feature")
    why = ("git error: the merge check stopped answering (git stopped answering: no output and "
           "no CPU time for 0.5 s)")
    assert (rec["state"], rec["proof"], rec["reason"]) == ("unknown", None, why)
    rec = record(inventory(w), "feature")
    assert (rec["state"], rec["proof"]["landed_as"]) == ("patch_equivalent", ids["S"])


def test_c12_without_merge_tree_stdin_is_not_judged_by_merge(
        remote_and_clone: tuple[GitRepo, GitRepo], monkeypatch: pytest.MonkeyPatch) -> None:
    from branchkeeper.git import repo as gitrepo

    _, w = remote_and_clone
    c12(w)
    w.switch("stack-base", create=True, start="main~3", days_ago=16)
    w.commit("a", files={"a.txt": "a\n"}, days_ago=16)
    w.switch("stack-top", create=True, days_ago=15)
    w.commit("b", files={"b.txt": "b\n"}, days_ago=15)
    w.switch("main")
    w.squash_merge("stack-top", days_ago=14)
    w.commit("a moves on", files={"a.txt": "a\nmore\n"}, days_ago=13)
    w.git("push", "-q", "origin", "main")
    monkeypatch.setenv(gitrepo.ASSUME_VERSION_ENV, "2.38.1")
    gitrepo.git_version.cache_clear()
    try:
        inv = build_inventory(repo_facts(w.path), Config(), now=NOW, use_cache=False)
    finally:
        monkeypatch.delenv(gitrepo.ASSUME_VERSION_ENV)
        gitrepo.git_version.cache_clear()
    states = {r.name: (r.state.value, r.proof.kind.value if r.proof else None) for r in inv.records}
    assert states == {"feature": ("dormant", None), "main": ("default", None),
                      "stack-base": ("dormant", None),
                      "stack-top": ("dormant", None)}
    # git 2.38's patch-id ignores whitespace and it has no merge-tree --stdin to confirm the
    # squash by content: the patch-id proof does not count.
    assert inv.notes == ["git 2.38: patch-id ignores whitespace; "
                         "1 branches not proven by patch-id"]


def test_unstarted_branch_the_commands_differ_and_say_why(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    w.branch("agent-task", "main")
    rec = record(inventory(w), "agent-task")
    kept = ("unstarted: at the same tip as main; kept because an agent may be about to start "
            "on it (branchkeeper delete removes it: nothing to lose)")
    assert rec["actions"] == {
        "sweep_clean": {"action": "kept", "reason": kept, "refusal": None},
        "prune": {"action": "kept", "reason": kept, "refusal": None},
        "delete": {"action": "delete", "reason": "unstarted: at the same tip as main, nothing "
                                                 "to lose", "refusal": None},
        "delete_remote": None}
    code, doc = cli_json(capsys, w, "prune", "--no-fetch", "--dry-run")
    assert code == 0
    assert [(b["name"], b["action"], b["reason"]) for b in doc["branches"]] == [
        ("agent-task", "kept", kept), ("main", "refused", "refused: the default branch")]
    code, doc = cli_json(capsys, w, "sweep", "--clean", "--dry-run")
    assert code == 0
    assert [(b["name"], b["action"], b["reason"]) for b in doc["branches"]] == [
        ("agent-task", "kept", kept), ("main", "kept", "default")]
    code, _, _ = cli(capsys, w, "delete", "agent-task")
    assert code == 0 and branches(w) == ["main"]


def test_report_counts_remote_only_merged_like_sweep(remote_and_clone: tuple[GitRepo, GitRepo],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    for name in ("local-merged", "remote-only-merged"):
        w.switch(name, create=True)
        w.commit(name, files={f"{name}.txt": "x\n"}, days_ago=5)
        w.git("push", "-q", "origin", name)
        w.switch("main")
        w.merge(name, days_ago=4)
    w.git("push", "-q", "origin", "main")
    w.git("branch", "-D", "remote-only-merged")
    code, doc = cli_json(capsys, w, "sweep")
    merged = [b["name"] for b in doc["branches"] if b["state"] in ("merged", "patch_equivalent")]
    assert merged == ["local-merged", "remote-only-merged"]
    code, report = cli_json(capsys, w, "report", "--repo", str(w.path))
    assert code == 0
    [row] = report["repositories"]
    assert row["merged_not_deleted"] == 2


def test_sweep_leaves_the_object_store_as_it_was(remote_and_clone: tuple[GitRepo, GitRepo],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    c11(w, b2_keeps_the_line=False)
    objects = w.path / ".git" / "objects"
    before = sorted(str(p.relative_to(objects)) for p in objects.rglob("*") if p.is_file())
    code, _ = cli_json(capsys, w, "sweep")
    assert code == 0
    after = sorted(str(p.relative_to(objects)) for p in objects.rglob("*") if p.is_file())
    assert after == before
    tmp = w.path / ".git" / "branchkeeper" / "tmp"
    assert not tmp.exists() or list(tmp.iterdir()) == []


def test_json_document_lists_superseded_in_the_summary(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    c11(w, b2_keeps_the_line=False)
    code, out, _ = cli(capsys, w, "sweep", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"] == {"exempt": 0, "default": 1, "integration_line": 0, "merged": 0,
                              "merged_into_line": 0, "patch_equivalent": 1, "parked": 0,
                              "unstarted": 0, "superseded": 1, "dormant": 0, "live": 0, "unknown": 0,
                              "lost_work_risk": 1,
                              "lost_work_by_kind": {"unpushed_branch": 1, "detached_commit": 0,
                                                    "worktree_ref": 0, "submodule_store": 0,
                                                    "dirty_worktree": 0, "stash": 0,
                                                    "kept_ref": 0, "ignored_files": 0}}
    rows = json.loads((Path(w.path) / ".git" / "branchkeeper" / "last-sweep.json").read_text())
    assert rows["branches"]["B1"][1] == "superseded"


def c11_conflict(w: GitRepo) -> dict[str, str]:
    """C11 where merging B1 into the squash commit conflicts: B1 returns a pair and adds
    ``proxies = None``, and a docs line; B2, made from B1, keeps B1's header comment, strips the
    url instead, drops the proxies line and the docs line; B2 is squash-merged."""
    w.commit("library", files={"lib.py": LIB, "docs.md": DOCS}, days_ago=12)
    w.git("push", "-q", "origin", "main")
    ids = {}
    w.switch("B1", create=True, days_ago=11)
    b1_lib = "# proxies\n" + LIB.replace("    return url\n",
                                          "    return url, None\nproxies = None\n")
    ids["B1"] = w.commit("add proxies", files={"lib.py": b1_lib,
                                               "docs.md": DOCS + "Proxies: none.\n"},
                         days_ago=11)
    w.switch("B2", create=True, days_ago=10)
    ids["B2"] = w.commit("strip the url instead", files={
        "lib.py": "# proxies\n" + LIB.replace("return url", "return url.strip()"),
        "docs.md": DOCS}, days_ago=10)
    w.switch("main")
    ids["S"] = w.squash_merge("B2", days_ago=9)
    w.git("push", "-q", "origin", "main")
    return ids


def test_c11_conflicted_count_is_the_branch_lines_missing_not_the_markers(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    ids = c11_conflict(w)
    inv = inventory(w)
    # lib.py: B1's "return url, None" and "proxies = None" are not on S ("return url", which
    # B1 replaced, is gone from S too; the header comment landed); docs.md: its one line
    assert record(inv, "B1")["superseded"] == {
        "by": ["B2"], "holder_tip": ids["B2"], "base": "refs/remotes/origin/main",
        "landed_as": ids["S"], "lines": 3, "conflicted": True,
        "changes": [{"path": "docs.md", "added": 1, "deleted": 0},
                    {"path": "lib.py", "added": 2, "deleted": 0}]}
    out = io.StringIO()
    render_text(inv, Console(file=out, width=1000, highlight=False, color_system=None))
    text = out.getvalue()
    start = text.index("  B1  ", text.index("Superseded (1)"))
    assert text[start:text.index("    park it", start)] == (
        f"  B1  3 changed line(s) did not land with B2 as {ids['S'][:10]} (the merge "
        "conflicts; counted: the branch's own changed lines the landing commit lacks, "
        "conflict markers excluded), 11d old\n"
        "    docs.md  +1 -0\n"
        "    lib.py  +2 -0\n")
    # a warm run reads the same count from the cache
    assert record(inventory(w), "B1")["superseded"] == record(inv, "B1")["superseded"]


def test_c11_a_conflict_whose_every_line_landed_is_not_superseded(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """B1 adds g.py; B2, made from B1, adds a line in its middle and is squash-merged. Merging
    B1 into the squash commit is an add/add conflict, yet every line B1 changed is on it:
    nothing is lost by content, so B1 is preserved (``tip_subsumed``, verified by content),
    never "superseded" with 0 lines that did not land, and ``prune`` deletes it."""
    _, w = remote_and_clone
    w.switch("B1", create=True, days_ago=11)
    w.commit("add g", files={"g.py": "one = 1\ntwo = 2\n"}, days_ago=11)
    w.switch("B2", create=True, days_ago=10)
    b2 = w.commit("between", files={"g.py": "one = 1\nmiddle = 0\ntwo = 2\n"}, days_ago=10)
    w.switch("main")
    squash = w.squash_merge("B2", days_ago=9)
    w.git("push", "-q", "origin", "main")
    assert "CONFLICT (add/add): Merge conflict in g.py" in w.git(
        "merge-tree", "--write-tree", squash, "B1", check=False)  # it does conflict
    b1 = record(inventory(w), "B1")
    assert (b1["state"], b1["proof"], b1["superseded"], b1["reason"]) == (
        "patch_equivalent",
        {"kind": "tip_subsumed", "base": "refs/remotes/origin/main", "landed_as": squash,
         "verified": "content"},
        None,
        f"inside a branch that landed on origin/main as {squash[:10]}; merging it there "
        f"conflicts only where every line of it already is (an ancestor of {b2[:10]}, proven "
        "squash_merged)")
    assert cli(capsys, w, "prune", "--no-fetch")[0] == 0
    assert branches(w) == ["main"]
    # had the later branch dropped the second line, that one line did not land: superseded
    w.switch("B4", create=True, days_ago=8)
    w.commit("add h", files={"h.py": "one = 1\ntwo = 2\n"}, days_ago=8)
    w.switch("B5", create=True, days_ago=8)
    w.commit("rewrite", files={"h.py": "one = 1\nmiddle = 0\n"}, days_ago=8)
    w.switch("main")
    w.squash_merge("B5", days_ago=7)
    w.git("push", "-q", "origin", "main")
    b4 = record(inventory(w), "B4")
    assert (b4["state"], b4["superseded"]["lines"], b4["superseded"]["conflicted"],
            b4["superseded"]["changes"]) == (
        "superseded", 1, True, [{"path": "h.py", "added": 1, "deleted": 0}])


def test_a_line_added_twice_and_landed_once_is_one_line_missing(
        remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    """B1 adds g.py with the same line twice; B2, made from B1, keeps one copy and adds another
    line, and is squash-merged. Merging B1 into the squash commit is an add/add conflict whose
    branch side holds the line twice and the landing side once: one copy did not land, so B1 is
    superseded by that one line, never preserved because the line "is there"."""
    _, w = remote_and_clone
    w.switch("B1", create=True, days_ago=11)
    w.commit("add g", files={"g.py": "x = 1\nx = 1\n"}, days_ago=11)
    w.switch("B2", create=True, days_ago=10)
    b2 = w.commit("one x", files={"g.py": "x = 1\ny = 2\n"}, days_ago=10)
    w.switch("main")
    squash = w.squash_merge("B2", days_ago=9)
    w.git("push", "-q", "origin", "main")
    assert "CONFLICT (add/add): Merge conflict in g.py" in w.git(
        "merge-tree", "--write-tree", squash, "B1", check=False)  # it does conflict
    assert record(inventory(w), "B1")["superseded"] == {
        "by": ["B2"], "holder_tip": b2, "base": "refs/remotes/origin/main",
        "landed_as": squash, "lines": 1, "conflicted": True,
        "changes": [{"path": "g.py", "added": 1, "deleted": 0}]}
