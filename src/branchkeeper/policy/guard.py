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
    from branchkeeper.model.config import Config

import dataclasses
import glob as globlib
import os
import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from branchkeeper.analysis.guard_facts import (
    GUARD_TIMEOUT_S,
    Repo,
    WorktreeContents,
    current_branch,
    discardable,
    is_ancestor,
    linked_worktree_paths,
    load_guard_config,
    locate,
    now,
    read_alias,
    read_ref_table,
    read_sweep,
    read_tips,
    read_worktree_contents,
    read_worktrees,
    tracked_paths,
    unreachable_tips,
)
from branchkeeper.analysis.refs import RefTable, matches_any, resolve_default_branch
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy import removal_rules as rr
from branchkeeper.policy.creation_rules import CreationView, creation_decision
from branchkeeper.policy.decisions import (
    DESTRUCTIVE_SUBCOMMANDS,
    KNOWN_GIT_COMMANDS,
    PAIRED_KINDS,
    Plan,
    deleted_refs,
    describe,
    glob_only,
    inline_alias_problem,
    plan_command,
    reset_target,
    rev_branch_names,
    stash_then_drop,
    under,
    unread_destructive,
)
from branchkeeper.policy.gitargv import Creation, Destruction, Evacuation
from branchkeeper.policy.quoting import shell_quote
from branchkeeper.policy.shell import git_invocations, parse_command
from branchkeeper.policy.shellmodel import GitInvocation, Invocation
from branchkeeper.policy.verdict import ALLOW, Decision, EvacuationRecord, Verdict, combine

__all__ = ["GUARD_TIMEOUT_S", "Decision", "EvacuationRecord", "Verdict", "decide_command",
           "decide_creation", "evacuations_in"]


@dataclass
class _Facts:
    """Facts of one repository, each read at most once per decision (lazily)."""

    repo: Repo
    config: Config
    config_note: str
    tables: dict[str, RefTable] = field(default_factory=dict)
    worktree_list: list[Worktree] | None = None

    def table(self, remote: str | None = None) -> RefTable:
        remote = remote or self.config.branches.remote
        if remote not in self.tables:
            self.tables[remote] = read_ref_table(self.repo, remote)
        return self.tables[remote]

    def worktrees(self) -> list[Worktree]:
        if self.worktree_list is None:
            self.worktree_list = read_worktrees(self.repo)
        return self.worktree_list

    def worktree_at(self, path: str) -> Worktree | None:
        real = os.path.realpath(path)
        for wt in self.worktrees():
            if os.path.realpath(wt.path) == real:
                return wt
        return None

    def worktree_holding(self, path: str) -> Worktree | None:
        """The innermost worktree containing ``path``."""
        real = os.path.realpath(path)
        best: Worktree | None = None
        for wt in self.worktrees():
            root = os.path.realpath(wt.path)
            if under(real, root) and (best is None or len(root) > len(str(best.path))):
                best = wt
        return best


