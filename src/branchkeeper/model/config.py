"""The configuration model: ``.branchkeeper.yaml`` at the repository root, as validated records.

Implements the first document, section 1 (the ``branches:`` block, every key with a default) and
section 4 "Presets" (dormancy presets ``standard`` 7/14/30 and ``strict`` 3/3/7; an explicit stage
key wins; the EFFECTIVE values must satisfy ``advisory <= noisy < block``, all >= 1), plus the
``worktrees:`` block of our own (second document: protected and disposable ignored content, the
activity window, the agent-state directory). Documented in docs/configuration.md.

Every model is frozen, strict (YAML already gives typed values, so ``cap: "10"`` is an error, not
a silent conversion) and forbids unknown keys. The loader that reads the file
(:func:`branchkeeper.model.config_file.load_config`) turns every problem into ONE
:class:`~branchkeeper.errors.ConfigError` naming the file, the line, the dotted key and what is
wrong.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

#: The stage days of each dormancy preset: (advisory, noisy, block) (section 4, "Presets").
PRESETS: dict[str, tuple[int, int, int]] = {"standard": (7, 14, 30), "strict": (3, 3, 7)}


# -- value checks ------------------------------------------------------------------------------
def _text(value: str) -> str:
    if not value:
        raise ValueError("must be a non-empty string")
    if any(ch in value for ch in "\x00\n\r"):
        raise ValueError(f"must not contain a NUL or newline character, got {value!r}")
    return value


def _name(value: str) -> str:
    _text(value)
    if value.startswith("-") or any(ch.isspace() for ch in value):
        raise ValueError(f"must be a name without spaces that does not start with '-', "
                         f"got {value!r}")
    return value


def _relpath(value: str) -> str:
    _text(value)
    pure = PurePosixPath(value)
    if pure.is_absolute() or value.startswith("~") or ".." in pure.parts:
        raise ValueError(f"must be a relative path without '..', got {value!r}")
    return value


def _env_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise ValueError(f"must be an environment variable name (letters, digits, '_'), "
                         f"got {value!r}")
    return value


def _off(value: object) -> object:
    # YAML 1.1 reads an unquoted `off` as false; `mode: off` must still mean "off".
    return "off" if value is False else value


Text = Annotated[str, AfterValidator(_text)]
Glob = Annotated[str, AfterValidator(_text)]
Name = Annotated[str, AfterValidator(_name)]
RelPath = Annotated[str, AfterValidator(_relpath)]
BlockMode = Annotated[Literal["block", "warn", "off"], BeforeValidator(_off)]


class _Block(BaseModel):
    """Base of every block: frozen, strict, unknown keys forbidden; ``key:`` with no value = {}."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_block(cls, data: Any) -> Any:
        return {} if data is None else data


# -- branches: ---------------------------------------------------------------------------------
class WipConfig(_Block):
    """WIP cap: how many work branches may be open at once (section 3)."""

    cap: int = Field(default=10, ge=1, description="most open work branches, repository-wide")
    mode: BlockMode = Field(
        default="block",
        description="block | warn | off: a new branch past the cap")
    count_remote: bool = Field(
        default=True,
        description="remote-only branches count; one tip counts once")


class DuplicatesConfig(_Block):
    """Duplicate-stem advice when a new branch looks like an existing one (section 3)."""

    mode: Annotated[Literal["warn", "off"], BeforeValidator(_off)] = Field(
        default="warn", description="warn | off (never blocks: a stem match is a heuristic)")


