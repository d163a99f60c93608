"""The refspecs git follows that a command line does not name. For ``git push``: a remote's
``remote.<name>.push`` and ``remote.<name>.mirror``. For ``git fetch``, ``git pull`` or
``git remote update|prune``: ``remote.<name>.fetch`` of the configuration, which git
uses both as the default refspecs and as the map of the refs a command line names (an
outside trial, F16 and F17: a refspec into ``refs/heads/`` force-moves a branch, a mirror's
``+refs/*:refs/*`` with ``--prune`` deletes every branch the remote lacks).
"""

from __future__ import annotations

from branchkeeper.git.run import run_git


def configured_fetch_refspecs(cwd: str) -> list[tuple[str, str]]:
    """(remote name, refspec) of every ``remote.<name>.fetch`` value of the repository at
    ``cwd``, in configuration order; ``[]`` when there is none or git cannot read them (one
    ``git config`` process; a failure leaves the command to git, which reports it)."""
    res = run_git(["config", "-z", "--get-regexp", r"^remote\..*\.fetch$"], cwd=cwd,
                  check=False, timeout=10)
    if res.returncode != 0:
        return []
    out: list[tuple[str, str]] = []
    for entry in res.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = entry.partition("\n")
        if key.lower().startswith("remote.") and key.lower().endswith(".fetch") and value:
            out.append((key[len("remote."):-len(".fetch")], value))
    return out


def configured_push(cwd: str) -> dict[str, tuple[list[str], bool]]:
    """Remote name -> (its ``remote.<name>.push`` refspecs in order, whether
    ``remote.<name>.mirror`` is true) of the repository at ``cwd``, for the remotes that set
    either; ``{}`` when none does or git cannot read them (one ``git config`` process)."""
    res = run_git(["config", "-z", "--get-regexp", r"^remote\..*\.(push|mirror)$"], cwd=cwd,
                  check=False, timeout=10)
    if res.returncode != 0:
        return {}
    out: dict[str, tuple[list[str], bool]] = {}
    for entry in res.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = entry.partition("\n")
        low = key.lower()
        if not low.startswith("remote."):
            continue
        if low.endswith(".push") and value:
            name = key[len("remote."):-len(".push")]
            out.setdefault(name, ([], False))[0].append(value)
        elif low.endswith(".mirror"):
            name = key[len("remote."):-len(".mirror")]
            specs, _ = out.get(name, ([], False))
            out[name] = (specs, config_true(value))
    return out


def config_true(value: str) -> bool:
    """Whether a git configuration value reads as true (git's spellings: no value, ``true``,
    ``yes``, ``on``, ``1``; case does not matter)."""
    return value.strip().lower() in ("", "true", "yes", "on", "1")
