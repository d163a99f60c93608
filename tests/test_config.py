"""The configuration model, loader and ``branchkeeper config`` (docs/configuration.md).

First document, section 1 (every key with its default) and section 4 "Presets" (standard 7/14/30,
strict 3/3/7, explicit keys win, effective values validated).
"""

from __future__ import annotations

import json
import re
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.adapters.commands.config import starter_text
from branchkeeper.errors import ConfigError
from branchkeeper.model.config import DEFAULT_CONFIG, Config, effective_values, leaf_keys
from branchkeeper.model.config_file import load_config
from tests.gitrepo import GitRepo

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

PRESET_KEYS = ("branches.dormancy.advisory_days", "branches.dormancy.noisy_days",
               "branches.dormancy.block_days")

#: `config show --json` on a repository without a file: every leaf, in order.
DEFAULT_VALUES: dict[str, object] = {
    "branches.default": "auto",
    "branches.remote": "origin",
    "branches.integration_lines": [],
    "branches.exempt": [],
    "branches.not_integration_lines": [],
    "branches.protected_names": ["main", "master", "develop", "trunk"],
    "branches.wip.cap": 10,
    "branches.wip.mode": "block",
    "branches.wip.count_remote": True,
    "branches.duplicates.mode": "warn",
    "branches.dormancy.preset": "standard",
    "branches.dormancy.advisory_days": 7,
    "branches.dormancy.noisy_days": 14,
    "branches.dormancy.block_days": 30,
    "branches.dormancy.mode": "block",
    "branches.stop_guard.mode": "block",
    "branches.stop_guard.unpushed_subagent": "block",
    "branches.stop_guard.include_default": False,
    "branches.stop_guard.max_blocks": 3,
    "branches.stop_guard.yield_file": "yield",
    "branches.stop_guard.yield_env": "BRANCHKEEPER_YIELD",
    "branches.stop_guard.noisy_interval_minutes": 60,
    "branches.force_removal.mode": "block",
    "branches.evacuation.mode": "block",
    "branches.git_hook.mode": "keep",
    "branches.git_hook.keep_days": 30,
    "branches.cleanup_after_merge.mode": "advise",
    "branches.cleanup_after_merge.regenerable": [
        ".venv/", "venv/", "__pycache__/", "*.py[cod]", "*$py.class", ".pytest_cache/",
        ".mypy_cache/", ".dmypy.json", "dmypy.json", ".ruff_cache/", ".pytype/", ".pyre/",
        ".hypothesis/", ".tox/", ".nox/", "__pypackages__/", ".pdm-build/", ".pybuilder/",
        "cython_debug/", "*.egg-info/", ".eggs/", "develop-eggs/", "sdist/", "build/", "dist/",
        "wheels/", ".coverage", ".coverage.*", "coverage.xml", "*.cover", "*.py,cover",
        "nosetests.xml", "htmlcov/", ".ipynb_checkpoints/", "node_modules/", "bower_components/",
        "jspm_packages/", ".npm/", ".pnpm-store/", ".yarn/cache/", ".yarn/unplugged/",
        ".yarn/install-state.gz", ".yarn-integrity", ".next/", ".nuxt/", ".svelte-kit/",
        ".angular/cache/", ".turbo/", ".parcel-cache/", ".vite/", ".docusaurus/", ".serverless/",
        ".fusebox/", ".vscode-test/", ".sass-cache/", ".eslintcache", ".stylelintcache",
        "*.tsbuildinfo", ".nyc_output/", "coverage/", "*.lcov", "target/", "*.rs.bk", "*.test",
        "*.coverprofile", ".gradle/", ".gradletasknamecache", ".kotlin/", "*.class",
        "cmake-build-*/", ".idea/caches/", ".terraform/", ".dart_tool/", ".zig-cache/",
        "zig-cache/", "zig-out/", "_build/", ".cache/", ".DS_Store", ".AppleDouble/", ".LSOverride",
        "._*", "__MACOSX/", "Thumbs.db",
    ],
    "branches.sweep.budget_ms": 3000,
    "branches.sweep.session_inline_max": 1000,
    "branches.sweep.behind_threshold": 50,
    "branches.sweep.squash_window": None,
    "branches.sweep.fetch_timeout_s": 60.0,
    "worktrees.ignored": "strict",
    "worktrees.protected_ignored": [".env*", "*.local"],
    "worktrees.disposable_ignored": [],
    "worktrees.activity_window_hours": 3.0,
    "worktrees.agent_state_dir": ".agentic",
    "worktrees.agent_state_disposable": [
        "telemetry/", "cache/", "*.log", "session-log/", "context.md", "context.d/", "wrap/",
        "hook-counters/",
    ],
    "worktrees.salvage": ["events.jsonl"],
    "worktrees.reap_from_prune": True,
    "worktrees.reap_min_age_hours": 3.0,
    "worktrees.nudge_threshold": 5,
    "session_start.prune": "suggest",
    "session_start.prune_due_minutes": 30,
}


