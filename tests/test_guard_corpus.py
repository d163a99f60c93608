# ruff: noqa: F811, E501  (the `world` fixture is imported; corpus rows are long)
"""The command guard's corpus: real repositories, every route, expected (verdict, rule id).

Issue 5 sections 3 and 5; first document sections 3, 4, 7, 11, 12, 13. The repositories are
described in tests/guardworld.py; commands name them through ``{W}`` (the world directory).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from branchkeeper.adapters.hooks.fast import silent
from branchkeeper.adapters.hooks.glue import needs_guard
from branchkeeper.adapters.hosts import HOSTS
from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.decision import EvacuationRecord
from branchkeeper.policy.evacuation import evacuations_in
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests import peer_oracle, sandbox
from tests.gitrepo import GitRepo
from tests.guardworld import rel, world  # noqa: F401 (fixture)

A, W_, D = "allow", "warn", "deny"
FORCE, WT, PUSH = "R-GIT-BRANCH-FORCE-DELETE", "R-GIT-WORKTREE-REMOVE-FORCE", "R-GIT-PUSH-DELETE-REMOTE"
EVAC, UNP = "R-GIT-EVACUATE-DESTROY", "R-GIT-UNPARSED-DESTRUCTIVE"
CAP, DORM, DUP = "R-BRANCH-WIP-CAP", "R-BRANCH-DORMANCY-BLOCK", "R-BRANCH-DUPLICATE-STEM"
OVER, DISC = "R-GIT-BRANCH-OVERWRITE", "R-GIT-DISCARD-CHANGES"
CONSENT = "R-BRANCHKEEPER-CONSENT"
RMW = "R-RM-WORK-AT-RISK"

BENIGN = [
    "ls -la", "pwd", "echo 'git branch -D lonely'", 'echo "git push origin --delete main"',
    "grep -rn 'git branch -D' .", "grep -- '--force' README.md", "printf '%s\\n' 'git worktree remove --force ../wt/dirty'",
    "git commit -m 'use -D to delete branches'", 'git commit -m "fix: --amend later; git branch -D x"',
    "git commit --allow-empty -m 'worktree remove --force is dangerous'",
    "git log --oneline -5", "git status", "git status --porcelain", "git diff", "git diff --stat",
    "git diff > /tmp/export.patch", "git format-patch -o /tmp/patches main..lonely",
    "git -C ../wt/clean diff > /tmp/p.patch", "git stash list", "git show HEAD", "git fetch origin",
    "git pull --ff-only", "git push origin main", "git push -u origin lonely", "git push",
    "git branch", "git branch -a", "git branch -vv", "git branch --list 'lane-*'", "git branch -r",
    "git branch --merged main", "git branch --contains HEAD", "git branch -m fix-login fix-login-renamed",
    "git switch main", "git checkout main", "git switch lane-f-adoption", "git checkout lane-f-adoption-D",
    "git worktree list", "git worktree add --detach ../wt/tmp-detached", "git worktree add ../wt/l lonely",
    "git worktree add ../wt/lonely", "git worktree prune --dry-run", "git branch -d lonely",
    "git branch --delete lonely", "git branch -D held", "git branch -D merged-feat", "git branch -D feat-login",
    "git branch -D nosuch-branch", "git branch -D wt-clean", "git update-ref -d refs/heads/held",
    "git worktree remove ../wt/clean", "git worktree remove --force ../wt/clean",
    "git worktree remove ../wt/regen", "git worktree remove -f ../wt/regen", "git worktree remove ../wt/nowhere",
    "git push origin --delete pushed-merged", "git push origin :pushed-merged", "git push -d origin pushed-merged",
    "git push --dry-run --mirror origin", "cat <<'EOF'\ngit branch -D lonely\ngit push --mirror\nEOF",
    "cat > notes.txt <<EOF\ngit worktree remove --force ../wt/dirty\nEOF", "python -c 'print(1)'",
    "rm -rf build/", "rm -f /tmp/x", "make test", "npm run build -- --force", "echo lane-f-adoption -D",
    "git tag v1", "git stash", "git reset --soft HEAD~1", "git rebase main", "git merge --no-ff lonely",
    "git cherry-pick lonely", "git branch -D held && git status",
]
BRANCH_FORCE = [
    "git branch -D lonely", "git branch -d -f lonely", "git branch -df lonely", "git branch -fd lonely",
    "git branch --delete --force lonely", "git branch --force --delete lonely", "git branch -D -- lonely",
    "git -C . branch -D lonely", "git -C {W}/under branch -D lonely", "cd {W}/under && git branch -D lonely",
    "(git branch -D lonely)", "{ git branch -D lonely; }", "bash -c 'git branch -D lonely'",
    'sh -c "git branch -D lonely"', "true && git branch -D lonely", "false || git branch -D lonely",
    "git status; git branch -D lonely", "git status\ngit branch -D lonely", "env FOO=1 git branch -D lonely",
    "GIT_TRACE=0 git branch -D lonely", "git --no-pager branch -D lonely", "git -c core.pager=cat branch -D lonely",
    "git update-ref -d refs/heads/lonely", "git branch -D held holder", "git branch -D holder held",
    "git branch -D holder", "git branch -d held && git branch -D holder", "command git branch -D lonely",
    'git branch -D "lonely"', "git branch -D 'lonely'", "git branch -D lon''ely", "git update-ref -d refs/heads/holder",
    "git update-ref refs/heads/lonely 0000000000000000000000000000000000000000",
    "git update-ref --stdin <<EOF\ndelete refs/heads/lonely\nEOF", "git branch -D merged-feat lonely",
    "git fetch && git branch -D lonely", "git branch -D lonely | cat", "git branch -D lonely 2>/dev/null",
    "f() { \"$@\"; }; f git branch -D lonely", "bash -c '\"$@\"' _ git branch -D lonely",
    # the text a literal echo/printf writes down a pipe is read (issue 17)
    'echo "git branch -D lonely" | sh', "printf '%s\\n' 'git branch -D lonely' | bash -s",
    "echo lonely | xargs --replace git branch -D {}", "echo lonely | xargs git branch -D",
    "echo 'branch -D lonely' | xargs git",
]
WT_FORCE = [
    "git worktree remove --force ../wt/dirty", "git worktree remove -f ../wt/dirty",
    "git worktree remove -f -f ../wt/dirty", "git worktree remove ../wt/dirty --force",
    "git worktree remove --force {W}/wt/dirty", "git -C {W}/under worktree remove --force ../wt/dirty",
    "cd ../wt/clean && git worktree remove --force ../dirty", "git worktree remove --force ../wt/detached",
    "git worktree remove ../wt/ignored", "git worktree remove --force ../wt/ignored",
    "git worktree remove -f ../wt/ignored", "bash -c 'git worktree remove --force ../wt/dirty'",
    "git status && git worktree remove --force ../wt/dirty", "git worktree remove --force ../wt/clean && git worktree remove --force ../wt/dirty",
]
PUSH_DEL = [
    "git push origin --delete pushed-unmerged", "git push origin -d pushed-unmerged", "git push -d origin pushed-unmerged",
    "git push origin :pushed-unmerged", "git push origin +:pushed-unmerged", "git push origin --delete main",
    "git push origin :main", "git push origin --delete release/1.0", "git push origin --delete users/bob",
    "git push origin --delete develop", "git push --mirror origin", "git push --prune origin",
    "git push origin --prune", "git push origin --delete nosuch", "git push https://example.com/x.git --delete pushed-merged",
    "git push origin --delete pushed-merged pushed-unmerged", "git push origin --delete refs/heads/pushed-unmerged",
]
EVACUATE = [
    "git -C ../wt/clean diff > /tmp/p.patch && git worktree remove ../wt/clean",
    "git -C ../wt/clean diff --cached > /tmp/p.patch; git worktree remove ../wt/clean",
    "git -C ../wt/clean diff | tee /tmp/p.patch && git worktree remove ../wt/clean",
    "git -C ../wt/clean diff > /tmp/p.patch && rm -rf ../wt/clean",
    "git format-patch -o /tmp/out main..wt-clean && git branch -D wt-clean",
    "git show wt-clean > /tmp/x.patch && git branch -D wt-clean",
    "git diff main...lonely > /tmp/l.patch && git branch -D lonely",
    "git format-patch --stdout main..lonely > /tmp/l.mbox; git branch -D lonely",
    "git -C ../wt/clean stash show -p > /tmp/s.patch && git worktree remove ../wt/clean",
    "git -C ../wt/clean diff > ../wt/clean/keep.patch && git worktree remove --force ../wt/clean",
    "(git -C ../wt/clean diff > /tmp/p) && git worktree remove ../wt/clean",
    "git -C ../wt/clean diff --output=/tmp/o.patch && git worktree remove ../wt/clean",
]
UNPARSED = [
    "git branch -D $B", 'git branch -D "$(cat name.txt)"', "git worktree remove --force $WT",
    "git push origin --delete $X", "git branch -D lane-*", "git branch | xargs git branch -D",
    "xargs git branch -D < list.txt", "git branch -D lonely 'unterminated\necho x", "git worktree remove $NOT_SET/x",
    "for b in a c; do git branch -D $b; done", "git update-ref -d $REF",
]
CREATE_OK = [
    "git switch -c brandnew", "git checkout -b brandnew2", "git branch newb", "git branch newb main",
    "git worktree add -b nb ../wt/nb", "git worktree add ../wt/fresh-dwim", "git switch -C brandnew3",
    "git switch --create brandnew4", "git checkout -B brandnew5", "git worktree add -B nb2 ../wt/nb2",
    "git switch -c fix-login", "git switch -c users/me/thing", "git switch -c release/2.0",
    "git fetch && git switch -c brandnew6", "bash -c 'git checkout -b brandnew7'",
]
DUPLICATES = [
    "git switch -c fix-login-2", "git switch -c agent-fix-login-v2", "git checkout -b fix-login-old",
    "git worktree add -b fix-login-retry ../wt/r", "git branch Fix-Login_bak", "git worktree add ../wt/fix-login-copy",
    "git switch -c issue-4521", "git switch -c gh-4521", "git checkout -b bugfix-4521",
    "git switch -c worktree-fix-login-deadbeef", "git switch -c fix-login-again",
]
AT_CAP = [
    "git switch -c x", "git switch -C x", "git switch --create x", "git checkout -b x", "git checkout -B x",
    "git branch x", "git branch x main", "git worktree add -b x ../x-wt", "git worktree add -B x ../x-wt",
    "git worktree add ../brand-new-dwim", "git fetch && git switch -c x", "bash -c 'git checkout -b x'",
    'git switch -c "$NAME"', "git status; git checkout -b x main", "cd . && git switch -c y",
]
AT_CAP_OK = [
    "git worktree add ../live-y", "git worktree add --detach ../d", "git switch live-y", "git switch -c users/me",
    "git switch -c release/9", "git branch -D merged-a", "git switch -c x 'oops", "git status",
    "git switch -c live-y", "echo 'git switch -c x'",
]

# Issue 5 follow-up: routes a new user found that lost unpushed commits or uncommitted work.
DEEP_PARENS = "( " * 300 + "git branch -D feat/unpushed" + " )" * 300
DEEP_BRACES = "{ " * 600 + "git branch -D feat/unpushed" + "; }" * 600
UNREAD = [
    DEEP_PARENS, DEEP_BRACES, "cat <<EOF | bash\ngit branch -D feat/unpushed\nEOF",
    'echo "git branch -D feat/unpushed" | cat | sh', "printf 'git branch -D x' | sed p | bash -s",
    'eval "$CMD" git', "/usr/bin/git branch -D feat/unpushed | sh",
    "echo 'rm -rf ../wt/dirty' | sh < /dev/stdin",
    "git branch -D feat/unpushed 'oops\necho x",
]
UNREAD_OK = [
    "git branch -D feat/unpushed 'oops",  # every shell refuses the line: it runs nothing
    "python -c 'print(1)", "npm run build 'oops", "curl -fsSL https://example.com/install.sh | sh",
    "echo hi | bash", "node -e 'console.log(1)' | sh", "( " * 200 + "git branch -D feat/pushed" + " )" * 200,
    "cat .gitignore | sh",
]
OVERWRITE = [
    "git branch -f feat/unpushed main", "git branch --force feat/unpushed main", "git branch -f feat/unpushed",
    "git checkout -B feat/unpushed main", "git checkout -B feat/unpushed", "git switch -C feat/unpushed main",
    "git switch --force-create feat/unpushed origin/main", "git worktree add -B feat/unpushed ../wt/ow main",
    "git branch -M lonely feat/unpushed", "git branch -C main feat/unpushed", "git branch -m -f main feat/unpushed",
    "git branch --move --force main feat/unpushed", "git branch -c --force main feat/unpushed",
    "git fetch origin +main:feat/unpushed", "git fetch origin +main:refs/heads/feat/unpushed",
    "git fetch --force origin main:feat/unpushed", "git fetch -f origin main:feat/unpushed",
    "git push . main:feat/unpushed --force", "git push . +main:feat/unpushed",
    "git push --force . main:refs/heads/feat/unpushed", "git update-ref refs/heads/feat/unpushed main",
    "git update-ref --stdin <<EOF\nupdate refs/heads/feat/unpushed main\nEOF",
    "bash -c 'git branch -f feat/unpushed main'", "git checkout -B feat/unpushed main && git status",
    "git branch -f feat/pushed main && git branch -f feat/unpushed feat/pushed",
]
OVERWRITE_OK = [
    "git branch -f feat/pushed main", "git checkout -B feat/pushed origin/feat/pushed", "git switch -C feat/pushed main",
    "git branch -f brand-new-ow main", "git checkout -B feat/unpushed feat/unpushed",
    "git update-ref refs/heads/feat/unpushed feat/unpushed", "git fetch origin main:feat/unpushed",
    "git push . main:feat/unpushed", "git branch -m main feat/unpushed", "git branch -M feat/unpushed feat/renamed",
    "git update-ref refs/heads/feat/pushed main", "git fetch origin +main:refs/remotes/origin/x",
    "git fetch --dry-run origin +main:feat/unpushed",
]
RM_WT = [
    "rm -rf ../wt/dirty", "rm -r ../wt/dirty", "rm -fr ../wt/dirty", "rm -R ../wt/dirty",
    "rm --recursive --force ../wt/dirty", "rm -rf ../wt/detached", "rm -rf ../wt/ignored", "rm -rf ../wt",
    "rm -rf {W}/wt/dirty/", "cd ../wt && rm -rf dirty", "rm -rf ../wt/clean ../wt/dirty",
    "bash -c 'rm -rf ../wt/dirty'",
]
RM_WT_OK = [
    "rm -rf ../wt/clean", "rm -rf ../wt/regen", "rm -rf ../wt/dirty/sub", "rm -f ../wt/clean/c.txt",
    "rm -rf /tmp/not-a-worktree", "rm -rf node_modules", "git worktree remove $HOME/x",
]
DISCARD = [
    "git reset --hard", "git reset --hard HEAD", "git reset --hard origin/main", "git reset -q --hard",
    "git checkout -- README.md", "git checkout .", "git checkout -f", "git checkout HEAD -- README.md",
    "git checkout HEAD README.md", "git restore README.md", "git restore .", "git restore --worktree .",
    "git restore --staged --worktree .", "git restore -s HEAD~0 README.md", "git clean -fd", "git clean -f",
    "git clean -df", "git clean --force", "git switch -f wt-clean", "git switch --discard-changes wt-clean",
    "git checkout -f wt-clean", "cd . && git reset --hard",
]
DISCARD_OK = [
    "git restore --staged README.md", "git checkout -- .gitignore", "git clean -n", "git clean -fdn",
    "git reset --soft HEAD", "git reset HEAD", "git reset --keep HEAD", "git checkout -p", "git stash drop",
    "git stash clear", "git clean -i", "git switch wt-clean",
]

CASES: list[tuple[str, str, str, str]] = []
CASES += [("under", c, A, "") for c in BENIGN]
CASES += [("under", c, D, FORCE) for c in BRANCH_FORCE]
CASES += [("wt/clean", "git branch -D lonely", D, FORCE), ("wt/clean", "git branch -D held", A, "")]
CASES += [("under", c, D, WT) for c in WT_FORCE]
CASES += [("under", c, D, PUSH) for c in PUSH_DEL]
CASES += [("under", c, D, EVAC) for c in EVACUATE]
CASES += [("wt/clean", "git diff > /tmp/wip.patch && cd ../../under && git worktree remove ../wt/clean", D, EVAC)]
CASES += [("under", c, D, UNP) for c in UNPARSED]
CASES += [("under", "git branch -D lonely 'unterminated", A, "")]  # the shell runs none of the line
CASES += [("under", c, A, "") for c in CREATE_OK]
CASES += [("under", c, W_, DUP) for c in DUPLICATES]
CASES += [("atcap", c, D, CAP) for c in AT_CAP]
CASES += [("atcap", c, A, "") for c in AT_CAP_OK]
CASES += [("atcap", "git branch -D dormant-x", D, FORCE), ("atcap", "git branch -D live-y", A, "")]
CASES += [("atcap-warn", c, W_, CAP) for c in AT_CAP[:8]]
CASES += [("atcap-off", c, A, "") for c in AT_CAP[:8]]
CASES += [("dormant", c, D, DORM) for c in AT_CAP[:10]]
CASES += [("dormant-warn", c, A, "") for c in AT_CAP[:10]]
CASES += [("dormant", "git branch -D old-work", A, ""), ("dormant", "git commit -m wip", A, "")]
# creation routes under another name (docs/guard.md "Creation routes"): the cap, its modes and the
# dormancy block judge them as `git switch -c x`
NEW_NAME_ROUTES = ["git branch -c x", "git branch --copy main x", "git stash branch x",
                   "git update-ref refs/heads/x HEAD", "git fetch origin main:x",
                   "git push origin HEAD:refs/heads/x", "git push . main:x"]
CASES += [("atcap", c, D, CAP) for c in NEW_NAME_ROUTES]
CASES += [("atcap-warn", c, W_, CAP) for c in NEW_NAME_ROUTES]
CASES += [("atcap-off", c, A, "") for c in NEW_NAME_ROUTES]
CASES += [("dormant", c, D, DORM) for c in NEW_NAME_ROUTES]
CASES += [("dormant-warn", c, A, "") for c in NEW_NAME_ROUTES]
CASES += [("atcap", c, A, "") for c in ("git branch -m live-y x", "git push origin main:live-y",
                                        "git fetch origin main:refs/remotes/origin/x")]
CASES += [("under", c, D, UNP) for c in UNREAD] + [("under", c, A, "") for c in UNREAD_OK]
CASES += [("under", c, D, OVER) for c in OVERWRITE] + [("under", c, A, "") for c in OVERWRITE_OK]
CASES += [("atcap", "git switch -C live-z main", D, OVER), ("atcap", "git checkout -B dormant-x", D, OVER),
          ("atcap", "git switch -C live-y main", A, ""), ("atcap", "git branch -f merged-a main", A, "")]
CASES += [("under", c, D, WT) for c in RM_WT] + [("under", c, A, "") for c in RM_WT_OK]
CASES += [("under", "rm -f ../wt/dirty/new.txt", D, RMW)]  # an untracked file (issue 17)
CASES += [(".", "rm -rf wt", D, WT), (".", "rm -rf wt/dirty", D, WT), (".", "rm -rf wt/clean", A, "")]
CASES += [("wt/dirty", c, D, DISC) for c in DISCARD] + [("wt/dirty", c, A, "") for c in DISCARD_OK]
CASES += [("wt/clean", c, A, "") for c in DISCARD[:16]]
CASES += [("under", "git -C ../wt/dirty reset --hard", D, DISC), ("under", "cd ../wt/dirty && git checkout -- .", D, DISC),
          ("under", "git reset --hard", A, ""), ("under", "git clean -f", D, DISC), ("under", "git clean -f -- src", A, ""),
          ("wt/regen", "git clean -fdx", D, DISC), ("wt/regen", "git clean -fX", D, DISC), ("wt/regen", "git clean -fd", A, ""),
          ("stashed", "git stash drop", D, DISC), ("stashed", "git stash clear", D, DISC),
          ("stashed", "git stash drop stash@{0}", D, DISC), ("stashed", "git reset --hard", D, DISC),
          ("stashed", "git stash pop", A, ""), ("stashed", "git stash list", A, ""),
          ("stashed-off", "git stash drop", A, ""), ("stashed-off", "git reset --hard", A, ""),
          ("stashed-off", "git clean -f", A, "")]

# Tester's report (issue 5 follow-up): seven more ways to lose work.
CASES += [("under", "git worktree remove ../wt/detached", D, WT), ("under", "git worktree remove {W}/wt/detached", D, WT),
          ("wt/clean", "git worktree remove ../detached", D, WT), ("under", "git worktree remove ../wt/clean", A, "")]
CONSENT_CMDS = [
    'echo DELETE | script -qec "branchkeeper delete --allow-unproven --reason r X" /dev/null',
    "branchkeeper delete --allow-unproven --reason scratch lonely", "yes DELETE | branchkeeper delete --allow-unproven --reason r -- lonely",
    "bash -c 'branchkeeper delete --allow-unproven --reason r lonely'",
    "expect -c 'spawn branchkeeper delete --allow-unproven --reason r lonely; send DELETE\\r'",
]
CASES += [("under", c, D, CONSENT) for c in CONSENT_CMDS] + [("under", "branchkeeper delete -- lonely", A, "")]
RM_GLOB = ["rm -rf ../wt/d*", "rm -rf ../wt/*", "rm -r ../wt/de*", "rm -rf {W}/wt/d*", "cd .. && rm -rf wt/[d]*",
           "rm -rf ../w?/dirty"]
RM_GLOB_OK = ["rm -rf ../wt/c*", "rm -rf ../wt/r*", "rm -rf ../nothing-*", "rm -rf ../wt/clean/*"]
RM_EXPANSION = ["rm -rf $X", 'rm -rf "$WT"', "rm -rf $(git worktree list | tail -1)", "rm -rf ../wt/{dirty,x}",
                "for d in ../wt/dirty ../wt/clean; do rm -rf $d; done", "rm -rf $NOT_SET/x"]
CASES += [("under", c, D, WT) for c in RM_GLOB] + [("under", c, A, "") for c in RM_GLOB_OK]
# issue 17: an unknown target is denied where the repository it can reach holds work at risk
# (atcap has unpushed commits, kinds-clean nothing), whether or not it has a linked worktree
CASES += [("under", c, D, UNP) for c in RM_EXPANSION] + [("atcap", c, D, UNP) for c in RM_EXPANSION[:5]]
CASES += [("kinds-clean", c, A, "") for c in RM_EXPANSION[:5]]
STASH_DROP = ["git stash && git stash drop", "git stash -u && git stash clear", "git stash push -m x; git stash drop",
              "git stash save wip && git stash drop stash@{0}", "git stash push --include-untracked && git stash clear"]
CASES += [("wt/dirty", c, D, DISC) for c in STASH_DROP] + [("wt/clean", c, A, "") for c in STASH_DROP]
CASES += [("under", "git -C ../wt/dirty stash && git -C ../wt/dirty stash drop", D, DISC),
          ("wt/dirty", "git stash drop && git stash", A, ""), ("wt/dirty", "git stash list && git stash drop", A, "")]
ALIASES = ["git -c alias.nuke='branch -D' nuke lonely", "git -c alias.x='!rm -rf ../wt/dirty' x",
           "git -c alias.p='push origin --delete pushed-unmerged' status", "git -c alias.wr='worktree remove' st"]
CASES += [("resets", c, D, UNP) for c in ALIASES] + [("resets", "git -c alias.l='log --oneline' l", A, "")]
CASES += [("resets", "git nuke spare", D, FORCE), ("resets", "git nuke main", A, ""), ("resets", "git zap", D, UNP),
          ("resets", "git st", A, ""), ("resets", "git frobnicate", A, ""), ("resets", "git -C . nuke spare", D, FORCE)]
RESETS = ["git reset --hard origin/main", "git reset --keep HEAD~1", "git reset --merge main",
          "git reset -q --hard HEAD^", "git reset --hard spare"]
CASES += [("resets", c, D, OVER) for c in RESETS] + [("under", "git -C ../resets reset --hard main", D, OVER)]
CASES += [("resets", c, A, "") for c in ("git reset --hard HEAD", "git reset --hard", "git reset --soft ahead",
                                         "git reset HEAD", "git reset -- ahead.txt", "git reset main -- ahead.txt",
                                         # issue 17: --soft and --mixed keep what they undo staged or in the
                                         # work tree, where R-GIT-DISCARD-CHANGES guards it
                                         "git reset --soft HEAD~1", "git reset --mixed main", "git reset HEAD~1")]
CASES += [("wt/clean", "git reset --hard HEAD~1", A, ""), ("wt/detached", "git reset --hard main", D,
                                                                       "R-GIT-DETACHED-HEAD-MOVE")]
GITFILE = ["git --git-dir={W}/wt/dirty/.git --work-tree={W}/wt/dirty checkout -- .",
           "git --git-dir={W}/wt/dirty/.git --work-tree={W}/wt/dirty reset --hard",
           "GIT_DIR={W}/wt/dirty/.git GIT_WORK_TREE={W}/wt/dirty git restore ."]
CASES += [("under", c, D, DISC) for c in GITFILE]
CASES += [("under", "git --git-dir={W}/wt/clean/.git --work-tree={W}/wt/clean reset --hard", A, "")]

# Outside testing of the hook path (issue 6): a quoted or escaped command name is read as bash
# reads it; a command name from an expansion with destructive arguments is unread; rm fed by
# xargs or find -exec is rm of targets the guard cannot know (find's starting points and -name
# tests decide which worktrees it can reach).
HIDDEN_NAME = ["g\\it branch -D lonely", "g''it branch -D lonely", 'g"i"t branch -D lonely',
               "$'\\x67'it branch -D lonely", "sh -c \"g\\it branch -D lonely\"",
               "x=gi; ${x}t branch -D lonely"]  # a variable the command sets is read (issue 17)
CASES += [("under", c, D, FORCE) for c in HIDDEN_NAME]
CASES += [("under", c, D, WT) for c in ("r\\m -rf ../wt/dirty", '"r"m -rf ../wt/dirty', "x=r; ${x}m -f -r ../wt/dirty")]
CASES += [("under", c, D, UNP) for c in ("/usr/bin/g?t branch -D lonely", "${x}m -rf ../wt/dirty")]
CASES += [("under", c, A, "") for c in ("{g,}it branch -D lonely", "$PIP install -r req.txt", "$EDITOR branch.txt")]
# issue 17: what find selects (and pipes to xargs) and literal words piped from echo are the
# targets; a linked worktree they reach is judged like `worktree remove --force`
FED_RM = ["echo ../wt/dirty | xargs rm -rf", "find .. -name wt -exec rm -rf {} +",
          "find ../wt -exec rm -rf {} +", "find .. -iname DIRTY -exec rm -r {} \\;",
          "find .. -name '*y' -o -name x -exec rm -rf {} +", "find .. -name 'dir[t]y' -exec rm -rf {} +"]
FED_RM_UNP = ["xargs rm -rf < list", "find $D -exec rm -rf {} +", "ls | xargs rm -f", "cd .. && ls -d wt/* | xargs rm -rf"]
FED_RM_OK = ["find .. -name __pycache__ -exec rm -rf {} +", "find ../wt -name 'x*' -exec rm -rf {} +",
             "echo ../wt/clean | xargs rm -rf", "find ../wt/clean -name '*.txt' | xargs rm -f"]
CASES += [("under", c, D, WT) for c in FED_RM] + [("under", c, D, UNP) for c in FED_RM_UNP]
CASES += [("under", c, A, "") for c in FED_RM_OK]
CASES += [("under", c, D, RMW) for c in ("find . -exec rm -rf {} +", "find .. -type f -exec rm -f {} +")]
CASES += [("under", "find ../wt/dirty -delete", D, WT)]  # all of it: the worktree goes
CASES += [("kinds-clean", "ls | xargs rm -f", A, "")]
# ... and everything under the top goes, .git/ with it: allowed when all its commits are pushed
# and branchkeeper keeps only rebuilt caches there (a journal is asked: test_guard_pushed_tags.py)
CASES += [("kinds-clean", c, A, "") for c in ("find . -exec rm -rf {} +",
                                              "find . -type f -exec rm -f {} +", "find . -delete")]

# Second round of outside testing (issue 6): brace expansions that make a command name or an
# option, expansions ahead of the subcommand, option abbreviations, find -delete and bracket
# patterns, rm fed from outside the repository, more wrappers, aliases from the environment.
ROUND2_UNP = ["{git,} branch -D lonely", "git branch {-D,lonely}", "rm {-rf,../wt/dirty}",
              "${x}t -C . branch -D lonely", "${x}m ../wt/dirty -rf",
              "cat names | xargs --replace git branch -D {}",
              "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='branch -D' git x lonely"]
ROUND2_WT = ["rm --rec -f ../wt/dirty", "ionice -c3 rm -rf ../wt/dirty", "setsid rm -rf ../wt/dirty",
             "taskset 0x1 rm -rf ../wt/dirty", "flock /tmp/l -c 'rm -rf ../wt/dirty'",
             "strace -f rm -rf ../wt/dirty"]
ROUND2_OK = ["rm -rf ~/x", "rm -rf ~/.cache/pip", "find . -name '*.pyc' -delete", "find .. -name __pycache__ -not -path './.venv/*' -exec rm -rf {} +",
             "find .. -type d \\( -name __pycache__ -o -name .pytest_cache \\) -exec rm -rf {} +",
             "git add {src,tests}", "echo {a,b}; git status", "find .. -name '*.pyc' -o -name x -exec rm -f {} +"]
CASES += [("under", c, D, UNP) for c in ROUND2_UNP] + [("under", c, D, WT) for c in ROUND2_WT]
CASES += [("under", "fish -c 'git branch -D lonely'", D, FORCE)] + [("under", c, A, "") for c in ROUND2_OK]
CASES += [("under", c, D, FORCE) for c in ("time { git branch -D lonely; }", "coproc git branch -D lonely",
                                           "trap 'git branch -D lonely' EXIT")]
CASES += [("under", c, D, UNP) for c in ("bash < <(echo 'git branch -D lonely')",
                                         "hash -p /usr/bin/git g; g branch -D lonely")]
CASES += [("under", c, A, "") for c in ("trap 'rm -f /tmp/x' EXIT", "bash script.sh < input.txt",
                                        "{ echo a; echo b; } > out.txt", "hash -r")]

# Third round of outside testing (issue 6): a worktree named by a path suffix, checkout of one
# path, options and subcommands from expansions, commands git runs, aliases defined in the same
# command, more runners; git clean skips nested worktrees; find -empty -delete.
CASES += [("under", "git worktree remove --force dirty", D, WT), ("under", "git worktree remove -f wt/dirty", D, WT)]
CASES += [("wt/dirty", c, D, DISC) for c in ("git checkout README.md", "git checkout 'README*'",
                                             "p=README.md; git checkout $p")]
CASES += [("wt/dirty", c, A, "") for c in ("git checkout wt-clean", "git checkout HEAD~0", "git checkout nothing.txt")]
ROUND3_UNP = ["git branch $(echo -D) lonely", 'set -- branch -D lonely; git "$@"',
              "m=$(echo --hard); git reset $m", "sub=$(echo reset); git $sub --hard",
              "git -c core.fsmonitor='rm -rf ../wt/dirty' status", "git -c diff.external='rm -rf ../wt/dirty' diff",
              "GIT_EXTERNAL_DIFF='sh -c \"rm -rf ../wt/dirty\"' git diff", "git rebase -x 'git branch -D lonely' --root",
              "git difftool -x 'rm -rf ../wt/dirty' --no-prompt", "git -c include.path=/tmp/inc.cfg nuke lonely",
              "git config alias.nuke 'branch -D' && git nuke lonely", "HOME=/tmp/h git nuke lonely",
              "echo '[alias] nuke = branch -D' >> .git/config; git nuke lonely"]
CASES += [("under", c, D, UNP) for c in ROUND3_UNP]
CASES += [("under", "x=-D; git branch $x lonely", D, FORCE), ("wt/dirty", "m=--hard; git reset $m", D, DISC),
          ("under", "m=--hard; git reset $m", A, "")]  # variables the command sets are read
CASES += [("under", c, D, FORCE) for c in ("script -qc 'git branch -D lonely' /dev/null", "su -c 'git branch -D lonely'")]
CASES += [("under", "busybox rm -rf ../wt/dirty", D, WT)]
CASES += [("under", c, A, "") for c in ("git -c core.pager=cat log", "git rebase -x 'npm test' main", "git branch $NEW",
                                        "git config user.name x && git commit -m y", "find . -type d -empty -delete",
                                        "git push origin $B")]


@pytest.mark.parametrize(("repo", "command", "verdict", "rule"), CASES,
                         ids=[f"{r}:{c[:60]}" for r, c, _, _ in CASES])
def test_corpus(world: Path, repo: str, command: str, verdict: str, rule: str) -> None:
    d = decide_command(rel(world, command), cwd=str(world / repo))
    assert (d.verdict.value, d.rule_id) == (verdict, rule), d.text
    if d.verdict.value == "deny":
        assert d.text.endswith(BRANCH_LIMIT_PRINCIPLE)
    else:  # an ask is a question to a person, not a refusal: no principle text
        assert BRANCH_LIMIT_PRINCIPLE not in d.text


def test_corpus_is_large() -> None:
    assert len(CASES) >= 200


def test_no_git_for_non_git_commands(world: Path) -> None:
    before = processes_started()
    for c in ["ls -la", "echo git branch -D x", "grep -r 'push --delete' .", "make", "rm -rf build",
              "git status", "git log", "git diff > /tmp/x.patch", "cat <<EOF\ngit branch -D x\nEOF"]:
        assert decide_command(c, cwd=str(world / "under")).verdict.value == "allow"
    assert processes_started() == before


def test_creation_uses_one_git_process(world: Path) -> None:
    before = processes_started()
    d = decide_command("git switch -c x", cwd=str(world / "atcap"))
    assert d.rule_id == CAP
    assert processes_started() - before == 1


def test_force_delete_batches(world: Path) -> None:
    before = processes_started()
    decide_command("git branch -D held holder lonely merged-feat feat-login", cwd=str(world / "under"))
    assert processes_started() - before == 2  # one for-each-ref, one rev-list


def _tip(world: Path, repo: str, ref: str) -> str:
    return GitRepo(world / repo).rev(ref)


def test_text_force_delete(world: Path) -> None:
    d = decide_command("git branch -D lonely", cwd=str(world / "under"))
    tip = _tip(world, "under", "lonely")[:10]
    assert d.text == (
        "[R-GIT-BRANCH-FORCE-DELETE] `git branch -D lonely` would lose work: no other branch, tag "
        "or remote-tracking ref contains the tip of the branch below (1 commit would be reachable "
        f"from no ref):\n  - lonely at {tip}\n\n"
        "Keep the work first: merge it into the branch of the lane it serves, or push it (git push "
        "-u origin lonely). Then `branchkeeper delete -- lonely` proves the work is preserved, "
        "writes a recovery bundle and can be undone. If the work is truly unwanted, ask a human to "
        "delete it.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_worktree_force(world: Path) -> None:
    d = decide_command("git worktree remove --force ../wt/dirty", cwd=str(world / "under"))
    p = f"{world}/wt/dirty"
    assert d.text == (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree remove --force {p}` would lose work:\n"
        "uncommitted changes or untracked files:\n  - README.md\n  - new.txt\n\n"
        f"First commit the changes on the worktree's branch (git -C {p} add -A && git -C {p} "
        f"commit) or ask a human; then remove the worktree without --force (git worktree remove "
        f"{p}), or let `branchkeeper worktree retire {p}` check it for you.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_ignored(world: Path) -> None:
    d = decide_command("git worktree remove ../wt/ignored", cwd=str(world / "under"))
    p = f"{world}/wt/ignored"
    assert d.text == (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `git worktree remove {p}` would lose work:\n"
        "ignored files the ignored-content rule keeps (not regenerable; git worktree remove "
        "deletes them, --force or not):\n"
        "  - scratch/notes.md (not regenerable: no branches.cleanup_after_merge.regenerable "
        "glob matches)\n\n"
        "First consume each listed ignored path, move it to a tracked home, or delete it "
        f"deliberately; then remove the worktree without --force (git worktree remove {p}), or "
        f"let `branchkeeper worktree retire {p}` check it for you. To keep the listed files and "
        f"remove the worktree in one step: `branchkeeper worktree retire --archive-ignored {p}` "
        "archives them first (branchkeeper undo puts them back).\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_push_delete(world: Path) -> None:
    d = decide_command("git push origin --delete pushed-unmerged main", cwd=str(world / "under"))
    assert d.text == (
        "[R-GIT-PUSH-DELETE-REMOTE] Deleting on origin is not proven safe:\n"
        "  - main: is the default branch\n"
        "  - pushed-unmerged: origin/pushed-unmerged is not an ancestor of origin/main or an "
        "integration line\n\n"
        "The default branch, integration lines, exempt and protected names are never deleted on "
        "the remote by an agent; ask a human. Merge the work into the default branch or an "
        "integration line and push it, then git fetch origin and delete again; or run "
        "`branchkeeper delete --remote -- pushed-unmerged`, which proves the work is preserved "
        "and keeps a recovery bundle.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_evacuation(world: Path) -> None:
    d = decide_command("git -C ../wt/clean diff > /tmp/p.patch && git worktree remove ../wt/clean",
                       cwd=str(world / "under"))
    assert d.text == (
        f"[R-GIT-EVACUATE-DESTROY] Evacuate then destroy: the work of worktree {world}/wt/clean "
        "was written to /tmp/p.patch (a path git does not track) in the same command, and this "
        "command destroys `git worktree remove ../wt/clean`. A patch saved where git does not "
        "track it is lost work, not a backup.\n\n"
        "Commit the work on the branch of the lane it serves (or push it), then remove what is "
        "finished; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_unparsed(world: Path) -> None:
    d = decide_command("git branch -D $B", cwd=str(world / "under"))
    assert d.text == (
        "[R-GIT-UNPARSED-DESTRUCTIVE] `git branch -D $B` deletes, but the guard cannot tell "
        "exactly what it would destroy: a name, path, remote or directory comes from an "
        "expansion the guard cannot know.\n\n"
        "Rewrite the command with literal names and paths (no $VAR, $(...), globs, xargs or "
        "eval), one destructive step per command, so it can be proven; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_cap(world: Path) -> None:
    d = decide_command("git switch -c x", cwd=str(world / "atcap"))
    assert d.text == (
        "[R-BRANCH-WIP-CAP] Creating x would exceed the WIP cap: 9 open work branches, cap 5 "
        "(branches.wip.cap; "
        "counted: distinct tips of the branches that are not the default, an "
        "integration line or exempt, merged and parked ones included; unstarted ones, "
        "still at the default branch's tip, are not).\n\n"
        "Finish or clear an open branch first (merged ones are proven and cheapest):\n"
        "  - pushed-merged (merged, 50d old): branchkeeper delete --remote -- pushed-merged\n"
        "  - merged-a (merged, 5d old): branchkeeper delete -- merged-a\n"
        "  - merged-b (merged, 4d old): branchkeeper delete -- merged-b\n"
        "  - dormant-x (dormant, noisy stage, 20d old)\n"
        "  - feat-login (live, 2d old)\n"
        "  - pushed-unmerged (live, 2d old)\n"
        "  - live-y (live, 1d old)\n"
        "  - live-z (live, 0d old)\n"
        "  - wt-clean (live, 0d old)\n"
        "`branchkeeper sweep --clean` deletes every proven branch nothing refuses, in one "
        "lossless step; or "
        "continue the work on one of the branches above instead of a new one. A human's branch "
        "can be declared in branches.exempt.\n\n"
        "LOST WORK RISK: branch dormant-x holds commits no remote-tracking ref contains (20d "
        "old); secure them now: git push -u origin dormant-x\n"
        "LOST WORK RISK: branch live-z holds commits no remote-tracking ref contains (0d old); "
        "secure them now: git push -u origin live-z\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_dormancy(world: Path) -> None:
    d = decide_command("git switch -c x", cwd=str(world / "dormant"))
    assert d.text == (
        "[R-BRANCH-DORMANCY-BLOCK] No new branch while a branch has been idle 30+ days (dormancy "
        "block stage):\n  - old-work (40d old)\n\n"
        "For old-work:\n  finish and merge it; or park it: branchkeeper park --reason "
        "'<why it waits>' -- old-work; or a person deletes it deliberately (bundle kept): branchkeeper delete --allow-unproven --reason '<why it may go>' -- old-work; or, "
        "when it is someone else's (no session here created it), declare it exempt in "
        ".branchkeeper.yaml: branches: {exempt: [\"old-work\"]}\n"
        "Commits, merges, pushes and deletes stay open; only new branches wait.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_duplicate_and_noisy(world: Path) -> None:
    d = decide_command("git switch -c fix-login-2", cwd=str(world / "under"))
    assert d.text == (
        "[R-BRANCH-DUPLICATE-STEM] fix-login-2 looks like a duplicate of an existing branch:\n"
        "  - fix-login (same stem fix-login, age unknown)\n\n"
        "Continue there instead, unless this is really separate work.")
    d = decide_command("git switch -c q", cwd=str(world / "dormant-warn"))
    assert d.text == ("Idle branch: old-work has had no commit for 40 days (noisy stage); "
                      "finish it, park it or delete it.")


def test_same_turn_record(world: Path) -> None:
    under = str(world / "under")
    recs = evacuations_in("git -C ../wt/clean diff > /tmp/turn.patch", cwd=under)
    assert recs == [EvacuationRecord(str((world / "wt/clean").resolve()), "wt-clean",
                                     "/tmp/turn.patch", "git -C ../wt/clean diff > /tmp/turn.patch")]
    assert EvacuationRecord.from_json(recs[0].to_json()) == recs[0]
    d = decide_command("git worktree remove ../wt/clean", cwd=under, evacuations=recs)
    assert (d.verdict.value, d.rule_id) == ("deny", EVAC)
    assert "earlier in this turn" in d.reason
    d = decide_command("git branch -d wt-clean", cwd=under, evacuations=recs)
    assert d.rule_id == EVAC
    assert decide_command("git worktree remove ../wt/regen", cwd=under,
                          evacuations=recs).verdict.value == "allow"
    tracked = evacuations_in("git -C ../wt/clean diff > ../wt/clean/README.md", cwd=under)
    assert tracked == []


def test_no_git_for_ordinary_commands(world: Path) -> None:
    """The new rules (overwrite, discard, rm of a worktree, unread text) start no git process
    for commands that are none of them."""
    before = processes_started()
    for c in ["ls -la", "npm test", "git status", "git log", "rm -rf build", "rm -rf /tmp/nothing-here",
              "python -c 'print(1)", "git checkout main", "git reset --soft", "git stash",
              "git stash list", "git reset HEAD -- a.txt", "rm -rf ../nowhere-*", "git commit -m x"]:
        decide_command(c, cwd=str(world / "under"))
    assert processes_started() == before


def test_overwrite_of_existing_creation_is_not_a_creation(world: Path) -> None:
    d = decide_command("git switch -C live-y main", cwd=str(world / "atcap"))
    assert (d.verdict.value, d.text) == ("allow", "")


def test_text_overwrite(world: Path) -> None:
    d = decide_command("git branch -f feat/unpushed main", cwd=str(world / "under"))
    tip = _tip(world, "under", "feat/unpushed")[:10]
    assert d.text == (
        "[R-GIT-BRANCH-OVERWRITE] `git branch -f feat/unpushed main` would overwrite an existing "
        "branch and lose work: no other branch, tag or remote-tracking ref contains the current tip "
        "of the branch below, and the new value does not contain it (1 commit would be reachable "
        f"from no ref):\n  - feat/unpushed at {tip}\n\n"
        "Keep the work first: push it (git push -u origin feat/unpushed) or keep it on another "
        "branch (git branch feat/unpushed-keep feat/unpushed); then the overwrite is allowed. Or "
        "use a new branch name instead; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_discard(world: Path) -> None:
    p = f"{world}/wt/dirty"
    d = decide_command("git reset --hard", cwd=p)
    assert d.text == (
        f"[R-GIT-DISCARD-CHANGES] `git reset --hard` would discard uncommitted work in {p} (staged "
        "or unstaged changes to tracked files):\n  - README.md\n\n"
        f"Commit the work first (git -C {p} add -A && git -C {p} commit) or stash it (git -C {p} "
        "stash push --include-untracked), then run the command again; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_stash_drop(world: Path) -> None:
    p = f"{world}/stashed"
    d = decide_command("git stash drop", cwd=p)
    assert d.text == (
        f"[R-GIT-DISCARD-CHANGES] `git stash drop` would delete stashed work: the stash of {p} "
        "holds entries that no branch contains, and a dropped stash is reachable from no ref.\n\n"
        f"Keep the stashed work first: turn it into a branch (git -C {p} stash branch '<name>') "
        "and commit or push it, or apply it and commit; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_rm_worktree(world: Path) -> None:
    d = decide_command("rm -rf ../wt/detached", cwd=str(world / "under"))
    p = f"{world}/wt/detached"
    head = _tip(world, "wt/detached", "HEAD")[:10]
    assert d.text == (
        f"[R-GIT-WORKTREE-REMOVE-FORCE] `rm -rf ../wt/detached` would delete the worktree {p} and "
        f"lose work:\nHEAD {head} is contained in no branch, tag or remote-tracking ref (a detached "
        "HEAD, or its branch is deleted too)\n\n"
        f"First put HEAD on a branch and push it (git -C {p} switch -c '<name>', then git push -u); "
        f"then remove the worktree without --force (git worktree remove {p}), or let `branchkeeper "
        f"worktree retire {p}` check it for you.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_unread(world: Path) -> None:
    for cmd, why in [(DEEP_PARENS, "commands nested too deeply"),
                     ('echo "git branch -D feat/unpushed" | cat | sh', "a shell reads its commands from a pipe")]:
        d = decide_command(cmd, cwd=str(world / "under"))
        assert d.text == (
            f"[R-GIT-UNPARSED-DESTRUCTIVE] The guard could not read the whole command ({why}), and "
            "the part it could not read may run git or rm and destroy work.\n\n"
            "Split it into simple commands and run the git command directly (not through a pipe "
            "into a shell, eval, a string built at run time, or deep nesting), one destructive step "
            "per command, so it can be proven; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_nested_shells_past_the_walker_depth(world: Path) -> None:
    cmd = "eval " * 14 + "git branch -D feat/unpushed"  # each eval is one nested parse
    d = decide_command(cmd, cwd=str(world / "under"))
    assert (d.verdict.value, d.rule_id) == ("deny", UNP)
    assert "nested too deeply" in d.reason


def _raw_events(command: str, cwd: str) -> list[tuple[str, str, bytes]]:
    """(host, event, stdin bytes) of every host's shell pre-tool event carrying ``command``."""
    import json

    out = []
    for name, load in HOSTS.items():
        host = load()
        for event, spec in host.FAST.items():
            if spec[3] != "pre":
                continue
            payload: dict[str, object] = {"session_id": "s", "cwd": cwd}
            inner: dict[str, object] = {}
            target: dict[str, object] = payload
            for key in spec[2][:-1]:
                target[key] = inner
                target = inner
            target[spec[2][-1]] = command
            if spec[0] is not None:
                payload[spec[0]] = sorted(spec[1])[0]
            out.append((name, event, json.dumps(payload).encode()))
    return out