class _Repos:
    """Repositories met in one command, keyed by common dir."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str | None, str | None, str | None], _Facts | None] = {}

    def of(self, cwd: str | None, g: GitInvocation | None = None) -> _Facts | None:
        git_dir = g.git_dir if g is not None else None
        work_tree = g.work_tree if g is not None else None
        key = (cwd, git_dir, work_tree)
        if key not in self.by_key:
            repo = locate(cwd, git_dir=git_dir, work_tree=work_tree) if cwd else None
            if repo is None:
                self.by_key[key] = None
            else:
                config, note = load_guard_config(repo)
                self.by_key[key] = _Facts(repo, config, note)
        return self.by_key[key]


def _git_failed(exc: BranchkeeperError) -> str:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return first[:300]


def _creation_view(facts: _Facts) -> CreationView:
    table = facts.table()
    default = resolve_default_branch(facts.config.branches.default, table)
    return CreationView(table, default.name, read_sweep(facts.repo), facts.config, now())


def _could_not_judge(why: str) -> Decision:
    return ALLOW.with_context([f"branchkeeper could not judge this new branch ({why}); the next "
                               "sweep counts it."])


def decide_creation(name: str | None, *, cwd: str, route: str) -> Decision:
    """Decide a new branch created by the Agent tool's worktree isolation or WorktreeCreate
    (``route`` names it, e.g. ``"agent"``, ``"worktree_create"``); ``name`` None when the name is
    not known yet. One ``for-each-ref`` plus the last sweep and the config; never an inventory.
    Never raises: a git failure or timeout allows with a "could not judge" line."""
    try:
        facts = _Repos().of(cwd)
        if facts is None:
            return ALLOW
        decision = creation_decision(name, _creation_view(facts))
    except (BranchkeeperError, ValueError) as exc:
        return _could_not_judge(_git_failed(exc) if isinstance(exc, BranchkeeperError)
                                else str(exc))
    return decision.with_context([facts.config_note] if facts.config_note else [])


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
            return rr.consent_decision()  # only a person at a terminal consents (no git)
        parsed = parse_command(command, cwd=cwd)
        why = unread_destructive(parsed)
        if why is not None:
            return rr.unread_decision(why)
        plan = plan_command(parsed)
        gits = git_invocations(parsed)
        early = [rr.unparsed_decision(f"`{describe(g)}` runs a git alias", why)
                 for g in gits if (why := inline_alias_problem(g)) is not None]
        early += _aliases(gits, evacuations, depth)  # a git process only for unknown words
        plan, unknown_rm = _expand_rm_globs(plan)  # the filesystem only
        early += _unknown_rm(unknown_rm, cwd)
        resets = [(g, rev) for g in gits if (rev := reset_target(g)) is not None]
        rm_hits = _rm_worktrees(plan)  # the filesystem only: no git process
        if plan.empty and not rm_hits and not resets and not early \
                and not (evacuations and plan.rm_targets):
            return ALLOW
        return combine([*early, _decide(plan, evacuations, rm_hits, resets)])
    except Exception as exc:  # the guard must never crash the hook; fail closed on destruction
        return rr.unparsed_decision("The command may delete work",
                                    f"the guard failed ({type(exc).__name__}: {exc})")


def _aliases(gits: Sequence[GitInvocation], evacuations: Sequence[EvacuationRecord],
             depth: int) -> list[Decision]:
    """Git invocations whose subcommand is no git command: ONE ``config --get alias.<name>``
    each; a shell alias is denied as unparsed, any other is judged expanded (item 5)."""
    out: list[Decision] = []
    for g in gits:
        sub = g.subcommand
        if sub is None or sub in KNOWN_GIT_COMMANDS or g.cwd is None or sub.startswith("-") \
                or "$" in sub:
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
            out.append(rr.unparsed_decision(what, "it is a shell alias (`!...`), which the guard "
                                                  "does not follow"))
            continue
        words = shlex.split(text)
        if depth >= _MAX_ALIAS_DEPTH or (g.dynamic and words[:1] and
                                         words[0] in DESTRUCTIVE_SUBCOMMANDS):
            out.append(rr.unparsed_decision(what, "its arguments or nesting cannot be followed"))
            continue
        pre = [*(["--git-dir", g.git_dir] if g.git_dir else []),
               *(["--work-tree", g.work_tree] if g.work_tree else []),
               *[w for k, v in g.config if not k.lower().startswith("alias.")
                 for w in ("-c", f"{k}={v}")]]
        expanded = " ".join(shell_quote(w) for w in ["git", *pre, *words, *g.args])
        out.append(_decide_text(expanded, g.cwd, evacuations, depth + 1))
    return out


def _expand_rm_globs(plan: Plan) -> tuple[Plan, list[tuple[str, Invocation]]]:
    """The plan with each glob ``rm -r`` target replaced by its matches (Python's ``glob`` in
    the ``rm``'s cwd, like bash without dotglob: each match is then judged as a static target),
    and the targets from any other expansion ($VAR, $(...), braces, loops, an unknown cwd)."""
    targets: list[tuple[str, Invocation]] = []
    unknown: list[tuple[str, Invocation]] = []
    for target, inv in plan.rm_targets:
        expanded = {w for w, d in zip(inv.argv, inv.dynamic_args, strict=False) if d}
        if target not in expanded and target.startswith("/"):
            targets.append((target, inv))
        elif inv.cwd is not None and glob_only(target):
            pattern = target if target.startswith("/") else os.path.join(inv.cwd, target)
            matches = sorted(globlib.glob(pattern))[:1000]
            targets += [(os.path.normpath(m), inv) for m in matches]
            targets += [] if matches else [(os.path.normpath(pattern), inv)]
        else:
            unknown.append((target, inv))
            targets.append((target, inv))
    return dataclasses.replace(plan, rm_targets=tuple(targets)), unknown


def _unknown_rm(unknown: Sequence[tuple[str, Invocation]], cwd: str) -> list[Decision]:
    """``rm -r`` of a target the guard cannot know: denied when the repository around the
    ``rm`` has a linked worktree (read from files, no git process), else allowed (item 3)."""
    out: list[Decision] = []
    for target, inv in unknown:
        repo = locate(inv.cwd or cwd)
        if repo is not None and linked_worktree_paths(repo):
            out.append(rr.unparsed_decision(
                f"`{describe(inv)}` deletes {shell_quote(target)} recursively",
                "the target comes from an expansion (a variable, $(...), braces, a loop or an "
                "unknown directory), so the guard cannot tell whether it removes one of the "
                "repository's linked worktrees"))
            break
    return out


def _decide(plan: Plan, records: Sequence[EvacuationRecord],
            rm_hits: Sequence[tuple[str, Invocation]],
            resets: Sequence[tuple[GitInvocation, str]] = ()) -> Decision:
    repos = _Repos()
    out: list[Decision] = []
    unparsed = plan.parsed.unparsed_reason if plan.parsed.unparsed else ""
    for c, g in plan.creations:
        out.append(_creation(c, g, repos, unparsed))
    # the evacuation shape first: its deny names the right move (section 13)
    out.extend(_evacuate_destroy(plan, repos, records))
    out.extend(_destructions(plan, repos, unparsed))
    out.extend(_rm_decisions(plan, repos, rm_hits))
    out.extend(_discards(plan, repos, unparsed))
    out.extend(_resets(resets, repos))
    return combine(out)


def _creation(c: Creation, g: GitInvocation, repos: _Repos, unparsed: str) -> Decision:
    name, route, start = (c.name if not c.dynamic else None), c.route, c.start
    if unparsed:
        return _could_not_judge(f"the command could not be read in full: {unparsed}")
    try:
        facts = repos.of(g.cwd, g)
        if facts is None:
            return ALLOW if g.cwd else _could_not_judge("the directory is not known")
        view = _creation_view(facts)
        if c.force and name is not None and name in view.table.local:
            return ALLOW  # an overwrite, not a new branch: R-GIT-BRANCH-OVERWRITE judges it
        if route == "worktree_add_dwim" and name is not None:
            if start is None and name in view.table.local:
                return ALLOW  # checks out the existing branch
            if start is not None and (start in view.table.local or start not in view.table.remote):
                return ALLOW  # an existing branch, or a commit: no new branch
        decision = creation_decision(name, view)
        return decision.with_context([facts.config_note] if facts.config_note else [])
    except BranchkeeperError as exc:
        return _could_not_judge(_git_failed(exc))


def _destructions(plan: Plan, repos: _Repos, unparsed: str) -> list[Decision]:
    out: list[Decision] = []
    judged: dict[int, list[tuple[Destruction, GitInvocation]]] = {}
    for d, g in plan.destructions:
        if d.kind == "branch_delete":
            continue  # plain `branch -d`: git's own merged check decides
        what = f"`{describe(g)}` " + ("overwrites a branch" if d.kind == "branch_overwrite"
                                      else "deletes")
        if unparsed:
            out.append(rr.unparsed_decision(what, f"the command could not be read in full "
                                                  f"({unparsed})"))
            continue
        if d.dynamic or d.cwd is None:
            out.append(rr.unparsed_decision(what, "a name, path, remote or directory comes "
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
            why = _git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(rr.unparsed_decision(
                f"`{describe(items[0][1])}` deletes", f"git could not answer ({why})"))
    return out


def _judge_destructions(facts: _Facts, items: list[tuple[Destruction, GitInvocation]],
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


def _rm_worktrees(plan: Plan) -> list[tuple[str, Invocation]]:
    """Linked worktrees that a recursive ``rm`` deletes (the target is the worktree or holds
    it), each with its ``rm``: found on the filesystem alone (``<common>/worktrees/*/gitdir`` of
    the repository around the ``rm``'s cwd and around the target), no git process."""
    hits: dict[str, Invocation] = {}
    for target, inv in plan.rm_targets:
        if not target.startswith("/"):
            continue  # an expansion: the evacuation rule alone looks at it
        real = os.path.realpath(target)
        seen: set[str] = set()
        for where in (inv.cwd, real, *_child_checkouts(real)):
            repo = locate(where) if where else None
            if repo is None or repo.common_dir in seen:
                continue
            seen.add(repo.common_dir)
            for wt in linked_worktree_paths(repo):
                if under(wt, real):
                    hits.setdefault(wt, inv)
    return list(hits.items())


def _child_checkouts(path: str, limit: int = 500) -> list[str]:
    """Direct subdirectories of ``path`` that are git checkouts (hold a ``.git``), looking at
    no more than ``limit`` entries: how a worktree is found under an ``rm`` target that lies
    outside every repository."""
    out: list[str] = []
    try:
        with os.scandir(path) as entries:
            for n, entry in enumerate(entries):
                if n >= limit:
                    break
                if entry.is_dir(follow_symlinks=False) and os.path.lexists(
                        os.path.join(entry.path, ".git")):
                    out.append(entry.path)
    except OSError:
        return out
    return out


def _rm_decisions(plan: Plan, repos: _Repos, hits: Sequence[tuple[str, Invocation]]
                  ) -> list[Decision]:
    """``rm -r`` of a worktree judged like ``worktree remove --force`` (section 11)."""
    out: list[Decision] = []
    excluded = deleted_refs(d for d, _ in plan.destructions)
    for path, inv in hits:
        try:
            facts = repos.of(path)
            if facts is None:
                continue
            wt = facts.worktree_at(path)
            if wt is None or wt.is_main:
                continue
            head = None
            if wt.head is not None and (wt.detached or (wt.branch and wt.branch in excluded)):
                lost, _ = unreachable_tips(facts.repo, [str(wt.head)], excluded_refs=excluded)
                head = str(wt.head) if lost else None
            contents = read_worktree_contents(path, facts.config)
            out.append(rr.worktree_remove_decision(
                path, force=True, contents=contents, head_lost=head,
                mode=facts.config.branches.force_removal.mode, spelled=describe(inv)))
        except (BranchkeeperError, ValueError) as exc:
            why = _git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(rr.unparsed_decision(f"`{describe(inv)}` deletes the worktree "
                                            f"{shell_quote(path)}", f"git could not answer ({why})"))
    return out


def _discards(plan: Plan, repos: _Repos, unparsed: str) -> list[Decision]:
    """``R-GIT-DISCARD-CHANGES``: one ``status`` (or one stash look-up) per discarding git
    command, in the worktree it acts on."""
    out: list[Decision] = []
    saves = {id(drop): (save, u, i) for save, drop, u, i in stash_then_drop(plan)}
    for x, g in plan.discards:
        how = describe(g)
        if unparsed:
            out.append(rr.unparsed_decision(f"`{how}` discards work", "the command could not be "
                                            f"read in full ({unparsed})"))
            continue
        if g.cwd is None:
            out.append(rr.unparsed_decision(f"`{how}` discards work", "the directory comes from "
                                            "an expansion the guard cannot know"))
            continue
        try:
            facts = repos.of(g.cwd, g)
            if facts is None or facts.config.branches.force_removal.mode == "off":
                continue
            where = g.work_tree or facts.repo.toplevel or g.cwd
            if id(g) in saves and not unparsed:
                save, u, i = saves[id(g)]
                stashed = discardable(g.cwd, (), tracked=True, untracked=u, ignored=i,
                                      git_dir=g.git_dir, work_tree=g.work_tree)
                if stashed:
                    out.append(rr.stash_drop_decision(
                        where, stashed, mode=facts.config.branches.force_removal.mode, how=how,
                        save=describe(save)))
                    continue
            if x.kind.startswith("stash_"):
                found: Sequence[str] = list(read_tips(facts.repo, ["refs/stash"]))
            else:
                found = discardable(g.cwd, () if x.dynamic else x.pathspecs,
                                    tracked=x.kind != "clean", untracked=x.untracked,
                                    ignored=x.ignored, git_dir=g.git_dir, work_tree=g.work_tree)
            out.append(rr.discard_decision(x.kind, where, found, how=how, ignored=x.ignored,
                                           mode=facts.config.branches.force_removal.mode))
        except (BranchkeeperError, ValueError) as exc:
            why = _git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(rr.unparsed_decision(f"`{how}` discards work",
                                            f"git could not answer ({why})"))
    return out


def _resets(resets: Sequence[tuple[GitInvocation, str]], repos: _Repos) -> list[Decision]:
    """``reset --hard|--keep|--merge|--soft|--mixed <commit>`` moves the current branch of its
    worktree: judged like ``R-GIT-BRANCH-OVERWRITE`` of that branch (one ``symbolic-ref``, the
    ref table, one ``rev-list``, one ``merge-base --is-ancestor``) (item 6)."""
    out: list[Decision] = []
    for g, rev in resets:
        how = describe(g)
        if g.cwd is None or g.dynamic:
            out.append(rr.unparsed_decision(f"`{how}` moves the current branch",
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
            why = _git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
            out.append(rr.unparsed_decision(f"`{how}` moves the current branch",
                                            f"git could not answer ({why})"))
    return out


def _remote_delete(facts: _Facts, d: Destruction) -> Decision:
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
@dataclass(frozen=True, slots=True)
class _Target:
    worktrees: frozenset[str]
    branches: frozenset[str]
    text: str


def _destroyed(plan: Plan, facts: _Facts) -> list[_Target]:
    out: list[_Target] = []
    for d, g in plan.destructions:
        if d.kind not in PAIRED_KINDS or d.dynamic:
            continue
        if d.kind.startswith("worktree_remove"):
            wts = [facts.worktree_at(p) for p in d.targets]
            paths = frozenset(os.path.realpath(p) for p in d.targets)
            branches = frozenset(w.branch.removeprefix("refs/heads/") for w in wts
                                 if w is not None and w.branch)
        else:
            paths = frozenset()
            branches = frozenset(r.removeprefix("refs/heads/") for r in d.refs)
        out.append(_Target(paths, branches, f"`{describe(g)}`"))
    for target, inv in plan.rm_targets:
        if not target.startswith("/"):
            continue
        hit = [w for w in facts.worktrees()
               if not w.is_main and under(os.path.realpath(w.path), os.path.realpath(target))]
        if hit:
            out.append(_Target(frozenset(os.path.realpath(w.path) for w in hit),
                               frozenset(w.branch.removeprefix("refs/heads/") for w in hit
                                         if w.branch), f"`{describe(inv)}`"))
    return out


def _records_for(e: Evacuation, g: GitInvocation, facts: _Facts, command: str
                 ) -> list[EvacuationRecord]:
    """The records of one evacuation whose outputs land where git does not track them."""
    source = e.source_cwd
    wt = facts.worktree_holding(source) if source else None
    branches = [wt.branch.removeprefix("refs/heads/")] if wt is not None and wt.branch else []
    table = facts.table()
    branches += [n for n in rev_branch_names(e.source_rev) if n in table.local]
    roots = {os.path.realpath(w.path): w for w in facts.worktrees()}
    untracked: list[str] = []
    by_root: dict[str, list[str]] = {}
    for out in e.outputs:
        if e.dynamic or not out.startswith("/") or e.kind == "format_patch":
            untracked.append(out)
            continue
        real = os.path.realpath(out)
        inside = [r for r in roots if under(real, r)]
        if not inside:
            untracked.append(out)  # outside the repository
        else:
            by_root.setdefault(max(inside, key=len), []).append(real)
    for root, paths in by_root.items():
        tracked = tracked_paths(root, paths)
        untracked += [p for p in paths if p not in tracked]
    wt_path = os.path.realpath(wt.path) if wt is not None else None
    branch = branches[0] if branches else None
    recs = [EvacuationRecord(wt_path, branch, out, command) for out in untracked]
    recs += [EvacuationRecord(wt_path, b, out, command) for b in branches[1:] for out in untracked]
    return recs


def _evacuate_destroy(plan: Plan, repos: _Repos, records: Sequence[EvacuationRecord]
                      ) -> list[Decision]:
    if not (plan.destructions or plan.rm_targets) or not (plan.evacuations or records):
        return []
    first = next((g for _, g in plan.destructions), None)
    cwd = first.cwd if first is not None else (plan.rm_targets[0][1].cwd if plan.rm_targets
                                              else None)
    facts = repos.of(cwd, first)
    if facts is None:
        return []
    mode = facts.config.branches.evacuation.mode
    if mode == "off":
        return []
    try:
        targets = _destroyed(plan, facts)
        if not targets:
            return []
        found = [(r, False) for e, g in plan.evacuations
                 for r in _records_for(e, g, facts, plan.parsed.text)]
        found += [(r, True) for r in records]
    except (BranchkeeperError, ValueError) as exc:
        why = _git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
        return [rr.unparsed_decision("The command saves work and destroys a worktree or branch",
                                     f"git could not answer ({why})")]
    out: list[Decision] = []
    for rec, same_turn in found:
        for t in targets:
            wt_hit = rec.worktree is not None and rec.worktree in t.worktrees
            br_hit = rec.branch is not None and rec.branch in t.branches
            if wt_hit or br_hit:
                what = (f"worktree {shell_quote(rec.worktree)}" if wt_hit and rec.worktree
                        else f"branch {shell_quote(rec.branch or '')}")
                out.append(rr.evacuation_decision(what, rec.output, t.text, mode=mode,
                                                  same_turn=same_turn))
                break
    return out[:1] + [d for d in out[1:] if d.reason != out[0].reason]


def evacuations_in(command: str, *, cwd: str) -> list[EvacuationRecord]:
    """Every evacuation in ``command`` whose output lands in an ignored, untracked or outside
    path, as records for the same-turn rule (call it after the command ran, PostToolUse).
    Never raises: an unreadable command or a git failure gives what could be judged."""
    try:
        parsed = parse_command(command, cwd=cwd)
        plan = plan_command(parsed)
        repos = _Repos()
        out: list[EvacuationRecord] = []
        for e, g in plan.evacuations:
            facts = repos.of(g.cwd, g)
            if facts is None:
                continue
            try:
                out.extend(_records_for(e, g, facts, command))
            except (BranchkeeperError, ValueError):
                out.extend(EvacuationRecord(e.source_cwd and posixpath.normpath(e.source_cwd),
                                            None, o, command) for o in e.outputs)
        return out
    except Exception:
        return []
