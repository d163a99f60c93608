"""Table-driven tests of the git argv classifiers (issue 5 section 2; spec sections 3, 7, 11, 13)."""

from __future__ import annotations

import pytest

from branchkeeper.shell.gitargv import Creation, Destruction, creation, destruction
from branchkeeper.shell.gitevac import Evacuation, evacuation
from branchkeeper.shell.parse import git_invocations, parse_command

CWD = "/repo"


def _gits(cmd: str):  # type: ignore[no-untyped-def]
    return git_invocations(parse_command(cmd, cwd=CWD))


def _creations(cmd: str) -> list[Creation]:
    return [c for g in _gits(cmd) if (c := creation(g)) is not None]


def _destructions(cmd: str) -> list[Destruction]:
    return [d for g in _gits(cmd) for d in destruction(g)]


def _evacuations(cmd: str) -> list[Evacuation]:
    return [e for g in _gits(cmd) if (e := evacuation(g)) is not None]


def C(name: str, route: str, start: str | None = None, path: str | None = None,
      force: bool = False, dynamic: bool = False, cwd: str | None = CWD,
      check: bool = False, cand: str | None = None) -> Creation:  # fmt: skip
    return Creation(name, route, start, path, force, dynamic, cwd, check, cand)


CREATIONS = [
    ("git switch -c feat", [C("feat", "switch_create")]),
    ("git switch -c feat main", [C("feat", "switch_create", "main")]),
    ("git switch -cfeat", [C("feat", "switch_create")]),
    ("git switch --create feat", [C("feat", "switch_create")]),
    ("git switch --create=feat origin/main", [C("feat", "switch_create", "origin/main")]),
    ("git switch --cre feat", [C("feat", "switch_create")]),
    ("git switch -C feat", [C("feat", "switch_create", force=True)]),
    ("git switch --force-create feat", [C("feat", "switch_create", force=True)]),
    ("git switch -q -c feat", [C("feat", "switch_create")]),
    ("git switch --orphan fresh", [C("fresh", "switch_create")]),
    ("git switch feat", []),
    ("git switch -", []),
    ("git switch --detach main", []),
    ("git checkout -b feat", [C("feat", "checkout_create")]),
    ("git checkout -b feat origin/main", [C("feat", "checkout_create", "origin/main")]),
    ("git checkout -B feat", [C("feat", "checkout_create", force=True)]),
    ("git checkout -qb feat", [C("feat", "checkout_create")]),
    ("git checkout -bfeat", [C("feat", "checkout_create")]),
    ("git checkout --track -b feat origin/feat", [C("feat", "checkout_create", "origin/feat")]),
    ("git checkout feat", []),
    ("git checkout -- file.txt", []),
    ("git checkout main -- -b", []),
    ("git branch feat", [C("feat", "branch_create")]),
    ("git branch feat main", [C("feat", "branch_create", "main")]),
    ("git branch -f feat main", [C("feat", "branch_create", "main", force=True)]),
    ("git branch --force feat", [C("feat", "branch_create", force=True)]),
    ("git branch --track feat origin/feat", [C("feat", "branch_create", "origin/feat")]),
    ("git branch -t feat origin/feat", [C("feat", "branch_create", "origin/feat")]),
    ("git branch --no-track feat main", [C("feat", "branch_create", "main")]),
    ("git branch lane-f-adoption", [C("lane-f-adoption", "branch_create")]),
    ("git branch -- -x", [C("-x", "branch_create")]),
    ("git branch", []),
    ("git branch a b c", []),
    ("git branch -l feat", []),
    ("git branch --list feat", []),
    ("git branch --list '*-D*'", []),
    ("git branch -a", []),
    ("git branch -r", []),
    ("git branch --contains HEAD", []),
    ("git branch --merged main", []),
    ("git branch --no-merged", []),
    ("git branch --points-at HEAD", []),
    ("git branch --show-current", []),
    ("git branch -m old new", []),
    ("git branch -M old new", []),
    ("git branch -c old new", []),
    ("git branch -C old new", []),
    ("git branch -d feat", []),
    ("git branch -u origin/main", []),
    ("git branch --set-upstream-to=origin/main feat", []),
    ("git branch --unset-upstream feat", []),
    ("git branch --edit-description feat", []),
    ("git branch --sort=-committerdate", []),
    ("git branch --format='%(refname)' x", []),
    ("git worktree add -b feat ../wt", [C("feat", "worktree_add_b", path="/wt")]),
    ("git worktree add -b feat ../wt main", [C("feat", "worktree_add_b", "main", "/wt")]),
    ("git worktree add -B feat wt", [C("feat", "worktree_add_b", path="/repo/wt", force=True)]),
    ("git worktree add -bfeat /tmp/wt", [C("feat", "worktree_add_b", path="/tmp/wt")]),
    ("git worktree add ../lane-x",
     [C("lane-x", "worktree_add_dwim", path="/lane-x", check=True, cand="lane-x")]),
    ("git worktree add .claude/worktrees/agent-1/",
     [C("agent-1", "worktree_add_dwim", path="/repo/.claude/worktrees/agent-1", check=True,
        cand="agent-1")]),
    ("git worktree add ../wt feat",
     [C("feat", "worktree_add_dwim", "feat", "/wt", check=True, cand="feat")]),
    ("git worktree add --detach ../wt", []),
    ("git worktree add -d ../wt main", []),
    ("git worktree list", []),
    ("git -C /other switch -c x", [C("x", "switch_create", cwd="/other")]),
    ("cd sub && git checkout -b x", [C("x", "checkout_create", cwd="/repo/sub")]),
    ("git switch -c \"$NAME\"", [C("$NAME", "switch_create", dynamic=True)]),
    ("git switch -c feat-$(date +%s)", [C("feat-$(date +%s)", "switch_create", dynamic=True)]),
    ("git switch -c x --bogus", [C("x", "switch_create", dynamic=True)]),
    ("bash -c 'git switch -c inner'", [C("inner", "switch_create")]),
    ("git fetch origin && git switch -c a && git push -u origin a", [C("a", "switch_create")]),
    ("git commit -m 'git switch -c x'", []),
    ("echo git checkout -b x", []),
]


