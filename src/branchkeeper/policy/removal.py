"""Destructive-route decisions (first document sections 7, 11, 13; issue 5 section 3).

Lossless force removal (``R-GIT-BRANCH-FORCE-DELETE``, ``R-GIT-WORKTREE-REMOVE-FORCE``),
overwrites of an existing branch and ``reset`` to another commit (``R-GIT-BRANCH-OVERWRITE``)
and remote deletes (``R-GIT-PUSH-DELETE-REMOTE``). The ``*_decision`` functions are pure
texts of facts; :func:`destruction_decisions` and :func:`reset_decisions` gather those facts
with the few bounded git calls of :mod:`branchkeeper.analysis.guard_facts`. A destructive
route the parser could not read is :mod:`branchkeeper.policy.unread`'s. Every printed name
and path is shell-quoted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from branchkeeper.analysis.guard_facts import (
    WorktreeContents,
    current_branch,
    is_ancestor,
    is_commitish,
    read_tips,
    read_worktree_contents,
    unreachable_tips,
)
from branchkeeper.analysis.hidden_edits import unflag_command
from branchkeeper.analysis.lost_work import store_rescue_command
from branchkeeper.analysis.refs import matches_any, resolve_default_branch
from branchkeeper.errors import BranchkeeperError
from branchkeeper.policy.bisect import judge_bisect
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, listed
from branchkeeper.policy.detached import detached_move_decision
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.plan import Plan, deleted_refs, describe
from branchkeeper.policy.ref_loss import (
    branch_delete_decision,
    branch_overwrite_decision,
    landed_delete_decision,
    landed_tips,
    superseded_delete_decision,
    superseded_tips,
    tag_delete_decision,
)
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.policy.worktree_prune import R_WORKTREE_FORCE, gone_contents, judge_prune
from branchkeeper.shell.gitargv import Destruction
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote

if TYPE_CHECKING:
    from branchkeeper.git.repo import Worktree

R_PUSH_DELETE = "R-GIT-PUSH-DELETE-REMOTE"


def _admin_loss(path: str, contents: WorktreeContents, *, force: bool, gone: bool = False
                ) -> tuple[list[str], list[str]]:
    """(problem lines, steps) for what removing the worktree deletes with its admin
    directory: its own refs holding commits nothing else holds (any removal), its submodule
    stores (``--force``, or ``gone``: its directory is gone, and git refuses a worktree with
    submodules without ``--force`` only while its directory exists; the prune's judgement)."""
    problems: list[str] = []
    steps: list[str] = []
    if contents.own_refs:
        problems.append("refs of its own that hold commits no branch, tag or remote holds "
                        "(the removal deletes them):")
        problems += listed(list(contents.own_refs))
        steps.append("keep each listed ref's commits on a branch and push it ("
                     + git_cmd("-C", path, "branch", "<name>", "<ref>") + ")")
    if gone and contents.stores:  # no directory to run a command in: the prune's steps
        problems.append("submodule stores (the removal deletes them with the entry, and any "
                        "submodule commit only they hold):")
        problems += listed([shell_quote(p) for p in contents.stores])
        steps += [store_rescue_command(path, p) for p in contents.stores]
    elif force and contents.stores:
        problems.append("submodule stores (--force deletes them with any submodule commit "
                        "only they hold):")
        problems += listed([shell_quote(p) for p in contents.stores])
        steps.append("push each submodule's commits (" + git_cmd(
            "-C", path, "submodule", "foreach", "--recursive",
            "git log --oneline HEAD --branches --not --remotes") + " lists them)")
    return problems, steps


def worktree_remove_decision(path: str, *, force: bool, contents: WorktreeContents,
                             head_lost: str | None, mode: str, spelled: str = "",
                             gone: bool = False) -> Decision:
    """``worktree remove [--force]`` (section 11). With ``--force``: deny when the worktree is
    dirty. Without it: deny when it holds edits ``git status`` cannot see (``contents.hidden``:
    git removes those without ``--force``). Both forms: deny when ``head_lost`` (its HEAD
    commit, contained in no other ref) is set (git removes a clean detached worktree without
    ``--force``, and its commit becomes unreachable) or ignored content matches no regenerable
    glob (paths listed), or its own refs hold commits nothing else does (``--force``: or it
    has submodule stores; :func:`_admin_loss`). ``spelled``: the command when it is not a
    ``worktree remove`` (a recursive ``rm`` of the worktree, judged as a forced removal; it
    leaves the admin directory, so not its refs and stores). ``gone``: its directory is
    gone (the way out is run from the repository)."""
    if mode == "off":
        return ALLOW
    problems: list[str] = []
    lost = contents.dirty if force else contents.hidden
    if lost:
        problems.append("uncommitted changes or untracked files:")
        problems += listed([shell_quote(p) for p in lost])
    if head_lost:
        problems.append(f"HEAD {head_lost[:10]} is contained in no branch, tag or "
                        "remote-tracking ref (a detached HEAD, or its branch is deleted too)")
    if contents.ignored_blocking:
        problems.append("ignored files the ignored-content rule keeps (not regenerable; git "
                        "worktree remove deletes them, --force or not):")
        problems += listed([f"{shell_quote(b.path)} ({b.reason})"
                             for b in contents.ignored_blocking])
    # an rm of the directory leaves the admin directory (its refs, its stores) to a prune
    admin_problems, admin_steps = ([], []) if spelled else _admin_loss(path, contents,
                                                                        force=force, gone=gone)
    problems += admin_problems
    if not problems:
        return ALLOW
    head = (f"`{spelled}` would delete the worktree {shell_quote(path)} and lose work:"
            if spelled else
            f"`{'git worktree remove --force' if force else 'git worktree remove'} "
            f"{shell_quote(path)}` would lose work:")
    steps = []
    if lost:
        unflag = unflag_command(path, contents.hidden)
        steps.append("commit the changes on the worktree's branch ("
                     + ("" if unflag is None else unflag + " && ")
                     + git_cmd("-C", path, "add", "-A") + " && "
                     + git_cmd("-C", path, "commit") + ") or ask a human")
    if head_lost and gone:  # no directory to run a command in
        steps.append("keep HEAD on a branch and push it (" + git_cmd(
            "branch", f"rescue/{Path(path).name}-{head_lost[:10]}", head_lost) + ")")
    elif head_lost:
        steps.append("put HEAD on a branch and push it (" + git_cmd("-C", path, "switch", "-c",
                     "<name>") + ", then git push -u)")
    steps += admin_steps
    if contents.ignored_blocking:
        steps.append("consume each listed ignored path, move it to a tracked home, or delete it "
                     "deliberately")
    retire = "branchkeeper worktree retire " + shell_quote(path)
    way = ("First " + "; ".join(steps) + "; then remove the worktree without --force ("
           + git_cmd("worktree", "remove", path) + "), or let `" + retire
           + "` check it for you.")
    if force and contents.stores and not spelled and not gone:  # git refuses it unforced
        way = ("First " + "; ".join(steps) + "; then it is removed by hand: git refuses a "
               "worktree with submodule stores without --force, and `" + retire + "` keeps "
               "it (SKIP_SUBMODULE). Once that lists no commit, a human runs "
               + git_cmd("worktree", "remove", "--force", path)
               + ", which deletes the stores with it.")
    if contents.ignored_blocking and contents.ignored_archivable and not head_lost and not lost \
            and not admin_problems:
        way += (" To keep the listed files and remove the worktree in one step: "
                "`branchkeeper worktree retire --archive-ignored " + shell_quote(path)
                + "` archives them first (branchkeeper undo puts them back).")
    return Decision(Verdict.DENY, R_WORKTREE_FORCE, head + "\n" + "\n".join(problems), way)


def remote_delete_decision(remote: str, refused: Sequence[tuple[str, str]],
                           unproven: Sequence[tuple[str, str]]) -> Decision:
    """Remote deletes (section 7): ``refused`` (name, why) are never deleted by an agent (the
    default, integration lines, exempt and protected names); ``unproven`` (name, why) have no
    tracking tip that is an ancestor of the remote default or a line's remote ref."""
    if not refused and not unproven:
        return ALLOW
    lines = [f"{shell_quote(n)}: {why}" for n, why in (*refused, *unproven)]
    way = []
    if refused:
        way.append("The default branch, integration lines, exempt and protected names are never "
                   "deleted on the remote by an agent; ask a human.")
    if unproven:
        first = unproven[0][0]
        way.append("Merge the work into the default branch or an integration line and push it, "
                   f"then {git_cmd('fetch', remote)} and delete again; or run "
                   f"`branchkeeper delete --remote -- {shell_quote(first)}`, which proves the "
                   "work is preserved and keeps a recovery bundle.")
    return Decision(Verdict.DENY, R_PUSH_DELETE,
                    f"Deleting on {shell_quote(remote)} is not proven safe:\n"
                    + "\n".join(listed(lines)), " ".join(way))


def push_mass_decision(kind: str, remote: str | None) -> Decision:
    """``push --mirror`` / ``push --prune`` (section 7): deleting every remote branch missing
    locally cannot be proven lossless here, so deny with the one-by-one way out."""
    flag = "--mirror" if kind == "push_mirror" else "--prune"
    where = shell_quote(remote) if remote else "the remote"
    return Decision(
        Verdict.DENY, R_PUSH_DELETE,
        f"`git push {flag}` deletes every branch on {where} that is missing locally; the guard "
        "cannot prove that none of them holds work.",
        "Push the branches you mean by name, and delete remote branches one at a time with "
        "`git push <remote> --delete <name>` (each is proven) or `branchkeeper delete --remote "
        "-- <name>`. A mirror push is for a human to run.")


def destruction_decisions(plan: Plan, repos: GuardRepos, unparsed: str) -> list[Decision]:
    """The destructions of ``plan`` judged per repository (section 11, section 7): force
    deletes and overwrites of branches (one ``rev-list`` for every tip), worktree removals
    (one ``worktree list``, one ``status`` each) and remote deletes (tracking refs only, no
    network). Plain ``branch -d`` is left to git. A name or path from an expansion, an
    unread command or a git failure is denied as unparsed."""
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


def _tags_not_on_path_remotes(facts: GuardFacts, gone: list[tuple[str, str]], count: int,
                              excluded: Sequence[str]) -> tuple[list[tuple[str, str]], int]:
    """The (tag, commit) pairs of ``gone`` that no remote on this machine holds (a pushed tag
    leaves no local trace; :mod:`branchkeeper.analysis.remote_tags`), and the number of commits
    only they hold: ``count`` when no tag is held there, else one more ``rev-list`` with the
    held tags' commits among the holders (their history stays on the remote)."""
    from branchkeeper.analysis.remote_tags import path_remotes, tags_held_by

    held = tags_held_by(path_remotes(facts.repo), dict(gone))
    left = [(r, t) for r, t in gone if r not in held]
    if not held or not left:
        return left, count
    held_tips = [t for r, t in gone if r in held]
    _, only_here = unreachable_tips(facts.repo, [t for _, t in left], excluded_refs=excluded,
                                    also_held=held_tips)
    return left, only_here


def _carried_sources(destructions: Sequence[Destruction]) -> dict[str, tuple[str, bool]]:
    """ref -> (full ref of the branch it holds, renamed) for each ref an earlier part of the
    command renamed or copied a branch into (``Destruction.carried``): judged with that
    branch's tip. ``HEAD`` is the branch checked out where the deletion runs (one
    ``symbolic-ref``, only for that form); on a detached HEAD git renames nothing."""
    out: dict[str, tuple[str, bool]] = {}
    for d in destructions:
        for ref, source, renamed in d.carried:
            if source == "HEAD":
                head = current_branch(d.cwd) if d.cwd else None
                if head is None:
                    continue
                source = head
            out[ref] = (source, renamed)
    return out


def _judge_destructions(facts: GuardFacts, items: list[tuple[Destruction, GitInvocation]],
                        every: list[Destruction]) -> list[Decision]:
    cfg = facts.config.branches
    out: list[Decision] = []
    force_items = [(d, g) for d, g in items if d.kind in (
        "branch_force_delete", "update_ref_delete", "branch_overwrite", "tag_delete")]
    carried = _carried_sources([d for d, _ in force_items])
    excluded = (*deleted_refs(every), *(src for src, renamed in carried.values() if renamed))
    removes = [(d, g) for d, g in items if d.kind in ("worktree_remove", "worktree_remove_force")]
    tips: dict[str, str] = {}
    before: dict[str, str] = {}
    if force_items:
        table = facts.table()
        wanted = [r for d, _ in force_items for r in d.refs]
        for r in wanted:
            own = table.tip(r)
            t = table.tip(carried[r][0]) if r in carried else None
            if t is not None and own is not None and own != t:
                before[r] = str(own)  # kept if the rename into r fails (`-m` onto a name taken)
            t = t if t is not None else own
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
    all_tips = [*tips.values(), *before.values(), *head_tips.values()]
    if all_tips:
        lost, count = unreachable_tips(facts.repo, all_tips, excluded_refs=excluded)
    for d, g in force_items:
        gone = [(r, t) for r in d.refs for t in (tips.get(r), before.get(r)) if t in lost]
        lost_commits = count
        if d.kind == "tag_delete" and gone and cfg.force_removal.mode != "off":
            gone, lost_commits = _tags_not_on_path_remotes(facts, gone, count, excluded)
        if d.kind == "branch_overwrite" and gone and d.new_value and g.cwd \
                and cfg.force_removal.mode != "off":
            # the new value keeps the old tip (a fast-forward): nothing is lost
            gone = [(r, t) for r, t in gone if not is_ancestor(g.cwd, t, d.new_value)]
        if d.kind in ("branch_force_delete", "update_ref_delete") and gone:
            landed = landed_tips(facts, gone)
            out.append(landed_delete_decision(landed, lost_commits=lost_commits,
                                              mode=cfg.force_removal.mode, how=describe(g)))
            held = {f"refs/heads/{n}" for n, _, _, _ in landed}
            gone = [(r, t) for r, t in gone if r not in held]
        names = [(r[len("refs/heads/"):] if r.startswith("refs/heads/") else r, t)
                 for r, t in gone]
        decide = {"branch_overwrite": branch_overwrite_decision,
                  "tag_delete": tag_delete_decision}.get(d.kind, branch_delete_decision)
        out.append(decide(names, lost_commits=lost_commits, remote=cfg.remote,
                          mode=cfg.force_removal.mode, how=describe(g)))
        if d.kind in ("branch_force_delete", "update_ref_delete"):
            out.append(superseded_delete_decision(
                superseded_tips(facts, [(r, tips[r]) for r in d.refs
                                    if r in tips and tips[r] not in lost]),
                mode=cfg.force_removal.mode, how=describe(g)))
    for path, force, wt in wt_checks:
        if wt is None or wt.is_main:
            continue  # git refuses: not a worktree, or the main one
        no_dir = not wt.path.is_dir()
        contents = (gone_contents(facts, str(wt.path)) or WorktreeContents((), ())) if no_dir \
            else read_worktree_contents(str(wt.path), facts.config)
        head = head_tips.get(path)
        out.append(worktree_remove_decision(
            path, force=force, contents=contents, head_lost=head if head in lost else None,
            mode=cfg.force_removal.mode, gone=no_dir))
    out += [judge_prune(facts, how=describe(g), by_gc=d.kind == "gc_worktree_prune")
            for d, g in items if d.kind in ("worktree_prune", "gc_worktree_prune")]
    out += [judge_bisect(facts, how=describe(g)) for d, g in items if d.kind == "bisect_reset"]
    for d, _ in items:
        if d.kind == "push_delete":
            out.append(_remote_delete(facts, d))
        elif d.kind in ("push_mirror", "push_prune"):
            out.append(push_mass_decision(d.kind, d.remote))
    return out


def reset_decisions(resets: Sequence[tuple[GitInvocation, str]], repos: GuardRepos
                    ) -> list[Decision]:
    """``reset --hard|--keep|--merge|--soft|--mixed <commit>`` moves the current branch of its
    worktree: judged like ``R-GIT-BRANCH-OVERWRITE`` of that branch (one ``symbolic-ref``, the
    ref table, one ``rev-list``, one ``merge-base --is-ancestor``, and before a deny one
    ``rev-parse --verify``: a commit that does not exist moves nothing) (item 6)."""
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
            if branch is None:  # a detached HEAD: R-GIT-DETACHED-HEAD-MOVE judges it
                moved = detached_move_decision(g, rev, facts)
                out += [moved] if moved is not None else []
                continue
            tip = facts.table().tip(branch)
            if tip is None:
                continue  # an unborn branch
            lost, count = unreachable_tips(facts.repo, [str(tip)], excluded_refs=[branch])
            if not lost or is_ancestor(g.cwd, str(tip), rev):
                continue
            if not is_commitish(g.cwd, rev, git_dir=g.git_dir):
                continue  # no such commit: git refuses the reset and moves nothing
            out.append(branch_overwrite_decision(
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
        return remote_delete_decision(remote, [], [(n, "the remote is a URL or path, so no "
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
    return remote_delete_decision(remote, refused, unproven)
