"""``branchkeeper config check | show [--json] | init``: the repository's ``.branchkeeper.yaml``.

- ``check``: validate the file (or say that every default applies); exit 0, or exit 4 with the
  one-line :class:`~branchkeeper.errors.ConfigError`.
- ``show``: every effective leaf value with where it came from (``default``, ``file``,
  ``preset:<name>``); a table, or ``--json``.
- ``init``: write a commented starter file listing every key at its default; never overwrites.

The repository is the one holding ``-C DIR`` (or the current directory); its top level comes from
``git rev-parse --show-toplevel``. Documented in docs/configuration.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from branchkeeper.adapters.common import stdout_console
from branchkeeper.errors import BranchkeeperError, ExitCode, NotARepositoryError
from branchkeeper.git.run import run_git
from branchkeeper.model.config import DEFAULT_CONFIG, DEPRECATED_KEYS, Config, effective_values
from branchkeeper.model.config_file import CONFIG_FILENAME, load_config

#: The comment above each block of the starter file.
_BLOCK_COMMENTS: dict[str, str] = {
    "branches": "Branch policy: the default branch, what is counted, the guards and their modes.",
    "wip": "WIP cap: how many work branches may be open at once.",
    "duplicates": "Advice when a new branch name looks like an existing one.",
    "dormancy": "Dormancy stages by days since a branch's last commit (presets: see the docs).",
    "stop_guard": "The Stop guard: no dirty or unpushed work left behind when an agent stops.",
    "force_removal": "Lossless `git worktree remove --force` and `git branch -D`.",
    "evacuation": "Refuse copying work out of a worktree and then destroying it.",
    "git_hook": "The git hook of `install --git-hooks`: keep or refuse a lossy branch change.",
    "cleanup_after_merge": "Delete a merged branch and its worktree after the merge.",
    "sweep": "Bounds of the inventory.",
    "worktrees": "Worktree removal: what must be kept, what may be lost.",
    "session_start": "The session-start routine: when the prune is due, and what then.",
}

_PLAIN = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*")


def register(subparsers: Any) -> None:
    """Add ``config`` and its three subcommands to the ``branchkeeper`` parser."""
    parser = subparsers.add_parser(
        "config", help="check, show or create .branchkeeper.yaml",
        description="Check, show or create the repository's .branchkeeper.yaml (at the top "
                    "level of the repository; every key is documented in "
                    "docs/configuration.md). A repository without the file gets every default.")
    sub = parser.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True)
    check = sub.add_parser(
        "check", help="validate .branchkeeper.yaml",
        description="Validate .branchkeeper.yaml: exit 0 when it is valid (or absent: every "
                    "default applies), exit 4 with one line naming the file, line, key and "
                    "problem otherwise.")
    check.set_defaults(func=run_check)
    show = sub.add_parser(
        "show", help="every effective value and where it came from",
        description="Print every configuration key with its effective value and where it "
                    "came from: default, file, or preset:<name> (dormancy days).")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=run_show)
    init = sub.add_parser(
        "init", help="write a commented starter .branchkeeper.yaml",
        description="Write a commented .branchkeeper.yaml listing every key at its default; "
                    "an existing file is never overwritten.")
    init.set_defaults(func=run_init)


def repository_root(directory: str | None) -> Path:
    """The top level of the work tree holding ``directory`` (default: the current directory).

    Raises :class:`NotARepositoryError` when the directory does not exist or is not inside a
    git work tree; :class:`~branchkeeper.git.run.GitError` if git cannot run.
    """
    start = Path(directory) if directory is not None else Path.cwd()
    if not start.is_dir():
        raise NotARepositoryError(f"{start}: no such directory")
    # exit 128 = not a repository, or a bare one (no top level); say what git said.
    result = run_git(["rev-parse", "--show-toplevel"], cwd=start, check=False)
    top = result.path_text.rstrip("\n")
    if result.returncode != 0 or not top:
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = f" (git: {said[0]})" if said else ""
        raise NotARepositoryError(
            f"{start} is not inside a git work tree{detail}; .branchkeeper.yaml lives at a "
            f"repository's top level (run inside one, or pass -C DIR)")
    return Path(top)


def run_check(args: argparse.Namespace) -> int:
    """``config check``: print ``ok: ...`` and return 0; raises ConfigError when invalid."""
    loaded = load_config(repository_root(args.directory))
    if loaded.path is None:
        print(f"ok: no {CONFIG_FILENAME}; every default applies")
    else:
        print(f"ok: {loaded.path} is valid")
    return int(ExitCode.OK)


def run_show(args: argparse.Namespace) -> int:
    """``config show [--json]``: every dotted leaf key, its effective value and its source."""
    loaded = load_config(repository_root(args.directory))
    values = effective_values(loaded.config)
    if args.json:
        doc = {
            "file": None if loaded.path is None else str(loaded.path),
            "values": {key: {"value": value, "source": loaded.sources[key]}
                       for key, value in values.items()},
        }
        print(json.dumps(doc, indent=2))
        return int(ExitCode.OK)
    title = f"{loaded.path}" if loaded.path is not None else f"no {CONFIG_FILENAME}: defaults"
    if not sys.stdout.isatty():
        sys.stdout.write(plain_show(title, values, loaded.sources))
        return int(ExitCode.OK)
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("value")
    table.add_column("source", no_wrap=True)
    for key, value in values.items():
        # Text(), never markup: a glob like "[ab]*" must print as written.
        table.add_row(Text(key), Text(_yaml_value(value)), Text(loaded.sources[key]))
    stdout_console().print(table)
    return int(ExitCode.OK)


def plain_show(title: str, values: dict[str, object], sources: dict[str, str]) -> str:
    """``config show`` off a terminal: the title, then one ``key = value  # source`` line per
    key (values as YAML writes them), keys padded to one column: readable in a pipe or a log,
    never a table as wide as its longest value."""
    width = max((len(k) for k in values), default=0)
    lines = [f"# {title}"]
    lines += [f"{key:<{width}} = {_yaml_value(value)}  # {sources[key]}"
              for key, value in values.items()]
    return "\n".join(lines) + "\n"


def run_init(args: argparse.Namespace) -> int:
    """``config init``: write the starter file; raises BranchkeeperError if one exists."""
    path = repository_root(args.directory) / CONFIG_FILENAME
    try:
        with path.open("x", encoding="utf-8") as fh:  # "x": never overwrite, even in a race
            fh.write(starter_text())
    except FileExistsError:
        raise BranchkeeperError(
            f"{path} already exists; config init never overwrites it "
            f"(edit it, or move it away first)") from None
    except OSError as exc:
        raise BranchkeeperError(f"{path}: cannot write ({exc.strerror})") from None
    print(f"wrote {path} (every key at its default); edit it, then run: branchkeeper config check")
    return int(ExitCode.OK)


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    # Plain only when YAML reads it back as the same string; else a JSON (= YAML) quoted string.
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text:
        return text
    return json.dumps(text)


def _yaml_value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


def _starter_lines(model: BaseModel, indent: int, prefix: str = "") -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            lines += ["", f"{pad}# {_BLOCK_COMMENTS.get(name, '')}".rstrip(), f"{pad}{name}:"]
            lines += _starter_lines(value, indent + 1, f"{prefix}{name}.")
            continue
        if f"{prefix}{name}" in DEPRECATED_KEYS:
            continue  # a new file never starts with a key that is ignored
        lines.append(f"{pad}# {info.description}")
        if isinstance(value, list) and value:
            lines.append(f"{pad}{name}:")
            lines += [f"{pad}  - {_scalar(item)}" for item in value]
        else:
            lines.append(f"{pad}{name}: {_yaml_value(value)}")
    return lines


def starter_text(config: Config = DEFAULT_CONFIG) -> str:
    """The text ``config init`` writes: every key at its value in ``config``, each commented.

    Loading it gives exactly ``config`` (tested for the defaults).
    """
    head = [
        "# branchkeeper configuration; reference: docs/configuration.md",
        "# Every key is optional and is shown here at its default. Delete the keys you do not",
        "# want to pin, so that they follow future defaults. Check with: branchkeeper config check",
    ]
    return "\n".join(head + _starter_lines(config, 0)) + "\n"
