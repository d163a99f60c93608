"""``R-GIT-HOOKS-BYPASS``: commands that switch git's own safety net off (issue 15; docs/git-hook.md,
docs/guard.md).

The ``reference-transaction`` hook of ``branchkeeper install --git-hooks`` keeps every commit a
branch deletion or rewind would lose, whoever runs it. An agent can still tell git not to run
it, or take it away: ``git -c core.hooksPath=...`` (and ``--config-env``), ``GIT_CONFIG_*``
overrides of ``core.hooksPath`` (``GIT_CONFIG_COUNT``/``KEY_n``, ``GIT_CONFIG_PARAMETERS``, a
``GIT_CONFIG_GLOBAL``/``SYSTEM`` file that sets it), ``git config core.hooksPath VALUE``,
writing, moving, removing or changing the mode of the hook file (or the directory holding it)
through the shell, ``branchkeeper uninstall --git-hooks``, ``install --git-hooks --command``,
and setting the variable our own bundled deletes carry.

Two verdicts. What switches the net off for ONE call (``-c``/``--config-env``, the
``GIT_CONFIG_*`` overrides, the own-delete variable) is denied: nobody needs it, and a person
who does runs git themselves. What changes the installed hook for good (``git config
core.hooksPath``, the hook file or its directory, ``uninstall``/``install --command``) is a
change of branchkeeper's own protection, which a person decides (``R-BRANCHKEEPER-TAMPER``,
issue 19): it is asked, like every such change. A text and filesystem check: no git process.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from branchkeeper.policy.decision import Decision, Verdict
from branchkeeper.shell.model import Invocation, ParsedCommand, join_path
from branchkeeper.shell.parse import git_invocation

R_HOOKS_BYPASS = "R-GIT-HOOKS-BYPASS"
#: The variable our own bundled deletes set (``branchkeeper.actions.refupdate.OWN_DELETE_ENV``).
OWN_DELETE_ENV = "BRANCHKEEPER_OWN_DELETE"
HOOK_NAMES = frozenset({"reference-transaction", "reference-transaction.branchkeeper-chained"})
_MARKER = b"# branchkeeper-managed-hook: reference-transaction"
_KEY = "core.hookspath"
#: Commands that change or remove every path they are given.
_CHANGES_ALL = frozenset({"rm", "mv", "chmod", "chown", "chgrp", "truncate", "shred", "unlink",
                          "tee", "chattr", "setfacl", "rmdir"})
#: Commands that write only their last path argument.
_WRITES_LAST = frozenset({"cp", "ln", "install", "rsync"})
#: Commands that change the files they name only with an in-place option.
_IN_PLACE = frozenset({"sed", "perl", "ruby"})
_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--show-origin",
          "--show-scope", "--name-only")


def _deny(what: str) -> Decision:
    """A one-call switch: denied."""
    return Decision(
        Verdict.DENY, R_HOOKS_BYPASS,
        f"{what}: that switches off git's safety net (the reference-transaction hook that keeps "
        "the commits a branch deletion or rewind would lose).",
        "Run the command without it. To delete a branch whose work is not merged, save it "
        "first (`git push -u <remote> NAME`) or use `branchkeeper delete -- NAME`, which "
        "bundles it; changing the hook is for a human (`branchkeeper uninstall --git-hooks`).")


def _ask(what: str) -> Decision:
    """A lasting change of the installed hook: a person decides."""
    return Decision(
        Verdict.ASK, R_HOOKS_BYPASS,
        f"{what}: that changes git's safety net (the reference-transaction hook that keeps the "
        "commits a branch deletion or rewind would lose). An agent may not switch it off; a "
        "person decides.",
        "Ask a human to make this change (what a person runs outside the agent is never "
        "judged). To delete a branch whose work is not merged, save it first (`git push -u "
        "<remote> NAME`) or use `branchkeeper delete -- NAME`, which bundles it.")


def _ours(path: str) -> bool:
    """Whether ``path`` is our hook, its chained hook, or a directory holding our hook (the
    hooks directory, a git dir)."""
    if os.path.basename(path) in HOOK_NAMES:
        return True
    for candidate in (os.path.join(path, "reference-transaction"),
                      os.path.join(path, "hooks", "reference-transaction")):
        try:
            with open(candidate, "rb") as fh:
                if _MARKER in fh.read(4096):
                    return True
        except OSError:
            continue
    return False


def _config_file_sets_it(path: str | None) -> bool:
    """A ``GIT_CONFIG_GLOBAL``/``SYSTEM`` file that may set ``core.hooksPath`` (or include
    another file that may); an unknown path counts."""
    if path is None:
        return True
    try:
        with open(path, "rb") as fh:
            text = fh.read(1 << 20).lower()
    except OSError:
        return False  # git ignores a missing file
    return b"hookspath" in text or b"include" in text


def _env_problem(env: Mapping[str, str], dynamic: Iterable[str], cwd: str | None) -> str:
    names = set(dynamic)
    for key, value in env.items():
        if key.startswith("GIT_CONFIG_KEY_") and (key in names or value.lower() == _KEY):
            return f"`{key}` names core.hooksPath"
        if key == "GIT_CONFIG_PARAMETERS" and (key in names or "hookspath" in value.lower()):
            return "`GIT_CONFIG_PARAMETERS` sets core.hooksPath"
        if key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") and _config_file_sets_it(
                None if key in names else join_path(cwd, value)):
            return f"`{key}` points git at a configuration that may set core.hooksPath"
    return ""


def _paths(inv: Invocation) -> list[str]:
    """The paths ``inv`` writes, moves or removes (absolute where resolvable)."""
    words = [w for w in inv.argv[1:] if not w.startswith("-")]
    name = inv.name
    if name in _WRITES_LAST:
        words = words[-1:]
    elif name in _IN_PLACE:
        if not any(w.startswith("-i") or w == "--in-place" for w in inv.argv[1:]):
            words = []
    elif name == "dd":
        words = [w[3:] for w in inv.argv[1:] if w.startswith("of=")]
    elif name not in _CHANGES_ALL:
        words = []
    out = [p for w in words if (p := join_path(inv.cwd, w)) is not None]
    out += [r.path for r in inv.redirects if r.path is not None and r.op in
            (">", ">>", ">|", "&>", "&>>", "<>", ">&") and not r.target.isdigit()]
    return out


def _git_one_call(inv: Invocation) -> str:
    """Why ``inv`` runs git without its hooks for this one call (``""``: it does not)."""
    g = git_invocation(inv)
    if g is None:
        return ""
    if any(k.lower() == _KEY for k, _v in g.config):
        return "`git -c core.hooksPath=...` runs git without its hooks"
    if any(w.lower().startswith("--config-env") and _KEY in w.lower() for w in inv.argv[1:]) or \
            any(a.lower() == "--config-env" and _KEY in b.lower()
                for a, b in zip(inv.argv[1:], inv.argv[2:], strict=False)):
        return "`git --config-env core.hooksPath=...` runs git without its hooks"
    return ""


def _git_config(inv: Invocation) -> str:
    """Why ``inv`` (``git config``) moves git's hooks away for good (``""``: it does not)."""
    g = git_invocation(inv)
    if g is not None and g.subcommand == "config" and any(a.lower() == _KEY for a in g.args) \
            and not any(a in _READS for a in g.args):
        return "`git config core.hooksPath` moves git's hooks away"
    return ""


