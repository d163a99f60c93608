"""The stored whole-sweep result (issue 16): a warm sweep whose inputs did not change reads its
records, and prints, text and JSON, byte for byte what a cold sweep of the same state prints;
any change of state that could change a verdict is a new computation, and a damaged file is
never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.git.run import processes_started
from tests.cleanuputil import cli
from tests.gitrepo import NOW, GitRepo
from tests.test_verdict_objects import _delete_loose, _kinds, c13

RESULT = Path(".git") / "branchkeeper" / "sweep-result.json"


def _sweep(capsys: pytest.CaptureFixture[str], w: GitRepo, *argv: str) -> tuple[str, bool, int]:
    """One in-process ``sweep`` (``--json`` or text by ``argv``): its stdout, whether it took
    the stored result, and the git processes it ran."""
    before = processes_started()
    code, out, err = cli(capsys, w, "sweep", "--stats", *argv)
    assert code in (0, 1), err
    return out, "stored result" in err, processes_started() - before


def _same_as_cold(capsys: pytest.CaptureFixture[str], w: GitRepo, *, hit: bool) -> int:
    """Sweep twice more (text and JSON) and compare each with a cold sweep (``--no-cache``) of
    the same state; ``hit``: whether the JSON one must have taken the stored result. Returns the
    git processes of the JSON sweep."""
    as_json, took, n = _sweep(capsys, w, "--json")
    assert took is hit
    text, took_text, _ = _sweep(capsys, w)
    assert took_text  # stored by the JSON sweep if not before
    assert as_json == _sweep(capsys, w, "--json", "--no-cache")[0]
    assert text == _sweep(capsys, w, "--no-cache")[0]
    return n


@pytest.fixture
def swept(remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]
          ) -> GitRepo:
    _, w = remote_and_clone
    _kinds(w, 1, "a")
    w.git("push", "-q", "origin", "main", "a0-open")
    w.switch("local-only", create=True, start="main", days_ago=3)
    w.commit("lo", files={"lo.txt": "lo\n"}, days_ago=3)  # LOST WORK RISK: ages in the text
    w.switch("main")
    _sweep(capsys, w, "--json")  # computed and stored
    return w


def test_a_warm_sweep_prints_what_a_cold_one_prints(
        swept: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    hit = _same_as_cold(capsys, swept, hit=True)
    _, took, computed = _sweep(capsys, swept, "--json", "--no-cache")
    assert not took
    # rev-parse, for-each-ref, worktree list, config; then the worktree's status (its head's
    # date is its branch's, from the records), the stash list, our refs and the kept tips:
    # nothing of the proofs; the cold one adds the proofs and, for the proven branches, the
    # recovery bundle's range and its objects (three rev-list, whatever the number of branches)
    assert (hit, computed) == (8, 27)


def test_git_processes_of_a_hit_do_not_grow_with_branches(
        swept: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    few = _sweep(capsys, swept, "--json")[2]
    _kinds(swept, 3, "b")
    _sweep(capsys, swept, "--json")
    out, took, many = _sweep(capsys, swept, "--json")
    assert took and many == few
    assert len(json.loads(out)["branches"]) > 20


@pytest.mark.parametrize("change", ["added", "deleted", "moved", "config", "worktree-added"])
def test_a_change_that_may_move_a_verdict_computes_again(
        swept: GitRepo, capsys: pytest.CaptureFixture[str], change: str, tmp_path: Path) -> None:
    if change == "added":
        swept.git("branch", "new-one", "a0-open")
    elif change == "deleted":
        swept.git("branch", "-D", "a0-merged")
    elif change == "moved":
        swept.git("update-ref", "refs/heads/a0-open", "main")
    elif change == "config":
        (swept.path / ".branchkeeper.yaml").write_text(
            "branches:\n  dormancy:\n    advisory_days: 2\n")
    else:
        swept.git("worktree", "add", "-q", str(tmp_path / "wt"), "a0-squash")
    _same_as_cold(capsys, swept, hit=False)
    _same_as_cold(capsys, swept, hit=True)


def test_a_dirty_worktree_is_read_afresh_on_a_hit(
        swept: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The dirty files, and the ``cleanup`` suggestion of the proven branch checked out there
    (it reads the worktree's record), are never part of the stored result."""
    swept.git("worktree", "add", "-q", str(tmp_path / "wt"), "a0-merged")
    wt = GitRepo(tmp_path / "wt")
    _same_as_cold(capsys, swept, hit=False)
    before = json.loads(_sweep(capsys, swept, "--json")[0])
    (wt.path / "a0-m.txt").write_text("changed\n")
    (wt.path / "new.txt").write_text("new\n")
    _same_as_cold(capsys, swept, hit=True)
    after = json.loads(_sweep(capsys, swept, "--json")[0])
    cleanup = {b["name"]: b["cleanup"] for b in after["branches"]}
    assert cleanup["a0-merged"] != {b["name"]: b["cleanup"]
                                    for b in before["branches"]}["a0-merged"]
    assert cleanup["a0-merged"]["command"] is None
    assert after["summary"]["lost_work_risk"] == before["summary"]["lost_work_risk"] + 1


