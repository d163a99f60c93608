"""Missing objects never blind the sweep (field case C13), a partial clone is never fetched from,
no history is too long (no window), the per-commit cache is compact and recomputed when broken,
and the git process count is flat in the number of branches on every path (issue 11,
sections 3, 4 and 6)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from branchkeeper.analysis.inventory import build_inventory
from branchkeeper.analysis.landing import MERGE_ROUNDS
from branchkeeper.git.repo import repo_facts
from branchkeeper.git.run import processes_started
from branchkeeper.model.config import Config
from branchkeeper.state.commit_cache import FILE_NAME, CommitCache
from tests.cleanuputil import cli_json
from tests.gitrepo import NOW, GitRepo

BODY = "".join(f"line {i}\n" for i in range(1, 41))


def _edit(n: int, text: str) -> str:
    rows = BODY.splitlines(keepends=True)
    rows[n - 1] = text + "\n"
    return "".join(rows)


def c13(w: GitRepo) -> dict[str, str]:
    """A clone with a branch of each kind; ``needs-blob`` changes the shared file that main's
    own commits change too, so judging it needs its blob (its patch-id), which is deleted."""
    w.commit("shared", files={"shared.txt": BODY}, days_ago=30)
    w.git("push", "-q", "origin", "main")
    ids: dict[str, str] = {}
    w.switch("squashed", create=True, days_ago=29)
    w.commit("sq", files={"s.txt": "s\n"}, days_ago=29)
    w.switch("rebased", create=True, start="main", days_ago=28)
    w.commit("rb", files={"r.txt": "r\n"}, days_ago=28)
    w.switch("live", create=True, start="main", days_ago=2)
    w.commit("lv", files={"l.txt": "l\n"}, days_ago=2)
    w.switch("needs-blob", create=True, start="main", days_ago=3)
    ids["needs-blob"] = w.commit("nb", files={"shared.txt": _edit(30, "branch edit")}, days_ago=3)
    w.switch("main")
    w.squash_merge("squashed", days_ago=27)
    w.rebase_merge("rebased", days_ago=26)
    w.commit("main edit", files={"shared.txt": _edit(5, "main edit")}, days_ago=25)
    w.git("push", "-q", "origin", "main")
    ids["blob"] = w.rev("needs-blob:shared.txt")
    return ids


def _delete_loose(repo: GitRepo, oid: str) -> None:
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def _states(repo: GitRepo, **kw: object) -> dict[str, tuple[str, str]]:
    inv = build_inventory(repo_facts(repo.path), Config(), now=NOW, **kw)  # type: ignore[arg-type]
    return {r.name: (r.state.value, r.reason) for r in inv.records}


def test_c13_one_missing_blob_makes_only_its_branch_unknown(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    _, w = remote_and_clone
    ids = c13(w)
    facts = repo_facts(w.path)
    before = processes_started()
    build_inventory(facts, Config(), now=NOW, use_cache=False)
    whole = processes_started() - before
    _delete_loose(w, ids["blob"])
    before = processes_started()
    inv = build_inventory(facts, Config(), now=NOW, use_cache=False)
    damaged = processes_started() - before
    states = {r.name: r.state.value for r in inv.records}
    assert states == {"live": "live", "main": "default", "needs-blob": "unknown",
                      "rebased": "patch_equivalent", "squashed": "patch_equivalent"}
    assert inv.by_name()["needs-blob"].reason == f"object missing ({ids['blob']})"
    assert inv.notes == [f"1 branch(es) not judged: 1 object(s) missing from the repository "
                         f"({ids['blob']}); run: git fsck"]
    # a probe and a resumed stream per failing stream; the healthy run's merge check, which
    # the unknown branch skips, is one pre-screen stream (its only candidate screened out)
    assert damaged - whole <= 7
    code, doc = cli_json(capsys, w, "prune", "--no-fetch", "--dry-run")
    assert code == 0
    item = next(b for b in doc["branches"] if b["name"] == "needs-blob")
    assert (item["action"], item["reason"]) == ("SKIP_UNPROVEN",
                                                f"unknown: object missing ({ids['blob']})")
    # cached as unknown, and judged again once the object is back
    code, _ = cli_json(capsys, w, "sweep")
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=w.path, check=True,
                          input=_edit(30, "branch edit").encode(), capture_output=True)
    assert blob.stdout.decode().strip() == ids["blob"]
    assert _states(w)["needs-blob"] == ("live", "")


def test_c13_a_missing_tip_commit_makes_only_its_branch_unknown_in_every_command(
        remote_and_clone: tuple[GitRepo, GitRepo], capsys: pytest.CaptureFixture[str]) -> None:
    """A branch whose tip commit object is gone: ``for-each-ref`` dies on any format that reads
    objects, so the listing falls back to one that reads none; that branch alone is unknown,
    naming its object, and every command still answers."""
    _, w = remote_and_clone
    ids = c13(w)
    w.switch("gone", create=True, start="main")
    tip = w.commit("g", files={"g.txt": "g\n"}, days_ago=1)
    w.switch("main")
    _delete_loose(w, tip)
    states = _states(w, use_cache=False)
    assert states["gone"] == ("unknown", f"object missing ({tip})")
    assert {n: s for n, (s, _) in states.items()} == {
        "gone": "unknown", "live": "live", "main": "default", "needs-blob": "live",
        "rebased": "patch_equivalent", "squashed": "patch_equivalent"}
    assert ids["blob"]
    for argv, refused in ((("sweep",), 0), (("sweep", "--clean", "--dry-run"), 0),
                          (("prune", "--no-fetch", "--dry-run"), 0),
                          (("delete", "--dry-run", "gone"), 5)):
        code, doc = cli_json(capsys, w, *argv)
        assert code == refused, argv
        item = next(b for b in doc["branches"] if b["name"] == "gone")
        reason = item.get("reason") or item.get("detail")
        assert f"object missing ({tip})" in str(reason), (argv, item)


def partial_clone(tmp_path: Path) -> tuple[GitRepo, str]:
    """``clone --filter=blob:none --no-local`` of a bare repository that allows filters, with
    local branches for a merged, a squash-merged and an unmerged branch whose blobs the clone
    never fetched (the one changing main's file needs them to be judged)."""
    bare = GitRepo.init_bare(tmp_path / "src.git")
    bare.git("config", "uploadpack.allowFilter", "true")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("shared", files={"shared.txt": BODY}, days_ago=30)
    seed.switch("done", create=True)
    seed.commit("d", files={"d.txt": "d\n"}, days_ago=29)
    seed.switch("open", create=True, start="main")
    seed.commit("o", files={"shared.txt": _edit(30, "open edit")}, days_ago=3)
    seed.switch("main")
    seed.merge("done", days_ago=28)
    seed.commit("main edit", files={"shared.txt": _edit(5, "main edit")}, days_ago=27)
    seed.git("push", "-q", str(bare.path), "main", "done", "open")
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-local",
                    f"file://{bare.path}", str(tmp_path / "clone")], check=True)
    clone = GitRepo(tmp_path / "clone")
    for name in ("done", "open"):
        clone.git("branch", "-q", name, f"origin/{name}")
    return clone, seed.rev("open:shared.txt")


