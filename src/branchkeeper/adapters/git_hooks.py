"""Install and remove git's ``reference-transaction`` hook shim (issue 15; docs/git-hook.md).

The hook goes where git looks for hooks: ``git rev-parse --git-path hooks`` (``core.hooksPath``
when it is set, else the common dir's ``hooks/``), so every worktree of the repository runs it.
It is a small POSIX ``sh`` script carrying :data:`MARKER`; only its own file is ever replaced or
removed. A hook that was already there (the user's own, or another tool's) is renamed to
``reference-transaction.branchkeeper-chained`` and run by the shim FIRST, with the same
argument and stdin: a failing foreign hook still aborts a ``prepared`` transaction exactly as
before, and only then does branchkeeper look. ``uninstall`` puts it back. The pattern is
pre-commit's (``is_our_script``, ``.legacy``): a marker line, a kept predecessor.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from branchkeeper.errors import BranchkeeperError, GitTooOldError
from branchkeeper.git.repo import parse_git_version
from branchkeeper.git.run import GitError, run_git

HOOK = "reference-transaction"
CHAINED = f"{HOOK}.branchkeeper-chained"
#: The line that marks a hook file as ours.
MARKER = "# branchkeeper-managed-hook: reference-transaction v1"
#: The first git with the reference-transaction hook.
MIN_GIT_HOOK = (2, 28, 0)

# The shim. Every step of the common path is a shell builtin; a commit costs one
# `git merge-base --is-ancestor` in `prepared` and nothing in `committed`.
_SHIM = r"""#!/bin/sh
__MARKER__
# Installed by `branchkeeper install --git-hooks`; `branchkeeper uninstall --git-hooks` removes
# it. It keeps every commit a branch deletion or rewind would lose (docs/git-hook.md) and starts
# branchkeeper only for a line that may delete or rewind a refs/heads/* branch.
case "$1" in prepared|committed|aborted) ;; *) exit 0 ;; esac
chained="${0%/*}/__CHAINED__"
status=0 need= heads= cdir= created=

