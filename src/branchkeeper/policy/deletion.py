"""Deleting files: what ``rm``, ``unlink``, ``shred``, ``find -delete``/``-exec rm`` and the
deletions interpreters and ``xargs``/``parallel`` run would lose, in any worktree, main or
linked (issue 17, sections 1 and 2).

A deletion is judged by what it removes, not by its shape. Each target is located on the
filesystem (no git process): the worktree holding it, or the worktrees and repositories it
holds. Then ONE ``git status`` per worktree, limited to the targets, reads the work there
that exists nowhere else (:func:`branchkeeper.analysis.work_at_risk.work_at_risk`), and a
repository whose git directory goes is asked which commits no remote-tracking ref holds
(:func:`~branchkeeper.analysis.work_at_risk.unpushed_work`):

- ``R-RM-WORK-AT-RISK``: tracked files with uncommitted changes, untracked files, ignored
  files no regenerable glob covers; a clean tracked file or a regenerable directory goes;
- ``R-FILE-TRUNCATE``: the same work in a file a truncation empties (``: > f``, ``> f``,
  ``truncate -s0 f``, ``cp /dev/null f``; :func:`~branchkeeper.shell.model.truncated_files`);
- ``R-RM-REPOSITORY``: the git directory (or its objects, refs, index, logs) of a repository
  holding commits, tags or stash entries no remote has;
- a target the guard cannot know (``$VAR`` it cannot expand, ``$(...)``, ``xargs`` not fed
  by ``find`` or literal words) is denied (``R-GIT-UNPARSED-DESTRUCTIVE``) only when what it
  could reach (the repository around it) holds such work.

Linked worktree roots are :mod:`branchkeeper.policy.rm`'s (judged like a forced ``worktree
remove``); ``git rm -f`` is a discard (:mod:`branchkeeper.policy.discard`).
"""

from __future__ import annotations

from collections.abc import Sequence

from branchkeeper.analysis.work_at_risk import AtRisk, Unpushed, unpushed_work, work_at_risk
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.locate import Repo
from branchkeeper.policy.decision import Decision, Verdict, combine, listed
from branchkeeper.policy.facts import GuardRepos, git_failed
from branchkeeper.policy.plan import describe, glob_only
from branchkeeper.policy.targets import Deleted, Hit, near, reach, selected
from branchkeeper.policy.unread import unparsed_decision
from branchkeeper.shell.model import Invocation
from branchkeeper.shell.quoting import git_cmd, shell_quote

R_RM_WORK = "R-RM-WORK-AT-RISK"
R_RM_REPOSITORY = "R-RM-REPOSITORY"
R_TRUNCATE = "R-FILE-TRUNCATE"


def deletion_decisions(items: Sequence[Deleted], repos: GuardRepos, cwd: str
                       ) -> list[Decision]:
    """Judge each deleting invocation (module docstring): one ``status`` per worktree reached
    (all targets in it together) and one look at the unpushed commits of each repository whose
    git directory goes."""
    plans = [(d, [*d.hits, *(near(d.inv.cwd or cwd) if d.unknown else [])]) for d in items]
    specs: dict[str, set[str] | None] = {}
    for _, hits in plans:
        for h in hits:
            if h.root is None or _mode(repos, h) == "off":
                continue
            have = specs.setdefault(h.root, set())
            if h.spec is None or have is None:
                specs[h.root] = None
            else:
                have.add(h.spec)
    out: list[Decision] = []
    try:
        found = {root: work_at_risk(root, None if s is None else sorted(s),
                                    _config(repos, root))
                 for root, s in specs.items()}
        unpushed: dict[str, Unpushed] = {}
        # what the command removes whole: a remote on this machine in there goes along
        whole = [*(p for d, _ in plans for p in d.paths),
                 *(s for d, _ in plans for scope, _ in d.scopes for s in scope.starts
                   if s.startswith("/"))]
        for _, hits in plans:
            for h in hits:
                if h.git_dir and h.repo.common_dir not in unpushed and _mode(repos, h) != "off":
                    unpushed[h.repo.common_dir] = unpushed_work(h.repo, whole)
    except (BranchkeeperError, ValueError) as exc:
        why = git_failed(exc) if isinstance(exc, BranchkeeperError) else str(exc)
        return [unparsed_decision(f"`{describe(d.inv)}` deletes files",
                                  f"git could not answer ({why})") for d, _ in plans[:1]]
    for d, hits in plans:
        lost = [(h.root, item) for h in hits if h.root in found
                for item, rel in _entries(found[h.root]) if selected(rel, h)]
        gone = [(h.repo, unpushed[h.repo.common_dir]) for h in hits
                if h.git_dir and h.repo.common_dir in unpushed]
        gone = [(r, u) for r, u in dict((r.common_dir, (r, u)) for r, u in gone).values()
                if u.refs or u.stashes]
        wide = [u for u in d.unknown if u.startswith("/") and glob_only(u)]
        if wide:  # a glob over more paths than can be judged one by one (`rm -rf /*/*`)
            out.append(unparsed_decision(
                f"`{describe(d.inv)}` deletes {shell_quote(wide[0])}",
                "the pattern matches more than 1,000 paths, too many to judge one by one"))
        elif d.unknown and (lost or gone):
            out.append(_unknown_decision(d, lost, gone))
        elif lost:
            decide = truncation_decision if d.truncates else work_decision
            out.append(decide(describe(d.inv), list(dict.fromkeys(lost))))
        elif gone:
            out.append(repository_decision(describe(d.inv), gone[0][0], gone[0][1]))
    return out