def test_hook_fast_path_never_skips_a_judgement(world: Path) -> None:
    """The hook answers some commands without the guard (``glue.needs_guard`` False, and the
    raw-bytes fast path of every host); for every corpus command the guard refuses, warns on or
    adds context to, neither may."""
    skipped = []
    for repo, command, _, _ in CASES:
        text, cwd = rel(world, command), str(world / repo)
        d = decide_command(text, cwd=cwd)
        if d.verdict.value == "allow" and not d.text:
            continue
        if not needs_guard(text, cwd=cwd):
            skipped.append((repo, command, d.rule_id, "needs_guard"))
        for host, event, data in _raw_events(text, cwd):
            spec = HOSTS[host]().FAST[event]
            if silent(data, spec) is not None:
                skipped.append((repo, command, d.rule_id, f"{host} {event}"))
    assert skipped == []


# -- The peers' own test commands, run for real (issue 17, section 3) ---------------------------
# tests/corpus/peer-corpus.json holds the test commands of three public agent-command guards
# (tests/corpus/README.md cites them); tests/corpus/peer-oracle.json what each command lost when
# bench/guard_corpus.py ran it in the two worlds of tests/oracle/world.py. The default run takes a
# fixed sample of each category; BRANCHKEEPER_PEER_CORPUS=all (or `-m slow`, for the whole-corpus
# tests) takes every command.
PEER_ALL = os.environ.get("BRANCHKEEPER_PEER_CORPUS") == "all"
#: Categories whose losses the guard does not judge (docs/guard.md, "What the guard does not
#: judge"): writing over a file is how an agent edits; a command whose loss comes from another
#: route is listed by the route.
UNJUDGED_CATEGORIES = {"file-overwrite": "writing over a file (>, dd, cp, tee, truncate, sed -i)"}


