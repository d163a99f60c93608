"""Host-neutral hook events mapped onto the guards, the records, cleanup after merge and the
summaries (issue 6, section 1; issue 14). :mod:`branchkeeper.adapters.hooks.handlers` calls
these with a :class:`~branchkeeper.adapters.hooks.event.HookEvent`; no host format reaches them.

The hook imports this module on every guarded tool call, so its module-level imports are the
standard library only; every heavier module is imported inside the function that needs it.

Fast path: a Bash command whose text mentions neither ``git`` nor ``rm`` cannot create, delete,
evacuate or destroy anything the guards judge, so :func:`bash_verdict`, :func:`evacuations`,
:func:`git_invocations`, :func:`created_branches` and :func:`post_tool_use_context` return at
once for it, without importing the parser (tree-sitter), the config model (pydantic) or the
inventory. This is a textual pre-check only; any command that mentions either word is parsed in
full.

Every function returns ``None`` (or an empty list) for "nothing to say"; errors propagate to the
hook, which fails open and logs them.
"""

from __future__ import annotations

import os

from branchkeeper.adapters.hooks.fast import (
    BYPASS_WORDS,
    CONSENT_FLAG,
    GUARD_WORDS,
    HIDDEN_SPELLING,
    PROTECTED_HINTS,
    may_run_script,
    may_truncate,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from branchkeeper.adapters.hooks.event import HookEvent
    from branchkeeper.git.repo import RepoFacts, Worktree
    from branchkeeper.model.config import Config
    from branchkeeper.policy.decision import Decision

_REPOS: dict[str, tuple[RepoFacts, Config]] = {}
_PARSED: dict[tuple[str, str], list[Any]] = {}


class HookVerdict:
    """What the hook reads: ``verdict`` (allow|warn|deny), ``reason``, ``context``; for Stop
    also ``max_blocks`` and ``findings`` (branch, check) pairs for the abandoned-at-stop record.
    """

    __slots__ = ("context", "findings", "max_blocks", "reason", "verdict")

    def __init__(self, verdict: str, reason: str = "", context: str = "", *,
                 max_blocks: int = 3, findings: tuple[tuple[str, str], ...] = ()) -> None:
        self.verdict = verdict
        self.reason = reason
        self.context = context
        self.max_blocks = max_blocks
        self.findings = findings

    def __repr__(self) -> str:
        return f"HookVerdict({self.verdict!r}, {self.reason!r}, {self.context!r})"


_HIDDEN_SPELLING = frozenset(HIDDEN_SPELLING)


def _names_protected(text: str) -> bool:
    """Whether ``text`` (a command, a path) holds a :data:`PROTECTED_HINTS` word."""
    return any(h in text for h in PROTECTED_HINTS)


def might_matter(command: str) -> bool:
    """The textual pre-check: False only when ``command`` mentions none of
    :data:`~branchkeeper.adapters.hooks.fast.GUARD_WORDS` (``git``, ``rm``, find's
    ``-delete``, ``unlink``, ``shred``, ``truncate``), holds no character through which bash
    could spell them (:data:`~branchkeeper.adapters.hooks.fast.HIDDEN_SPELLING`), empties
    no file (:func:`~branchkeeper.adapters.hooks.fast.may_truncate`) and runs no script file
    (:func:`~branchkeeper.adapters.hooks.fast.may_run_script`); anything else goes to the
    parser, which reads words as bash does after quote removal. The fast path applies the same
    rule to the raw stdin bytes."""
    return any(word in command for word in GUARD_WORDS) or \
        not _HIDDEN_SPELLING.isdisjoint(command) or \
        may_truncate(raw := command.encode("utf-8", "surrogateescape")) or may_run_script(raw)


#: git subcommands that create, move, overwrite or delete no branch, worktree or uncommitted
#: work. A command made of these alone (no ``rm``, no ``-c``/GIT_CONFIG_* override, no export
#: to a file) is allowed without importing the guard; every other git subcommand, aliases
#: included, goes to it.
READ_ONLY_GIT = frozenset({
    "status", "log", "diff", "show", "blame", "annotate", "rev-parse", "rev-list", "ls-files",
    "ls-tree", "ls-remote", "cat-file", "describe", "shortlog", "grep", "show-ref",
    "for-each-ref", "merge-base", "name-rev", "whatchanged", "version", "help", "add", "commit",
    "check-ignore", "check-attr", "check-ref-format", "var", "count-objects", "range-diff",
    "diff-tree", "diff-index", "diff-files", "cherry", "hash-object", "verify-commit",
    "verify-tag", "archive", "bundle"})


def needs_guard(command: str, *, cwd: str) -> bool:
    """Whether the command guard has anything to judge in ``command``. True whenever the
    command, ``cwd``, or (after quote removal) a word, directory or redirect of it names
    something ``R-BRANCHKEEPER-TAMPER`` protects (:data:`PROTECTED_HINTS`). False for a command
    that mentions neither ``git`` nor ``rm`` and could not spell them (textual fast path, no parse),
    and for a fully parsed command whose every git invocation is a :data:`READ_ONLY_GIT`
    subcommand that exports nothing and sets no variable, with no ``rm`` and no command name
    from an expansion (the
    guard would allow it without a git process, but importing it costs ~30 ms). Anything
    else, an unparsed command included, goes to the guard: this must never allow what the
    guard (``branchkeeper check``) would refuse."""
    if CONSENT_FLAG in command:
        return True  # only a person at a terminal consents; the guard says so
    if _names_protected(command) or _names_protected(cwd):
        return True  # R-BRANCHKEEPER-TAMPER reads every path the command writes
    lowered = command.lower()
    if any(word in lowered for word in BYPASS_WORDS):
        return True  # may switch git's own hook off (R-GIT-HOOKS-BYPASS)
    if not might_matter(command):
        return False
    from branchkeeper.shell.gitargv import config_from_env
    from branchkeeper.shell.gitevac import evacuation
    from branchkeeper.shell.model import rm_operands, truncated_files
    from branchkeeper.shell.parse import git_invocation, parse_command

    parsed = parse_command(command, cwd=cwd, home=os.environ.get("HOME") or None,
                           env=os.environ)
    if parsed.unparsed:
        return True
    for inv in parsed.invocations:
        if rm_operands(inv) or truncated_files(inv) or inv.dynamic_args[:1] == (True,):
            return True
        if any(_names_protected(w) for w in (*inv.argv, inv.cwd or "",
                                             *(r.path or r.body or "" for r in inv.redirects))):
            return True  # spelled with quotes or escapes: `echo > .cl''aude/settings.json`
        g = git_invocation(inv)
        if g is None:
            continue
        if g.dynamic or g.config or inv.env or config_from_env(g) or evacuation(g) is not None:
            return True
        if g.subcommand is not None and g.subcommand not in READ_ONLY_GIT:
            return True
    return False


def repo_config(facts: RepoFacts) -> Config:
    """The configuration of the repository ``facts`` describes (read once per process)."""
    return repo_and_config(facts.root)[1]


def repo_and_config(cwd: Path) -> tuple[RepoFacts, Config]:
    """Facts and config of the repository at ``cwd`` (cached per process). Raises
    NotARepositoryError / ConfigError."""
    key = str(cwd)
    if key not in _REPOS:
        from branchkeeper.git.repo import repo_facts
        from branchkeeper.model.config_file import load_config

        facts = repo_facts(cwd)
        _REPOS[key] = (facts, load_config(facts.main_root).config)
    return _REPOS[key]


def _from_decision(d: Decision) -> HookVerdict | None:
    kind = str(getattr(d.verdict, "value", d.verdict)).lower()
    if kind in ("deny", "ask"):  # Claude Code has a working ask: the person decides
        return HookVerdict(kind, d.text)
    if kind == "warn":
        return HookVerdict("warn", d.text)
    return HookVerdict("allow", "", d.text) if d.text else None


def session_store(event: HookEvent) -> Any:
    """The session's state store (:class:`~branchkeeper.state.session.SessionStore`) for
    ``event``'s session, under the repository's common dir."""
    from branchkeeper.state.session import SessionStore
    from branchkeeper.state.statedir import find_common_dir

    return SessionStore(find_common_dir(event.cwd), event.session_id)


# -- PreToolUse -----------------------------------------------------------------------------------
def bash_verdict(event: HookEvent) -> HookVerdict | None:
    """PreToolUse on Bash: :func:`branchkeeper.policy.command.decide_command` with the current
    turn's evacuation records (section 13, same turn; none when the state path is blocked, so
    the guard judges without them). DENY -> deny with the full text; WARN -> context only;
    ALLOW with context lines -> context; plain allow -> None (quiet)."""
    command = event.command
    if not needs_guard(command, cwd=event.cwd_text):
        return None
    from branchkeeper.errors import NotARepositoryError, StateDirError
    from branchkeeper.policy.command import decide_command
    from branchkeeper.policy.decision import EvacuationRecord

    records: list[EvacuationRecord] = []
    try:
        stored = session_store(event).read().current_evacuations(event.agent_id)
    except (NotARepositoryError, StateDirError):
        stored = []  # no state to read (a blocked state path): the guard still judges
    for item in stored:
        try:
            records.append(EvacuationRecord.from_json(item))
        except ValueError:
            continue
    return _from_decision(decide_command(command, cwd=event.cwd_text,
                                         evacuations=tuple(records)))


def creation_verdict(name: str | None, *, cwd: Path) -> HookVerdict | None:
    """The creation guard for the Agent route (``name`` None) and WorktreeCreate
    (``worktree-<name>``), section 3."""
    from branchkeeper.policy.creation import decide_creation

    route = "agent" if name is None else "worktree_create"
    return _from_decision(decide_creation(name, cwd=str(cwd), route=route))


# -- PostToolUse ----------------------------------------------------------------------------------
def _parsed_git(command: str, cwd: str) -> list[Any]:
    """The git invocations (with a subcommand) of ``command``; parsed once per process."""
    key = (command, cwd)
    if key not in _PARSED:
        from branchkeeper.shell.parse import git_invocations as invocations
        from branchkeeper.shell.parse import parse_command

        _PARSED[key] = [g for g in invocations(parse_command(command, cwd=cwd)) if g.subcommand]
    return _PARSED[key]


def git_invocations(command: str) -> list[list[str]]:
    """``[[subcommand, *args], ...]`` for each git call of ``command`` (tree-sitter parser)."""
    if "git" not in command:
        return []
    return [[g.subcommand, *g.args] for g in _parsed_git(command, "/")]


def created_branches(command: str, *, cwd: Path | None = None) -> list[str]:
    """Names a successful ``command`` created (section 3 routes; the hook then writes the
    creator record if the ref exists). ``worktree add <path>`` (git's DWIM), ``update-ref``,
    a ``fetch`` refspec and a forced copy count only when the branch's reflog holds just its
    creation and no creator record exists yet, since the branch may have existed before the
    command; a branch pushed to a remote is no local branch."""
    if "git" not in command:
        return []
    from branchkeeper.shell.gitcreate import creations

    where = str(cwd) if cwd is not None else "/"
    names: list[str] = []
    for g in _parsed_git(command, where):
        for c in creations(g):
            if _made_here(c, where):
                names.append(c.name)
    return names


def _made_here(c: Any, where: str) -> bool:
    """Whether the successful creation ``c`` made a local branch (not a remote's): a name
    known, and where git may have moved an existing branch instead, a reflog holding only
    the creation and no creator record yet."""
    from branchkeeper.git.run import run_git

    if c.dynamic or not c.name or c.remote is not None:
        return False
    if c.needs_existence_check:
        repo = c.cwd or where
        log = run_git(["reflog", "show", "--format=%gs", f"refs/heads/{c.name}", "--"],
                      cwd=repo, check=False, timeout=10)
        made = run_git(["config", "--get", f"branch.{c.name}.branchkeeperCreator"],
                       cwd=repo, check=False, timeout=10)
        entries = log.text.splitlines()
        if log.returncode != 0 or len(entries) != 1 or made.returncode == 0:
            return False
    return True


def evacuations(event: HookEvent) -> list[dict[str, Any]]:
    """Evacuation records of a successful Bash command (section 13), for the same-turn rule."""
    command = event.command
    if "git" not in command:
        return []
    from branchkeeper.shell.gitevac import evacuation

    if not any(evacuation(g) is not None for g in _parsed_git(command, event.cwd_text)):
        return []  # nothing to record: spare the guard's imports
    from branchkeeper.policy.evacuation import evacuations_in

    found = evacuations_in(command, cwd=event.cwd_text)
    return [r.to_json() for r in found]


def post_tool_use_context(event: HookEvent) -> str | None:
    """Cleanup after merge (section 7) after a successful Bash ``git merge``."""
    command = event.command
    if "git" not in command or "merge" not in command:
        return None
    merges = [g for g in _parsed_git(command, event.cwd_text)
              if g.subcommand == "merge" and not g.dynamic]
    if not merges:
        return None
    from pathlib import Path

    from branchkeeper.actions.merge_cleanup import cleanup_after_merge, merged_names

    _, config = repo_and_config(event.cwd)
    out: list[str] = []
    nudge_at: Path | None = None
    for g in merges:
        where = Path(g.cwd or event.cwd_text)
        result = cleanup_after_merge(where, merged_names(g.args), config)
        out.extend(result.lines)
        nudge_at = where if result.on_line else nudge_at
    if nudge_at is not None:  # the passive nudge: one git process, never removes
        line = _worktree_nudge(nudge_at, config)
        out.extend([line] if line else [])
    return "\n".join(out) or None


def _worktree_nudge(where: Path, config: Config, *,
                    worktrees: list[Worktree] | None = None) -> str:
    """The count-only nudge past ``worktrees.nudge_threshold`` linked worktrees (counted in
    ``worktrees`` when given, else one ``git worktree list``; ``""`` at or below it, or when
    git fails)."""
    from branchkeeper.actions.routine import nudge_line
    from branchkeeper.git.repo import worktree_counts
    from branchkeeper.git.run import GitError

    if worktrees:
        linked = sum(1 for w in worktrees if not w.is_main)
    else:
        try:
            linked = worktree_counts(where)["linked"]
        except GitError:
            return ""
    return nudge_line(linked, config.worktrees.nudge_threshold)


# -- SessionStart ---------------------------------------------------------------------------------
def session_start_context(event: HookEvent) -> str | None:
    """The sweep summary: the last sweep's rows when it is current, else an inventory inside
    ``branches.sweep.budget_ms``, or past ``branches.sweep.session_inline_max`` branches the
    background pass (actions.sweep_pass) and what the last sweep knows (see
    analysis.session_summary and render.session_start); then the routine's lines. One
    ``worktree list`` serves the rows, the survey, the nudge's count and the due rule's
    branch; the default branch resolved here is kept for the session's later hook calls
    (issue 18: resolved once per session)."""
    from branchkeeper.analysis.refs import remember_session_default
    from branchkeeper.analysis.session_summary import session_summary
    from branchkeeper.errors import NotARepositoryError
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.render.session_start import session_start_text
    from branchkeeper.state.config_cache import load_config_cached

    try:
        facts = repo_facts(event.cwd)
    except NotARepositoryError:
        return None
    # the cached view first: a current sweep needs no validated model (no pydantic import)
    view = load_config_cached(facts.main_root, facts.common_dir)
    def background(wait_s: float) -> str:
        from branchkeeper.actions.sweep_pass import continue_in_background

        return continue_in_background(facts.root, facts.common_dir, wait_s=wait_s)

    summary = session_summary(facts, view, budget_ms=view.branches.sweep.budget_ms,
                              full_config=lambda: repo_and_config(event.cwd)[1], background=background)
    if summary.default is not None:
        remember_session_default(facts.common_dir, event.session_id, view.branches.default,
                                 view.branches.remote, summary.remote_head, summary.default)
    wts = list(summary.worktrees)
    lines = [(session_start_text(summary, source=event.source) or "").rstrip("\n")]
    lines.append(_worktree_nudge(facts.root, view, worktrees=wts))
    if event.source != "compact":  # a compaction continues the session: no preflight
        lines.append(_prune_due_line(facts, view, worktrees=wts))
    return "\n".join(line for line in lines if line) or None


def _prune_due_line(facts: RepoFacts, config: Config, *,
                    worktrees: list[Worktree] | None = None) -> str:
    """The due rule: one line suggesting ``branchkeeper prune`` (or, with ``session_start.prune:
    background``, starting it detached) when the last prune is older than
    ``session_start.prune_due_minutes`` or the checkout's branch changed since; ``""`` else.
    The checkout's branch comes from ``worktrees`` when it lists this checkout."""
    from branchkeeper import clock
    from branchkeeper.actions.routine import prune_due, start_background_prune
    from branchkeeper.state.routine import read_last_prune

    mode = config.session_start.prune
    if mode == "off" or facts.toplevel is None:
        return ""
    here = facts.toplevel.resolve()
    branch = _branch_of(here, worktrees) if worktrees else _MISSING
    if branch is _MISSING:
        branch = _branch_at(facts.root)
    now = clock.now()
    why = prune_due(read_last_prune(facts.common_dir), now=now, branch=branch,
                    worktree=str(here), minutes=config.session_start.prune_due_minutes)
    if not why:
        return ""
    if mode == "background":
        return start_background_prune(facts.root, facts.common_dir, now=now, branch=branch,
                                      worktree=str(here))
    return f"branchkeeper: the session-start prune is due ({why}); run: branchkeeper prune"


#: :func:`_branch_of` when the list does not hold the checkout.
_MISSING = "\0missing"


def _branch_of(here: Path, worktrees: list[Worktree]) -> str | None:
    """The branch checked out in the worktree at ``here`` (resolved) as ``worktree list``
    reported it: its short name, None when detached, :data:`_MISSING` when the list does not
    hold that worktree (no git process)."""
    from pathlib import Path

    for w in worktrees:
        if not w.bare and Path(w.path).resolve() == here:
            ref = w.branch or ""
            return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    return _MISSING


def _branch_at(root: Path) -> str | None:
    """The branch checked out at ``root`` (one ``symbolic-ref -q HEAD``; ``None``: detached)."""
    from branchkeeper.git.run import run_git

    res = run_git(["symbolic-ref", "-q", "HEAD"], cwd=root, check=False, timeout=10)
    ref = res.stdout.decode("utf-8", "surrogateescape").strip()
    return ref.removeprefix("refs/heads/") if res.returncode == 0 and ref else None


# -- WorktreeRemove -------------------------------------------------------------------------------
def force_removal_safe(path: Path, *, cwd: Path) -> bool:
    """Section 11's proof for ``worktree remove --force``: the worktree is clean (``status
    --porcelain`` empty, untracked included, ignored excluded) and its HEAD is contained in a
    ref other than its own branch (``for-each-ref --contains HEAD``)."""
    from branchkeeper.git.run import run_git

    status = run_git(["status", "--porcelain", "--untracked-files=normal",
                      "--ignore-submodules=none"], cwd=path,
                     check=False, timeout=20)
    if status.returncode != 0 or status.stdout.strip():
        return False
    head = run_git(["rev-parse", "--verify", "-q", "HEAD"], cwd=path, check=False, timeout=10)
    own = run_git(["symbolic-ref", "-q", "HEAD"], cwd=path, check=False, timeout=10)
    if head.returncode != 0:
        return False
    refs = run_git(["for-each-ref", "--format=%(refname)", f"--contains={head.text.strip()}",
                    "refs/heads", "refs/remotes", "refs/tags"], cwd=cwd, check=False, timeout=20)
    if refs.returncode != 0:
        return False
    mine = own.text.strip() if own.returncode == 0 else ""
    return any(ref and ref != mine for ref in refs.text.splitlines())


def delete_if_proven(branch: str, *, cwd: Path) -> str | None:
    """Delete ``branch`` through the lossless cleanup (proof ladder, bundle, journal) when it is
    proven merged or patch-equivalent; return a one-line note for stderr (None: nothing done).
    """
    from branchkeeper.actions.cleanup import Action
    from branchkeeper.actions.cleanup_run import run_delete
    from branchkeeper.errors import BranchkeeperError

    facts, config = repo_and_config(cwd)
    try:
        outcome = run_delete(facts, config, [branch], remote=False, allow_unproven=False,
                             dry=False, lock_wait_s=5.0)
    except BranchkeeperError as exc:
        return f"branchkeeper: kept branch {branch}: {exc}"
    for item in outcome.items:
        if item.name != branch:
            continue
        if item.action is Action.DELETED:
            return f"branchkeeper: deleted branch {branch} ({item.reason}); restore: {item.restore}"
        return f"branchkeeper: kept branch {branch}: {item.reason}"
    return None
