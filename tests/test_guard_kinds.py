# ruff: noqa: F811, E501  (the `world` fixture is imported; case rows are long)
"""Issue 17: every kind of loss the guard judges now, and the harmless commands it no longer
denies, on two real repositories: ``kinds/`` (work that exists nowhere else, in the MAIN
worktree) and ``kinds-clean/`` (the same layout, everything committed and pushed). Each case
asserts the decision in both; the texts of the new rules are asserted whole; ``check`` and
the PreToolUse hook answer alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.git.run import processes_started
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.guardworld import assert_both_states, rel, world  # noqa: F401 (fixture)
from tests.hookutil import hook_in_process

A, D = ("allow", ""), "deny"
RMW, REPO, PUSHF = "R-RM-WORK-AT-RISK", "R-RM-REPOSITORY", "R-GIT-PUSH-FORCE-OVERWRITE"
TAG, DISC, UNP = "R-GIT-TAG-DELETE", "R-GIT-DISCARD-CHANGES", "R-GIT-UNPARSED-DESTRUCTIVE"

#: (command, decision in kinds/, decision in kinds-clean/)
KINDS: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    # the main worktree: rm, find -delete, find -exec rm, their bash -c / $(...) forms
    ("rm -rf src", (D, RMW), A), ("rm -rf *", (D, RMW), A), ("rm -r src/", (D, RMW), A),
    ("bash -c 'rm -rf src'", (D, RMW), A), ("echo $(rm -rf src)", (D, RMW), A),
    ("find . -delete", (D, RMW), A), ("find . -exec rm -rf {} +", (D, RMW), A),
    ("find src -name '*.py' -exec rm {} +", (D, RMW), A), ("find . -exec rm -f {} \\;", (D, RMW), A),
    ("find . -type f -delete", (D, RMW), A), ("find src -name new.py | xargs rm", (D, RMW), A),
    # plain rm of a file with uncommitted changes, several files, untracked or ignored ones
    ("rm file.txt", (D, RMW), A), ("rm -f file.txt", (D, RMW), A), ("rm -f notes.txt README.md", (D, RMW), A),
    ("rm .env", (D, RMW), A), ("unlink file.txt", (D, RMW), A), ("shred -u file.txt", (D, RMW), A),
    # what loses nothing: a clean tracked file, a regenerable directory, a staged file (the
    # index keeps it), a path that is not there
    ("rm README.md", A, A), ("rm -rf build", A, A), ("rm docs/guide.md", A, A), ("rm -rf nothing-here", A, A),
    ("find . -name '*.o' -delete", A, A), ("echo build | xargs rm -rf", A, A),
    # the repository itself
    ("rm -rf .git", (D, REPO), A), ("rm -rf .git/objects", (D, REPO), A), ("rm -f .git/index.lock", A, A),
    # git rm -f
    ("git rm -f file.txt", (D, DISC), A), ("git rm -rf .", (D, DISC), A), ("git rm --cached -f file.txt", A, A),
    ("git rm -f README.md", A, A), ("git rm -n -f file.txt", A, A),
    # force pushes over a commit only the remote holds
    ("git push --force", (D, PUSHF), A), ("git push -f origin main", (D, PUSHF), A),
    ("git push origin +main", (D, PUSHF), A), ("git push origin -- +refs/heads/main", (D, PUSHF), A),
    ("git push --force-with-lease", (D, PUSHF), A), ("git push --force-with-lease=main origin main", (D, PUSHF), A),
    ("git push --force-with-lease --force-if-includes origin HEAD", (D, PUSHF), A),
    ("git push -f origin HEAD:main", (D, PUSHF), A), ("sudo git push --force", (D, PUSHF), A),
    ("git push --force origin topic", A, A), ("git push origin main", A, A), ("git push -f --dry-run", A, A),
    # tag -d of the only ref holding a commit
    ("git tag -d v1", (D, TAG), A), ("git tag --delete v1", (D, TAG), A),
    # reset --merge with staged changes; checkout --pathspec-from-file, both spellings
    ("git reset --merge", (D, DISC), A), ("git checkout HEAD --pathspec-from-file=paths.txt", (D, DISC), A),
    ("git checkout HEAD --pathspec-from-file paths.txt", (D, DISC), A),
    # commands run through another program
    ("parallel rm ::: file.txt", (D, RMW), A), ("parallel 'rm -rf {}' ::: src", (D, RMW), A),
    ("echo src | parallel rm -rf", (D, RMW), A), ("parallel git tag -d ::: v1", (D, TAG), A),
    ("awk 'BEGIN { system(\"rm -rf src\") }'", (D, RMW), A), ("perl -e 'system(\"rm -rf src\")'", (D, RMW), A),
    ("python3 -c 'import shutil; shutil.rmtree(\"src\")'", (D, RMW), A),
    ("node -e 'require(\"child_process\").execSync(\"git reset --hard\")'", (D, DISC), A),
    ("ruby -e 'system(\"rm\", \"-rf\", \"src\")'", (D, RMW), A),
    ("python3 - <<'EOF'\nimport os\nos.remove('file.txt')\nEOF", (D, RMW), A),
    ("python3 -c 'import os; os.system(\"rm -rf \" + name)'", (D, UNP), (D, UNP)),
    ("python3 -c 'print(\"git reset --hard\")'", A, A),
    # spellings: env -CDIR, a cd inside a called function, sudo
    ("cd / && env -C{W}/kinds rm -rf src", (D, RMW), A), ("f() { cd src; }; f; rm -f *", (D, RMW), A),
    ("sudo rm -rf src", (D, RMW), A), ("sudo -u root git reset --merge", (D, DISC), A),
    # spellings the peer corpus still got through (tests/corpus): words after a redirect, find
    # primaries from an expansion or from xargs, git's subcommand from xargs, a shell rc file,
    # a glob with more matches than can be judged one by one
    ("git >/dev/null reset --hard", (D, DISC), A), ("find . -del$(printf ete)", (D, RMW), A),
    ("printf '%s\\n' -delete | xargs find .", (D, RMW), A), ("printf 'reset --hard' | xargs git", (D, DISC), A),
    ("echo 'git reset --hard' > /tmp/rc; bash --rcfile /tmp/rc -i s.sh", (D, UNP), (D, UNP)),
    ("find {W}/kinds -depth -delete", (D, RMW), A), ("rm -rf /*/*", (D, UNP), (D, UNP)),
    ("f0() { rm -rf src; }; " + "".join(f"f{i}() {{ {'; '.join([f'f{i - 1}'] * 6)}; }}; " for i in range(1, 9)) + "f8",
     (D, UNP), (D, UNP)),
    # the work tree's own diff applied in reverse; a patch from elsewhere, checks and the
    # index alone are not judged
    ("git diff | git apply -R", (D, DISC), A), ("git diff -- file.txt | git apply --reverse", (D, DISC), A),
    ("git diff -- README.md | git apply -R", A, A), ("git diff | git apply -R --check", A, A),
    ("git diff | git apply -R --cached", A, A), ("git diff | git apply", A, A),
    ("git apply -R fix.patch", A, A), ("cat fix.patch | git apply -R", A, A),
    # a reset git refuses changes nothing: no such commit, or paths after `--` (an expansion
    # there may be empty, and then the reset goes ahead)
    ("git reset --hard no-such-rev", A, A), ("git reset --hard HEAD~50", A, A),
    ("git reset --merge no-such-rev", A, A), ("git reset --hard -- file.txt", A, A),
    ("git reset --hard -- $NOT_SET_ANYWHERE", (D, DISC), A), ("git reset --hard HEAD", (D, DISC), A),
    # a line every shell refuses runs nothing: a quote left open, a leading operator; other
    # syntax bash refuses may be valid zsh, a redirect may lead, and earlier lines do run
    ("git reset --hard 'unterminated", A, A), ('rm -rf src "$(echo', A, A), ("&& git reset --hard", A, A),
    ("| rm -rf src", A, A), ("find . -delete 'unterminated", A, A),
    ("git reset --hard; echo (x)", (D, DISC), A), ("&>/dev/null git reset --hard", (D, DISC), A),
    ("git reset --hard\necho 'x", (D, UNP), (D, UNP)),
    # harmless commands it used to deny, and misreads
    ("rm -rf $TMPDIR/build", A, A), ('rm -rf "$HOME/tmp/x"', A, A), ("find . -exec echo -delete \\; -print", A, A),
    ("find . -gid -delete", A, A), ("git restore --help", A, A), ("git restore -h", A, A),
    ("git restore file.txt --version", A, A), ("f() { rm -rf src; }", A, A), ("git reset --soft HEAD~1", A, A),
    ("git reset HEAD~1", A, A), ("rm -rf $NOT_SET_ANYWHERE", (D, UNP), A),
    # ${NAME:-WORD}: NAME's value when the hook's environment (or the command) sets it, WORD
    # when the command unsets it; unknown otherwise
    ("rm -rf ${TMPDIR:-src}/build", A, A), ("unset Q; rm -rf ${Q:-src}", (D, RMW), A),
    ("Q=src; rm -rf ${Q:-build}", (D, RMW), A), ("rm -rf ${NOT_SET_ANYWHERE:-build}", (D, UNP), A),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)


@pytest.mark.parametrize(("command", "at_risk", "clean"), KINDS, ids=[c[:60] for c, _, _ in KINDS])
def test_kinds(world: Path, command: str, at_risk: tuple[str, str], clean: tuple[str, str]) -> None:
    assert_both_states(world, command, at_risk, clean)


def _tip(world: Path, rev: str) -> str:
    return GitRepo(world / "kinds").rev(rev)


def test_text_rm_work(world: Path) -> None:
    k = f"{world}/kinds"
    d = decide_command("rm -rf src notes.txt .env build", cwd=k)
    assert d.text == (
        f"[R-RM-WORK-AT-RISK] `rm -rf src notes.txt .env build` would delete work in the worktree {k} "
        "that exists nowhere else (no commit holds it):\n"
        "  - src/app.py (uncommitted changes)\n  - src/new.py (untracked)\n  - notes.txt (untracked)\n"
        "  - .env (ignored, matches protected glob '.env*')\n\n"
        f"Keep the work first: commit it (git -C {k} add -A && git -C {k} commit) or stash it (git -C {k} "
        "stash push --include-untracked); move an ignored file you need somewhere it is kept. Then "
        "delete what is left, naming it exactly; or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_rm_repository(world: Path) -> None:
    k = f"{world}/kinds"
    d = decide_command("rm -rf .git", cwd=k)
    assert d.text == (
        f"[R-RM-REPOSITORY] `rm -rf .git` would delete the repository {k}/.git, and with it 3 commits "
        "that no remote-tracking ref contains, held by:\n"
        "  - refs/heads/main\n  - refs/heads/topic\n  - refs/tags/v1\n\n"
        "Push the work first (git push -u origin '<branch>' for each branch, git push origin --tags), "
        f"or keep everything in a bundle outside the repository (git -C {k} bundle create ../keep.bundle "
        "--all); then delete. Or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_text_force_push(world: Path) -> None:
    theirs = _tip(world, "origin/main")[:7]
    d = decide_command("git push --force-with-lease", cwd=f"{world}/kinds")
    assert d.text == (
        "[R-GIT-PUSH-FORCE-OVERWRITE] `git push --force-with-lease` would overwrite origin/main and "
        "drop 1 commit that only the remote holds (this clone fetched it but no local branch or tag "
        "contains it; a lease checked against that tracking ref does not protect them):\n"
        f"  - {theirs} their work\n\n"
        "Bring those commits in first: git pull --rebase origin main (then push without --force), or "
        "merge them; or push your work to a new branch instead (git push origin "
        "HEAD:refs/heads/main-rework); or ask a human whether the remote's commits may go.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_tag_delete(world: Path) -> None:
    tip = _tip(world, "v1")[:10]
    d = decide_command("git tag -d v1", cwd=f"{world}/kinds")
    assert d.text == (
        "[R-GIT-TAG-DELETE] `git tag -d v1` would lose work: no branch, other tag or remote-tracking "
        "ref contains the commit of the tag below (1 commit would be reachable from no ref):\n"
        f"  - v1 at {tip}\n\n"
        "Keep the work first: push the tag (git push origin refs/tags/v1) or put its commit on a "
        "branch (git branch v1-keep refs/tags/v1); then delete it. Or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)


def test_text_reset_merge(world: Path) -> None:
    k = f"{world}/kinds"
    d = decide_command("git reset --merge", cwd=k)
    assert d.reason == f"`git reset --merge` would discard uncommitted work in {k} (staged changes):\n  - docs/guide.md"


def test_one_status_per_worktree(world: Path) -> None:
    """All the targets of a command in one worktree are read with ONE `git status`."""
    before = processes_started()
    decide_command("rm -rf src notes.txt docs/guide.md file.txt", cwd=f"{world}/kinds")
    assert processes_started() - before == 1
    before = processes_started()
    assert decide_command("rm -rf nothing-here /tmp/not-a-repo-path-xyz", cwd=f"{world}/kinds") \
        .verdict.value == "allow"
    assert processes_started() == before  # a target that is not there needs no git


def test_check_and_hook_answer_alike(world: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`branchkeeper check` and the PreToolUse hook give the same decision for every kind."""
    for command, _, _ in KINDS[::3]:
        for repo in ("kinds", "kinds-clean"):
            text = rel(world, command.replace("{W}/kinds", str(world / repo)))
            cwd = str(world / repo)
            code = main(["check", "--json", "--cwd", cwd, "--", text])
            checked = json.loads(capsys.readouterr().out)
            ran = hook_in_process("PreToolUse", {"session_id": "s", "cwd": cwd, "tool_name": "Bash",
                                                 "tool_input": {"command": text}},
                                  monkeypatch=monkeypatch, capsys=capsys)
            if checked["verdict"] in ("deny", "ask"):
                assert code == {"deny": 2, "ask": 3}[checked["verdict"]]
                answer = json.loads(ran.stdout)["hookSpecificOutput"]
                assert (answer["permissionDecision"], answer["permissionDecisionReason"]) == \
                    (checked["verdict"], checked["text"]), (repo, command)
            else:
                assert (code, ran.stdout) == (0, b""), (repo, command, ran.stdout)


def test_text_reversed_diff(world: Path) -> None:
    k = f"{world}/kinds"
    d = decide_command("git diff -- file.txt | git apply --reverse", cwd=k)
    assert d.text == (
        f"[R-GIT-DISCARD-CHANGES] `git apply --reverse` would discard uncommitted work in {k} "
        "(changes to tracked files):\n  - file.txt\n\n"
        f"Commit the work first (git -C {k} add -A && git -C {k} commit) or stash it (git -C {k} "
        "stash push --include-untracked), then run the command again; or ask a human.\n\n"
        + BRANCH_LIMIT_PRINCIPLE)
