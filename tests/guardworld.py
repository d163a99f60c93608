"""One set of real repositories for the guard tests, built once per test module.

Layout under the world directory W:
  origin.git                 bare remote: main, pushed-merged (in main), pushed-unmerged,
                             release/1.0 (integration line), users/bob (exempt), feat-login
  under/                     a clone under the cap; branches: feat-login (pushed), lonely
                             (unpushed commit), holder + held (held contained in holder),
                             fix-login, feature-4521-x, merged-feat (merged), wt-* branches;
                             config: integration_lines [release/*], exempt [users/*]
  wt/clean wt/dirty wt/detached wt/ignored wt/regen   worktrees of under/
  atcap/                     cap 5 reached: merged-a, merged-b, dormant-x (20 days, nowhere),
                             live-y, live-z; a last sweep written by build_inventory
  dormant/                   old-work idle 40 days (block stage); a last sweep
  atcap-warn/ atcap-off/ dormant-warn/   copies with one mode changed
  under/ also: feat/unpushed (a tip no other ref contains), feat/pushed (origin/feat/pushed
                             contains it); both made after the other clones
  stashed/                   a stash entry, README.md modified, todo.txt untracked;
                             stashed-off/ the same with branches.force_removal.mode: off
  resets/                    `ahead` checked out, one commit no other ref holds; `spare` (an
                             unpushed commit); aliases nuke = branch -D, zap = !git branch -D
                             ahead, st = status
  kinds/                     issue 17's kinds of loss in a MAIN worktree (no config file): on
                             main an unpushed commit, and origin/main one commit someone else
                             pushed (fetched, never merged); `topic` unpushed; tag v1 the only
                             ref of a commit; file.txt and src/app.py modified, docs/guide.md
                             staged, notes.txt and src/new.py untracked, .env ignored (not
                             regenerable), build/ ignored (regenerable); paths.txt = "file.txt"
  kinds-clean/               the same layout with nothing at risk: everything committed and
                             pushed, v1 on main, build/ alone ignored
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo

BASE_CFG = "branches:\n  integration_lines: ['release/*']\n  exempt: ['users/*']\n"
ATCAP_CFG = BASE_CFG + "  wip:\n    cap: 5\n"


def hermetic_env(home: Path) -> dict[str, str]:
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"
        "[advice]\n\tdetachedHead = false\n")
    (home / "template").mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_TEMPLATE_DIR": str(home / "template"), "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.com", "GIT_COMMITTER_NAME": "Test Committer",
            "GIT_COMMITTER_EMAIL": "committer@example.com", "GIT_EDITOR": "false",
            "GIT_TERMINAL_PROMPT": "0"}


def _sweep(path: Path) -> None:
    from branchkeeper.analysis.inventory import build_inventory
    from branchkeeper.git.repo import repo_facts
    from branchkeeper.model.config_file import load_config

    facts = repo_facts(path)
    build_inventory(facts, load_config(facts.main_root).config)


def _copy(src: Path, dst: Path, config: str) -> None:
    shutil.copytree(src, dst, symlinks=True)
    (dst / ".branchkeeper.yaml").write_text(config)


def build(w: Path) -> Path:
    bare = GitRepo.init_bare(w / "origin.git")
    seed = GitRepo.init(w / "seed")
    seed.commit("initial", files={"README.md": "hello\n", ".gitignore": "scratch/\nnode_modules/\n"},
                days_ago=60.5)
    seed.git("remote", "add", "origin", str(bare.path))
    seed.switch("pushed-merged", create=True)
    seed.commit("pm", files={"pm.txt": "1\n"}, days_ago=50.5)
    seed.switch("main")
    seed.merge("pushed-merged", days_ago=50.4)
    for name in ("pushed-unmerged", "release/1.0", "users/bob", "feat-login"):
        seed.switch(name, create=True, start="main")
        seed.commit(name, files={name.replace("/", "_") + ".txt": "x\n"}, days_ago=2.5)
    seed.switch("main")
    seed.git("push", "-q", "origin", "--all")
    u = GitRepo.clone(bare.path, w / "under")
    u.git("branch", "feat-login", "origin/feat-login")
    u.switch("lonely", create=True)
    u.commit("lonely work", files={"lonely.txt": "l\n"}, days_ago=1.5)
    u.switch("held", create=True, start="main")
    u.commit("held work", files={"held.txt": "h\n"}, days_ago=1.5)
    u.switch("holder", create=True)
    u.commit("holder work", files={"holder.txt": "h\n"}, days_ago=1.5)
    u.switch("merged-feat", create=True, start="main")
    u.commit("mf", files={"mf.txt": "m\n"}, days_ago=3.5)
    u.switch("main")
    u.merge("merged-feat", days_ago=3.4)
    u.branch("fix-login", days_ago=1)
    u.branch("feature-4521-x", days_ago=1)
    u.git("switch", "-q", "fix-login")
    u.commit("fl", files={"fl.txt": "f\n"}, days_ago=1.5)
    u.git("switch", "-q", "feature-4521-x")
    u.commit("f4521", files={"f4521.txt": "f\n"}, days_ago=1.5)
    u.git("switch", "-q", "main")
    wt = w / "wt"
    clean = u.worktree_add(wt / "clean", "-b", "wt-clean")
    dirty = u.worktree_add(wt / "dirty", "-b", "wt-dirty")
    (dirty.path / "README.md").write_text("changed\n")
    (dirty.path / "new.txt").write_text("untracked\n")
    det = u.worktree_add(wt / "detached", "--detach")
    det.commit("detached work", files={"det.txt": "d\n"}, days_ago=0.5)
    ign = u.worktree_add(wt / "ignored", "-b", "wt-ignored")
    (ign.path / "scratch").mkdir()
    (ign.path / "scratch" / "notes.md").write_text("precious\n")
    regen = u.worktree_add(wt / "regen", "-b", "wt-regen")
    (regen.path / "node_modules").mkdir()
    (regen.path / "node_modules" / "x.js").write_text("x\n")
    clean.commit("clean work", files={"c.txt": "c\n"}, days_ago=0.5)
    u.git("push", "-q", "origin", "wt-clean")
    set_config(u.path, BASE_CFG + "  wip:\n    cap: 20\n")
    # at the cap
    a = GitRepo.clone(bare.path, w / "atcap")
    for name, days, merge in (("merged-a", 5.5, True), ("merged-b", 4.5, True),
                              ("dormant-x", 20.5, False), ("live-y", 1.5, False),
                              ("live-z", 0.5, False)):
        a.switch(name, create=True, start="main", days_ago=days)
        a.commit(name, files={f"{name}.txt": name}, days_ago=days)
        a.switch("main")
        if merge:
            a.merge(name, days_ago=days - 0.1)
    a.git("push", "-q", "origin", "main", "live-y")
    a.git("fetch", "-q", "origin")
    set_config(a.path, ATCAP_CFG)
    _sweep(a.path)
    d = GitRepo.clone(bare.path, w / "dormant")
    d.switch("old-work", create=True, start="main", days_ago=40.5)
    d.commit("old", files={"old.txt": "o\n"}, days_ago=40.5)
    d.git("push", "-q", "origin", "old-work")
    d.switch("main")
    set_config(d.path, BASE_CFG + "  wip:\n    cap: 20\n")
    _sweep(d.path)
    _copy(a.path, w / "atcap-warn", ATCAP_CFG + "    mode: warn\n")
    _copy(a.path, w / "atcap-off", ATCAP_CFG + "    mode: 'off'\n")
    _copy(d.path, w / "dormant-warn", BASE_CFG + "  wip:\n    cap: 20\n  dormancy:\n    mode: warn\n")
    # overwrite routes (made after the clones above, so their counts do not change)
    (u.path / ".branchkeeper.yaml").unlink()  # `commit` stages everything
    u.switch("feat/unpushed", create=True, start="main")
    u.commit("unpushed work", files={"unpushed.txt": "u\n"}, days_ago=1.2)
    u.switch("feat/pushed", create=True, start="main")
    u.commit("pushed work", files={"pushed.txt": "p\n"}, days_ago=1.2)
    u.git("push", "-q", "origin", "feat/pushed")
    u.switch("main")
    set_config(u.path, BASE_CFG + "  wip:\n    cap: 20\n")
    # discard routes: a stash entry, a modified tracked file, an untracked file
    s = GitRepo.clone(bare.path, w / "stashed")
    (s.path / "README.md").write_text("stashed change\n")
    s.git("stash", "push", "-q", "-m", "wip")
    (s.path / "README.md").write_text("dirty change\n")
    (s.path / "todo.txt").write_text("untracked\n")
    set_config(s.path, BASE_CFG)
    _copy(s.path, w / "stashed-off", BASE_CFG + "  force_removal:\n    mode: 'off'\n")
    # reset routes: branch `ahead` checked out, its tip (one commit) in no other ref; aliases
    r = GitRepo.clone(bare.path, w / "resets")
    r.switch("ahead", create=True, start="main")
    r.commit("ahead work", files={"ahead.txt": "a\n"}, days_ago=0.2)
    r.git("config", "alias.nuke", "branch -D")
    r.git("config", "alias.zap", "!git branch -D ahead")
    r.git("config", "alias.st", "status")
    r.git("branch", "spare", "main")
    r.switch("spare")
    r.commit("spare work", files={"spare.txt": "s\n"}, days_ago=0.2)
    r.switch("ahead")
    set_config(r.path, BASE_CFG)
    build_kinds(w)
    return w


def build_kinds(w: Path) -> None:
    """``kinds/`` and ``kinds-clean/`` (module docstring)."""
    bare = GitRepo.init_bare(w / "kinds-origin.git")
    seed = GitRepo.init(w / "kinds-seed")
    seed.commit("initial", files={"README.md": "k\n", "file.txt": "f\n", "src/app.py": "a\n",
                                  "docs/guide.md": "g\n", "paths.txt": "file.txt\n",
                                  ".gitignore": "build/\n.env\n"}, days_ago=10)
    seed.git("remote", "add", "origin", str(bare.path))
    seed.git("push", "-q", "origin", "main")
    k = GitRepo.clone(bare.path, w / "kinds")
    seed.commit("their work", files={"theirs.txt": "t\n"}, days_ago=1)
    seed.git("push", "-q", "origin", "main")
    k.git("fetch", "-q", "origin")
    k.switch("topic", create=True)
    k.commit("topic work", files={"topic.txt": "t\n"}, days_ago=1)
    k.git("switch", "-q", "--detach", "main")
    k.commit("tagged work", files={"tagged.txt": "t\n"}, days_ago=1)
    k.git("tag", "v1")
    k.switch("main")
    k.commit("local work", files={"local.txt": "l\n"}, days_ago=0.5)
    for name, text in (("file.txt", "edited\n"), ("src/app.py", "edited\n"),
                       ("notes.txt", "mine\n"), ("src/new.py", "new\n"), (".env", "TOKEN=1\n"),
                       ("build/out.o", "obj\n"), ("docs/guide.md", "staged\n")):
        (k.path / name).parent.mkdir(parents=True, exist_ok=True)
        (k.path / name).write_text(text)
    k.git("add", "docs/guide.md")
    c = GitRepo.clone(bare.path, w / "kinds-clean")
    c.git("tag", "v1")
    c.switch("topic", create=True)
    c.commit("topic work", files={"topic.txt": "t\n"}, days_ago=1)
    c.git("push", "-q", "-u", "origin", "topic")
    c.switch("main")
    (c.path / "build").mkdir()
    (c.path / "build" / "out.o").write_text("obj\n")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("world")
    env = hermetic_env(tmp_path_factory.mktemp("whome"))
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            mp.delenv(var, raising=False)
        return build(w)


def set_config(repo: Path, text: str) -> None:
    (repo / ".branchkeeper.yaml").write_text(text)


def rel(w: Path, cmd: str) -> str:
    return cmd.replace("{W}", str(w))


def assert_both_states(w: Path, command: str, at_risk: tuple[str, str],
                       clean: tuple[str, str]) -> None:
    """``command`` ({W}/kinds = the repository being judged, {W} = the world) decided in the
    repository with work at risk and in the clean one: (verdict, rule id) as given, the
    principle closing every deny, and the hook's fast path never skipping what the guard would
    say something about."""
    from branchkeeper.adapters.hooks.glue import needs_guard
    from branchkeeper.policy.command import decide_command
    from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE

    for repo, want in (("kinds", at_risk), ("kinds-clean", clean)):
        text = rel(w, command.replace("{W}/kinds", str(w / repo)))
        d = decide_command(text, cwd=str(w / repo))
        assert (d.verdict.value, d.rule_id) == want, (repo, d.text)
        assert d.text.endswith(BRANCH_LIMIT_PRINCIPLE) == (d.verdict.value == "deny")
        if d.verdict.value != "allow" or d.text:
            assert needs_guard(text, cwd=str(w / repo)), "the hook's fast path would skip it"


__all__ = ["BASE_CFG", "assert_both_states", "build", "os", "rel", "set_config", "world"]