@pytest.mark.parametrize(("cmd", "expected"), CREATIONS, ids=[c for c, _ in CREATIONS])
def test_creation(cmd: str, expected: list[Creation]) -> None:
    assert _creations(cmd) == expected


def D(kind: str, targets: tuple[str, ...], remote: str | None = None,
      dynamic: bool = False, cwd: str | None = CWD, refs: tuple[str, ...] | None = None,
      rt: bool = False) -> Destruction:  # fmt: skip
    if refs is None:
        if kind.startswith("branch"):
            refs = tuple(("refs/remotes/" if rt else "refs/heads/") + t for t in targets)
        elif kind in ("update_ref_delete", "push_delete"):
            refs = tuple(("refs/heads/" + t) if kind == "update_ref_delete" else t
                         for t in targets)  # fmt: skip
        else:
            refs = ()
    return Destruction(kind, targets, remote, dynamic, cwd, refs, rt)


FD = "branch_force_delete"
DESTRUCTIONS = [
    ("git branch -D x", [D(FD, ("x",))]),
    ("git branch -D x y", [D(FD, ("x", "y"))]),
    ("git branch -d -f x", [D(FD, ("x",))]),
    ("git branch -f -d x", [D(FD, ("x",))]),
    ("git branch -df x", [D(FD, ("x",))]),
    ("git branch -fd x", [D(FD, ("x",))]),
    ("git branch --delete --force x", [D(FD, ("x",))]),
    ("git branch --force --delete x", [D(FD, ("x",))]),
    ("git branch --delete -f x", [D(FD, ("x",))]),
    ("git branch --del --forc x", [D(FD, ("x",))]),
    ("git branch x -D", [D(FD, ("x",))]),
    ("git branch -Dq x", [D(FD, ("x",))]),
    ("git branch -Dr origin/x", [D(FD, ("origin/x",), rt=True)]),
    ("git branch -dr origin/x", [D("branch_delete", ("origin/x",), rt=True)]),
    ("git branch -d -r origin/x", [D("branch_delete", ("origin/x",), rt=True)]),
    ("git branch -d x", [D("branch_delete", ("x",))]),
    ("git branch --delete x", [D("branch_delete", ("x",))]),
    ("git branch -d --force --no-force x", [D("branch_delete", ("x",))]),
    ("git branch -D -- -weird", [D(FD, ("-weird",))]),
    ("git branch -D lane-f-adoption", [D(FD, ("lane-f-adoption",))]),
    ("git branch -D", []),
    ("git branch -m old new", []),
    ("git branch -M old new", []),
    ("git branch --list '*-D*'", []),
    ("git branch lane-f-adoption", []),
    ("git log --grep=-D", []),
    ("git branch -D $(cat x)", [D(FD, ("$(cat x)",), dynamic=True)]),
    ('git branch -D "$B"', [D(FD, ("$B",), dynamic=True)]),
    ("git branch -D feat*", [D(FD, ("feat*",), dynamic=True)]),
    ("git branch -D feat-{a,b}", [D(FD, ("feat-{a,b}",), dynamic=True)]),
    ("git branch --merged | xargs git branch -d", [D("branch_delete", (), dynamic=True)]),
    ("git branch --merged | grep -v main | xargs -r git branch -D",
     [D(FD, (), dynamic=True)]),
    ("for b in $(git branch --merged); do git branch -d $b; done",
     [D("branch_delete", ("$b",), dynamic=True)]),
    ("git -C ../other branch -D x", [D(FD, ("x",), cwd="/other")]),
    ("cd $DIR && git branch -D x", [D(FD, ("x",), cwd=None)]),
    ("git update-ref -d refs/heads/x", [D("update_ref_delete", ("x",))]),
    ("git update-ref -d refs/heads/x 1234abcd", [D("update_ref_delete", ("x",))]),
    ("git update-ref -m why -d refs/heads/feat/a", [D("update_ref_delete", ("feat/a",))]),
    ("git update-ref refs/heads/x " + "0" * 40, [D("update_ref_delete", ("x",))]),
    ("git update-ref -d refs/tags/v1",
     [D("update_ref_delete", ("refs/tags/v1",), refs=("refs/tags/v1",))]),
    ("git update-ref refs/heads/x HEAD", []),
    ("git update-ref --stdin < cmds", [D("update_ref_delete", (), dynamic=True, refs=())]),
    ("git update-ref --stdin <<'EOF'\ndelete refs/heads/a\ndelete refs/heads/b abc\nEOF",
     [D("update_ref_delete", ("a", "b"))]),
    ("git worktree remove ../wt", [D("worktree_remove", ("/wt",))]),
    ("git worktree remove --force ../wt", [D("worktree_remove_force", ("/wt",))]),
    ("git worktree remove -f ../wt", [D("worktree_remove_force", ("/wt",))]),
    ("git worktree remove -f -f /abs/wt", [D("worktree_remove_force", ("/abs/wt",))]),
    ("git worktree remove -ff wt", [D("worktree_remove_force", ("/repo/wt",))]),
    ("git worktree remove wt --force", [D("worktree_remove_force", ("/repo/wt",))]),
    ("cd /a/b && git worktree remove ../c", [D("worktree_remove", ("/a/c",), cwd="/a/b")]),
    ('git worktree remove "$WT"', [D("worktree_remove", ("$WT",), dynamic=True)]),
    ("git worktree prune", [D("worktree_prune", ())]),
    ("git worktree prune --expire=now -v", [D("worktree_prune", ())]),
    ("git worktree prune -n", []),
    ("git gc --auto", [D("gc_worktree_prune", ())]),
    ("git bisect reset HEAD", [D("bisect_reset", ())]),
    ("git bisect start", [D("bisect_reset", ())]),
    ("git bisect bad", []),
    ("git -c gc.worktreePruneExpire=never gc", []),
    ("git worktree move a b", []),
    ("git push origin --delete x", [D("push_delete", ("x",), "origin")]),
    ("git push --delete origin x y", [D("push_delete", ("x", "y"), "origin")]),
    ("git push -d origin x", [D("push_delete", ("x",), "origin")]),
    ("git push origin -d refs/heads/x", [D("push_delete", ("x",), "origin")]),
    ("git push origin :x", [D("push_delete", ("x",), "origin")]),
    ("git push origin +:x", [D("push_delete", ("x",), "origin")]),
    ("git push origin :refs/heads/x", [D("push_delete", ("x",), "origin")]),
    ("git push upstream main :old", [D("push_delete", ("old",), "upstream")]),
    ("git push --mirror backup", [D("push_mirror", (), "backup")]),
    ("git push --prune origin 'refs/heads/*:refs/heads/*'", [D("push_prune", (), "origin")]),
    ("git push -n --delete origin x", []),
    ("git push --dry-run origin :x", []),
    ("git push origin main", []),
    ("git push -u origin feat", []),
    ("git push origin HEAD:refs/heads/new", []),
    ("git push -f origin feat", []),
    ("git commit -m 'git branch -D x'", []),
    ("git commit -m \"$(printf 'git branch -D %s' x)\"", []),
    ("echo git branch -D x", []),
    ("echo 'git push origin --delete x'", []),
    ("grep -- -D file", []),
    ("grep -rn 'branch -D' .", []),
    ("printf '%s\\n' 'git worktree remove --force x'", []),
    ("cat <<'EOF'\ngit branch -D x\nEOF", []),
    ("cat <<EOF > notes.md\ngit branch -D x\nEOF", []),
    ("git tag -d v1", [D("tag_delete", ("v1",), refs=("refs/tags/v1",))]),
    ("git tag --delete v1 v2", [D("tag_delete", ("v1", "v2"), refs=("refs/tags/v1", "refs/tags/v2"))]),
    ("git tag -l -n v1", []),
    ("git stash drop", []),
    ("git branch -D a && git worktree remove --force ../a",
     [D(FD, ("a",)), D("worktree_remove_force", ("/a",))]),
    ("git branch -D a; git push origin :a",
     [D(FD, ("a",)), D("push_delete", ("a",), "origin")]),
    ("(cd sub; git branch -D z)", [D(FD, ("z",), cwd="/repo/sub")]),
    ("{ git branch -D z; }", [D(FD, ("z",))]),
    ("true || git branch -D z", [D(FD, ("z",))]),
    ("git status\ngit branch -D z", [D(FD, ("z",))]),
    ("bash -c 'git branch -D z'", [D(FD, ("z",))]),
    ("sh -c \"cd sub && git branch -D z\"", [D(FD, ("z",), cwd="/repo/sub")]),
    ("bash <<'EOF'\ngit branch -D z\nEOF", [D(FD, ("z",))]),
    ("bash <<< 'git branch -D z'", [D(FD, ("z",))]),
    ("sudo git branch -D z", [D(FD, ("z",))]),
    ("env GIT_DIR=/g/.git git branch -D z", [D(FD, ("z",))]),
    ("command git branch -D z", [D(FD, ("z",))]),
    ("exec git branch -D z", [D(FD, ("z",))]),
    ("nohup git branch -D z", [D(FD, ("z",))]),
    ("time git branch -D z", [D(FD, ("z",))]),
    ("timeout 10 git branch -D z", [D(FD, ("z",))]),
    ("/usr/bin/git branch -D z", [D(FD, ("z",))]),
    ("git --no-pager -c core.x=1 branch -D z", [D(FD, ("z",))]),
    ("echo $(git branch -D z)", [D(FD, ("z",))]),
    ("eval 'git branch -D z'", [D(FD, ("z",))]),
    ("find . -maxdepth 0 -exec git branch -D {} \\;", [D(FD, ("{}",), dynamic=True)]),
]