def default_sources(preset: str = "standard") -> dict[str, str]:
    return {k: f"preset:{preset}" if k in PRESET_KEYS else "default" for k in DEFAULT_VALUES}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo.init(tmp_path / "repo")


def write(repo: GitRepo, text: str | bytes) -> Path:
    path = repo.path / ".branchkeeper.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def load_error(repo: GitRepo, text: str | bytes) -> str:
    write(repo, text)
    with pytest.raises(ConfigError) as info:
        load_config(repo.path)
    return str(info.value)


# -- defaults, presets, overrides --------------------------------------------------------------
def test_defaults_without_a_file(repo: GitRepo) -> None:
    for loaded in (load_config(None), load_config(repo.path)):
        assert loaded.config == DEFAULT_CONFIG == Config()
        assert loaded.path is None
        assert loaded.sources == default_sources()
        assert effective_values(loaded.config) == DEFAULT_VALUES
    assert leaf_keys() == list(DEFAULT_VALUES)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n", "branches:\nworktrees:\n",
                                  "branches:\n  wip:\n  dormancy:\n"])
def test_empty_file_and_empty_blocks_are_defaults(repo: GitRepo, text: str) -> None:
    path = write(repo, text)
    loaded = load_config(repo.path)
    assert (loaded.config, loaded.path, loaded.sources) == (DEFAULT_CONFIG, path,
                                                            default_sources())


@pytest.mark.parametrize(("preset", "days"), [("standard", (7, 14, 30)), ("strict", (3, 3, 7))])
def test_presets(repo: GitRepo, preset: str, days: tuple[int, int, int]) -> None:
    write(repo, f"branches:\n  dormancy:\n    preset: {preset}\n")
    loaded = load_config(repo.path)
    dormancy = loaded.config.branches.dormancy
    assert (dormancy.effective_advisory_days, dormancy.effective_noisy_days,
            dormancy.effective_block_days) == days
    assert (dormancy.advisory_days, dormancy.noisy_days, dormancy.block_days) == (None,) * 3
    expected = default_sources(preset)
    expected["branches.dormancy.preset"] = "file"
    assert loaded.sources == expected
    # strict changes nothing but the stage days
    assert loaded.config.branches.wip == DEFAULT_CONFIG.branches.wip


@pytest.mark.parametrize(("text", "days", "explicit"), [
    ("preset: strict\n    block_days: 10\n", (3, 3, 10), ["block_days"]),
    ("block_days: 45\n", (7, 14, 45), ["block_days"]),
    ("advisory_days: 1\n    noisy_days: 2\n    block_days: 3\n", (1, 2, 3),
     ["advisory_days", "noisy_days", "block_days"]),
    ("preset: strict\n    advisory_days: null\n", (3, 3, 7), []),
])
def test_explicit_stage_keys_win(repo: GitRepo, text: str, days: tuple[int, int, int],
                                 explicit: list[str]) -> None:
    write(repo, "branches:\n  dormancy:\n    " + text)
    loaded = load_config(repo.path)
    dormancy = loaded.config.branches.dormancy
    assert (dormancy.effective_advisory_days, dormancy.effective_noisy_days,
            dormancy.effective_block_days) == days
    for key in PRESET_KEYS:
        want = "file" if key.rsplit(".", 1)[1] in explicit else f"preset:{dormancy.preset}"
        assert loaded.sources[key] == want