def test_time_moves_ages_on_a_hit_and_a_dormancy_threshold_computes_again(
        swept: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 3600))  # an hour: no threshold crossed
    _same_as_cold(capsys, swept, hit=True)
    ages = {b["name"]: b["age_days"] for b in json.loads(_sweep(capsys, swept, "--json")[0])
            ["branches"]}
    assert ages["local-only"] == 3.04
    # local-only (3 days old) reaches the advisory stage (7 days): it turns dormant
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 4 * 86400 + 60))
    _same_as_cold(capsys, swept, hit=False)
    states = {b["name"]: b["state"] for b in json.loads(_sweep(capsys, swept, "--json")[0])
              ["branches"]}
    assert states["local-only"] == "dormant"
    _same_as_cold(capsys, swept, hit=True)
    # a clock set back before the stored computation never takes it
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW))
    _same_as_cold(capsys, swept, hit=False)


def test_a_dormancy_threshold_crossed_on_a_hit_restages_as_a_cold_sweep_would(
        swept: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """A live branch turning dormant, a dormant one reaching the next stage and a superseded
    one getting its stage are restaged by the read (the classifier's own rule), with the
    dispositions' kept reason: still a hit, byte for byte what a cold sweep prints."""
    def states() -> dict[str, tuple[str, str | None]]:
        out = json.loads(_sweep(capsys, swept, "--json")[0])
        return {b["name"]: (b["state"], b["stage"]) for b in out["branches"]
                if b["name"] in ("a0-open", "a0-b1", "local-only")}

    # local-only's tip (3 days) reaches the advisory days: its creation date is read, computed
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 4 * 86400 + 60))
    _same_as_cold(capsys, swept, hit=False)
    assert states() == {"a0-b1": ("superseded", None), "a0-open": ("live", None),
                        "local-only": ("dormant", "advisory")}
    # a0-open and a0-b1, created at NOW, reach the advisory stage
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 7 * 86400 + 60))
    _same_as_cold(capsys, swept, hit=True)
    assert states() == {"a0-b1": ("superseded", "advisory"), "a0-open": ("dormant", "advisory"),
                        "local-only": ("dormant", "advisory")}
    # local-only (3 days before NOW) reaches the noisy stage
    monkeypatch.setenv("BRANCHKEEPER_NOW", str(NOW + 11 * 86400 + 60))
    _same_as_cold(capsys, swept, hit=True)
    assert states() == {"a0-b1": ("superseded", "advisory"), "a0-open": ("dormant", "advisory"),
                        "local-only": ("dormant", "noisy")}