def _sample(rows: list[peer_oracle.Recorded], per_category: int,
            *, runnable: bool = False) -> list[peer_oracle.Recorded]:
    """A fixed sample: per category the ``per_category`` commands with the smallest hash (so
    it does not move when the corpus grows), every command with ``PEER_ALL``; ``runnable``
    keeps only commands whose programs this machine has."""
    if runnable:
        rows = [r for r in rows if all(shutil.which(t) for t in r.tools)]
    if PEER_ALL:
        return rows
    by_cat: dict[str, list[peer_oracle.Recorded]] = {}
    for r in rows:
        by_cat.setdefault(r.category, []).append(r)
    out = []
    for cat in sorted(by_cat):
        out += sorted(by_cat[cat], key=lambda r: hashlib.sha1(r.command.encode()).hexdigest())[:per_category]
    return out


@pytest.fixture(scope="module")
def peer_worlds(tmp_path_factory: pytest.TempPathFactory) -> peer_oracle.Worlds:
    why = sandbox.available()
    if why is not None:
        pytest.fail(f"the corpus oracle needs its sandbox: {why}")
    return peer_oracle.Worlds(Path(tempfile.mkdtemp(prefix="bk-peers-", dir=peer_oracle.scratch_root())))


def _losses_let_through(worlds: peer_oracle.Worlds, rows: list[peer_oracle.Recorded]
                        ) -> tuple[list[tuple[str, str, str]], int, int]:
    """(state, command, decision) of every command that lost work in a world and that the
    guard (or the hook) let through there; the harmless commands denied; the losing ones."""
    missed: list[tuple[str, str, str]] = []
    harmless_denied = losing = 0
    scratch = Path(tempfile.mkdtemp(dir=worlds.base))
    for state in peer_oracle.STATES:
        decisions = peer_oracle.guard_decisions(worlds, state, [r.command for r in rows], scratch)
        for r, d in zip(rows, decisions, strict=True):
            assert d["hook"] == d["verdict"], (state, r.command, d)  # check and the hook agree
            lost = bool(r.outcomes[state].lost)
            losing += lost
            stopped = d["verdict"] in ("deny", "ask")  # an ask waits for a person's yes
            if lost and not stopped and r.category not in UNJUDGED_CATEGORIES:
                missed.append((state, r.command, f"{d['verdict']} {d['rule_id']}"))
            harmless_denied += not lost and stopped
    return missed, harmless_denied, losing