class DormancyConfig(_Block):
    """Dormancy stages by days since the last commit (section 4, presets and overrides)."""

    preset: Literal["standard", "strict"] = Field(
        default="standard", description="standard (7/14/30 days) | strict (3/3/7)")
    advisory_days: int | None = Field(
        default=None, ge=1, description="null = the preset's value; a number overrides it")
    noisy_days: int | None = Field(
        default=None, ge=1, description="null = the preset's value; a number overrides it")
    block_days: int | None = Field(
        default=None, ge=1, description="null = the preset's value; a number overrides it")
    mode: BlockMode = Field(
        default="block", description="block | warn | off (warn stops at the noisy stage)")

    @property
    def effective_advisory_days(self) -> int:
        """Days idle before the advisory stage: the explicit key, else the preset's value."""
        return self.advisory_days if self.advisory_days is not None else PRESETS[self.preset][0]

    @property
    def effective_noisy_days(self) -> int:
        """Days idle before the noisy stage: the explicit key, else the preset's value."""
        return self.noisy_days if self.noisy_days is not None else PRESETS[self.preset][1]

    @property
    def effective_block_days(self) -> int:
        """Days idle before the block stage: the explicit key, else the preset's value."""
        return self.block_days if self.block_days is not None else PRESETS[self.preset][2]

    @model_validator(mode="after")
    def _stages_in_order(self) -> DormancyConfig:
        a, n, b = self.effective_advisory_days, self.effective_noisy_days, self.effective_block_days
        if not (1 <= a <= n < b):
            raise ValueError(
                f"the effective stage days must satisfy advisory_days <= noisy_days < block_days, "
                f"each >= 1; got advisory_days={a}, noisy_days={n}, block_days={b} "
                f"(preset {self.preset}; a key left null takes the preset's value)")
        return self


class StopGuardConfig(_Block):
    """The Stop and SubagentStop guard: no dirty or unpushed work left behind (section 6)."""

    mode: BlockMode = Field(default="block", description="block | warn | off")
    unpushed_subagent: Annotated[Literal["block", "advise", "off"], BeforeValidator(_off)] = Field(
        default="block",
        description="block | advise | off: a sub-agent stopping with unpushed commits")
    include_default: bool = Field(
        default=False, description="judge the default branch and integration lines at stop too")
    max_blocks: int = Field(
        default=3, ge=1, description="blocked stops in a row before the guard lets the session end")
    yield_file: RelPath = Field(
        default="yield",
        description="relative to <common dir>/branchkeeper/ (out of the work tree, where an "
                    "agent could create it); if it exists the guard yields")
    yield_env: Annotated[str, AfterValidator(_env_name)] = Field(
        default="BRANCHKEEPER_YIELD",
        description="if this variable is set and non-empty the guard yields")
    noisy_interval_minutes: int = Field(
        default=60, ge=1,
        description="at most one noisy-stage line per this many minutes per session")


class ForceRemovalConfig(_Block):
    """Lossless `worktree remove --force` and `branch -D` (section 11)."""

    mode: Annotated[Literal["block", "off"], BeforeValidator(_off)] = Field(
        default="block", description="block | off")


class EvacuationConfig(_Block):
    """The evacuate-then-destroy shape (section 13)."""

    mode: BlockMode = Field(default="block", description="block | warn | off")


class GitHookConfig(_Block):
    """The git-level safety net: the ``reference-transaction`` hook that ``install --git-hooks``
    writes keeps (or refuses) every branch deletion or rewind that would lose commits (issue 15;
    docs/git-hook.md)."""

    mode: Annotated[Literal["keep", "block", "off"], BeforeValidator(_off)] = Field(
        default="keep",
        description="keep | block | off: keep the lost tip under refs/branchkeeper/kept/, or "
                    "refuse the update")
    keep_days: int = Field(
        default=30, ge=1,
        description="days a kept tip stays before prune expires it (behind a bundle)")