def _missing(repo: GitRepo) -> set[str]:
    out = subprocess.run(["git", "rev-list", "--objects", "--missing=print", "--all"],
                         cwd=repo.path, capture_output=True, text=True, check=True).stdout
    return {line[1:] for line in out.split() if line.startswith("?")}


def test_c13_partial_clone_is_judged_offline(tmp_path: Path) -> None:
    clone, blob = partial_clone(tmp_path)
    missing = _missing(clone)
    assert blob in missing
    inv = build_inventory(repo_facts(clone.path), Config(), now=NOW)
    states = {r.name: (r.state.value, r.reason) for r in inv.records}
    lacking = states["open"][1].removeprefix("object missing (").removesuffix(")")
    assert lacking in missing  # the first blob its diff needs (either side of it)
    assert states == {"done": ("merged", "merged into origin/main: every commit is on it"),
                      "main": ("default", ""),
                      "open": ("unknown", f"object missing ({lacking})")}
    assert inv.notes == ["partial clone (promisor remote origin): 1 branch(es) not judged: "
                         "objects they need are not in this clone, and branchkeeper never "
                         "fetches them"]
    assert _missing(clone) == missing  # nothing was fetched


def test_c13_a_superseded_branch_whose_lines_cannot_be_read_is_unknown(tmp_path: Path) -> None:
    """In a partial clone ``sup1`` adds a file whose blob the clone never fetched; ``sup2``,
    built on it, drops that file and is squash-merged. Merging ``sup1`` into the landing commit
    is possible without the blob, counting what did not land is not: ``sup1`` is ``unknown:
    object missing``, never "superseded: 0 changed line(s)", and nothing is fetched."""
    bare = GitRepo.init_bare(tmp_path / "src.git")
    bare.git("config", "uploadpack.allowFilter", "true")
    seed = GitRepo.init(tmp_path / "seed")
    seed.commit("base", files={"a.txt": "base\n"}, days_ago=5)
    seed.switch("sup1", create=True)
    seed.commit("sup1", files={"sup.txt": "line1\n"}, days_ago=4)
    seed.switch("sup2", create=True)
    seed.git("rm", "-q", "sup.txt")
    seed.commit("sup2", files={"sup2.txt": "other\n"}, days_ago=3)
    seed.switch("main")
    landed = seed.squash_merge("sup2", days_ago=2)
    blob = seed.rev("sup1:sup.txt")
    seed.git("push", "-q", str(bare.path), "main", "sup1", "sup2")
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-local",
                    f"file://{bare.path}", str(tmp_path / "clone")], check=True)
    clone = GitRepo(tmp_path / "clone")
    for name in ("sup1", "sup2"):
        clone.git("branch", "-q", name, f"origin/{name}")
    missing = _missing(clone)
    assert blob in missing
    states = _states(clone)
    assert states["sup1"] == ("unknown", f"object missing ({blob})")
    assert states["sup2"] == ("patch_equivalent",
                              f"squash-merged into origin/main as {landed[:10]}")
    assert _missing(clone) == missing  # nothing was fetched


