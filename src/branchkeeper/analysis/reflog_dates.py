"""What the reflogs say about a local branch: when it was created, and whether anything was
done on it since (first document, section 2; field case C07).

Read from the reflog files directly where the files ref backend keeps them (one file per
branch, no process); otherwise one ``git log -g --stdin`` for every name. Creation dates are
cached per (name, tip) in the inventory cache.
"""

from __future__ import annotations

from pathlib import Path

from branchkeeper.git.repo import RepoFacts
from branchkeeper.git.run import run_git
from branchkeeper.git.types import Oid
from branchkeeper.state.inventory_cache import InventoryCache


def creation_dates(facts: RepoFacts, names: list[str], tips: dict[str, Oid],
                   cache: InventoryCache) -> dict[str, int]:
    """Oldest ``branch: Created`` reflog entry per local branch (field case C07).

    Cached per (name, tip). With the files ref backend the reflogs are read directly (one file
    per branch, no process); otherwise (reftable) one ``git log -g --stdin`` for all names.
    """
    created: dict[str, int] = {}
    todo: list[str] = []
    for n in names:
        key = f"created:{n}:{tips[n]}"
        if key in cache.counts:
            cache.used_counts.add(key)
            if cache.counts[key] > 0:
                created[n] = cache.counts[key]
        else:
            todo.append(n)
    if not todo:
        return created
    logs = facts.common_dir / "logs" / "refs" / "heads"
    found: dict[str, int] = {}
    if (facts.common_dir / "reftable").exists() or not logs.is_dir():
        found = _creation_dates_git(facts.root, todo)
    else:
        for n in todo:
            try:
                with open(logs / n, "rb") as fh:
                    first = fh.readline()
            except (OSError, ValueError):
                continue
            meta, _, message = first.partition(b"\t")
            if not message.startswith(b"branch: Created"):
                continue
            fields = meta.rsplit(b" ", 2)
            if len(fields) == 3 and fields[1].isdigit():
                found[n] = int(fields[1])
    for n in todo:
        key = f"created:{n}:{tips[n]}"
        cache.counts[key] = found.get(n, 0)
        cache.used_counts.add(key)
        if n in found:
            created[n] = found[n]
    return created


def _creation_dates_git(root: Path, names: list[str]) -> dict[str, int]:
    """The same through ``git log -g`` (reftable or no reflog directory)."""
    stdin = "".join(f"refs/heads/{n}\n" for n in names).encode("utf-8", "surrogateescape")
    result = run_git(["log", "-g", "--stdin", "--date=unix", "--format=%gD%x00%gs"],
                     cwd=root, stdin=stdin, check=False)
    if result.returncode != 0:
        return {}
    created: dict[str, int] = {}
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        selector, _, message = line.partition("\0")
        ref, sep, stamp = selector.rpartition("@{")
        if not sep or not stamp.endswith("}") or not ref.startswith("refs/heads/"):
            continue
        if not message.startswith("branch: Created"):
            continue
        try:
            when = int(stamp[:-1])
        except ValueError:
            continue
        name = ref[len("refs/heads/"):]
        created[name] = min(when, created.get(name, when))
    return created


def had_work(facts: RepoFacts, name: str | None) -> bool:
    """Whether local branch ``name``'s reflog records more than its creation (a commit, a
    merge, a reset): read from the reflog file (files backend); False when unknown."""
    if name is None:
        return False
    try:
        with open(facts.common_dir / "logs" / "refs" / "heads" / name, "rb") as fh:
            return sum(1 for _ in fh) > 1
    except (OSError, ValueError):
        return False
