"""Compare-and-swap deletion and restore-creation in one update-ref transaction."""

from __future__ import annotations

import stat
from pathlib import Path

from branchkeeper.actions.refupdate import RefOutcome, RefResult, create_refs, delete_refs_cas
from branchkeeper.git.run import processes_started
from branchkeeper.git.types import Oid
from tests.gitrepo import GitRepo


def _repo(tmp_path: Path) -> tuple[GitRepo, Oid, Oid]:
    repo = GitRepo.init(tmp_path / "repo")
    c1 = Oid(repo.commit("c1", files={"a": "1\n"}, days_ago=3))
    c2 = Oid(repo.commit("c2", files={"a": "2\n"}, days_ago=2))
    return repo, c1, c2


def test_raced_ref_is_kept_and_the_others_deleted(tmp_path: Path) -> None:
    repo, c1, c2 = _repo(tmp_path)
    for name in ("a", "b", "c"):
        repo.branch(name, c1)
    expected = {f"refs/heads/{n}": c1 for n in ("a", "b", "c")}
    # A commit lands on b after the proof was made.
    repo.git("update-ref", "refs/heads/b", c2)
    before = processes_started()
    results = delete_refs_cas(repo.path, expected)
    assert processes_started() - before == 2  # one for-each-ref, one transaction
    assert results == {
        "refs/heads/a": RefResult("refs/heads/a", RefOutcome.DELETED, c1),
        "refs/heads/b": RefResult("refs/heads/b", RefOutcome.RACED, c1, c2,
                                  f"moved to {c2}; kept"),
        "refs/heads/c": RefResult("refs/heads/c", RefOutcome.DELETED, c1),
    }
    assert repo.git("for-each-ref", "--format=%(refname) %(objectname)") == (
        f"refs/heads/b {c2}\nrefs/heads/main {c2}"
    )


def test_gone_ref_and_symbolic_ref(tmp_path: Path) -> None:
    repo, c1, c2 = _repo(tmp_path)
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
    results = delete_refs_cas(repo.path, {"refs/heads/alias": c2, "refs/heads/gone": c1})
    assert results == {
        "refs/heads/alias": RefResult("refs/heads/alias", RefOutcome.FAILED, c2, c2,
                                      "symbolic ref to refs/heads/main; not deleted"),
        "refs/heads/gone": RefResult("refs/heads/gone", RefOutcome.RACED, c1, None,
                                     "no longer exists; kept"),
    }
    assert repo.rev("refs/heads/main") == c2
    assert repo.git("symbolic-ref", "refs/heads/alias") == "refs/heads/main"


def _hook(repo: GitRepo, body: str) -> None:
    hooks = repo.path / "hooks"
    hooks.mkdir(exist_ok=True)
    script = hooks / "reference-transaction"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    repo.git("config", "core.hooksPath", str(hooks))


def test_transaction_refused_once_is_retried(tmp_path: Path) -> None:
    repo, c1, _c2 = _repo(tmp_path)
    repo.branch("a", c1)
    marker = tmp_path / "refused-once"
    _hook(repo, f'[ "$1" = prepared ] && [ ! -e "{marker}" ] && touch "{marker}" && exit 1\n'
                "exit 0\n")
    results = delete_refs_cas(repo.path, {"refs/heads/a": c1})
    assert results == {"refs/heads/a": RefResult("refs/heads/a", RefOutcome.DELETED, c1)}
    assert not repo.has_ref("refs/heads/a")


def test_transaction_always_refused_fails_every_ref(tmp_path: Path) -> None:
    repo, c1, _c2 = _repo(tmp_path)
    repo.branch("a", c1)
    repo.branch("b", c1)
    _hook(repo, '[ "$1" = prepared ] && echo "no deletes today" >&2 && exit 1\nexit 0\n')
    results = delete_refs_cas(repo.path, {"refs/heads/a": c1, "refs/heads/b": c1})
    assert {r.outcome for r in results.values()} == {RefOutcome.FAILED}
    assert "no deletes today" in results["refs/heads/a"].reason
    assert repo.has_ref("refs/heads/a") and repo.has_ref("refs/heads/b")


def test_create_refs_never_overwrites(tmp_path: Path) -> None:
    repo, c1, c2 = _repo(tmp_path)
    repo.branch("taken", c2)
    repo.branch("same", c1)
    missing = Oid("d" * 40)
    results = create_refs(repo.path, {
        "refs/heads/new": c1, "refs/heads/taken": c1, "refs/heads/same": c1,
        "refs/heads/lost": missing,
    }, must_not_exist=True)
    assert results == {
        "refs/heads/new": RefResult("refs/heads/new", RefOutcome.CREATED, c1),
        "refs/heads/taken": RefResult("refs/heads/taken", RefOutcome.CONFLICT, c1, c2,
                                      f"exists at {c2}"),
        "refs/heads/same": RefResult("refs/heads/same", RefOutcome.PRESENT, c1),
        "refs/heads/lost": RefResult("refs/heads/lost", RefOutcome.FAILED, missing,
                                     reason="object missing"),
    }
    assert repo.rev("refs/heads/new") == c1
    assert repo.rev("refs/heads/taken") == c2
    assert not repo.has_ref("refs/heads/lost")
