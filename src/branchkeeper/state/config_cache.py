"""The configuration on the hook path, without importing pydantic on every tool call.

A hook runs on every agent tool call; importing pydantic and validating ``.branchkeeper.yaml``
costs about 150 ms there. :func:`load_config_cached` keeps the validated, effective values as
JSON under ``<common git dir>/branchkeeper/config-cache.json``, keyed by the file's identity
(size, mtime, ctime, inode) and the identity of the config model's own source files, and returns
a read-only attribute view of them. When the key does not match it validates the normal way
(raising :class:`ConfigError` as :func:`load_config` does) and refreshes the cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from branchkeeper import __version__
from branchkeeper.state.jsonfile import read_json, write_json_atomic

if TYPE_CHECKING:
    from branchkeeper.model.config import Config

CACHE_NAME = "config-cache.json"
_FILE = ".branchkeeper.yaml"


class ConfigView:
    """Attribute access over a plain dict of effective values (read-only)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, key: str) -> Any:
        try:
            value = self._data[key]
        except KeyError:
            raise AttributeError(key) from None
        return ConfigView(value) if isinstance(value, dict) else value

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("configuration is read-only")


def _identity(path: Path) -> str:
    try:
        st = path.stat()
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def _code_identity() -> str:
    """The version plus the identity of the sources that validate a config (the model and the
    file's reader), so an edited checkout validates afresh."""
    model = Path(__file__).parent.parent / "model"
    try:
        stats = [(model / name).stat() for name in ("config.py", "config_file.py")]
    except OSError:
        return __version__
    return ":".join([__version__, *(f"{st.st_mtime_ns}:{st.st_size}" for st in stats)])


def dump_effective(config: Config) -> dict[str, Any]:
    """The config as JSON-able values, with the effective dormancy days added."""
    data = config.model_dump(mode="json")
    d = config.branches.dormancy
    data["branches"]["dormancy"].update(
        effective_advisory_days=d.effective_advisory_days,
        effective_noisy_days=d.effective_noisy_days,
        effective_block_days=d.effective_block_days,
    )
    return data


def config_key(config: Config) -> str:
    """A digest of the effective configuration values (32 hex digits): equal for the
    validated model and for its cached view (:class:`ConfigView`), so a file written by a
    command and read by the hook can say which configuration it was computed with."""
    import hashlib
    import json

    data = config._data if isinstance(config, ConfigView) else dump_effective(config)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def load_config_cached(root: Path, common_dir: Path) -> Config:
    """The configuration of the repository whose main worktree is ``root``.

    Returns a :class:`ConfigView` (typed as ``Config``: same attribute paths) from the cache
    when it is current, else validates with :func:`branchkeeper.model.config_file.load_config`
    and refreshes the cache. Raises :class:`ConfigError` for an invalid file.
    """
    key = f"{_identity(root / _FILE)}|{_code_identity()}"
    cache = common_dir / "branchkeeper" / CACHE_NAME
    data = read_json(cache)
    if isinstance(data, dict) and data.get("key") == key and isinstance(data.get("config"), dict):
        return cast("Config", ConfigView(data["config"]))
    from branchkeeper.model.config_file import load_config

    config = load_config(root).config
    if os.access(common_dir, os.W_OK):
        write_json_atomic(cache, {"key": key, "config": dump_effective(config)})
    return config