def test_overrides_everywhere(repo: GitRepo) -> None:
    write(repo, """\
branches:
  default: trunk
  remote: upstream
  integration_lines: ["release/*", epic/*]
  exempt: [users/*]
  wip: {cap: 3, mode: off, count_remote: false}
  duplicates: {mode: off}
  stop_guard: {unpushed_subagent: advise, yield_file: tmp/yield, yield_env: MY_YIELD}
  force_removal: {mode: off}
  cleanup_after_merge: {mode: act, regenerable: [dist/]}
  sweep: {budget_ms: 500, fetch_timeout_s: 2.5}
worktrees:
  protected_ignored: []
  activity_window_hours: 0.5
  salvage: [events.jsonl, notes/decisions.md]
""")
    loaded = load_config(repo.path)
    b, w = loaded.config.branches, loaded.config.worktrees
    assert (b.default, b.remote, b.integration_lines, b.exempt) == (
        "trunk", "upstream", ["release/*", "epic/*"], ["users/*"])
    assert (b.wip.cap, b.wip.mode, b.wip.count_remote) == (3, "off", False)
    assert (b.duplicates.mode, b.force_removal.mode) == ("off", "off")
    assert (b.stop_guard.unpushed_subagent, b.stop_guard.yield_file,
            b.stop_guard.yield_env) == ("advise", "tmp/yield", "MY_YIELD")
    assert (b.cleanup_after_merge.mode, b.cleanup_after_merge.regenerable) == ("act", ["dist/"])
    assert (b.sweep.budget_ms, b.sweep.fetch_timeout_s) == (500, 2.5)
    assert (w.protected_ignored, w.activity_window_hours, w.salvage) == (
        [], 0.5, ["events.jsonl", "notes/decisions.md"])
    changed = {k for k, v in loaded.sources.items() if v == "file"}
    assert changed == {
        "branches.default", "branches.remote", "branches.integration_lines", "branches.exempt",
        "branches.wip.cap", "branches.wip.mode", "branches.wip.count_remote",
        "branches.duplicates.mode", "branches.stop_guard.unpushed_subagent",
        "branches.stop_guard.yield_file", "branches.stop_guard.yield_env",
        "branches.force_removal.mode", "branches.cleanup_after_merge.mode",
        "branches.cleanup_after_merge.regenerable", "branches.sweep.budget_ms",
        "branches.sweep.fetch_timeout_s", "worktrees.protected_ignored",
        "worktrees.activity_window_hours", "worktrees.salvage",
    }


def test_models_are_frozen() -> None:
    with pytest.raises(Exception, match="frozen"):
        DEFAULT_CONFIG.branches.wip.cap = 3


# -- validation errors -------------------------------------------------------------------------
ORDER = ("the effective stage days must satisfy advisory_days <= noisy_days < block_days, "
         "each >= 1; got ")


@pytest.mark.parametrize(("body", "got"), [
    ("preset: strict\n    block_days: 3\n",
     "advisory_days=3, noisy_days=3, block_days=3 (preset strict"),
    ("preset: strict\n    advisory_days: 5\n",
     "advisory_days=5, noisy_days=3, block_days=7 (preset strict"),
    ("block_days: 14\n", "advisory_days=7, noisy_days=14, block_days=14 (preset standard"),
    ("noisy_days: 40\n", "advisory_days=7, noisy_days=40, block_days=30 (preset standard"),
    ("advisory_days: 20\n", "advisory_days=20, noisy_days=14, block_days=30 (preset standard"),
])
def test_inverted_stages_rejected_under_both_presets(repo: GitRepo, body: str, got: str) -> None:
    message = load_error(repo, "branches:\n  dormancy:\n    " + body)
    assert message == (f"{repo.path / '.branchkeeper.yaml'}: line 2: branches.dormancy: "
                       f"{ORDER}{got}; a key left null takes the preset's value)")


