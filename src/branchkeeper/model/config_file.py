"""Reading ``.branchkeeper.yaml`` at the repository root into a validated :class:`Config`.

:func:`load_config` turns every problem into ONE :class:`~branchkeeper.errors.ConfigError`
naming the file, the line, the dotted key and what is wrong. The file is read bounded: at most
:data:`MAX_BYTES`, no anchors, aliases or tags, nesting at most :data:`MAX_DEPTH`, refused in
one streaming pass before anything is built. The model itself is
:mod:`branchkeeper.model.config`; documented in docs/configuration.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
import yaml
from pydantic import BaseModel, ValidationError

from branchkeeper.errors import ConfigError
from branchkeeper.model.config import DEFAULT_CONFIG, DORMANCY_DAYS, Config, leaf_keys

#: The file's name, at the repository's top level.
CONFIG_FILENAME = ".branchkeeper.yaml"


def _sources(raw: dict[str, Any], preset: str) -> dict[str, str]:
    sources: dict[str, str] = {}
    for key in leaf_keys():
        node: Any = raw
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        leaf = key.rsplit(".", 1)[1]
        if node is not None:
            sources[key] = "file"
        elif key.startswith("branches.dormancy.") and leaf in DORMANCY_DAYS:
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
