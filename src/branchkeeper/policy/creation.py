"""The creation decision (first document sections 3 and 4; issue 5 section 3, "Creation").

:func:`creation_decision` is a pure function of a :class:`CreationView` (one ref table, the
last sweep, the config, the clock): the WIP cap, the dormancy block, the duplicate stem, LOST
WORK RISK lines on every creation decision and noisy-stage lines on allowed ones.
:func:`decide_creation` (the Agent / WorktreeCreate route) and :func:`judge_creation` (a
creation inside a shell command) gather that view: one ``for-each-ref``, the last sweep and
the config, never an inventory.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
from collections.abc import Callable, Container, Mapping
from typing import TYPE_CHECKING, NamedTuple

from branchkeeper.analysis.guard_facts import LeanRefs, now
from branchkeeper.analysis.refs import matches_any, resolve_default_branch
from branchkeeper.errors import BranchkeeperError
from branchkeeper.git.types import push_argv
from branchkeeper.model.words import state_word
from branchkeeper.policy.decision import ALLOW, Decision, Verdict, combine
from branchkeeper.policy.facts import GuardFacts, GuardRepos, git_failed
from branchkeeper.policy.stem import number_tokens, stem
from branchkeeper.policy.worktree_name import worktree_name_decision
from branchkeeper.shell.gitargv import Creation
from branchkeeper.shell.model import GitInvocation
from branchkeeper.shell.quoting import git_cmd, shell_quote
from branchkeeper.state.last_sweep import MAX_AGE_DAYS, LastSweep, read_sweep

if TYPE_CHECKING:
    from branchkeeper.model.config import Config

R_CAP = "R-BRANCH-WIP-CAP"
R_DORMANCY = "R-BRANCH-DORMANCY-BLOCK"
R_DUPLICATE = "R-BRANCH-DUPLICATE-STEM"
#: What the WIP cap counts, as its denial says it (first document, section 3).
COUNTED = ("counted: distinct tips of the branches that are not the default, an integration line "
           "or exempt, merged and parked ones included; unstarted ones, still at the default "
           "branch's tip, are not")
#: Most branch lines a denial lists before "and N more".
MAX_LINES = 20
_MERGED = frozenset({"merged", "merged_into_line", "patch_equivalent"})
#: The states that age into dormancy stages (unmerged, unparked work).
_STAGED = frozenset({"dormant", "live", "superseded"})
_DAY = 86400.0


class CreationView(NamedTuple):
    """What the creation decision reads: the branch names and tips, the resolved default
    branch name (or None), the last sweep (no rows = names only), the config and
    ``now`` (unix s, kept for rules that read the clock)."""

    table: LeanRefs
    default_name: str | None
    sweep: LastSweep
    config: Config
    now: float
    #: the branches a session here created (creator records), read only when a denial needs
    #: them (one ``git config``); ``None`` when they cannot be read
    creators: Callable[[], frozenset[str] | None] = lambda: frozenset()


class OpenBranch(NamedTuple):  # thousands per hook call: a tuple is cheap to build
    """One counted branch: name, tip, age in days (None unknown), and, from a sweep entry still
    at this tip, its state, stage, containment and worktree."""

    name: str
    tip: str
    age_days: float | None
    state: str | None
    stage: str | None
    containment: str | None
    worktree: str | None

    @property
    def group(self) -> int:
        """Listing order: 0 merged, 1 dormant, 2 live."""
        if self.state in _MERGED:
            return 0
        return 1 if self.state == "dormant" or self.stage is not None else 2


#: Most idle-branch context lines added to an allowed creation.
_IDLE_LINES = 5


def not_counted(name: str, view: CreationView) -> bool:
    """True for the default branch, an integration line or an exempt name."""
    b = view.config.branches
    return name == view.default_name or matches_any(name, b.integration_lines) \
        or matches_any(name, b.exempt)


def _stage(age: float | None, config: Config) -> str | None:
    return _stager(config)(age)


def _stager(config: Config) -> Callable[[float | None], str | None]:
    """A stage function with the thresholds read once (hot loop over thousands of branches)."""
    d = config.branches.dormancy
    mode = d.mode
    advisory, noisy, block = (d.effective_advisory_days, d.effective_noisy_days,
                              d.effective_block_days)

    def stage(age: float | None) -> str | None:
        if age is None or mode == "off" or age < advisory:
            return None
        if age >= block and mode == "block":
            return "block"
        return "noisy" if age >= noisy else "advisory"

    return stage


def _glob_matcher(globs: list[str]) -> Callable[[str], re.Match[str] | None] | None:
    """One compiled test for a list of shell globs (``fnmatchcase``: ``*`` spans ``/``), or None
    when the list is empty; thousands of names are tested per hook call."""
    if not globs:
        return None
    pattern = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs))
    return pattern.match


def open_branches(view: CreationView) -> tuple[list[OpenBranch], int]:
    """Every counted branch (sorted by name) and the count: distinct tips, where a local branch
    and its remote copy are one (same name, same or different tips). Section 3. State, stage,
    containment, worktree and age come from a sweep entry still at the branch's tip (no entry
    or a moved tip: unknown).

    One pass over the names: the count is the number of distinct tips less the joins made by
    names whose local and remote tips differ (a union-find over those tips only)."""
    t = view.table
    b = view.config.branches
    count_remote = bool(b.wip.count_remote)
    skip = _glob_matcher([*b.integration_lines, *b.exempt])
    default_name = view.default_name
    stage_of = _stager(view.config)
    local, remote = t.local, t.remote
    rows, elapsed = view.sweep.rows, view.sweep.elapsed_days
    # local's names come sorted from for-each-ref: two sorted runs sort in one merge
    names = sorted([*local, *[n for n in remote if n not in local]]) if count_remote \
        else sorted(local)
    tips: set[str] = set()
    parent: dict[str, str] = {}
    # a branch still at the default branch's tip with nothing done on it (the sweep's
    # ``unstarted``, or no row yet) is no open work: the sweep does not count it live either
    at_default = {x for x in (local.get(default_name), remote.get(default_name))
                  if x} if default_name is not None else set()

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    joins = 0
    out: list[OpenBranch] = []
    append = out.append
    new = tuple.__new__  # OpenBranch(...) without the generated __new__: thousands per call
    local_tip = local.get
    remote_tip = (remote if count_remote else {}).get
    row_of = rows.get
    for name in names:
        if name == default_name or (skip is not None and skip(name)):
            continue
        tip = local_tip(name)
        rtip = remote_tip(name)
        if not tip:
            if tip is not None:  # a local branch git printed without a tip: not counted
                continue
            tip = rtip
            if not tip:
                continue
        row = row_of(name)  # LastSweep.entry inlined: this loop runs thousands of times
        if tip in at_default and (not rtip or rtip in at_default) and (
                type(row) is not list or len(row) != 6 or row[0] != tip
                or row[1] == "unstarted"):
            continue
        if rtip and rtip != tip:
            tips.add(rtip)
            x, y = find(tip), find(rtip)
            if x != y:
                parent[y] = x
                joins += 1
        tips.add(tip)
        if type(row) is list and len(row) == 6 and row[0] == tip and type(row[1]) is str:
            _, state, _, cont, age, wt = row
            if (type(age) is float or type(age) is int) and 0 <= age < MAX_AGE_DAYS:
                age += elapsed
                stage = stage_of(age) if state in _STAGED else None
            else:
                age = stage = None
            append(new(OpenBranch, (name, tip, age, state, stage,
                                    cont if type(cont) is str else None,
                                    wt if type(wt) is str else None)))
        else:
            append(new(OpenBranch, (name, tip, None, None, None, None, None)))
    return out, len(tips) - joins


def _age(b: OpenBranch) -> str:
    return "age unknown" if b.age_days is None else f"{int(b.age_days)}d old"


def _cleanup(b: OpenBranch, cleanup: dict[str, object] | None, local: bool = True) -> str:
    """What deletes the merged branch ``b``: the last sweep's text for it (its row at this tip
    made ``b`` merged), i.e. the command where ``delete`` succeeds, else what keeps it and what
    lifts it; a file of the old format (``cleanup`` None), or one without this branch's text,
    gets the plain ``delete`` (the command judges again). Where the ref table has moved on since
    that sweep, the text follows it: a branch now only on the remote (``local`` False, its local
    branch deleted since) gets ``delete --remote``, and one whose worktree is gone (``b.worktree``
    None here) the plain ``delete`` instead of a text about that worktree."""
    text = cleanup.get(b.name) if cleanup is not None else None
    q = shell_quote(b.name)
    if type(text) is not str or not text or (b.worktree is None and "worktree" in text):
        text = f"branchkeeper delete -- {q}"
    if not local and text.startswith("branchkeeper delete -- "):
        text = f"branchkeeper delete --remote -- {q}"
    return text


def _present(b: OpenBranch) -> OpenBranch:
    """``b`` without its worktree when the last sweep's worktree path is gone since (removed,
    or its removal undone without re-creating it): a listing never names a missing checkout."""
    if b.worktree is None or os.path.isdir(b.worktree):
        return b
    return b._replace(worktree=None)


def _line(b: OpenBranch, cleanup: dict[str, object] | None = None, local: bool = True,
          lost: Mapping[str, object] | None = None) -> str:
    b = _present(b)
    label = state_word(b.state) if b.state else "state unknown"
    if b.stage and b.state != "dormant":
        label = f"{label}, {b.stage}"
    elif b.stage:
        label = f"dormant, {b.stage} stage"
    where = f", worktree {shell_quote(b.worktree)}" if b.worktree else ""
    text = f"  - {shell_quote(b.name)} ({label}, {_age(b)}{where})"
    if b.group == 0:
        text += f": {_cleanup(b, cleanup, local)}"
        # what its worktree holds, as the sweep's LOST WORK RISK section said it
        risks = lost.get(b.worktree) if b.worktree and lost else None
        if type(risks) is list:
            text += "".join(f"\n    {r}" for r in risks if type(r) is str)
    return text


def branch_listing(branches: list[OpenBranch], cleanup: dict[str, object] | None = None,
                   local: Container[str] | None = None,
                   lost: Mapping[str, object] | None = None) -> list[str]:
    """Merged first (with what deletes them: ``cleanup``, the last sweep's texts, see
    :func:`_cleanup`; and below one checked out in a worktree that holds work, the LOST WORK
    RISK lines the sweep printed for it: ``lost``, worktree path -> lines), then dormant,
    then live, each oldest first and then by name; at most MAX_LINES lines plus "and N more";
    ``local``, the local branch names now (None: all are). Only the groups the listing
    reaches are ordered (thousands of branches, twenty lines)."""
    groups: tuple[list[OpenBranch], ...] = ([], [], [])
    merged, dormant, live = (g.append for g in groups)
    for b in branches:
        if b.state in _MERGED:
            merged(b)
        elif b.state == "dormant" or b.stage is not None:
            dormant(b)
        else:
            live(b)
    ordered: list[OpenBranch] = []
    for group in groups:
        if len(ordered) >= MAX_LINES:
            break
        ordered += heapq.nsmallest(MAX_LINES - len(ordered), group,
                                   key=lambda b: (-(b.age_days or 0.0), b.name))
    lines = [_line(b, cleanup, local is None or b.name in local, lost) for b in ordered]
    if len(branches) > MAX_LINES:
        lines.append(f"  ... and {len(branches) - MAX_LINES} more")
    return lines


def lost_work_lines(branches: list[OpenBranch], remote: str) -> list[str]:
    """One loud line per branch the last sweep found contained nowhere (still at that tip)."""
    risky = [b for b in branches if b.containment == "nowhere"]
    lines = [f"LOST WORK RISK: branch {shell_quote(b.name)} holds commits no remote-tracking ref "
             f"contains ({_age(b)}); secure them now: {git_cmd(*push_argv(remote, b.name)[1:])}"
             for b in risky[:MAX_LINES]]
    if len(risky) > MAX_LINES:
        lines.append(f"LOST WORK RISK: ... and {len(risky) - MAX_LINES} more branches contained "
                     "nowhere (branchkeeper sweep lists them all)")
    return lines


def exempt_glob(name: str) -> str:
    """The ``branches.exempt`` glob that covers ``name`` and its siblings: ``human/*`` for
    ``human/old-experiment``, the name itself when it has no ``/``."""
    head, sep, _rest = name.partition("/")
    return f"{head}/*" if sep else name


def _ways_out(name: str, view: CreationView) -> str:
    """Each way out for a blocking branch, as commands that work on it where it is: a branch
    that exists only on the remote is deleted with ``--remote``; one nobody here created (no
    creator record: a teammate's) can be declared exempt, with the line to add."""
    q = shell_quote(name)
    remote_only = name not in view.table.local
    delete = ("branchkeeper delete --remote --allow-unproven --reason '<why it may go>' -- "
              if remote_only else
              "branchkeeper delete --allow-unproven --reason '<why it may go>' -- ")
    text = (f"  finish and merge it; or park it: branchkeeper park --reason '<why it waits>' -- "
            f"{q}; or a person deletes it deliberately (bundle kept): {delete}{q}")
    creators = view.creators()
    if creators is not None and name not in creators:
        glob = exempt_glob(name).replace("\\", "\\\\").replace('"', '\\"')
        text += (f"; or, when it is someone else's (no session here created it), declare it "
                 f'exempt in .branchkeeper.yaml: branches: {{exempt: ["{glob}"]}}')
    return text


def creation_decision(name: str | None, view: CreationView) -> Decision:
    """Decide a new branch ``name`` (None: a name not known yet, e.g. an Agent worktree).

    Deny (``R-BRANCH-WIP-CAP``) when count >= ``wip.cap`` with ``wip.mode: block`` (warn mode:
    WARN; off: nothing); deny (``R-BRANCH-DORMANCY-BLOCK``) while any counted branch is at the
    block stage; warn (``R-BRANCH-DUPLICATE-STEM``) on a shared stem or number token. A name
    that already exists, or that is not counted (default, line, exempt), is no new work.
    """
    b = view.config.branches
    branches, count = open_branches(view)
    lost = lost_work_lines(branches, b.remote)
    # an existing branch is no new work; a remote one only where the count reads remote
    # branches (else its local copy is a new counted branch)
    remote_counted = bool(b.wip.count_remote)
    if name is not None and (name in view.table.local
                             or (remote_counted and name in view.table.remote)):
        return ALLOW.with_context(lost)
    if name is not None and not_counted(name, view):
        return ALLOW.with_context(lost)
    shown = shell_quote(name) if name is not None else "a new branch"
    found: list[Decision] = []
    if count >= b.wip.cap and b.wip.mode != "off":
        note = [] if view.sweep.rows else ["(No sweep yet, so names only: run `branchkeeper sweep` "
                                      "for merged/dormant labels.)"]
        way = "\n".join([
            "Finish or clear an open branch first (merged ones are proven and cheapest):",
            *branch_listing(branches, view.sweep.cleanup, view.table.local, view.sweep.lost),
            *note,
            "`branchkeeper sweep --clean` deletes every proven branch nothing refuses, in one "
            "lossless step; or "
            "continue the work on one of the branches above instead of a new one. A human's "
            "branch can be declared in branches.exempt."])
        verdict = Verdict.DENY if b.wip.mode == "block" else Verdict.WARN
        found.append(Decision(verdict, R_CAP,
                              f"Creating {shown} would exceed the WIP cap: {count} open work "
                              f"branches, cap {b.wip.cap} (branches.wip.cap; {COUNTED}).", way))
    blocked = [x for x in branches if x.stage == "block"]
    if blocked:
        lines = [f"  - {shell_quote(x.name)} ({_age(x)}"
                 + (f", worktree {shell_quote(x.worktree)}" if x.worktree else "") + ")"
                 for x in blocked[:MAX_LINES]]
        if len(blocked) > MAX_LINES:
            lines.append(f"  ... and {len(blocked) - MAX_LINES} more")
        ways = [f"For {shell_quote(x.name)}:\n{_ways_out(x.name, view)}"
                for x in blocked[:MAX_LINES]]
        days = b.dormancy.effective_block_days
        found.append(Decision(
            Verdict.DENY, R_DORMANCY,
            f"No new branch while a branch has been idle {days}+ days (dormancy block stage):\n"
            + "\n".join(lines),
            "\n".join(ways) + "\nCommits, merges, pushes and deletes stay open; only new "
            "branches wait."))
    if name is not None and b.duplicates.mode == "warn":
        dup = _duplicate(name, branches, b.remote)
        if dup is not None:
            found.append(dup)
    decision = combine(found) if found else ALLOW
    extra = list(lost)
    if decision.verdict is not Verdict.DENY:
        idle = [x for x in branches if x.stage in ("noisy", "block")]
        extra += [f"Idle branch: {shell_quote(x.name)} has had no commit for "
                  f"{'?' if x.age_days is None else int(x.age_days)} days "
                  f"({x.stage} stage); finish it, park it or delete it."
                  for x in idle[:_IDLE_LINES]]
        if len(idle) > _IDLE_LINES:
            extra.append(f"... and {len(idle) - _IDLE_LINES} more idle branches "
                         "(branchkeeper sweep lists them all)")
    return decision.with_context(extra)


def _duplicate(name: str, branches: list[OpenBranch], remote: str) -> Decision | None:
    new_stem = stem(name, remote=remote)
    new_nums = number_tokens(name, remote=remote)
    # A cheap filter first (thousands of branches): a shared stem appears in the lower-cased
    # name, and so does a shared number. Ref names hold no newline, so one lower() of the
    # joined names gives every name's lower case.
    lows = "\n".join([x.name for x in branches]).lower().split("\n")
    search = re.compile("|".join(re.escape(t) for t in (new_stem, *sorted(new_nums)) if t)).search
    hits: list[str] = []
    for i in [i for i, low in enumerate(lows) if search(low)]:
        x = branches[i]
        if x.name == name:
            continue
        why = ""
        if new_stem in lows[i] and stem(x.name, remote=remote) == new_stem:
            why = f"same stem {shell_quote(new_stem)}"
        elif new_nums:
            shared = sorted(new_nums & number_tokens(x.name, remote=remote))
            if shared:
                why = f"shares number {shared[0]}"
        if why:
            where = f", worktree {shell_quote(x.worktree)}" if x.worktree else ""
            hits.append(f"  - {shell_quote(x.name)} ({why}, {_age(x)}{where})")
    if not hits:
        return None
    return Decision(Verdict.WARN, R_DUPLICATE,
                    f"{shell_quote(name)} looks like a duplicate of an existing branch:\n"
                    + "\n".join(hits[:MAX_LINES]),
                    "Continue there instead, unless this is really separate work.")


def _creation_view(facts: GuardFacts) -> CreationView:
    refs = facts.lean()
    default = resolve_default_branch(facts.config.branches.default, refs)

    read: list[frozenset[str] | None] = []  # read once: every blocked branch's ways out ask

    def creators() -> frozenset[str] | None:
        if read:
            return read[0]
        from pathlib import Path  # only on a denial's path: the hook's stays lean

        from branchkeeper.state.creators import read_creators

        try:
            found: frozenset[str] | None = read_creators(Path(facts.repo.root))
        except BranchkeeperError:
            found = None
        read.append(found)
        return found

    return CreationView(refs, default.name, read_sweep(facts.repo), facts.config, now(),
                        creators)


#: What reading git's output or the state files can raise besides a BranchkeeperError: a
#: malformed record (ValueError), a number no computation can use (ArithmeticError), absurd
#: nesting (RecursionError). A creation decision then allows, saying it could not judge.
_UNREADABLE = (ValueError, ArithmeticError, RecursionError)


def _could_not_judge(why: str) -> Decision:
    return ALLOW.with_context([f"branchkeeper could not judge this new branch ({why}); the next "
                               "sweep counts it."])


def decide_creation(name: str | None, *, cwd: str, route: str) -> Decision:
    """Decide a new branch created by the Agent tool's worktree isolation or WorktreeCreate
    (``route`` names it, e.g. ``"agent"``, ``"worktree_create"``); ``name`` None when the name is
    not known yet. One ``for-each-ref`` plus the last sweep and the config; never an inventory.
    Never raises: a git failure or timeout allows with a "could not judge" line."""
    try:
        facts = GuardRepos().of(cwd)
        if facts is None:
            return ALLOW
        decision = creation_decision(name, _creation_view(facts))
    except (BranchkeeperError, *_UNREADABLE) as exc:
        return _could_not_judge(git_failed(exc) if isinstance(exc, BranchkeeperError)
                                else str(exc)[:300] or type(exc).__name__)
    return decision.with_context([facts.config_note] if facts.config_note else [])


def decide_worktree_creation(name: str, *, cwd: str) -> Decision:
    """The WorktreeCreate route for the worktree ``name`` (and ``branchkeeper check --creation
    NAME``): a name that cannot be used is denied (``R-WORKTREE-NAME``, no git process), else
    the creation of the branch ``worktree-<name>`` is judged (:func:`decide_creation`)."""
    named = worktree_name_decision(name)
    if named.verdict is Verdict.DENY:
        return named
    return decide_creation(f"worktree-{name}", cwd=cwd, route="worktree_create")


def _counts_remote(c: Creation, view: CreationView) -> bool:
    """Whether a branch created on the remote ``c.remote`` adds to the WIP count: the count
    reads remote branches (``count_remote``) of ``branches.remote`` only; a remote named by an
    expansion may be that one."""
    b = view.config.branches
    return bool(b.wip.count_remote) and (c.dynamic or c.remote == b.remote)


def judge_creation(c: Creation, g: GitInvocation, repos: GuardRepos, unparsed: str) -> Decision:
    """The creation decision for one creation route of a command (``g`` creates ``c``), in
    the repository ``g`` acts on; ``unparsed``: why the command could not be read in full
    ("" when it could). Never raises: a git failure or a malformed state file allows with a
    "could not judge" line; a forced overwrite of an existing branch is
    ``R-GIT-BRANCH-OVERWRITE``'s, not a new branch. A branch pushed to a remote (``c.remote``)
    is judged only where the count reads that remote's branches (``branches.wip.count_remote``
    and ``c.remote`` is ``branches.remote``); the name already there, or on a local branch it
    joins, is no new work."""
    name, route, start = (c.name if not c.dynamic else None), c.route, c.start
    if unparsed:
        return _could_not_judge(f"the command could not be read in full: {unparsed}")
    try:
        facts = repos.of(g.cwd, g)
        if facts is None:
            return ALLOW if g.cwd else _could_not_judge("the directory is not known")
        view = _creation_view(facts)
        if c.remote is not None and not _counts_remote(c, view):
            return ALLOW  # a branch of a remote the count does not read: no open work here
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
        return _could_not_judge(git_failed(exc))
    except _UNREADABLE as exc:  # a malformed record or state file: a creation fails open
        return _could_not_judge(str(exc)[:300] or type(exc).__name__)