@pytest.mark.parametrize(("text", "line", "where", "key", "allowed"), [
    ("branch: {}\n", 1, "top level", "branch", "branches, worktrees, session_start"),
    ("branches:\n  wipp: {}\n", 2, "branches", "wipp",
     "default, remote, integration_lines, exempt, not_integration_lines, protected_names, wip, "
     "duplicates, dormancy, "
     "stop_guard, force_removal, evacuation, git_hook, cleanup_after_merge, sweep"),
    ("branches:\n  wip:\n    cap: 3\n    capp: 3\n", 4, "branches.wip", "capp",
     "cap, mode, count_remote"),
    ("branches:\n  dormancy:\n    block: 9\n", 3, "branches.dormancy", "block",
     "preset, advisory_days, noisy_days, block_days, mode"),
    ("branches:\n  sweep: {budget: 9}\n", 2, "branches.sweep", "budget",
     "budget_ms, session_inline_max, behind_threshold, squash_window, fetch_timeout_s"),
    ("worktrees:\n  protected: []\n", 2, "worktrees", "protected",
     "ignored, protected_ignored, disposable_ignored, activity_window_hours, agent_state_dir, "
     "agent_state_disposable, salvage, reap_from_prune, reap_min_age_hours, nudge_threshold"),
])
def test_unknown_keys_at_each_level(repo: GitRepo, text: str, line: int, where: str, key: str,
                                    allowed: str) -> None:
    assert load_error(repo, text) == (f"{repo.path / '.branchkeeper.yaml'}: line {line}: "
                                      f"{where}: unknown key {key!r} (allowed: {allowed})")