def _branchkeeper_problem(inv: Invocation) -> str:
    if inv.name != "branchkeeper" and inv.argv[1:3] != ("-m", "branchkeeper"):
        return ""
    words = set(inv.argv[1:])
    if "--git-hooks" not in words:
        return ""
    if "uninstall" in words:
        return "`branchkeeper uninstall --git-hooks` removes the hook"
    if "install" in words and any(w == "--command" or w.startswith("--command=") for w in words):
        return "`branchkeeper install --git-hooks --command ...` makes the hook run another program"
    return ""


def bypass_decisions(command: str, parsed: ParsedCommand) -> list[Decision]:
    """The ways ``command`` (already ``parsed``) switches the git hook off: a deny for a
    one-call switch (the first found), else an ask for a lasting change of the hook (the first
    found); ``[]`` when it does none of that."""
    if OWN_DELETE_ENV in command:
        return [_deny(f"The command sets `{OWN_DELETE_ENV}`, which only branchkeeper's own "
                      "bundled deletes carry")]
    for inv in parsed.invocations:
        why = _env_problem(inv.env, inv.env_dynamic, inv.cwd) or _git_one_call(inv)
        if why:
            return [_deny(why[0].upper() + why[1:])]
    for inv in parsed.invocations:
        why = _git_config(inv) or _branchkeeper_problem(inv)
        if not why:
            hit = next((p for p in _paths(inv) if _ours(p)), None)
            if hit is not None:
                why = f"`{inv.name}` changes {hit}, the git hook (or what holds it)"
        if why:
            return [_ask(why[0].upper() + why[1:])]
    return []