def test_peer_corpus_losses_are_denied(peer_worlds: peer_oracle.Worlds) -> None:
    """Every peer command that the oracle saw lose work is denied, in both worlds."""
    rows = _sample(peer_oracle.read_outcomes(), 8)
    missed, _, losing = _losses_let_through(peer_worlds, rows)
    assert losing > 0
    assert missed == []


@pytest.mark.slow
def test_peer_corpus_whole(peer_worlds: peer_oracle.Worlds) -> None:
    """The whole corpus: no losing command let through, and no more harmless ones denied than
    docs/guard.md reports (a rise is a regression to look at)."""
    missed, harmless_denied, _ = _losses_let_through(peer_worlds, peer_oracle.read_outcomes())
    assert missed == []
    assert harmless_denied <= HARMLESS_DENIED_CEILING


#: Harmless command x world pairs of the whole corpus the guard denies or asks about, as
#: docs/guard.md reports them by rule (commands it cannot read, a tag it cannot see pushed).
HARMLESS_DENIED_CEILING = 277


def test_peer_oracle_reproduces(peer_worlds: peer_oracle.Worlds) -> None:
    """The recorded outcomes are what running the commands does (a sample of those whose
    programs are installed; all of them with BRANCHKEEPER_PEER_CORPUS=all)."""
    rows = [r for r in peer_oracle.read_outcomes() if all(shutil.which(t) for t in r.tools)]
    if not PEER_ALL:  # a fixed dozen: six that lost work, six that did not
        def key(r: peer_oracle.Recorded) -> str:
            return hashlib.sha1(r.command.encode()).hexdigest()
        rows = sorted((r for r in rows if r.outcomes["risk"].lost), key=key)[:6] + \
            sorted((r for r in rows if not r.outcomes["risk"].lost), key=key)[:6]
    scratch = Path(tempfile.mkdtemp(dir=peer_worlds.base))
    differ = []
    for r in rows:
        for state in peer_oracle.STATES:
            got = peer_oracle.run_live(peer_worlds, state, r.command, scratch)
            if got.lost != r.outcomes[state].lost:
                differ.append((state, r.command, got.lost, r.outcomes[state].lost))
    assert differ == []
