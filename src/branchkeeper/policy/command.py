"""Judge one shell command: read it, plan what it asks, and combine every rule family's
decision into one (issue 5 section 3; first document sections 3, 4, 7, 11, 12, 13).

:func:`decide_command` is what the PreToolUse hook and ``branchkeeper check`` call for a Bash
command an agent is about to run. It reads the command (:mod:`branchkeeper.shell`), denies
what it cannot read or may not take (:mod:`~branchkeeper.policy.unread`), follows git
aliases, and asks each family in turn: creation, evacuation, removal, ``rm``, discard (and,
before them, whether the command switches git's own hook off, ``hooks_bypass``);
:func:`~branchkeeper.policy.decision.combine` keeps the most severe decision and the others'
reasons as context. The Agent / WorktreeCreate route is
:func:`branchkeeper.policy.creation.decide_creation`; the same-turn evacuation records come
from :func:`branchkeeper.policy.evacuation.evacuations_in`.

A command with no git creation, destruction or evacuation returns ALLOW without starting any
git process. Each rule family is imported only for a command that holds work for it (a
``git switch -c`` loads the creation family alone). Every git call is bounded
(:data:`~branchkeeper.analysis.guard_facts.GUARD_TIMEOUT_S`); a failure allows a creation with
a "could not judge" line and denies a destruction that cannot be proven, saying why.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import (
    read_alias,
)
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.decision import ALLOW, Decision, EvacuationRecord, Verdict, combine
from branchkeeper.policy.discard_plan import head_move_target, reset_target
from branchkeeper.policy.facts import GuardRepos
from branchkeeper.policy.hooks_bypass import bypass_decisions
from branchkeeper.policy.plan import (
    DESTRUCTIVE_SUBCOMMANDS,
    KNOWN_GIT_COMMANDS,
    Plan,
    describe,
    inline_alias_problem,
    plan_command,
    unread_destructive,
)
from branchkeeper.policy.tamper import tamper_in
from branchkeeper.policy.targets import Deleted, deletions
from branchkeeper.policy.unread import consent_decision, unparsed_decision, unread_decision
from branchkeeper.shell.gitargv import config_from_env, writes_git_config
from branchkeeper.shell.model import GitInvocation, Invocation
from branchkeeper.shell.parse import git_invocations, parse_command
from branchkeeper.shell.quoting import shell_quote


def decide_command(command: str, *, cwd: str,
                   evacuations: Sequence[EvacuationRecord] = ()) -> Decision:
    """Decide a shell ``command`` an agent is about to run in ``cwd`` (absolute).

    ``evacuations``: same-turn records (see :func:`evacuations_in`); a destruction aimed at a
    recorded worktree or branch is denied (section 13). Returns a :class:`Decision`; never
    raises. A command with nothing to judge is ALLOW with no git process started.
    """
    return _decide_text(command, cwd, evacuations, 0)


_CONSENT_FLAG = "--allow-unproven"
_MAX_ALIAS_DEPTH = 3


def _decide_text(command: str, cwd: str, evacuations: Sequence[EvacuationRecord],
                 depth: int) -> Decision:
    try:
        if _CONSENT_FLAG in command:
            return consent_decision()  # only a person at a terminal consents (no git)
        parsed = parse_command(command, cwd=cwd, home=os.environ.get("HOME") or None,
                           env=os.environ)
        if parsed.unparsed and depth == 0:
            from branchkeeper.shell.syntax import refused_line

            if refused_line(command) is not None:
                return ALLOW  # the shell refuses the line and runs none of it
        bypass = bypass_decisions(command, parsed)  # text and filesystem only (no git)
        if any(d.verdict is Verdict.DENY for d in bypass):
            return combine(bypass)  # a one-call switch of git's hook: nothing outranks it
        why = unread_destructive(parsed)
        if why is not None:
            return unread_decision(why)
        plan = plan_command(parsed)
        gits = git_invocations(parsed)
        tampering = tamper_in(parsed, cwd, home=os.environ.get("HOME") or None, env=os.environ)
        early = [*tampering, *bypass, *(unparsed_decision(f"`{describe(g)}` runs a git alias", why)
                               for g in gits if (why := inline_alias_problem(g)) is not None)]
        early += _aliases(gits, evacuations, depth,  # a git process only for unknown words
                          defined_here=writes_git_config(parsed))
        deleted = deletions(parsed, cwd)  # the filesystem only: no git process
        if any(g.subcommand in FETCHING for g in gits):
            from branchkeeper.policy.fetch_config import fetch_config_decisions

            early += fetch_config_decisions(gits)  # one git config per repository
        if any(g.subcommand == "push" for g in gits) and depth < _MAX_ALIAS_DEPTH:
            early += _configured_pushes(gits, evacuations, depth)
        resets = [(g, rev) for g in gits if (rev := reset_target(g)) is not None]
        moves = [(g, rev) for g in gits if (rev := head_move_target(g)) is not None]
        rm_hits: list[tuple[str, Invocation]] = []
        if plan.rm_targets or deleted:
            from branchkeeper.policy.rm import expand_rm_globs, rm_worktrees

            plan = expand_rm_globs(plan)  # the filesystem only
            rm_hits = rm_worktrees(plan, deleted)  # the filesystem only: no git process
        if plan.empty and not rm_hits and not resets and not moves and not early \
                and not deleted \
                and not (evacuations and plan.rm_targets):
            return ALLOW
        return combine([*early, _decide(plan, evacuations, rm_hits, resets, deleted, cwd),
                        *_moves(moves)])
    except Exception as exc:  # the guard must never crash the hook; fail closed on destruction
        return unparsed_decision("The command may delete work",
                                 f"the guard failed ({type(exc).__name__}: {exc})")


#: The subcommands :mod:`branchkeeper.policy.fetch_config` judges (kept here: the module is
#: imported only for them).
FETCHING = frozenset({"fetch", "pull", "remote"})


def _configured_pushes(gits: Sequence[GitInvocation], evacuations: Sequence[EvacuationRecord],
                       depth: int) -> list[Decision]:
    """A ``git push REMOTE`` that names no refspec pushes what the remote's configuration says
    (``remote.<name>.push``, ``remote.<name>.mirror``, also from ``-c``): judged as the same
    push with those words on its command line, by every push rule."""
    from branchkeeper.policy.fetch_config import push_expansions

    out: list[Decision] = []
    for g, words in push_expansions(gits):
        text = " ".join(shell_quote(w) for w in ["git", "push", *g.args, *words])
        out.append(_decide_text(text, g.cwd or ".", evacuations, depth + 1))
    return out


def _moves(moves: Sequence[tuple[GitInvocation, str]]) -> list[Decision]:
    """``checkout``/``switch`` away from a detached HEAD (:mod:`branchkeeper.policy.detached`,
    imported only for such a command)."""
    if not moves:
        return []
    from branchkeeper.policy.detached import detached_move_decisions

    return detached_move_decisions(moves, GuardRepos())


def _aliases(gits: Sequence[GitInvocation], evacuations: Sequence[EvacuationRecord],
             depth: int, *, defined_here: bool = False) -> list[Decision]:
    """Git invocations whose subcommand is no git command: ONE ``config --get alias.<name>``
    each; a shell alias is denied as unparsed, any other is judged expanded (item 5). With
    ``defined_here`` (the same command may define an alias first) or configuration from the
    environment, the look-up cannot see it: denied as unparsed."""
    out: list[Decision] = []
    for g in gits:
        sub = g.subcommand
        if sub is None or sub in KNOWN_GIT_COMMANDS or g.cwd is None or sub.startswith("-") \
                or "$" in sub:
            continue
        if config_from_env(g) or defined_here:
            out.append(unparsed_decision(
                f"`{describe(g)}` runs {shell_quote(sub)}, which is no git command",
                "the command itself (git config alias.*, a config file it writes), its "
                "environment (GIT_CONFIG_*, HOME) or --config-env can define it as an alias "
                "the guard cannot read"))
            continue
        inline = [v for k, v in g.config if k.lower() == f"alias.{sub.lower()}"]
        try:
            text = inline[-1] if inline else read_alias(g.cwd, sub, git_dir=g.git_dir)
        except BranchkeeperError:
            continue  # an unknown command that git could not look up: git fails on its own
        if text is None:
            continue
        what = f"`{describe(g)}` runs the git alias {shell_quote(sub)}"
        if text.lstrip().startswith("!"):
            out.append(unparsed_decision(what, "it is a shell alias (`!...`), which the guard "
                                               "does not follow"))
            continue
        words = shlex.split(text)
        if depth >= _MAX_ALIAS_DEPTH or (g.dynamic and words[:1] and
                                         words[0] in DESTRUCTIVE_SUBCOMMANDS):
            out.append(unparsed_decision(what, "its arguments or nesting cannot be followed"))
            continue
        pre = [*(["--git-dir", g.git_dir] if g.git_dir else []),
               *(["--work-tree", g.work_tree] if g.work_tree else []),
               *[w for k, v in g.config if not k.lower().startswith("alias.")
                 for w in ("-c", f"{k}={v}")]]
        expanded = " ".join(shell_quote(w) for w in ["git", *pre, *words, *g.args])
        out.append(_decide_text(expanded, g.cwd, evacuations, depth + 1))
    return out


def _decide(plan: Plan, records: Sequence[EvacuationRecord],
            rm_hits: Sequence[tuple[str, Invocation]],
            resets: Sequence[tuple[GitInvocation, str]], deleted: Sequence[Deleted],
            cwd: str) -> Decision:
    """Ask each rule family the plan holds work for; a family is imported only then (the
    hook path loads the one a command needs: issue 16)."""
    repos = GuardRepos()
    out: list[Decision] = []
    unparsed = plan.parsed.unparsed_reason if plan.parsed.unparsed else ""
    if plan.creations:
        from branchkeeper.policy.creation import judge_creation

        out.extend(judge_creation(c, g, repos, unparsed) for c, g in plan.creations)
    if (plan.destructions or plan.rm_targets) and (plan.evacuations or records):
        from branchkeeper.policy.evacuation import evacuate_destroy

        # the evacuation shape first: its deny names the right move (section 13)
        out.extend(evacuate_destroy(plan, repos, records))
    if plan.destructions:
        from branchkeeper.policy.removal import destruction_decisions

        out.extend(destruction_decisions(plan, repos, unparsed))
    if plan.force_pushes:
        from branchkeeper.policy.push import force_push_decisions

        out.extend(force_push_decisions(plan, repos, unparsed))
    if plan.rebases:
        from branchkeeper.policy.rebase import rebase_decisions

        out.extend(rebase_decisions(plan, repos, unparsed))
    if rm_hits:
        from branchkeeper.policy.rm import rm_decisions

        out.extend(rm_decisions(plan, repos, rm_hits))
    if deleted:
        from branchkeeper.policy.deletion import deletion_decisions

        out.extend(deletion_decisions(deleted, repos, cwd))
    if plan.discards:
        from branchkeeper.policy.discard import discard_decisions

        out.extend(discard_decisions(plan, repos, unparsed))
    if resets:
        from branchkeeper.policy.removal import reset_decisions

        out.extend(reset_decisions(resets, repos))
    return combine(out)


def rule_ids() -> tuple[str, ...]:
    """Every rule id a guard decision can carry, sorted: the ``R_*`` constants of each rule
    family and of the decisions it combines (read from the modules, so a new rule is listed
    wherever this is, e.g. ``branchkeeper check --help``)."""
    from branchkeeper.policy import (
        creation,
        deletion,
        detached,
        discard,
        evacuation,
        hooks_bypass,
        push,
        rebase,
        ref_loss,
        removal,
        rm,
        stop,
        tamper,
        unread,
        worktree_name,
    )

    found = {value for module in (creation, deletion, detached, discard, evacuation, hooks_bypass, push,
                                  rebase, ref_loss, removal, rm, stop, tamper, unread, worktree_name)
             for name, value in vars(module).items()
             if name.startswith("R_") and isinstance(value, str) and value.startswith("R-")}
    return tuple(sorted(found))
