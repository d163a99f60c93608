"""The configuration model and its loader: ``.branchkeeper.yaml`` at the repository root.

Implements the first document, section 1 (the ``branches:`` block, every key with a default) and
section 4 "Presets" (dormancy presets ``standard`` 7/14/30 and ``strict`` 3/3/7; an explicit stage
key wins; the EFFECTIVE values must satisfy ``advisory <= noisy < block``, all >= 1), plus the
``worktrees:`` block of our own (second document: protected and disposable ignored content, the
activity window, the agent-state directory). Documented in docs/configuration.md.

Every model is frozen, strict (YAML already gives typed values, so ``cap: "10"`` is an error, not
a silent conversion) and forbids unknown keys. The loader (:func:`load_config`) turns every
problem into ONE :class:`~branchkeeper.errors.ConfigError` naming the file, the line, the dotted
key and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from branchkeeper.errors import ConfigError

#: The file's name, at the repository's top level.
CONFIG_FILENAME = ".branchkeeper.yaml"

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
        default=".branchkeeper/yield",
        description="relative to the repository top level; if it exists the guard yields")
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


#: Ignored content that a tool regenerates; a trailing "/" means a directory and all under it.
DEFAULT_REGENERABLE: tuple[str, ...] = (
    ".venv/", "venv/", "node_modules/", "__pycache__/", "*.pyc", ".pytest_cache/",
    ".mypy_cache/", ".ruff_cache/", ".tox/", ".nox/", "build/", "dist/", "*.egg-info/",
    ".coverage", "htmlcov/", "target/", ".gradle/", ".next/", ".cache/", ".DS_Store",
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
    behind_threshold: int = Field(
        default=50, ge=1,
        description="commits behind the default branch before a branch is flagged")
    squash_window: int = Field(
        default=10000, ge=1, description="most base commits the squash-merge proof examines")
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
    protected_names: list[Name] = Field(
        default_factory=lambda: ["main", "master", "develop", "trunk"],
        description="branch names never deleted (plus the default branch and lines)")
    wip: WipConfig = WipConfig()
    duplicates: DuplicatesConfig = DuplicatesConfig()
    dormancy: DormancyConfig = DormancyConfig()
    stop_guard: StopGuardConfig = StopGuardConfig()
    force_removal: ForceRemovalConfig = ForceRemovalConfig()
    evacuation: EvacuationConfig = EvacuationConfig()
    cleanup_after_merge: CleanupAfterMergeConfig = CleanupAfterMergeConfig()
    sweep: SweepConfig = SweepConfig()


# -- worktrees: --------------------------------------------------------------------------------
class WorktreesConfig(_Block):
    """The ``worktrees:`` block: what a worktree removal must keep (second document)."""

    protected_ignored: list[Glob] = Field(
        default_factory=lambda: [".env*", "*.local"],
        description="ignored files that keep a worktree from removal")
    disposable_ignored: list[Glob] = Field(
        default_factory=list, description="with --strict-ignored: the only ignored files to lose")
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


class Config(_Block):
    """The whole file: a ``branches:`` block and a ``worktrees:`` block, each optional."""

    branches: BranchesConfig = BranchesConfig()
    worktrees: WorktreesConfig = WorktreesConfig()


#: Every default; what a repository without ``.branchkeeper.yaml`` gets.
DEFAULT_CONFIG = Config()


# -- leaves ------------------------------------------------------------------------------------
_DORMANCY_DAYS = ("advisory_days", "noisy_days", "block_days")


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
        if isinstance(node, DormancyConfig) and leaf in _DORMANCY_DAYS:
            leaf = f"effective_{leaf}"
        value = getattr(node, leaf)
        values[key] = list(value) if isinstance(value, list) else value
    return values


def _sources(raw: dict[str, Any], preset: str) -> dict[str, str]:
    sources: dict[str, str] = {}
    for key in leaf_keys():
        node: Any = raw
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        leaf = key.rsplit(".", 1)[1]
        if node is not None:
            sources[key] = "file"
        elif key.startswith("branches.dormancy.") and leaf in _DORMANCY_DAYS:
            sources[key] = f"preset:{preset}"
        else:
            sources[key] = "default"
    return sources


# -- reading the file -------------------------------------------------------------------------
#: Largest file read, in bytes; a configuration file is a few kilobytes.
MAX_BYTES = 1 << 20
#: Deepest nesting of mappings and lists accepted (the model itself is 4 deep).
MAX_DEPTH = 32
_CORE = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "map", "seq"))
Loc = tuple[str | int, ...]


def _at(path: Path, mark: Any) -> str:
    return f"{path}: line {mark.line + 1}, column {mark.column + 1}"


def _read_yaml(path: Path) -> tuple[dict[str, Any], dict[Loc, int]]:
    """Read and parse ``path``; return the top-level mapping and the line of every key/item.

    Bounded: at most :data:`MAX_BYTES` are read; anchors, aliases, non-plain tags and nesting
    past :data:`MAX_DEPTH` are refused in one streaming pass BEFORE anything is built, so a YAML
    bomb fails fast with bounded memory. The data itself comes from ``yaml.safe_load``.
    """
    try:
        if not path.is_file():
            raise ConfigError(f"{path}: not a regular file")
        with path.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror})") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: the file is larger than the limit of {MAX_BYTES} bytes (1 MiB)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        _check_events(text, path)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or "not valid YAML"
        if exc.context:
            problem += f" ({exc.context})"
        mark = exc.problem_mark or exc.context_mark
        where = _at(path, mark) if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML: {' '.join(problem.split())}") from None
    except yaml.YAMLError as exc:
        # One line: a reader error (a control character) spans two in PyYAML's text.
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if raw is None:  # an empty file, or only comments
        return {}, {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping with 'branches:' and/or "
                          f"'worktrees:', got {_got(raw)}")
    lines: dict[Loc, int] = {}
    if node is not None:
        _walk(node, (), lines, path)
    return raw, lines


def _check_events(text: str, path: Path) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError(f"{_at(path, event.start_mark)}: YAML anchors and aliases "
                              f"('&name', '*name') are not allowed in this file")
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in _PLAIN_TAGS:
            shown = "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag
            raise ConfigError(f"{_at(path, event.start_mark)}: the YAML tag {shown!r} is not "
                              f"allowed (only plain strings, numbers, booleans, lists and "
                              f"mappings are)")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{_at(path, event.start_mark)}: nested more than "
                                  f"{MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            where = f"{path}: line {key.start_mark.line + 1}: {_dotted(loc) or 'top level'}"
            if key.tag == _CORE + "merge":
                raise ConfigError(f"{where}: merge keys ('<<') are not allowed")
            if not isinstance(key, yaml.ScalarNode) or key.tag != _CORE + "str":
                raise ConfigError(f"{where}: keys must be plain strings, got {key.value!r}")
            if key.value in seen:
                raise ConfigError(f"{where}: duplicate key {key.value!r}")
            seen.add(key.value)
            lines[(*loc, key.value)] = key.start_mark.line + 1
            _walk(value, (*loc, key.value), lines, path)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*loc, index)] = item.start_mark.line + 1
            _walk(item, (*loc, index), lines, path)


# -- error messages ----------------------------------------------------------------------------
def _dotted(loc: Sequence[str | int]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _got(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{value} ({type(value).__name__})"


def _describe(annotation: Any, metadata: Sequence[Any]) -> str:
    bounds = "".join(f" >= {m.ge}" if isinstance(m, annotated_types.Ge) else
                     f" > {m.gt}" if isinstance(m, annotated_types.Gt) else ""
                     for m in metadata)
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return _describe(args[0], metadata) + " or null"
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(annotation))
    if annotation is bool:
        return "true or false"
    if annotation is int:
        return "an integer" + bounds
    if annotation is float:
        return "a number" + bounds
    if get_origin(annotation) is list:
        return "a list of strings"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "a mapping"
    return "a string"


def _validation_message(exc: ValidationError, *, path: Path, lines: dict[Loc, int]) -> str:
    """One message for the first error pydantic found: file, line, dotted key, problem."""
    err = exc.errors(include_url=False)[0]
    loc: Loc = tuple(err["loc"])
    line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
    model: type[BaseModel] = Config
    names = [p for p in loc if isinstance(p, str)]
    for part in names[:-1]:
        model = model.model_fields[part].annotation  # type: ignore[assignment]
    if err["type"] == "extra_forbidden":
        key, loc = loc[-1], loc[:-1]
        allowed = ", ".join(model.model_fields)
        problem = f"unknown key {key!r} (allowed: {allowed})"
    elif err["type"] == "value_error":
        problem = str(err["ctx"]["error"])
    else:
        if loc and isinstance(loc[-1], int):
            expected = "a string"
        elif loc and names:
            info = model.model_fields[names[-1]]
            expected = _describe(info.annotation, info.metadata)
        else:
            expected = "a mapping"
        problem = f"must be {expected}, got {_got(err['input'])}"
    where = f"{path}: line {line}" if line is not None else str(path)
    return f"{where}: {_dotted(loc) or 'top level'}: {problem}"


# -- loading -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, the file it came from (None: no file) and each leaf key's source.

    ``sources`` maps every dotted leaf key to ``"default"``, ``"file"`` or ``"preset:<name>"``
    (a dormancy stage key left null, so the preset's value applies).
    """

    config: Config
    path: Path | None
    sources: dict[str, str]


def load_config(root: Path | None) -> LoadedConfig:
    """Load ``<root>/.branchkeeper.yaml`` (docs/configuration.md; first document, section 1).

    ``root`` is the repository's top level; ``None`` or a root without the file gives every
    default (an empty file too). Raises :class:`ConfigError` with one message naming the file,
    the line, the dotted key and the problem: unreadable or over 1 MiB, broken YAML (line and
    column), anchors/aliases or tags, a top level that is not a mapping, an unknown key, a wrong
    type or value, dormancy stages out of order.
    """
    if root is None:
        return LoadedConfig(DEFAULT_CONFIG, None, _sources({}, "standard"))
    path = root / CONFIG_FILENAME
    if not path.exists() and not path.is_symlink():
        return LoadedConfig(DEFAULT_CONFIG, None, _sources({}, "standard"))
    raw, lines = _read_yaml(path)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_validation_message(exc, path=path, lines=lines)) from None
    return LoadedConfig(config, path, _sources(raw, config.branches.dormancy.preset))