def decide_file_removals(removals: Sequence[tuple[str, str]], *, cwd: str) -> Decision:
    """A file tool's deletions judged exactly as ``rm PATH`` is (``R-RM-WORK-AT-RISK``, the
    same facts and deny text): ``removals`` are (how the tool spells it, absolute path) pairs,
    e.g. Codex's ``*** Delete File: P`` or a ``*** Move to: P`` onto an existing file (issue 17,
    section 1). A path that does not exist, or a directory (a file tool removes no tree),
    reaches nothing. Returns ALLOW or the strictest decision."""
    items = [Deleted(Invocation(("rm", "--", path), cwd, source=how),
                     tuple(reach(path, recursive=False, cwd=cwd)), (), files=(path,))
             for how, path in removals]
    items = [d for d in items if d.hits]
    return combine(deletion_decisions(items, GuardRepos(), cwd) if items else ())


def _config(repos: GuardRepos, root: str):  # type: ignore[no-untyped-def]
    facts = repos.of(root)
    if facts is None:  # pragma: no cover - a worktree located on the filesystem is a repository
        from branchkeeper.model.config import DEFAULT_CONFIG

        return DEFAULT_CONFIG
    return facts.config


def _mode(repos: GuardRepos, hit: Hit) -> str:
    return str(_config(repos, hit.root or hit.repo.root).branches.force_removal.mode)


def _entries(risk: AtRisk) -> list[tuple[str, str]]:
    """(what to show, path relative to the worktree) for each piece of work at risk."""
    return ([(f"{p} (uncommitted changes)", p) for p in risk.changed]
            + [(f"{p} (untracked)", p) for p in risk.untracked]
            + [(f"{b.path} (ignored, {b.reason})", b.path) for b in risk.ignored])


def _at_risk(lost: Sequence[tuple[str | None, str]]) -> tuple[str, list[str], str]:
    """What a deletion or truncation denial lists: where the work is (one worktree, or
    several), its lines (prefixed by their worktree when there are several), and the commit or
    stash that keeps it first."""
    roots = list(dict.fromkeys(r for r, _ in lost if r))
    lines = [f"{shell_quote(r or '')}: {item}" if len(roots) > 1 else item for r, item in lost]
    root = roots[0] if roots else "."
    where = f"the worktree {shell_quote(root)}" if len(roots) == 1 else "these worktrees"
    keep = ("commit it (" + git_cmd("-C", root, "add", "-A") + " && "
            + git_cmd("-C", root, "commit") + ") or stash it ("
            + git_cmd("-C", root, "stash", "push", "--include-untracked") + ")")
    return where, lines, keep


def work_decision(how: str, lost: Sequence[tuple[str | None, str]]) -> Decision:
    """``R-RM-WORK-AT-RISK``: ``how`` (the command) would delete ``lost``, (worktree, "path
    (what it holds)") pairs of work that exists nowhere else."""
    where, lines, keep = _at_risk(lost)
    return Decision(
        Verdict.DENY, R_RM_WORK,
        f"`{how}` would delete work in {where} that exists nowhere else (no commit holds it):\n"
        + "\n".join(listed(lines)),
        f"Keep the work first: {keep}; move an ignored file you need somewhere it is kept. "
        "Then delete what is left, naming it exactly; or ask a human.")


def truncation_decision(how: str, lost: Sequence[tuple[str | None, str]]) -> Decision:
    """``R-FILE-TRUNCATE``: ``how`` (``: > f``, ``truncate -s0 f``, ``cp /dev/null f``) would
    empty ``lost``, (worktree, "path (what it holds)") pairs of work that exists nowhere else."""
    where, lines, keep = _at_risk(lost)
    return Decision(
        Verdict.DENY, R_TRUNCATE,
        f"`{how}` would empty files in {where} whose content exists nowhere else (no commit "
        "holds it):\n" + "\n".join(listed(lines)),
        f"Keep the content first: {keep}; then empty the file. Or ask a human.")


def repository_decision(how: str, repo: Repo, unpushed: Unpushed) -> Decision:
    """``R-RM-REPOSITORY``: ``how`` deletes the git directory of ``repo`` (or what holds its
    commits), with commits no remote-tracking ref contains (``unpushed``)."""
    held = [r for r in unpushed.refs]
    if unpushed.stashes:
        held.append(f"{unpushed.stashes} stash entr{'ies' if unpushed.stashes != 1 else 'y'}")
    n = unpushed.commits
    return Decision(
        Verdict.DENY, R_RM_REPOSITORY,
        f"`{how}` would delete the repository {shell_quote(repo.common_dir)}, and with it {n} "
        f"commit{'s' if n != 1 else ''} that no remote-tracking ref contains, held by:\n"
        + "\n".join(listed(held)),
        "Push the work first (" + git_cmd("push", "-u", "origin", "<branch>") + " for each "
        "branch, " + git_cmd("push", "origin", "--tags") + "), or keep everything in a bundle "
        "outside the repository (" + git_cmd("-C", repo.main_root, "bundle", "create",
                                             "../keep.bundle", "--all") + "); then delete. "
        "Or ask a human.")


def _unknown_decision(d: Deleted, lost: Sequence[tuple[str | None, str]],
                      gone: Sequence[tuple[Repo, Unpushed]]) -> Decision:
    items = [item for _, item in lost][:5]
    items += [f"{u.commits} unpushed commit(s) in {r.common_dir}" for r, u in gone][:2]
    return unparsed_decision(
        f"`{describe(d.inv)}` {'empties' if d.truncates else 'deletes'} "
        f"{shell_quote(d.unknown[0])}",
        "the target comes from an expansion, xargs or a command's output, and the repository "
        "it can reach holds work that exists nowhere else (" + "; ".join(items) + ")")


