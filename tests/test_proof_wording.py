"""One wording of every proof (issue 11, section 5: one verdict): ``sweep``, ``sweep --clean
--dry-run`` and ``sweep --clean`` say the same words for the same proof, from one function."""

from __future__ import annotations

import pytest

from tests.cleanuputil import cli, norm, short
from tests.gitrepo import GitRepo


def _every_proof(w: GitRepo) -> dict[str, str]:
    """One branch per proof: merged (ancestor), rebased (a rebase merge of two commits on a
    moved base), squashed (two commits squash-merged), inner (an ancestor of ``squashed``:
    merging it into the squash commit changes nothing), early (its one file is on the base)."""
    w.commit("u", files={"u.txt": "a\nb\nc\nd\ne\n"}, days_ago=13)
    w.switch("merged", create=True, days_ago=12)
    w.commit("m", files={"m.txt": "m\n"}, days_ago=12)
    w.switch("main")
    w.merge("merged", days_ago=11)
    w.switch("rebased", create=True, start="main~1", days_ago=10)
    w.commit("r1", files={"r.txt": "r1\n"}, days_ago=10)
    w.commit("r2", files={"r.txt": "r2\n"}, days_ago=10)
    w.switch("main")
    ids = {"copy": w.rebase_merge("rebased", days_ago=9)}
    w.switch("inner", create=True, days_ago=8)
    w.commit("A", files={"u.txt": "A\nb\nc\nd\ne\n"}, days_ago=8)
    w.switch("squashed", create=True, days_ago=8)
    w.commit("E", files={"u.txt": "A\nb\nc\nd\nE\n", "s.txt": "s\n"}, days_ago=8)
    w.switch("early", create=True, start="main", days_ago=8)
    w.commit("s", files={"s.txt": "s\n"}, days_ago=8)
    w.switch("main")
    ids["squash"] = w.squash_merge("squashed", days_ago=7)
    w.git("push", "-q", "origin", "main")
    return {k: v[:10] for k, v in ids.items()}


def test_sweep_and_the_cleanup_plan_word_each_proof_alike(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = _every_proof(w)
    tips = {n: short(w, n) for n in ("early", "inner", "merged", "rebased", "squashed")}
    words = {
        "early": "every file it changed is identical on origin/main",
        "inner": f"inside a branch that landed on origin/main as {ids['squash']}; merging it "
                 "there changes nothing",
        "merged": "merged into origin/main: every commit is on it",
        "rebased": "rebase-merged into origin/main: every commit is on it as a copy (the tip's "
                   f"copy is {ids['copy']})",
        "squashed": f"squash-merged into origin/main as {ids['squash']}",
    }
    # the holder beside the proof's words, which say once what merging it there does
    noted = {**words, "inner": words["inner"] + f" (an ancestor of {tips['squashed']}, proven "
                                                "squash_merged)"}
    age = {"early": 8, "inner": 8, "merged": 12, "rebased": 10, "squashed": 8}
    code, out, err = cli(capsys, w, "sweep")
    assert (code, err) == (0, "")
    assert out == (
        f"{w.path}  default: main  remote: origin  dormancy: 7/14/30 days (standard)\n\n"
        "Merged, not deleted (5): cleanup candidates\n"
        + "".join(f"  {n}  {noted[n]}, {age[n]}d old\n"
                  f"    branchkeeper delete -- {n}\n" for n in words)
        + "\n6 branches: 1 merged, 4 rebase- or squash-merged; LOST WORK RISK: 0\n"
        "clean up every proven local branch at once: branchkeeper sweep --clean (add --dry-run "
        "to see the plan)\n")
    main = short(w, "main")
    code, out, err = cli(capsys, w, "sweep", "--clean", "--dry-run")
    assert (code, err) == (0, "")
    assert out == ("dry run: sweep-clean: 6 branches (default branch main)\n"
                   + "".join(f"  would delete   {n}  {tips[n]}  {words[n]}\n" for n in words)
                   + f"  kept           main  {main}  default\n")
    code, out, err = cli(capsys, w, "sweep", "--clean")
    assert (code, err) == (0, "")
    assert norm(out) == (
        "sweep-clean: 6 branches (default branch main)\n"
        + "".join(f"  deleted        {n}  {tips[n]}  {words[n]}\n"
                  f"      restore: git fetch BUNDLE refs/heads/{n}:refs/heads/{n}\n"
                  for n in words)
        + f"  kept           main  {main}  default\n"
        "bundle: BUNDLE (full, N bytes, verified)\n"
        "note: full bundle: a smaller bundle without the default branch's history would have "
        "left out some branches\n"
        "journal: operation OPID; undo: branchkeeper undo OPID\n")
