"""The ignored-content classifier: glob semantics, polarity, the agent-state inversion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from branchkeeper.analysis.ignored import (
    NOT_REGENERABLE,
    Blocked,
    IgnoredVerdict,
    classify_ignored,
)

PROTECTED = (".env*", "*.local")
REGEN = (".venv/", "node_modules/", "__pycache__/", "*.pyc", "build/")
AGENT_DISPOSABLE = ("telemetry/", "cache/", "*.log", "context.md")


def classify(paths: Sequence[str], *, strict: bool = False, protected: Sequence[str] = PROTECTED,
             regenerable: Sequence[str] = REGEN, disposable: Sequence[str] = (),
             listings: Mapping[str, Sequence[str] | None] | None = None) -> IgnoredVerdict:
    return classify_ignored(paths, protected=protected, regenerable=regenerable,
                            disposable=disposable, strict=strict, agent_state_dir=".agentic",
                            agent_state_disposable=AGENT_DISPOSABLE, listings=listings)


def test_env_blocks_pycache_does_not() -> None:
    v = classify([".env", "__pycache__/", "src/__pycache__/", "a/b/.env.local", "x.pyc"])
    assert v == IgnoredVerdict(
        protected=(Blocked(".env", "matches protected glob '.env*'"),
                   Blocked("a/b/.env.local", "matches protected glob '.env*'")),
        disposable=("__pycache__/", "src/__pycache__/", "x.pyc"),
        needs_listing=())
    assert not v.ok


def test_basename_glob_matches_any_depth_and_directories() -> None:
    v = classify(["deep/er/settings.local", ".envs/", "conf/.envrc"])
    assert [b.path for b in v.protected] == ["deep/er/settings.local", ".envs/", "conf/.envrc"]


def test_trailing_slash_matches_only_directories_and_everything_beneath() -> None:
    v = classify(["build", "build/", "a/build/x/y.o", "a/node_modules/"], strict=True)
    # a FILE named build is not the directory glob build/
    assert v.protected == (Blocked("build", NOT_REGENERABLE),)
    assert v.disposable == ("build/", "a/build/x/y.o", "a/node_modules/")


def test_inner_slash_is_anchored_at_root() -> None:
    v = classify(["docs/planning/a.md", "x/docs/planning/a.md", "docs/planning/"],
                 protected=("docs/planning/",), regenerable=())
    assert [b.path for b in v.protected] == ["docs/planning/a.md", "docs/planning/"]
    assert v.disposable == ("x/docs/planning/a.md",)


def test_double_star() -> None:
    v = classify(["docs/planning/q/r.md", "out/a/gen/x.txt", "out/gen/y.txt", "gen/z"],
                 protected=("docs/planning/**",), regenerable=("out/**/gen/",), strict=True)
    assert [b.path for b in v.protected] == ["docs/planning/q/r.md", "gen/z"]
    assert v.disposable == ("out/a/gen/x.txt", "out/gen/y.txt")


def test_protected_glob_keeps_a_path_at_any_depth() -> None:
    # node_modules/ is regenerable as a whole, but an .env inside it is still protected (issue
    # 11); an .envs directory holding a regenerable-looking file stays protected; the outermost
    # disposable match still takes what no protected glob names.
    v = classify(["node_modules/pkg/.env", ".envs/x.pyc", "node_modules/pkg/.x/y.pyc"])
    assert v.disposable == ("node_modules/pkg/.x/y.pyc",)
    assert v.protected == (Blocked("node_modules/pkg/.env", "matches protected glob '.env*'"),
                           Blocked(".envs/x.pyc", "matches protected glob '.env*'"))


def test_protected_beats_disposable_at_the_same_component() -> None:
    v = classify(["a.local"], regenerable=("*.local",))
    assert v.protected == (Blocked("a.local", "matches protected glob '*.local'"),)


def test_default_polarity_unknown_file_is_disposable() -> None:
    v = classify(["generated/adapter.json", "notes.txt"])
    assert v.ok and v.disposable == ("generated/adapter.json", "notes.txt")


def test_strict_polarity_unknown_file_is_protected_unless_listed() -> None:
    v = classify(["generated/adapter.json", "notes.txt", "x.pyc"], strict=True,
                 disposable=("generated/",))
    assert v.protected == (Blocked("notes.txt", NOT_REGENERABLE),)
    assert v.disposable == ("generated/adapter.json", "x.pyc")


def test_unknown_directory_needs_listing_and_blocks_until_listed() -> None:
    v = classify(["scratch/"])
    assert v.needs_listing == ("scratch/",) and not v.ok
    assert v.blocking == (Blocked("scratch/", "ignored directory not inspected"),)
    listed = classify(["scratch/"], listings={"scratch/": ["scratch/a.txt", "scratch/.env"]})
    assert listed.protected == (Blocked("scratch/.env", "matches protected glob '.env*'"),)
    assert listed.disposable == ("scratch/a.txt",)
    over = classify(["scratch/"], listings={"scratch/": None})
    assert over.protected == (
        Blocked("scratch/", "ignored directory too large, unreadable or holding a checkout"),)
    empty = classify(["scratch/"], listings={"scratch/": []})
    assert empty.ok and empty.disposable == ("scratch/",)


def test_agent_state_inverts_polarity() -> None:
    v = classify([".agentic/telemetry/", ".agentic/run.log", ".agentic/loop-state.json",
                  ".agentic/context.md", ".agentic/notes/plan.md", ".agentic/cache/.env"])
    assert v.protected == (
        Blocked(".agentic/loop-state.json", "agent state (.agentic/) not listed disposable"),
        Blocked(".agentic/notes/plan.md", "agent state (.agentic/) not listed disposable"),
        Blocked(".agentic/cache/.env", "matches protected glob '.env*'"),
    )
    assert v.disposable == (".agentic/telemetry/", ".agentic/run.log", ".agentic/context.md")


def test_agent_state_dir_entry_is_listed() -> None:
    v = classify([".agentic/"])
    assert v.needs_listing == (".agentic/",)
    listed = classify([".agentic/"], listings={".agentic/": [".agentic/telemetry/a.json",
                                                              ".agentic/events.jsonl"]})
    assert listed.disposable == (".agentic/telemetry/a.json",)
    assert [b.path for b in listed.protected] == [".agentic/events.jsonl"]


def test_agent_state_not_rescued_by_regenerable_or_strict_off() -> None:
    # *.pyc is regenerable elsewhere, but inside .agentic only the agent list counts.
    v = classify([".agentic/x.pyc", "x.pyc"])
    assert [b.path for b in v.protected] == [".agentic/x.pyc"]


@pytest.mark.parametrize("path", ["", "/", "./"])
def test_degenerate_paths_are_ignored(path: str) -> None:
    assert classify([path]) == IgnoredVerdict((), (), ())


def test_unicode_space_and_newline_paths() -> None:
    v = classify(["dïr with space/.env\nx", "ünï/b.local"])
    assert [b.path for b in v.protected] == ["dïr with space/.env\nx", "ünï/b.local"]


def test_the_default_rules_let_real_build_output_go_and_keep_notes(tmp_path: Path) -> None:
    """Issue 12, section 1: the default regenerable list is broad enough that a worktree holding
    the build output of common toolchains (github/gitignore's templates) passes, while a file a
    person wrote, a log, a secret and an editor's settings are kept (fail safe)."""
    from branchkeeper.analysis.ignored import read_ignored
    from branchkeeper.model.config import Config
    from tests.gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "r")
    output = [".venv/bin/python", "src/pkg/__pycache__/m.cpython-311.pyc", ".pytest_cache/v/x",
              ".mypy_cache/3.11/m.json", ".ruff_cache/0.4/a", ".tox/py311/x", "dist/p-1.whl",
              "p.egg-info/PKG-INFO", ".coverage", "htmlcov/index.html", "web/node_modules/a/i.js",
              "web/.next/cache/x", "web/.turbo/log", ".yarn/install-state.gz", "web/app.tsbuildinfo",
              "target/debug/app", "src/lib.rs.bk", "cmd/app.test", "cover.coverprofile",
              ".gradle/8.5/x", "app/build/classes/A.class", ".idea/caches/c.ser", ".cache/x",
              ".terraform/providers/p", "assets/.DS_Store", "._photo.jpg"]
    kept = [".env", "notes/result.txt", "run.log", "out/result.csv", ".idea/workspace.xml"]
    for rel in (*output, *kept):
        (repo.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / rel).write_text("x\n")
    # every top-level name ignored: wholly ignored directories are listed, their files judged
    tops = sorted({rel.split("/")[0] for rel in (*output, *kept)})
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("\n".join(tops) + "\n")
    verdict = read_ignored(repo.path, Config())
    assert sorted(b.path for b in verdict.blocking) == sorted(kept)
    assert verdict.needs_listing == ()
