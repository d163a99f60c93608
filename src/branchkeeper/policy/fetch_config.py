"""``git fetch``, ``git pull`` and ``git remote update|prune`` whose configured or
``--refmap`` refspecs write local branches (``R-GIT-BRANCH-OVERWRITE``; an outside trial,
F16 and F17). The refspecs on the command line are judged by the overwrite and creation rules;
these are the ones git follows without naming them: ``remote.<name>.fetch`` (from the
configuration or ``-c``), used as the default refspecs and as the map of any named ref, and
``--refmap=SPEC``. A destination under ``refs/heads/`` (a branch, or a glob such as a mirror's
``+refs/*:refs/*``) lets git move, or with ``--prune`` delete, local branches before any proof:
denied, whatever their tips, with the way out (an explicit refspec and an empty ``--refmap``).
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.fetch_refspecs import configured_fetch_refspecs
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.plan import describe
from branchkeeper.policy.ref_loss import R_OVERWRITE
from branchkeeper.shell.model import GitInvocation

#: The subcommands that fetch by the configured refspecs (``remote`` only as ``update`` or
#: ``prune``).
FETCHING = frozenset({"fetch", "pull", "remote"})


def fetches(g: GitInvocation) -> bool:
    """Whether ``g`` fetches or prunes by a remote's refspecs (no git process)."""
    if g.subcommand not in FETCHING:
        return False
    if g.subcommand == "remote":
        words = [a for a in g.args if not a.startswith("-")]
        return bool(words) and words[0] in ("update", "prune")
    return not any(a in ("-n", "--dry-run") for a in g.args) or g.subcommand == "pull"


def writes_branches(spec: str) -> bool:
    """Whether a fetch refspec's destination is a local branch or a glob over them."""
    dst = spec.lstrip("+").partition(":")[2]
    return dst.startswith("refs/heads/") or dst in ("refs/*", "*") or (
        dst.startswith("refs/") and "*" in dst and "refs/heads/".startswith(
            dst.split("*", 1)[0]))


def _followed(g: GitInvocation, configured: Sequence[tuple[str, str]]) -> list[str]:
    """The refspecs ``g`` follows that its command line does not name as a refspec operand."""
    refmaps = [a.partition("=")[2] for a in g.args if a.startswith("--refmap=")]
    if refmaps:
        return [m for m in refmaps if m]  # an empty --refmap= drops the configured ones
    from_c = [(k[len("remote."):-len(".fetch")], v) for k, v in g.config
              if k.lower().startswith("remote.") and k.lower().endswith(".fetch")]
    return [spec for _, spec in [*configured, *from_c]]


def fetch_config_decisions(gits: Sequence[GitInvocation]) -> list[Decision]:
    """One decision per fetching invocation of ``gits`` (:func:`fetches`): deny when a refspec
    it follows without naming it writes local branches. One ``git config`` per repository."""
    out: list[Decision] = []
    read: dict[str, list[tuple[str, str]]] = {}
    for g in gits:
        if not fetches(g):
            continue
        where = g.cwd or "."
        if where not in read:
            read[where] = configured_fetch_refspecs(where)
        bad = [s for s in _followed(g, read[where]) if writes_branches(s)]
        out.append(_decision(describe(g), bad) if bad else ALLOW)
    return out


def _decision(how: str, specs: Sequence[str]) -> Decision:
    return Decision(
        Verdict.DENY, R_OVERWRITE,
        f"`{how}` follows fetch refspecs that write local branches, so git may move them, or "
        "with --prune delete them, losing the commits only they hold (from the configuration, "
        "-c or --refmap):\n" + "\n".join(listed([f"`{s}`" for s in dict.fromkeys(specs)])),
        "Fetch into remote-tracking refs only, naming the refspec and an empty --refmap: "
        "`git fetch --refmap= origin '+refs/heads/*:refs/remotes/origin/*'` (what `branchkeeper "
        "prune` runs); or ask a human to change the remote's fetch refspec.")


def push_expansions(gits: Sequence[GitInvocation]) -> list[tuple[GitInvocation, list[str]]]:
    """For each ``git push`` of ``gits`` that names a remote but no refspec, the words git
    pushes by that remote's configuration (``-c`` first, then the repository's): its
    ``remote.<name>.push`` refspecs, or ``--mirror`` where ``remote.<name>.mirror`` is set;
    judged as if written on the command line (:mod:`branchkeeper.policy.command`), with the
    remote named (``origin``, or the one remote so configured) when the push names none. One
    ``git config`` per repository, only for such a push."""
    from branchkeeper.analysis.fetch_refspecs import config_true, configured_push
    from branchkeeper.shell.gitpush import push_parts

    out: list[tuple[GitInvocation, list[str]]] = []
    read: dict[str, dict[str, tuple[list[str], bool]]] = {}
    for g in gits:
        if g.subcommand != "push":
            continue
        remote, named, wide = push_parts(g)
        if named or wide:
            continue
        where = g.cwd or "."
        if where not in read:
            read[where] = configured_push(where)
        extra: list[str] = []
        if remote is None:  # the remote git picks: origin, or the one remote configured so
            set_c = {k.lower().split(".")[1] for k, _ in g.config
                     if k.lower().startswith("remote.") and k.lower().count(".") >= 2}
            known = sorted(set(read[where]) | set_c)
            remote = "origin" if "origin" in known else (known[0] if len(known) == 1 else None)
            if remote is None:
                continue
            extra = [remote]
        from_c = [v for k, v in g.config if k.lower() == f"remote.{remote.lower()}.push"]
        mirror_c = [v for k, v in g.config if k.lower() == f"remote.{remote.lower()}.mirror"]
        specs, mirror = read[where].get(remote, ([], False))
        if mirror_c:
            mirror = config_true(mirror_c[-1])
        words = ["--mirror"] if mirror else (from_c or specs)
        if words:
            out.append((g, [*extra, *words]))
    return out