@pytest.mark.parametrize(("cmd", "expected"), DESTRUCTIONS, ids=[c for c, _ in DESTRUCTIONS])
def test_destruction(cmd: str, expected: list[Destruction]) -> None:
    assert _destructions(cmd) == expected


def E(kind: str, outputs: tuple[str, ...], rev: str | None = None,
      src: str | None = CWD, dynamic: bool = False) -> Evacuation:  # fmt: skip
    return Evacuation(kind, outputs, src, rev, dynamic)


EVACUATIONS = [
    ("git diff > /tmp/work.patch", [E("diff", ("/tmp/work.patch",))]),
    ("git diff >> out/w.patch", [E("diff", ("/repo/out/w.patch",))]),
    ("git diff --cached > x.patch", [E("diff_cached", ("/repo/x.patch",))]),
    ("git diff --staged &> x.patch", [E("diff_cached", ("/repo/x.patch",))]),
    ("git diff main...feat > f.patch", [E("diff", ("/repo/f.patch",), "main...feat")]),
    ("git diff --output=x.patch", [E("diff", ("/repo/x.patch",))]),
    ("git diff --output x.patch HEAD", [E("diff", ("/repo/x.patch",), "HEAD")]),
    ("git diff | tee /tmp/a.patch", [E("diff", ("/tmp/a.patch",))]),
    ("git diff | tee -a /tmp/a.patch /tmp/b", [E("diff", ("/tmp/a.patch", "/tmp/b"))]),
    ("git diff | gzip > /tmp/a.gz", [E("diff", ("/tmp/a.gz",))]),
    ("git diff > \"$TMPDIR/x\"", [E("diff", ("$TMPDIR/x",), dynamic=True)]),
    ("git -C ../wt diff > /tmp/w.patch", [E("diff", ("/tmp/w.patch",), src="/wt")]),
    ("cd ../wt && git diff > ../save.patch",
     [E("diff", ("/save.patch",), src="/wt")]),
    ("(cd wt && git diff) > /tmp/p", [E("diff", ("/tmp/p",), src="/repo/wt")]),
    ("{ git diff; git diff --cached; } > /tmp/all",
     [E("diff", ("/tmp/all",)), E("diff_cached", ("/tmp/all",))]),
    ("git format-patch main", [E("format_patch", ("/repo",), "main")]),
    ("git format-patch -o /tmp/p main..feat", [E("format_patch", ("/tmp/p",), "main..feat")]),
    ("git format-patch --output-directory=pp -3",
     [E("format_patch", ("/repo/pp",))]),
    ("git format-patch --stdout main > /tmp/s.mbox",
     [E("format_patch", ("/tmp/s.mbox",), "main")]),
    ("git stash show -p > /tmp/s.patch", [E("stash_show", ("/tmp/s.patch",), "stash@{0}")]),
    ("git stash show --patch stash@{1} > s", [E("stash_show", ("/repo/s",), "stash@{1}")]),
    ("git show abc123 > /tmp/c.patch", [E("show", ("/tmp/c.patch",), "abc123")]),
    ("git show feat | tee keep.patch", [E("show", ("/repo/keep.patch",), "feat")]),
    ("git stash show > x", []),
    ("git diff", []),
    ("git diff --stat", []),
    ("git diff > /dev/null", []),
    ("git diff 2> err.log", []),
    ("git diff | less", []),
    ("git log -p > log.txt", []),
    ("git format-patch --stdout main", []),
    ("echo git diff > x", []),
    ("bash -c 'git diff' > /tmp/o", [E("diff", ("/tmp/o",))]),
]


