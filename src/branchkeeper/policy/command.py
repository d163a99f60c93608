"""The command guard's entry points: gather the few facts a decision needs, then decide.

Issue 5 section 3; first document sections 3, 4, 7, 11, 12, 13. The hook adapter and
``branchkeeper check`` call exactly these:

- :func:`decide_command` for a Bash command an agent is about to run;
- :func:`decide_creation` for the Agent / WorktreeCreate creation route;
- :func:`evacuations_in` for the same-turn evacuation record (PostToolUse).

A command with no git creation, destruction or evacuation returns ALLOW without starting any
git process. Every git call is bounded (:data:`GUARD_TIMEOUT_S`); a failure allows a creation
with a "could not judge" line and denies a destruction that cannot be proven, saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from branchkeeper.git.repo import Worktree

import os
import shlex
from collections.abc import Sequence

from branchkeeper.analysis.guard_facts import (
    GUARD_TIMEOUT_S,
    WorktreeContents,
    current_branch,
    is_ancestor,
    read_alias,
    read_tips,
    read_worktree_contents,
    unreachable_tips,
)
from branchkeeper.analysis.refs import matches_any, resolve_default_branch
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy import removal as rr
from branchkeeper.policy.creation import decide_creation, judge_creation
from branchkeeper.policy.decision import ALLOW, Decision, EvacuationRecord, Verdict, combine
from branchkeeper.policy.discard import discard_decisions
from branchkeeper.policy.evacuation import evacuate_destroy, evacuations_in
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import (
    DESTRUCTIVE_SUBCOMMANDS,
    KNOWN_GIT_COMMANDS,
    Plan,
    deleted_refs,
    describe,
    inline_alias_problem,
    plan_command,
    reset_target,
    unread_destructive,
)
from branchkeeper.policy.rm import expand_rm_globs, rm_decisions, rm_worktrees, unknown_rm
from branchkeeper.policy.unread import consent_decision, unparsed_decision, unread_decision
from branchkeeper.shell.gitargv import Destruction, config_from_env, writes_git_config
from branchkeeper.shell.model import GitInvocation, Invocation
from branchkeeper.shell.parse import git_invocations, parse_command
from branchkeeper.shell.quoting import shell_quote

__all__ = ["GUARD_TIMEOUT_S", "Decision", "EvacuationRecord", "Verdict", "decide_command",
           "decide_creation", "evacuations_in"]


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
        parsed = parse_command(command, cwd=cwd, home=os.environ.get("HOME") or None)
        why = unread_destructive(parsed)
        if why is not None:
            return unread_decision(why)
        plan = plan_command(parsed)
        gits = git_invocations(parsed)
        early = [unparsed_decision(f"`{describe(g)}` runs a git alias", why)
                 for g in gits if (why := inline_alias_problem(g)) is not None]
        early += _aliases(gits, evacuations, depth,  # a git process only for unknown words
                          defined_here=writes_git_config(parsed))
        plan, unread_rm = expand_rm_globs(plan)  # the filesystem only
        early += unknown_rm(unread_rm, cwd)
        resets = [(g, rev) for g in gits if (rev := reset_target(g)) is not None]
        rm_hits = rm_worktrees(plan)  # the filesystem only: no git process
        if plan.empty and not rm_hits and not resets and not early \
                and not (evacuations and plan.rm_targets):
            return ALLOW
        return combine([*early, _decide(plan, evacuations, rm_hits, resets)])
    except Exception as exc:  # the guard must never crash the hook; fail closed on destruction
        return unparsed_decision("The command may delete work",
                                    f"the guard failed ({type(exc).__name__}: {exc})")


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
            resets: Sequence[tuple[GitInvocation, str]] = ()) -> Decision:
    repos = GuardRepos()
    out: list[Decision] = []
    unparsed = plan.parsed.unparsed_reason if plan.parsed.unparsed else ""
    for c, g in plan.creations:
        out.append(judge_creation(c, g, repos, unparsed))
    # the evacuation shape first: its deny names the right move (section 13)
    out.extend(evacuate_destroy(plan, repos, records))
    out.extend(_destructions(plan, repos, unparsed))
    out.extend(rm_decisions(plan, repos, rm_hits))
    out.extend(discard_decisions(plan, repos, unparsed))
    out.extend(_resets(resets, repos))
    return combine(out)


def _destructions(plan: Plan, repos: GuardRepos, unparsed: str) -> list[Decision]:
    out: list[Decision] = []
    judged: dict[int, list[tuple[Destruction, GitInvocation]]] = {}
    for d, g in plan.destructions:
        if d.kind == "branch_delete":
            continue  # plain `branch -d`: git's own merged check decides
        what = f"`{describe(g)}` " + ("overwrites a branch" if d.kind == "branch_overwrite"
                                      else "deletes")
        if unparsed:
            out.append(unparsed_decision(what, f"the command could not be read in full "
                                                  f"({unparsed})"))
            continue
        if d.dynamic or d.cwd is None:
            out.append(unparsed_decision(what, "a name, path, remote or directory comes "
                                                  "from an expansion the guard cannot know"))
            continue
        facts = repos.of(g.cwd, g)
        if facts is None:
            continue  # not a repository: git refuses on its own
        judged.setdefault(id(facts), []).append((d, g))
    for items in judged.values():
        facts = repos.of(items[0][1].cwd, items[0][1])
        assert facts is not None
        try:
            out.extend(_judge_destructions(facts, items, [d for d, _ in plan.destructions]))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(
                f"`{describe(items[0][1])}` deletes", f"git could not answer ({why})"))
    return out


def _judge_destructions(facts: GuardFacts, items: list[tuple[Destruction, GitInvocation]],
                        every: list[Destruction]) -> list[Decision]:
    cfg = facts.config.branches
    out: list[Decision] = []
    excluded = deleted_refs(every)
    force_items = [(d, g) for d, g in items if d.kind in ("branch_force_delete",
                                                         "update_ref_delete", "branch_overwrite")]
    removes = [(d, g) for d, g in items if d.kind in ("worktree_remove", "worktree_remove_force")]
    tips: dict[str, str] = {}
    if force_items:
        table = facts.table()
        wanted = [r for d, _ in force_items for r in d.refs]
        for r in wanted:
            t = table.tip(r)
            if t is not None:
                tips[r] = str(t)
        # refs/heads is complete in the table: only other refs need a look-up
        missing = [r for r in wanted if r not in tips and not r.startswith("refs/heads/")]
        tips.update(read_tips(facts.repo, missing))
    # worktrees whose HEAD must be proven (force removal of a detached HEAD, or of a branch the
    # same command deletes)
    wt_checks: list[tuple[str, bool, Worktree | None]] = []
    head_tips: dict[str, str] = {}
    for d, _ in removes:
        for path in d.targets:
            wt = facts.worktree_at(path)
            force = d.kind == "worktree_remove_force"
            wt_checks.append((path, force, wt))
            if wt is None or wt.head is None:
                continue  # without --force git refuses a dirty worktree, not a lost HEAD
            if wt.detached or (wt.branch and wt.branch in excluded):
                head_tips[path] = str(wt.head)
    lost: frozenset[str] = frozenset()
    count = 0
    all_tips = [*tips.values(), *head_tips.values()]
    if all_tips:
        lost, count = unreachable_tips(facts.repo, all_tips, excluded_refs=excluded)
    for d, g in force_items:
        gone = [(r, tips[r]) for r in d.refs if r in tips and tips[r] in lost]
        if d.kind == "branch_overwrite" and gone and d.new_value and g.cwd \
                and cfg.force_removal.mode != "off":
            # the new value keeps the old tip (a fast-forward): nothing is lost
            gone = [(r, t) for r, t in gone if not is_ancestor(g.cwd, t, d.new_value)]
        names = [(r[len("refs/heads/"):] if r.startswith("refs/heads/") else r, t)
                 for r, t in gone]
        decide = (rr.branch_overwrite_decision if d.kind == "branch_overwrite"
                  else rr.branch_delete_decision)
        out.append(decide(names, lost_commits=count, remote=cfg.remote,
                          mode=cfg.force_removal.mode, how=describe(g)))
    for path, force, wt in wt_checks:
        if wt is None or wt.is_main:
            continue  # git refuses: not a worktree, or the main one
        contents: WorktreeContents = read_worktree_contents(str(wt.path), facts.config)
        head = head_tips.get(path)
        out.append(rr.worktree_remove_decision(
            path, force=force, contents=contents, head_lost=head if head in lost else None,
            mode=cfg.force_removal.mode))
    for d, _ in items:
        if d.kind == "push_delete":
            out.append(_remote_delete(facts, d))
        elif d.kind in ("push_mirror", "push_prune"):
            out.append(rr.push_mass_decision(d.kind, d.remote))
    return out


def _resets(resets: Sequence[tuple[GitInvocation, str]], repos: GuardRepos) -> list[Decision]:
    """``reset --hard|--keep|--merge|--soft|--mixed <commit>`` moves the current branch of its
    worktree: judged like ``R-GIT-BRANCH-OVERWRITE`` of that branch (one ``symbolic-ref``, the
    ref table, one ``rev-list``, one ``merge-base --is-ancestor``) (item 6)."""
    out: list[Decision] = []
    for g, rev in resets:
        how = describe(g)
        if g.cwd is None or g.dynamic:
            out.append(unparsed_decision(f"`{how}` moves the current branch",
                                            "the directory or a word comes from an expansion "
                                            "the guard cannot know"))
            continue
        try:
            facts = repos.of(g.cwd, g)
            mode = facts.config.branches.force_removal.mode if facts is not None else "off"
            if facts is None or mode == "off":
                continue
            branch = current_branch(g.cwd, git_dir=g.git_dir, work_tree=g.work_tree)
            if branch is None:
                continue  # a detached HEAD: the branch-free commit is the worktree rule's
            tip = facts.table().tip(branch)
            if tip is None:
                continue  # an unborn branch
            lost, count = unreachable_tips(facts.repo, [str(tip)], excluded_refs=[branch])
            if not lost or is_ancestor(g.cwd, str(tip), rev):
                continue
            out.append(rr.branch_overwrite_decision(
                [(branch.removeprefix("refs/heads/"), str(tip))], lost_commits=count,
                remote=facts.config.branches.remote, mode=mode, how=how))
        except (BranchkeeperError, ValueError) as exc:
            why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(unparsed_decision(f"`{how}` moves the current branch",
                                            f"git could not answer ({why})"))
    return out


def _remote_delete(facts: GuardFacts, d: Destruction) -> Decision:
    cfg = facts.config.branches
    remote = d.remote or cfg.remote
    if "/" in remote or ":" in remote or remote.startswith("."):
        return rr.remote_delete_decision(remote, [], [(n, "the remote is a URL or path, so no "
                                                          "tracking ref can prove it") for n in d.targets])
    table = facts.table(remote)
    default = resolve_default_branch(cfg.default, table)
    head = table.remote_head.removeprefix(f"refs/remotes/{remote}/")
    refused: list[tuple[str, str]] = []
    unproven: list[tuple[str, str]] = []
    tips: dict[str, str] = {}
    for name in d.targets:
        if name in (default.name, head):
            refused.append((name, "is the default branch"))
        elif matches_any(name, cfg.integration_lines):
            refused.append((name, "is an integration line (branches.integration_lines)"))
        elif matches_any(name, cfg.exempt):
            refused.append((name, "is exempt (branches.exempt)"))
        elif name in cfg.protected_names:
            refused.append((name, "is a protected name (branches.protected_names)"))
        elif name not in table.remote or table.remote[name].oid is None:
            unproven.append((name, f"no tracking ref {remote}/{name}; run "
                                   f"`git fetch {shell_quote(remote)}` so it can be proven"))
        else:
            tips[name] = str(table.remote[name].oid)
    targets = [f"refs/remotes/{remote}/{default.name}"] if default.name in table.remote else []
    targets += [f"refs/remotes/{remote}/{n}" for n in sorted(table.remote)
                if matches_any(n, cfg.integration_lines)]
    if tips and not targets:
        unproven += [(n, "the remote default branch is not resolved") for n in tips]
    elif tips:
        lost, _ = unreachable_tips(facts.repo, list(tips.values()), excluded_refs=(),
                                   not_refs=targets)
        base = f"{remote}/{default.name}" if default.name else "the default branch"
        unproven += [(n, f"{remote}/{n} is not an ancestor of {base} or an integration line")
                     for n, t in tips.items() if t in lost]
    return rr.remote_delete_decision(remote, refused, unproven)


# -- evacuate then destroy (section 13) --------------------------------------------------------