@pytest.mark.parametrize(("text", "line", "rest"), [
    ("branches:\n  wip:\n    cap: ten\n", 3,
     "branches.wip.cap: must be an integer >= 1, got 'ten'"),
    ("branches:\n  wip:\n    cap: 0\n", 3, "branches.wip.cap: must be an integer >= 1, got 0"),
    ("branches:\n  wip:\n    cap: '10'\n", 3,
     "branches.wip.cap: must be an integer >= 1, got '10'"),
    ("branches:\n  wip:\n    cap: 10.5\n", 3,
     "branches.wip.cap: must be an integer >= 1, got 10.5"),
    ("branches:\n  wip:\n    cap: true\n", 3,
     "branches.wip.cap: must be an integer >= 1, got true"),
    ("branches:\n  wip:\n    mode: stop\n", 3,
     "branches.wip.mode: must be one of block, warn, off, got 'stop'"),
    ("branches:\n  wip:\n    count_remote: 1\n", 3,
     "branches.wip.count_remote: must be true or false, got 1"),
    ("branches:\n  wip: [1]\n", 2, "branches.wip: must be a mapping, got a list"),
    ("branches: 5\n", 1, "branches: must be a mapping, got 5"),
    ("branches:\n  dormancy:\n    block_days: 0\n", 3,
     "branches.dormancy.block_days: must be an integer >= 1 or null, got 0"),
    ("branches:\n  dormancy:\n    preset: lax\n", 3,
     "branches.dormancy.preset: must be one of standard, strict, got 'lax'"),
    ("branches:\n  exempt: users/*\n", 2,
     "branches.exempt: must be a list of strings, got 'users/*'"),
    ("branches:\n  exempt:\n    - ok\n    - 3\n", 4, "branches.exempt[1]: must be a string, got 3"),
    ("branches:\n  exempt: ['']\n", 2, "branches.exempt[0]: must be a non-empty string"),
    ('branches:\n  exempt: ["a\\nb"]\n', 2,
     "branches.exempt[0]: must not contain a NUL or newline character, got 'a\\nb'"),
    ('worktrees:\n  protected_ignored: ["a\\0b"]\n', 2,
     "worktrees.protected_ignored[0]: must not contain a NUL or newline character, "
     "got 'a\\x00b'"),
    ("branches:\n  default: --force\n", 2,
     "branches.default: must be a name without spaces that does not start with '-', "
     "got '--force'"),
    ("branches:\n  default: 2024-01-01\n", 2,
     "branches.default: must be a string, got 2024-01-01 (date)"),
    ("branches:\n  sweep:\n    fetch_timeout_s: 0\n", 3,
     "branches.sweep.fetch_timeout_s: must be a number > 0, got 0"),
    ("branches:\n  sweep:\n    fetch_timeout_s: .inf\n", 3,
     "branches.sweep.fetch_timeout_s: must be a number > 0, got inf"),
    ("worktrees:\n  activity_window_hours: .nan\n", 2,
     "worktrees.activity_window_hours: must be a number > 0, got nan"),
    ("branches:\n  stop_guard:\n    yield_file: ../outside\n", 3,
     "branches.stop_guard.yield_file: must be a relative path without '..', got '../outside'"),
    ("branches:\n  stop_guard:\n    yield_env: A-B\n", 3,
     "branches.stop_guard.yield_env: must be an environment variable name (letters, digits, "
     "'_'), got 'A-B'"),
    ("worktrees:\n  ignored: loose\n", 2,
     "worktrees.ignored: must be one of strict, lenient, got 'loose'"),
    ("worktrees:\n  salvage: [/etc/passwd]\n", 2,
     "worktrees.salvage[0]: must be a relative path without '..', got '/etc/passwd'"),
    ("branches:\n  remote: a\n  remote: b\n", 3, "branches: duplicate key 'remote'"),
    ("7: x\n", 1, "top level: keys must be plain strings, got '7'"),
    ("branches:\n  <<: {remote: x}\n", 2, "branches: merge keys ('<<') are not allowed"),
])
def test_wrong_types_and_values(repo: GitRepo, text: str, line: int, rest: str) -> None:
    assert load_error(repo, text) == f"{repo.path / '.branchkeeper.yaml'}: line {line}: {rest}"


def test_ignored_polarity_key(repo: GitRepo) -> None:
    from branchkeeper.analysis.ignored import IgnoredRules

    assert IgnoredRules.from_config(load_config(repo.path).config).polarity == "strict"
    write(repo, "worktrees:\n  ignored: lenient\n  disposable_ignored: [out/]\n")
    config = load_config(repo.path).config
    rules = IgnoredRules.from_config(config)
    assert (rules.polarity, rules.regenerable[-1]) == ("lenient", "out/")
    assert IgnoredRules.from_config(config, polarity="strict").polarity == "strict"
    assert rules.agent_state_disposable[-1] == "events.jsonl"  # salvaged first, so disposable


def test_unquoted_off_means_off(repo: GitRepo) -> None:
    write(repo, "branches:\n  wip: {mode: off}\n  dormancy: {mode: off}\n")
    loaded = load_config(repo.path)
    assert (loaded.config.branches.wip.mode, loaded.config.branches.dormancy.mode) == ("off",
                                                                                      "off")