commondir() {  # the repository's common git dir, from the filesystem alone
  [ -n "$cdir" ] && return 0
  g=${GIT_DIR:-.git}
  if [ -f "$g" ]; then read -r l < "$g"; g=${l#gitdir: }; fi
  [ -d "$g" ] || g=.
  cdir=$g
  if [ -f "$g/commondir" ]; then
    read -r l < "$g/commondir"
    case $l in /*) cdir=$l ;; *) cdir=$g/$l ;; esac
  fi
}

scan() {  # read git's lines: keep the refs/heads/* ones, decide whether branchkeeper runs
  while read -r old new ref; do
    case $ref in refs/heads/*) ;; *) continue ;; esac
    case "$old$new" in *ref:*) continue ;; esac
    heads="$heads$old $new $ref
"
    [ -n "$need" ] && continue
    if [ "$1" != prepared ]; then
      commondir; [ -e "$cdir/branchkeeper/git-hook/pending-$PPID.json" ] && need=1
      continue
    fi
    case $new in
    *[!0]*) ;;
    *)  # a deletion; pack-refs also "deletes" the loose copy of a ref it just packed
      case $old in *[!0]*)
        commondir; grep -qxF -e "$old $ref" "$cdir/packed-refs" 2>/dev/null && continue ;;
      esac
      need=1; continue ;;
    esac
    case $old in
    *[!0]*) [ "$old" = "$new" ] && continue
            git merge-base --is-ancestor "$old" "$new" 2>/dev/null && continue
            need=1 ;;
    *) created="$created $ref" ;;  # no old value: a new branch, or `branch -f` (checked below)
    esac
  done
  # Ref names hold no blanks or glob characters: one for-each-ref checks them all.
  if [ -z "$need" ] && [ -n "$created" ]; then
    [ -n "$(git for-each-ref --count=1 --format=x $created 2>/dev/null)" ] && need=1
  fi
}

if [ -x "$chained" ]; then
  input=$(cat; echo .); input=${input%.}
  printf '%s' "$input" | "$chained" "$@"; status=$?
  if [ "$1" = prepared ] && [ "$status" -ne 0 ]; then exit "$status"; fi
  scan "$1" <<EOF
$input
EOF
else
  scan "$1"
fi
[ -n "$need" ] || exit "$status"
printf '%s' "$heads" | BRANCHKEEPER_GIT_PID=$PPID __PROGRAM__ git-hook reference-transaction "$1"
rc=$?
if [ "$rc" -eq 10 ] && [ "$1" = prepared ]; then exit 1; fi
if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
  commondir; mkdir -p "$cdir/branchkeeper" 2>/dev/null
  printf '{"event":"%s","message":"branchkeeper could not be started (exit %s); update let through"}\n' \
    "$1" "$rc" >> "$cdir/branchkeeper/git-hook.log" 2>/dev/null
fi
exit "$status"
"""


class Change(NamedTuple):
    """One line of the summary: ``+`` written, ``~`` replaced, ``-`` removed, ``>`` moved."""

    sign: str
    path: Path
    what: str

    def render(self) -> str:
        return f"{self.sign} {self.path}: {self.what}"


def shim_text(program: str) -> str:
    """The hook file for ``program`` (a shell-quoted command prefix)."""
    return (_SHIM.replace("__MARKER__", MARKER).replace("__CHAINED__", CHAINED)
            .replace("__PROGRAM__", program))


def is_ours(path: Path) -> bool:
    """Whether ``path`` is a hook file branchkeeper wrote (it carries :data:`MARKER`)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return MARKER.encode() in head.splitlines()


def check_git_version(root: Path) -> None:
    """Raise :class:`GitTooOldError` ("not supported") below git 2.28, which has no
    ``reference-transaction`` hook."""
    try:
        text = run_git(["version"], cwd=root).text
    except GitError as exc:
        raise GitTooOldError(f"git could not be run: {exc}") from None
    version = parse_git_version(text)
    if version.tuple < MIN_GIT_HOOK:
        need = ".".join(map(str, MIN_GIT_HOOK))
        raise GitTooOldError(
            f"install --git-hooks is not supported with {version.text}: the reference-transaction "
            f"hook needs git {need} or newer")


def hooks_dir(root: Path) -> tuple[Path, str]:
    """(the directory git runs hooks from, a note): ``git rev-parse --git-path hooks``, which
    honours ``core.hooksPath``. The note warns about a relative ``core.hooksPath`` (each
    worktree then has its own hooks directory)."""
    out = run_git(["rev-parse", "--git-path", "hooks"], cwd=root).path_text.rstrip("\n")
    path = Path(out) if os.path.isabs(out) else (root / out)
    setting = run_git(["config", "--get", "core.hooksPath"], cwd=root, check=False).text.strip()
    note = ""
    if setting and not os.path.isabs(os.path.expanduser(setting)):
        note = (f"core.hooksPath is relative ({setting}): each worktree runs hooks from its own "
                f"{setting}; installed for this one")
    return Path(os.path.normpath(path)), note


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.branchkeeper.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    os.replace(tmp, path)


def install(directory: Path, program: str, *, dry_run: bool) -> list[Change]:
    """Write the shim into ``directory`` (the hooks directory); return what changed (empty:
    already installed). A foreign hook is renamed to :data:`CHAINED` and chained. Raises
    :class:`BranchkeeperError` when a foreign hook exists AND a chained one is already there
    (nothing is overwritten)."""
    hook, chained = directory / HOOK, directory / CHAINED
    text = shim_text(program)
    changes: list[Change] = []
    if hook.is_symlink() or hook.exists():
        if is_ours(hook):
            if hook.read_text(encoding="utf-8", errors="replace") == text:
                return []
            changes.append(Change("~", hook, "branchkeeper's hook, updated"))
        elif chained.is_symlink() or chained.exists():
            raise BranchkeeperError(
                f"{hook} is not branchkeeper's and {chained} already exists; move one of them "
                "away first (nothing was changed)")
        else:
            changes.append(Change(">", chained, f"your existing hook, moved from {hook.name}; "
                                                "the shim runs it first"))
            changes.append(Change("+", hook, "branchkeeper's reference-transaction hook"))
            if not dry_run:
                os.rename(hook, chained)
    else:
        changes.append(Change("+", hook, "branchkeeper's reference-transaction hook"))
    if not dry_run:
        _write(hook, text)
    return changes


def uninstall(directory: Path, *, dry_run: bool) -> list[Change]:
    """Remove our shim from ``directory`` and put a chained hook back; a hook that is not
    ours is left alone (empty result)."""
    hook, chained = directory / HOOK, directory / CHAINED
    if not is_ours(hook):
        return []
    changes = [Change("-", hook, "branchkeeper's reference-transaction hook")]
    if chained.is_symlink() or chained.exists():
        changes.append(Change(">", hook, f"your hook, moved back from {chained.name}"))
        if not dry_run:
            os.replace(chained, hook)
    elif not dry_run:
        hook.unlink()
    return changes