def _long_history(tmp_path: Path, main_commits: int) -> GitRepo:
    """A repository whose default branch has ``main_commits`` commits (one ``fast-import``),
    a branch squash-merged and one rebase-merged near its root, so that more than 10,000 base
    commits came after them, and an unmerged one forked just as early."""
    repo = GitRepo.init(tmp_path / "long")
    lines = ["commit refs/heads/main", "mark :1", "committer A <a@x> 1500000000 +0000",
             "data 4", "root", "M 100644 inline base.txt", "data 2", "0", ""]
    mark = 1
    when = 1500000000

    def commit(ref: str, parent: int, files: dict[str, str], msg: str) -> int:
        nonlocal mark, when
        mark += 1
        when += 60
        out = [f"commit {ref}", f"mark :{mark}", f"committer A <a@x> {when} +0000",
               f"data {len(msg)}", msg, f"from :{parent}"]
        for path, text in files.items():
            out += [f"M 100644 inline {path}", f"data {len(text)}", text]
        lines.extend([*out, ""])
        return mark

    tip = 1
    for i in range(50):
        tip = commit("refs/heads/main", tip, {"base.txt": f"{i}\n"}, f"m{i}")
    sq = commit("refs/heads/squashed", tip, {"sq.txt": "a\n"}, "sq1")
    sq = commit("refs/heads/squashed", sq, {"sq.txt": "a\nb\n"}, "sq2")
    rb = commit("refs/heads/rebased", tip, {"rb.txt": "r\n"}, "rb1")
    commit("refs/heads/unmerged", tip, {"un.txt": "u\n"}, "un1")
    tip = commit("refs/heads/main", tip, {"sq.txt": "a\nb\n"}, "squash of squashed")
    tip = commit("refs/heads/main", tip, {"rb.txt": "r\n"}, "rb1")
    for i in range(main_commits - 53):
        tip = commit("refs/heads/main", tip, {"base.txt": f"x{i}\n"}, f"n{i}")
    del rb, sq
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo.path, check=True,
                   input=("\n".join(lines) + "\n").encode())
    repo.git("reset", "-q", "--hard", "main")
    return repo