@pytest.mark.parametrize(("cmd", "expected"), EVACUATIONS, ids=[c for c, _ in EVACUATIONS])
def test_evacuation(cmd: str, expected: list[Evacuation]) -> None:
    assert _evacuations(cmd) == expected


def test_evacuate_then_destroy_in_one_command() -> None:
    cmd = "git -C ../wt diff > /tmp/save.patch && git worktree remove --force ../wt"
    assert _evacuations(cmd) == [E("diff", ("/tmp/save.patch",), src="/wt")]
    assert _destructions(cmd) == [D("worktree_remove_force", ("/wt",))]


def test_xargs_worktree_remove_is_dynamic() -> None:
    assert _destructions("ls -d ../wt-* | xargs -n1 git worktree remove --force") == [
        D("worktree_remove_force", (), dynamic=True)
    ]


# -- overwrites, discards and unread text (issue 5 follow-up) -----------------------------------
from branchkeeper.policy.discard_plan import discard  # noqa: E402
from branchkeeper.policy.plan import unread_destructive  # noqa: E402
from branchkeeper.shell.gitargv import overwrites  # noqa: E402


@pytest.mark.parametrize(("cmd", "ref", "new"), [
    ("git branch -f x main", "refs/heads/x", "main"), ("git branch -f x", "refs/heads/x", "HEAD"),
    ("git checkout -B x", "refs/heads/x", "HEAD"), ("git switch -C x o/m", "refs/heads/x", "o/m"),
    ("git worktree add -B x ../p s", "refs/heads/x", "s"), ("git branch -M a x", "refs/heads/x", "a"),
    ("git branch -m -f x", "refs/heads/x", "HEAD"), ("git fetch origin +m:x", "refs/heads/x", None),
    ("git fetch -f origin m:refs/heads/x", "refs/heads/x", None),
    ("git pull origin +m:x", "refs/heads/x", None), ("git pull --force origin m:x", "refs/heads/x", None),
    ("git pull --no-rebase -s ours origin +m:refs/heads/x", "refs/heads/x", None),
    ("git symbolic-ref refs/heads/x refs/heads/m", "refs/heads/x", "refs/heads/m"),
    ("git symbolic-ref -q -m why refs/heads/x refs/heads/m", "refs/heads/x", "refs/heads/m"),
    ("git push . +m:x", "refs/heads/x", "m"), ("git push . m:x --force", "refs/heads/x", "m"),
    ("git update-ref refs/heads/x m", "refs/heads/x", "m"),
])
def test_overwrites(cmd: str, ref: str, new: str | None) -> None:
    (g,) = _gits(cmd)
    found = overwrites(g) + tuple(d for d in destruction(g) if d.kind == "branch_overwrite")
    assert [(d.kind, d.refs, d.new_value) for d in found] == [("branch_overwrite", (ref,), new)]


