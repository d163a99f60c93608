"""The Stop and SubagentStop guard as pure functions (first document, section 6).

:func:`judged_branches` picks the branches a stopping thread answers for from the creator and
touch records; :func:`judge_stop` turns the facts about them into findings and one message.
Neither runs git.

Which branches (section 6): a sub-agent (``agent_id`` set) answers for every branch whose
records name ``<session>:<agent_id>``; the main thread for every branch its own thread
(``<session>:``) created or touched (all checks), plus every branch a sub-agent of the same
session touched, for the unpushed and merged-but-not-deleted checks only. A branch nobody
recorded is never judged.

"Merged it" for a sub-agent (the merged-but-not-deleted check applies to a sub-agent only when
it did the merge) is approximated: the sub-agent's thread is recorded as a toucher of the branch
it was merged into (a merge, commit or other touch on the default branch or the line). Touch
records do not say which git command touched, so a sub-agent that committed on the default
branch and whose branch someone else merged is also held to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from branchkeeper.analysis.lost_work import secure_command
from branchkeeper.analysis.stop_facts import BranchFacts, StopFacts
from branchkeeper.git.types import push_argv
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from branchkeeper.shell.quoting import git_cmd, shell_quote


class Scope(StrEnum):
    """How much of a branch the stopping thread answers for."""

    OWN = "own"  # every check
    SUBAGENTS = "subagents"  # main thread, for its sub-agents' branches: unpushed, merged


class Check(StrEnum):
    """The three checks of section 6."""

    DIRTY = "dirty"
    UNPUSHED = "unpushed"
    MERGED_NOT_DELETED = "merged_not_deleted"


@dataclass(frozen=True, slots=True)
class Finding:
    """One failed check: the ``branch``, the ``check``, a one-line ``detail``, the exact
    ``commands`` to finish (shell-quoted), and whether it ``blocks`` (else it advises)."""

    branch: str
    check: Check
    detail: str
    commands: tuple[str, ...]
    blocks: bool


@dataclass(frozen=True, slots=True)
class StopJudgement:
    """Every finding, and the message naming each branch, check and command (empty: none)."""

    findings: tuple[Finding, ...]

    @property
    def blocking(self) -> bool:
        return any(f.blocks for f in self.findings)

    @property
    def branches(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.branch for f in self.findings if f.blocks))

    def message(self, *, blocking: bool) -> str:
        """The text for the agent: a block reason (``blocking``) or an advisory."""
        if not self.findings:
            return ""
        head = ("branchkeeper: do not stop yet; finish the work on these branches first "
                "(the Stop guard):" if blocking else
                "branchkeeper: before you stop, these branches still need work:")
        lines = [head]
        for f in self.findings:
            mark = "" if f.blocks or not blocking else " (advisory)"
            lines.append(f"- {f.branch}: {f.detail}{mark}")
            lines.extend(f"    {c}" for c in f.commands)
        if blocking:
            lines += ["", BRANCH_LIMIT_PRINCIPLE]
        return "\n".join(lines)


def judged_branches(threads: Mapping[str, frozenset[str]], *, session_id: str,
                    agent_id: str) -> dict[str, Scope]:
    """Branch name -> :class:`Scope` for the thread ``<session_id>:<agent_id>`` (see module).

    ``threads`` maps a branch name to every ``<session>:<agent>`` its records name (creator and
    touchers).
    """
    own = f"{session_id}:{agent_id}"
    prefix = f"{session_id}:"
    out: dict[str, Scope] = {}
    for name, names in threads.items():
        if own in names:
            out[name] = Scope.OWN
        elif not agent_id and any(t.startswith(prefix) and t != own for t in names):
            out[name] = Scope.SUBAGENTS
    return out


def _merged_by(threads: Mapping[str, frozenset[str]], base: str, thread: str) -> bool:
    return thread in threads.get(base, frozenset())


def judge_stop(facts: StopFacts, scopes: Mapping[str, Scope],
               threads: Mapping[str, frozenset[str]], *, session_id: str, agent_id: str,
               unpushed_subagent: str, include_default: bool) -> StopJudgement:
    """Findings for every judged branch (section 6 table).

    ``unpushed_subagent`` is ``block``, ``advise`` or ``off`` (a sub-agent's unpushed commits);
    ``include_default`` judges the default branch and integration lines too. ``threads`` as
    for :func:`judged_branches`.
    """
    thread = f"{session_id}:{agent_id}"
    found: list[Finding] = []
    for name in sorted(scopes):
        b = facts.branches.get(name)
        if b is None or (b.role and not include_default):
            continue
        scope = scopes[name]
        found.extend(_branch_findings(b, scope, facts, threads, thread=thread,
                                      subagent=bool(agent_id),
                                      unpushed_subagent=unpushed_subagent))
    return StopJudgement(tuple(found))


def _delete_cmd(name: str) -> str:
    return "branchkeeper delete -- " + shell_quote(name)


def _branch_findings(b: BranchFacts, scope: Scope, facts: StopFacts,
                     threads: Mapping[str, frozenset[str]], *, thread: str, subagent: bool,
                     unpushed_subagent: str) -> list[Finding]:
    out: list[Finding] = []
    remote = facts.remote
    if scope is Scope.OWN and b.worktree and b.dirty_count:
        shown = ", ".join(b.dirty[:5]) + (f", ... ({b.dirty_count} in all)"
                                          if b.dirty_count > 5 else "")
        # the paths to commit, named (the install's own untracked files never among them), and
        # the commit pushed where a remote is configured: what the lost-work list prints
        pushed = remote if facts.remote_configured else None
        command = secure_command(b.worktree, b.dirty, branch=b.name, shared=bool(b.role),
                                 head=b.local_tip, remote=pushed,
                                 message="<what the change does>", hidden=b.hidden)
        out.append(Finding(b.name, Check.DIRTY,
                           f"uncommitted changes in {b.worktree} ({shown}); commit "
                           f"{'and push ' if pushed else ''}them",
                           (command,) if command else (), True))
    if (b.merged_into is not None and not b.role
            and (not subagent or _merged_by(threads, b.merged_into, thread))):
        where = [w for w, present in (("locally", b.local_tip is not None),
                                      (f"on {remote}", b.remote_tip is not None),
                                      ("as a worktree", b.worktree is not None)) if present]
        cmds: list[str] = []
        if b.worktree:
            cmds.append(git_cmd("worktree", "remove", b.worktree))
        if b.local_tip is not None:
            cmds.append(_delete_cmd(b.name))
        if b.remote_tip is not None:
            cmds.append(git_cmd("push", remote, "--delete", b.name))
        out.append(Finding(b.name, Check.MERGED_NOT_DELETED,
                           f"merged into {b.merged_into} but not deleted (still "
                           f"{', '.join(where)}); delete it", tuple(cmds), True))
        return out  # merged: its commits are held, the unpushed check does not apply
    if b.unpushed and b.merged_into is None and facts.remote_configured:
        # (without a remote nothing can be pushed: where work lives is not judged, as in sweep)
        blocks = not subagent or unpushed_subagent == "block"
        if not subagent or unpushed_subagent != "off":
            tip = b.local_tip.short if b.local_tip is not None else "?"
            out.append(Finding(b.name, Check.UNPUSHED,
                               f"commits no remote holds (tip {tip}: not on any {remote} "
                               f"branch nor in {facts.default or 'the default branch'}); push "
                               "them", (git_cmd(*push_argv(remote, b.name)[1:]),), blocks))
    return out