#: Ignored content that a tool regenerates (reinstall, rebuild, rerun): the only ignored files a
#: worktree removal may lose by default. A trailing "/" means a directory and all under it.
#: Drawn from github/gitignore's templates (Python, Node, Rust, Java, Gradle, Maven, Go, macOS,
#: JetBrains), keeping only what a tool writes and can write again, never what a person does
#: (no logs, no "out/", no "env/", no editor settings).
DEFAULT_REGENERABLE: tuple[str, ...] = (
    # Python: virtual environments, bytecode, tool caches, packaging and coverage output
    ".venv/", "venv/", "__pycache__/", "*.py[cod]", "*$py.class", ".pytest_cache/",
    ".mypy_cache/", ".dmypy.json", "dmypy.json", ".ruff_cache/", ".pytype/", ".pyre/",
    ".hypothesis/", ".tox/", ".nox/", "__pypackages__/", ".pdm-build/", ".pybuilder/",
    "cython_debug/", "*.egg-info/", ".eggs/", "develop-eggs/", "sdist/", "build/", "dist/",
    "wheels/", ".coverage", ".coverage.*", "coverage.xml", "*.cover", "*.py,cover",
    "nosetests.xml", "htmlcov/", ".ipynb_checkpoints/",
    # Node and front-end build tools
    "node_modules/", "bower_components/", "jspm_packages/", ".npm/", ".pnpm-store/",
    ".yarn/cache/", ".yarn/unplugged/", ".yarn/install-state.gz", ".yarn-integrity", ".next/",
    ".nuxt/", ".svelte-kit/", ".angular/cache/", ".turbo/", ".parcel-cache/", ".vite/",
    ".docusaurus/", ".serverless/", ".fusebox/", ".vscode-test/", ".sass-cache/", ".eslintcache",
    ".stylelintcache", "*.tsbuildinfo", ".nyc_output/", "coverage/", "*.lcov",
    # Rust, Go, Java, Kotlin, Gradle, Maven, CMake, JetBrains' caches, other toolchains
    "target/", "*.rs.bk", "*.test", "*.coverprofile", ".gradle/", ".gradletasknamecache",
    ".kotlin/", "*.class", "cmake-build-*/", ".idea/caches/", ".terraform/", ".dart_tool/",
    ".zig-cache/", "zig-cache/", "zig-out/", "_build/",
    # generic caches and operating-system litter
    ".cache/", ".DS_Store", ".AppleDouble/", ".LSOverride", "._*", "__MACOSX/", "Thumbs.db",
)


class CleanupAfterMergeConfig(_Block):
    """Cleanup after a merge: delete the merged branch and its worktree (section 7)."""

    mode: Annotated[Literal["act", "advise", "off"], BeforeValidator(_off)] = Field(
        default="advise", description="act | advise | off")
    regenerable: list[Glob] = Field(
        default_factory=lambda: list(DEFAULT_REGENERABLE),
        description="ignored content safe to lose with a worktree (globs; 'dir/' = whole dir)")


class SweepConfig(_Block):
    """The inventory's bounds (section 2)."""

    budget_ms: int = Field(
        default=3000, ge=1,
        description="wall-clock budget of one sweep, milliseconds")
    session_inline_max: int = Field(
        default=1000, ge=0,
        description="SessionStart classifies inline up to this many branches; past it the pass "
                    "runs in the background and SessionStart reports what the cache knows")
    behind_threshold: int = Field(
        default=50, ge=1,
        description="commits behind the default branch before a branch is flagged")
    squash_window: int | None = Field(
        default=None, ge=1,
        description="deprecated, ignored: the proofs read the whole history (kept so that "
                    "existing configurations still load)")
    fetch_timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False,
                                   description="timeout of one fetch, seconds")


class BranchesConfig(_Block):
    """The ``branches:`` block (section 1)."""

    default: Name = Field(
        default="auto", description="auto = <remote>/HEAD, then local main, then master; or a name")
    remote: Name = Field(default="origin", description="the remote whose refs count and are judged")
    integration_lines: list[Glob] = Field(
        default_factory=list, description="globs of merge targets, e.g. release/*")
    exempt: list[Glob] = Field(
        default_factory=list, description="globs never counted, judged or deleted, e.g. users/*")
    not_integration_lines: list[Glob] = Field(
        default_factory=list,
        description="globs of branches named like lines (release*, epic*, develop*, hotfix*) "
                    "that are work: the sweep stops suggesting them as integration lines")
    protected_names: list[Name] = Field(
        default_factory=lambda: ["main", "master", "develop", "trunk"],
        description="branch names never deleted (plus the default branch and lines)")
    wip: WipConfig = WipConfig()
    duplicates: DuplicatesConfig = DuplicatesConfig()
    dormancy: DormancyConfig = DormancyConfig()
    stop_guard: StopGuardConfig = StopGuardConfig()
    force_removal: ForceRemovalConfig = ForceRemovalConfig()
    evacuation: EvacuationConfig = EvacuationConfig()
    git_hook: GitHookConfig = GitHookConfig()
    cleanup_after_merge: CleanupAfterMergeConfig = CleanupAfterMergeConfig()
    sweep: SweepConfig = SweepConfig()