def test_c13_a_missing_object_is_stored_and_its_return_computes_again(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = c13(w)
    blob = w.path / ".git" / "objects" / ids["blob"][:2] / ids["blob"][2:]
    saved = blob.read_bytes()
    _delete_loose(w, ids["blob"])
    _same_as_cold(capsys, w, hit=False)
    _same_as_cold(capsys, w, hit=True)  # one cat-file says it is still missing
    states = {b["name"]: b["state"] for b in json.loads(_sweep(capsys, w, "--json")[0])
              ["branches"]}
    assert states["needs-blob"] == "unknown"
    blob.write_bytes(saved)
    _same_as_cold(capsys, w, hit=False)
    states = {b["name"]: b["state"] for b in json.loads(_sweep(capsys, w, "--json")[0])
              ["branches"]}
    assert states["needs-blob"] != "unknown"


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "version", "empty"])
def test_a_damaged_or_foreign_result_is_computed_again(
        swept: GitRepo, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    path = swept.path / RESULT
    blob = path.read_bytes()
    head, _, body = blob.partition(b"\n")
    if damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        path.write_bytes(head + b"\n" + body[:-9] + bytes(b ^ 0x01 for b in body[-9:]))
    elif damage == "garbage":
        path.write_bytes(b"\x00\xffnot json at all")
    elif damage == "version":
        data = json.loads(head)
        path.write_bytes(json.dumps({**data, "version": 99}).encode() + b"\n" + body)
    else:
        path.write_bytes(b"")
    _same_as_cold(capsys, swept, hit=False)
    assert path.read_bytes() != b""  # stored again
    _same_as_cold(capsys, swept, hit=True)


def test_a_well_formed_result_with_a_wrong_body_is_no_result(
        swept: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """A body of the right digest but not of the shape written (a file made by hand)."""
    from branchkeeper.state.sweep_result import load_result, save_result

    common = swept.path / ".git"
    head = json.loads((swept.path / RESULT).read_bytes().partition(b"\n")[0])
    loaded = load_result(common, head["key"])
    assert loaded is not None
    header, body = loaded
    body["records"][0] = body["records"][0][:3]
    save_result(common, head["key"], {k: v for k, v in header.items()
                                      if k not in ("version", "key", "digest")}, body)
    _same_as_cold(capsys, swept, hit=False)


def test_commands_that_delete_never_take_the_stored_result(
        swept: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, swept, "sweep", "--clean", "--dry-run", "--json", "--stats")
    assert code == 0, err
    assert "stored result" not in err


def test_every_field_of_a_record_round_trips() -> None:
    import json as _json

    from branchkeeper.git.types import Oid
    from branchkeeper.model.record_codec import Decoder, Encoder
    from branchkeeper.model.records import (
        BranchAction,
        BranchRecord,
        BranchState,
        CommandVerdict,
        CommandVerdicts,
        Containment,
        MissingChange,
        Park,
        Proof,
        ProofKind,
        Refusal,
        RefusalKind,
        Stage,
        Supersession,
    )

    a, b = Oid("a" * 40), Oid("b" * 40)
    refusal = Refusal(RefusalKind.CHECKED_OUT, "checked out in /w")
    verdict = CommandVerdict(BranchAction.REFUSED, "r", True, refusal, "/w", "otherwise")
    full = BranchRecord(
        "n\udcff", a, b, BranchState.SUPERSEDED, "why", Proof(ProofKind.SQUASH_MERGED, "ref", b,
                                                              "merge"),
        Containment.NOWHERE, "origin/x", Stage.BLOCK, "refs/remotes/origin/n", True, "/w", 1, 2,
        3, 4, 5.25, 6, 7, Park("wait", "me", 8), "12", ("m", "o"),
        Supersession(a, "ref", None, (MissingChange("p", None, None), MissingChange("q", 1, 2)),
                     True, ("h",)),
        CommandVerdicts(verdict, verdict, verdict, verdict), refusal)
    bare = BranchRecord("plain", None, None, BranchState.LIVE)
    encoder = Encoder()
    rows = [encoder.row(r) for r in (full, bare, full)]
    text = _json.dumps({"rows": rows, "tables": encoder.tables()})
    data = _json.loads(text)
    decoder = Decoder(data["tables"])
    back = [decoder.record(r) for r in data["rows"]]
    assert back == [full, bare, full]
    assert type(back[0].local_tip) is Oid and back[0].proof is back[2].proof  # built once
    assert len(encoder.tables()["CommandVerdict"]) == 1
    with pytest.raises(ValueError, match="wrong shape"):
        decoder.record(data["rows"][0][:-1])


def test_c13_a_missing_tip_commit_is_stored_and_its_return_computes_again(
        swept: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    swept.switch("gone", create=True, start="main")
    tip = swept.commit("g", files={"g.txt": "g\n"}, days_ago=2)
    swept.switch("main")
    loose = swept.path / ".git" / "objects" / tip[:2] / tip[2:]
    saved = loose.read_bytes()
    _delete_loose(swept, tip)
    _same_as_cold(capsys, swept, hit=False)
    _same_as_cold(capsys, swept, hit=True)
    states = {b["name"]: b["state"] for b in json.loads(_sweep(capsys, swept, "--json")[0])
              ["branches"]}
    assert states["gone"] == "unknown"
    loose.write_bytes(saved)
    _same_as_cold(capsys, swept, hit=False)
