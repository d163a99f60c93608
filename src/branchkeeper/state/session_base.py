"""The default branch a session resolved at SessionStart, under ``<common git dir>/branchkeeper/
sessions/<session file stem>.base.json`` (issue 18, "resolve the base branch once per session
and reuse it").

SessionStart resolves ``branches.default`` from the refs it reads anyway and stores the answer
here; a later hook call of the same session that needs only the default branch's name (the
WorktreeRemove hook's protection of the default branch's checkout) reads it instead of listing
every ref. The file: ``{"default": configured value, "remote": remote name, "remote_head": the
``<remote>/HEAD`` target it was resolved with ("" for none), "name": str or null, "refs":
[ref, ...], "how": str, "reason": str}``. A reader trusts it only while the configuration's
``branches.default`` and ``branches.remote`` and the remote HEAD target are unchanged
(:func:`load_session_base`). Writes are atomic; a missing, corrupt or foreign file is a miss.
Expired with the session's own file (:mod:`~branchkeeper.state.session`).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from branchkeeper.state.jsonfile import read_json, write_json_atomic
from branchkeeper.state.session import SESSIONS_DIRNAME, state_filename

_SUFFIX = ".base.json"


class SessionBase(NamedTuple):
    """A stored resolution: the inputs it depends on (``default``: the configured
    ``branches.default``; ``remote``; ``remote_head``: the ``<remote>/HEAD`` target, ``""`` for
    none) and its answer (``name``, ``refs``, ``how``, ``reason``, as
    :class:`~branchkeeper.analysis.refs.DefaultBranch` has them)."""

    default: str
    remote: str
    remote_head: str
    name: str | None
    refs: tuple[str, ...]
    how: str
    reason: str


def base_path(common_dir: Path, session_id: str) -> Path:
    """The file of ``session_id``'s resolution (a name no session id can steer elsewhere)."""
    stem = state_filename(session_id).removesuffix(".json")
    return common_dir / "branchkeeper" / SESSIONS_DIRNAME / (stem + _SUFFIX)


def save_session_base(common_dir: Path, session_id: str, base: SessionBase) -> None:
    """Store ``base`` for ``session_id`` (atomic; errors ignored: it is only a shortcut)."""
    write_json_atomic(base_path(common_dir, session_id), {
        "default": base.default, "remote": base.remote, "remote_head": base.remote_head,
        "name": base.name, "refs": list(base.refs), "how": base.how, "reason": base.reason})


def load_session_base(common_dir: Path, session_id: str, *, default: str, remote: str,
                      remote_head: str) -> SessionBase | None:
    """The stored resolution of ``session_id`` when it was made with these very inputs
    (configured ``default``, ``remote``, ``remote_head`` target); None when there is none, it
    is malformed, or any input differs. No git process."""
    data = read_json(base_path(common_dir, session_id))
    if not isinstance(data, dict):
        return None
    name, refs, how, reason = (data.get("name"), data.get("refs"), data.get("how"),
                               data.get("reason"))
    if (data.get("default"), data.get("remote"), data.get("remote_head")) != (
            default, remote, remote_head) or not (name is None or type(name) is str) \
            or type(refs) is not list or not all(type(r) is str for r in refs) \
            or type(how) is not str or type(reason) is not str:
        return None
    return SessionBase(default, remote, remote_head, name, tuple(refs), how, reason)