# -- worktrees: --------------------------------------------------------------------------------
class WorktreesConfig(_Block):
    """The ``worktrees:`` block: what a worktree removal must keep (second document)."""

    ignored: Literal["strict", "lenient"] = Field(
        default="strict",
        description="strict: only regenerable ignored files may be lost with a worktree; "
                    "lenient: all but protected_ignored may")
    protected_ignored: list[Glob] = Field(
        default_factory=lambda: [".env*", "*.local"],
        description="ignored files that always keep a worktree from removal")
    disposable_ignored: list[Glob] = Field(
        default_factory=list,
        description="more ignored files that may be lost, besides the regenerable globs")
    activity_window_hours: float = Field(
        default=3.0, gt=0, allow_inf_nan=False,
        description="a worktree touched this recently is active and kept")
    agent_state_dir: RelPath = Field(
        default=".agentic", description="agent state directory: protected unless listed disposable")
    agent_state_disposable: list[Glob] = Field(
        default_factory=lambda: ["telemetry/", "cache/", "*.log", "session-log/", "context.md",
                                 "context.d/", "wrap/", "hook-counters/"],
        description="machine-written state inside it that may be lost")
    salvage: list[RelPath] = Field(
        default_factory=lambda: ["events.jsonl"],
        description="paths inside it copied into the main worktree before removal")
    reap_from_prune: bool = Field(
        default=True,
        description="prune starts worktree reap in the background (its log: worktree-reap.log)")
    reap_min_age_hours: float = Field(
        default=3.0, gt=0, allow_inf_nan=False,
        description="the --min-age-hours prune pins on that background reap")
    nudge_threshold: int = Field(
        default=5, ge=0,
        description="more linked worktrees than this: one line suggesting a reap dry run")


class SessionStartConfig(_Block):
    """The ``session_start:`` block: the session-start routine (second document, "Session-start
    prune")."""

    prune: Annotated[Literal["suggest", "background", "off"], BeforeValidator(_off)] = Field(
        default="suggest",
        description="suggest | background | off: when the prune is due, say so, or start "
                    "prune detached (it fetches: a network call), or nothing")
    prune_due_minutes: int = Field(
        default=30, ge=1,
        description="the prune is due again after this many minutes, or when the branch changed")


class Config(_Block):
    """The whole file: ``branches:``, ``worktrees:`` and ``session_start:``, each optional."""

    branches: BranchesConfig = BranchesConfig()
    worktrees: WorktreesConfig = WorktreesConfig()
    session_start: SessionStartConfig = SessionStartConfig()


#: Every default; what a repository without ``.branchkeeper.yaml`` gets.
DEFAULT_CONFIG = Config()


# -- leaves ------------------------------------------------------------------------------------
#: The dormancy stage keys whose effective value a preset can supply.
DORMANCY_DAYS = ("advisory_days", "noisy_days", "block_days")


#: Keys still accepted so that existing files load, but ignored (docs/configuration.md).
DEPRECATED_KEYS = frozenset({"branches.sweep.squash_window"})


def leaf_keys(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every dotted leaf key of ``model`` in declaration order, e.g. ``branches.wip.cap``."""
    keys: list[str] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            keys.extend(leaf_keys(ann, f"{prefix}{name}."))
        else:
            keys.append(f"{prefix}{name}")
    return keys


def effective_values(config: Config) -> dict[str, object]:
    """Every dotted leaf key mapped to its effective value (dormancy days resolved by preset).

    Values are plain JSON types (str, int, float, bool, list of str).
    """
    values: dict[str, object] = {}
    for key in leaf_keys():
        node: Any = config
        *parents, leaf = key.split(".")
        for part in parents:
            node = getattr(node, part)
        if isinstance(node, DormancyConfig) and leaf in DORMANCY_DAYS:
            leaf = f"effective_{leaf}"
        value = getattr(node, leaf)
        values[key] = list(value) if isinstance(value, list) else value
    return values
