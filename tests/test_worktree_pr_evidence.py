"""PR evidence through a stand-in ``gh`` executable first on PATH (recorded JSON shapes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from branchkeeper.analysis.pr_evidence import GhProvider, NoProvider, PrAnswer, PrState
from branchkeeper.git.types import Oid

TIP = Oid("a" * 40)
OTHER = "b" * 40


def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, auth_rc: int = 0,
            list_body: str = "[]", list_rc: int = 0, sleep: float = 0) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (tmp_path / "pr.json").write_text(list_body)
    script = bindir / "gh"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = auth ]; then echo "logged in?" >&2; exit {auth_rc}; fi\n'
        f'if [ "$1" = pr ]; then sleep {sleep}; echo "$@" > "{tmp_path}/argv"; '
        f'cat "{tmp_path}/pr.json"; exit {list_rc}; fi\n'
        "exit 9\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_open_pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = fake_gh(tmp_path, monkeypatch, list_body=(
        f'[{{"number": 7, "state": "OPEN", "headRefOid": "{TIP}", "mergedAt": null}},'
        f' {{"number": 3, "state": "MERGED", "headRefOid": "{OTHER}", "mergedAt": "2024"}}]'))
    gh = GhProvider(tmp_path)
    assert gh.available() == (True, "gh logged in")
    assert gh.answer("feat/x", TIP) == PrAnswer(PrState.OPEN, 7, False, "PR #7 is open")
    assert gh.state("feat/x", TIP) is PrState.OPEN
    assert (where / "argv").read_text() == (
        "pr list --head feat/x --state all --json number,state,headRefOid,mergedAt --limit 20\n")


def test_merged_pr_with_stale_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, list_body=(
        f'[{{"number": 12, "state": "MERGED", "headRefOid": "{OTHER}", '
        '"mergedAt": "2024-01-01T00:00:00Z"}]'))
    assert GhProvider(tmp_path).answer("x", TIP) == PrAnswer(
        PrState.MERGED, 12, True,
        f"PR #12 is merged (stale: its head {OTHER[:10]} is not the local tip {TIP[:10]})")


def test_closed_pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, list_body=(
        f'[{{"number": 4, "state": "CLOSED", "headRefOid": "{TIP}", "mergedAt": null}}]'))
    assert GhProvider(tmp_path).answer("x", TIP) == PrAnswer(PrState.CLOSED, 4, False,
                                                             "PR #4 is closed")


def test_no_pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, list_body="[]\n")
    assert GhProvider(tmp_path).answer("x", None) == PrAnswer(
        PrState.NONE, detail="no PR has this branch as its head")


def test_not_logged_in_is_degraded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, auth_rc=1)
    gh = GhProvider(tmp_path)
    assert gh.available() == (False, "gh is not logged in (degraded mode: no PR evidence)")
    assert gh.state("x", TIP) is PrState.ERROR


def test_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert GhProvider(tmp_path).available() == (
        False, "gh is not installed (degraded mode: no PR evidence)")


@pytest.mark.parametrize(("body", "detail"), [
    ("<html>rate limited</html>", "gh printed output that is not JSON"),
    ('{"number": 1}', "gh printed JSON that is not a list"),
    ('[{"state": "OPEN"}]', "gh printed a PR record of an unexpected shape"),
    ('[{"number": 1, "state": "DRAFTY"}]', "gh reported an unknown PR state 'DRAFTY'"),
])
def test_garbage_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str,
                        detail: str) -> None:
    fake_gh(tmp_path, monkeypatch, list_body=body)
    assert GhProvider(tmp_path).answer("x", TIP) == PrAnswer(PrState.ERROR, detail=detail)


def test_gh_failure_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, list_body="", list_rc=1)
    assert GhProvider(tmp_path).answer("x", TIP) == PrAnswer(
        PrState.ERROR, detail="gh pr list failed (exit 1)")


def test_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gh(tmp_path, monkeypatch, sleep=5)
    assert GhProvider(tmp_path, timeout=0.5).answer("x", TIP) == PrAnswer(
        PrState.ERROR, detail="gh pr list timed out after 0.5 s")


def test_no_provider() -> None:
    p = NoProvider("--no-gh given")
    assert p.available() == (False, "--no-gh given")
    assert p.state("x", None) is PrState.ERROR