@pytest.mark.parametrize(("text", "rest"), [
    ("- branches\n", "the top level must be a mapping with 'branches:' and/or 'worktrees:', "
                     "got a list"),
    ("just words\n", "the top level must be a mapping with 'branches:' and/or 'worktrees:', "
                     "got 'just words'"),
])
def test_top_level_must_be_a_mapping(repo: GitRepo, text: str, rest: str) -> None:
    assert load_error(repo, text) == f"{repo.path / '.branchkeeper.yaml'}: {rest}"


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("branches:\n  wip:\n    cap: 3\n   mode: warn\n", "line 4, column 4",
     "expected <block end>, but found '<block mapping start>' (while parsing a block mapping)"),
    ("branches:\n  exempt: [a, b\n", "line 3, column 1",
     "expected ',' or ']', but got '<stream end>' (while parsing a flow sequence)"),
    ("branches:\n\twip: {}\n", "line 2, column 1",
     "found character '\\t' that cannot start any token (while scanning for the next token)"),
    ("a: 1\n---\nb: 2\n", "line 2, column 1",
     "but found another document (expected a single document in the stream)"),
])
def test_broken_yaml_names_line_and_column(repo: GitRepo, text: str, where: str,
                                           problem: str) -> None:
    assert load_error(repo, text) == (f"{repo.path / '.branchkeeper.yaml'}: {where}: "
                                      f"not valid YAML: {problem}")


def test_alias_bomb_fails_fast_with_bounded_memory(repo: GitRepo) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 12):  # 9**12 strings if expanded
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    write(repo, "\n".join(lines) + "\n")
    tracemalloc.start()
    started = time.monotonic()
    with pytest.raises(ConfigError) as info:
        load_config(repo.path)
    elapsed = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert str(info.value) == (f"{repo.path / '.branchkeeper.yaml'}: line 1, column 4: YAML "
                               f"anchors and aliases ('&name', '*name') are not allowed in this "
                               f"file")
    assert elapsed < 1.0
    assert peak < 5 * 1024 * 1024


def test_deep_nesting_is_refused(repo: GitRepo) -> None:
    assert load_error(repo, "[" * 50_000) == (f"{repo.path / '.branchkeeper.yaml'}: line 1, "
                                              f"column 33: nested more than 32 levels deep")


def test_huge_file_is_refused(repo: GitRepo) -> None:
    message = load_error(repo, "#" * (1024 * 1024) + "\n")
    assert message == (f"{repo.path / '.branchkeeper.yaml'}: the file is larger than the limit "
                       f"of 1048576 bytes (1 MiB)")


def test_python_tags_are_rejected_and_never_run(repo: GitRepo) -> None:
    marker = repo.path / "pwned"
    message = load_error(repo, f'branches: !!python/object/apply:os.system ["touch {marker}"]\n')
    assert message == (f"{repo.path / '.branchkeeper.yaml'}: line 1, column 11: the YAML tag "
                       f"'!!python/object/apply:os.system' is not allowed (only plain strings, "
                       f"numbers, booleans, lists and mappings are)")
    assert not marker.exists()
    message = load_error(repo, "branches:\n  wip: !custom {}\n")
    assert message == (f"{repo.path / '.branchkeeper.yaml'}: line 2, column 8: the YAML tag "
                       f"'!custom' is not allowed (only plain strings, numbers, booleans, lists "
                       f"and mappings are)")


def test_not_utf8_and_not_a_file(repo: GitRepo) -> None:
    path = repo.path / ".branchkeeper.yaml"
    assert load_error(repo, b"branches: \xff\n") == (
        f"{path}: not UTF-8 text (invalid byte at offset 10)")
    path.unlink()
    path.mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(repo.path)
    assert str(info.value) == f"{path}: not a regular file"


# -- the config command ------------------------------------------------------------------------
def test_check_without_a_file(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(repo.path), "config", "check"]) == 0
    assert capsys.readouterr().out == "ok: no .branchkeeper.yaml; every default applies\n"