@pytest.mark.parametrize("cmd", [
    "git branch -m a x", "git fetch origin m:x", "git push . m:x", "git push origin +m:x",
    "git update-ref -d refs/heads/x", "git switch -c x", "git branch x",
    "git fetch origin +m:refs/remotes/o/x", "git pull origin m:x", "git pull --rebase origin m",
    "git pull --dry-run origin +m:x", "git symbolic-ref HEAD refs/heads/x",
    "git symbolic-ref refs/heads/x", "git symbolic-ref -d refs/heads/x",
])
def test_not_overwrites(cmd: str) -> None:
    (g,) = _gits(cmd)
    assert overwrites(g) == ()
    assert all(d.kind != "branch_overwrite" for d in destruction(g))


@pytest.mark.parametrize(("cmd", "kind", "paths"), [
    ("git reset --hard", "reset_hard", ()), ("git checkout -- a b", "checkout_paths", ("a", "b")),
    ("git checkout .", "checkout_paths", (".",)), ("git checkout HEAD f", "checkout_paths", ("HEAD", "f")),
    ("git checkout -f", "checkout_force", ()), ("git restore f", "restore", ("f",)),
    ("git restore -SW f", "restore", ("f",)), ("git switch --discard-changes m", "switch_force", ()),
    ("git clean -fdx sub", "clean", ("sub",)), ("git stash drop", "stash_drop", ()),
    ("git stash clear", "stash_clear", ()),
    ("git checkout main", "checkout_maybe_path", ("main",)),  # the guard asks git which
])
def test_discards(cmd: str, kind: str, paths: tuple[str, ...]) -> None:
    (g,) = _gits(cmd)
    x = discard(g)
    assert x is not None and (x.kind, x.pathspecs) == (kind, paths)


@pytest.mark.parametrize("cmd", ["git restore --staged f", "git clean -n",
                                 "git clean -d", "git reset --soft HEAD", "git stash pop",
                                 "git checkout -p", "git checkout -b x", "git switch main"])
def test_not_discards(cmd: str) -> None:
    (g,) = _gits(cmd)
    assert discard(g) is None


@pytest.mark.parametrize(("cmd", "risky"), [
    ("( " * 300 + "git branch -D x" + " )" * 300, True), ('cat cmds | sh', False),
    ('git show HEAD:cmds | sh', True), ("curl https://get.git.io | sh", False),
    ('echo "git branch -D x" | sh', False), ("echo 'rm -rf /' | bash", False),
    ("python -c 'print(1)", False), ("git switch -c x 'oops", False),
    ("git status 'oops; git branch -D x", True), ("echo ok | sh", False),
])
def test_unread_destructive(cmd: str, risky: bool) -> None:
    assert (unread_destructive(parse_command(cmd, cwd=CWD)) is not None) is risky