def test_no_window_every_branch_judged_on_a_long_history(tmp_path: Path) -> None:
    repo = _long_history(tmp_path, 10_300)
    assert int(repo.git("rev-list", "--count", "main")) == 10_300
    facts = repo_facts(repo.path)
    cold = build_inventory(facts, Config(), now=NOW)
    assert {r.name: (r.state.value, r.proof.kind.value if r.proof else None)
            for r in cold.records} == {
        "main": ("default", None), "rebased": ("patch_equivalent", "patch_equivalent"),
        "squashed": ("patch_equivalent", "squash_merged"), "unmerged": ("dormant", None)}
    cache = repo.path / ".git" / "branchkeeper" / FILE_NAME
    size = cache.stat().st_size
    assert size < 10_300 * 40  # about 28 bytes per commit: a 100,000-commit base is ~3 MB
    loaded = CommitCache.load(repo.path / ".git", pid_mode="verbatim")
    assert len(loaded.paths) >= 10_250
    # the verdicts are cached: a second sweep reads refs and the caches, judges nothing again
    before = processes_started()
    warm = build_inventory(facts, Config(), now=NOW)
    assert processes_started() - before <= 5
    assert [r.state for r in warm.records] == [r.state for r in cold.records]
    # without the verdicts, the per-commit facts still need no diff of the long history: the
    # commit cache is read, not added to (so not rewritten)
    (repo.path / ".git" / "branchkeeper" / "cache.json").unlink()
    stamp = cache.stat().st_mtime_ns, cache.stat().st_ino
    again = build_inventory(facts, Config(), now=NOW)
    assert [r.state for r in again.records] == [r.state for r in cold.records]
    assert (cache.stat().st_mtime_ns, cache.stat().st_ino) == stamp


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "other-version", "empty"])
def test_broken_commit_cache_is_recomputed(tmp_path: Path, damage: str) -> None:
    repo = _long_history(tmp_path, 300)
    facts = repo_facts(repo.path)
    first = {r.name: r.state for r in build_inventory(facts, Config(), now=NOW).records}
    cache = repo.path / ".git" / "branchkeeper" / FILE_NAME
    blob = cache.read_bytes()
    broken = {"corrupt": b"\xff" * len(blob), "truncated": blob[: len(blob) // 2],
              "other-version": blob[:4] + b"\x09\x00" + blob[6:], "empty": b""}[damage]
    cache.write_bytes(broken)
    (repo.path / ".git" / "branchkeeper" / "cache.json").unlink()
    assert CommitCache.load(repo.path / ".git", pid_mode="verbatim").paths == {}
    again = {r.name: r.state for r in build_inventory(facts, Config(), now=NOW).records}
    assert again == first
    assert CommitCache.load(repo.path / ".git", pid_mode="verbatim").paths  # rewritten


def test_commit_cache_round_trip_and_pid_mode(tmp_path: Path) -> None:
    common = tmp_path / "common"
    (common / "branchkeeper").mkdir(parents=True)
    cache = CommitCache.load(common, pid_mode="verbatim")
    a, b = "a" * 40, "b" * 40
    cache.put_paths(a, 12345)
    cache.put_paths(b, 0)
    cache.put_pid(a, "c" * 40)
    cache.put_pid(b, "")
    cache.save()
    back = CommitCache.load(common, pid_mode="verbatim")
    assert (back.paths, back.pids) == ({a: 12345, b: 0}, {a: "c" * 40, b: ""})
    other = CommitCache.load(common, pid_mode="stable")
    assert (other.paths, other.pids) == ({a: 12345, b: 0}, {})
    leftovers = [p.name for p in (common / "branchkeeper").iterdir() if p.name != FILE_NAME]
    assert leftovers == []


def _kinds(w: GitRepo, n: int, tag: str) -> None:
    """``n`` branches of every kind: merged, squash-merged, squash-merged on a moved base (C12),
    rebase-merged, superseded (C11), unmerged."""
    twenty = [f"{k}" for k in range(20)]

    def text(edits: dict[int, str]) -> str:
        return "".join(edits.get(k, v) + "\n" for k, v in enumerate(twenty))

    for i in range(n):
        p = f"{tag}{i}"
        w.commit("file", files={f"{p}-v.txt": text({})}, days_ago=10)
        w.switch(f"{p}-merged", create=True, start="main")
        w.commit("m", files={f"{p}-m.txt": "m\n"}, days_ago=9)
        w.switch(f"{p}-squash", create=True, start="main")
        w.commit("s", files={f"{p}-s.txt": "s\n"}, days_ago=9)
        w.switch(f"{p}-moved", create=True, start="main")
        w.commit("v", files={f"{p}-v.txt": text({15: "fifteen"})}, days_ago=9)
        w.switch(f"{p}-rebase", create=True, start="main")
        w.commit("r", files={f"{p}-r.txt": "r\n"}, days_ago=9)
        w.switch(f"{p}-b1", create=True, start="main")
        w.commit("b1", files={f"{p}-c.txt": "keep\nL\n"}, days_ago=9)
        w.switch(f"{p}-b2", create=True)
        w.commit("b2", files={f"{p}-c.txt": "keep\n", f"{p}-d.txt": "d\n"}, days_ago=9)
        w.switch(f"{p}-open", create=True, start="main")
        w.commit("o", files={f"{p}-o.txt": "o\n"}, days_ago=9)
        w.switch("main")
        w.merge(f"{p}-merged", days_ago=8)
        w.squash_merge(f"{p}-squash", days_ago=8)
        w.commit("base moves", files={f"{p}-v.txt": text({13: "thirteen"})}, days_ago=8)
        w.squash_merge(f"{p}-moved", days_ago=8)
        w.rebase_merge(f"{p}-rebase", days_ago=8)
        w.squash_merge(f"{p}-b2", days_ago=8)


@pytest.mark.parametrize("argv", [["sweep", "--json"], ["sweep", "--clean", "--dry-run", "--json"],
                                  ["prune", "--no-fetch", "--dry-run", "--json"],
                                  ["delete", "--dry-run", "--json", "--", "a0-open"]])
def test_git_processes_flat_on_every_path(remote_and_clone: tuple[GitRepo, GitRepo],
                                         argv: list[str]) -> None:
    from branchkeeper.adapters.cli import main

    _, w = remote_and_clone
    _kinds(w, 1, "a")
    w.git("push", "-q", "origin", "main")

    def count() -> int:
        for sub in ("cache.json", FILE_NAME, "walk.bin"):
            path = w.path / ".git" / "branchkeeper" / sub
            if path.exists():
                path.unlink()
        before = processes_started()
        assert main(["-C", str(w.path), *argv]) in (0, 1, 5)
        return processes_started() - before

    small = count()
    _kinds(w, 3, "b")
    w.git("push", "-q", "origin", "main")
    large = count()
    # the merge check runs one more round only while some tip's likeliest candidates failed:
    # that depends on which candidate verifies (ties in date fall by commit id), never on
    # how many branches there are, and the rounds are few
    assert abs(large - small) <= len(MERGE_ROUNDS) - 1, (small, large)


def test_every_kind_is_judged(remote_and_clone: tuple[GitRepo, GitRepo]) -> None:
    _, w = remote_and_clone
    _kinds(w, 1, "k")
    w.git("push", "-q", "origin", "main")
    inv = build_inventory(repo_facts(w.path), Config(), now=NOW)
    got = {r.name: (r.state.value, r.proof.kind.value if r.proof else None,
                    r.proof.check if r.proof else None) for r in inv.records}
    assert got == {
        "k0-b1": ("superseded", None, None),
        "k0-b2": ("patch_equivalent", "squash_merged", "patch-id"),
        "k0-merged": ("merged", "ancestor", "ancestry"),
        "k0-moved": ("patch_equivalent", "squash_merged", "merge"),
        "k0-open": ("live", None, None),
        "k0-rebase": ("patch_equivalent", "patch_equivalent", "patch-id"),
        "k0-squash": ("patch_equivalent", "patch_equivalent", "patch-id"),
        "main": ("default", None, None),
    }
    assert os.environ.get("GIT_NO_LAZY_FETCH") is None  # set per call, never leaked