def test_init_then_check_round_trip(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo.path / ".branchkeeper.yaml"
    sub = repo.path / "src" / "deep"
    sub.mkdir(parents=True)
    assert main(["-C", str(sub), "config", "init"]) == 0
    assert capsys.readouterr().out == (f"wrote {path} (every key at its default); edit it, then "
                                       f"run: branchkeeper config check\n")
    assert path.read_text() == starter_text()
    loaded = load_config(repo.path)
    assert loaded.config == DEFAULT_CONFIG
    assert effective_values(loaded.config) == DEFAULT_VALUES
    # every key is written out, each under a one-line comment, but the deprecated ones
    assert {k: v for k, v in loaded.sources.items() if v not in ("file", "preset:standard")} == {
        "branches.sweep.squash_window": "default"}
    assert main(["-C", str(repo.path), "config", "check"]) == 0
    assert capsys.readouterr().out == f"ok: {path} is valid\n"


def test_init_never_overwrites(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(repo, "branches:\n  wip: {cap: 4}\n")
    assert main(["-C", str(repo.path), "config", "init"]) == 4
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", (
        f"branchkeeper: error: {path} already exists; config init never overwrites it "
        f"(edit it, or move it away first)\n"))
    assert path.read_text() == "branches:\n  wip: {cap: 4}\n"


def test_check_invalid_file_exits_4(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(repo, "branches:\n  wip:\n    cap: ten\n")
    assert main(["-C", str(repo.path), "config", "check"]) == 4
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", (
        f"branchkeeper: error: {path}: line 3: branches.wip.cap: must be an integer >= 1, "
        f"got 'ten'\n"))


def test_show_json_full_output(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(repo.path), "config", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "file": None,
        "values": {k: {"value": v, "source": default_sources()[k]}
                   for k, v in DEFAULT_VALUES.items()},
    }
    path = write(repo, "branches:\n  dormancy:\n    preset: strict\n    block_days: 9\n")
    assert main(["-C", str(repo.path), "config", "show", "--json"]) == 0
    out = capsys.readouterr().out
    values = {k: {"value": v, "source": s} for (k, v), s in
              zip(DEFAULT_VALUES.items(), default_sources("strict").values(), strict=True)}
    values["branches.dormancy.preset"] = {"value": "strict", "source": "file"}
    values["branches.dormancy.advisory_days"] = {"value": 3, "source": "preset:strict"}
    values["branches.dormancy.noisy_days"] = {"value": 3, "source": "preset:strict"}
    values["branches.dormancy.block_days"] = {"value": 9, "source": "file"}
    assert out == json.dumps({"file": str(path), "values": values}, indent=2) + "\n"


def test_show_table(repo: GitRepo, capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # the table is for a terminal
    write(repo, 'branches:\n  exempt: ["[ab]*"]\n')
    assert main(["-C", str(repo.path), "config", "show"]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out).splitlines()
    assert out[0].strip() == str(repo.path / ".branchkeeper.yaml")
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out
            if line.startswith("│")]
    shown = {row[0]: (row[1], row[2]) for row in rows if row[0]}  # long values wrap
    assert shown["branches.exempt"] == ('["[ab]*"]', "file")
    assert shown["branches.wip.cap"] == ("10", "default")
    assert shown["branches.dormancy.block_days"] == ("30", "preset:standard")
    assert shown["branches.protected_names"] == ("[main, master, develop, trunk]", "default")
    assert list(shown) == list(DEFAULT_VALUES)


def test_outside_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["-C", str(plain), "config", "check"]) == 4
    assert capsys.readouterr().err == (
        f"branchkeeper: error: {plain} is not inside a git work tree (git: fatal: not a git "
        f"repository (or any of the parent directories): .git); .branchkeeper.yaml lives at a "
        f"repository's top level (run inside one, or pass -C DIR)\n")
    assert main(["-C", str(tmp_path / "missing"), "config", "show"]) == 4
    assert capsys.readouterr().err == f"branchkeeper: error: {tmp_path / 'missing'}: no such " \
                                      f"directory\n"


def test_docs_name_every_key() -> None:
    text = DOCS.read_text()
    missing = [key for key in leaf_keys() if f"`{key}`" not in text]
    assert missing == []
