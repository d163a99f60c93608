"""Guard findings from an outside trial (issue 17): routes that lost work yet were allowed, and
commands that lose nothing yet were denied. Each is decided on real repositories in both
states (work at risk, nothing at risk), the whole decision asserted, and `branchkeeper check`
and the PreToolUse hook answer alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from branchkeeper.adapters.cli import main
from branchkeeper.policy.command import decide_command
from branchkeeper.policy.principle import BRANCH_LIMIT_PRINCIPLE
from tests.gitrepo import GitRepo
from tests.hookutil import check_and_hook_alike

# -- 1. `git rebase --onto NEW UPSTREAM [BRANCH]` drops UPSTREAM's commits not in NEW ---------

@pytest.fixture
def feat(tmp_path: Path) -> GitRepo:
    """main at `base`; `feat` checked out with two commits, w1 and w2, that only it holds."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n"})
    repo.switch("feat", create=True)
    repo.commit("w1", files={"w1.txt": "1\n"})
    repo.commit("w2", files={"w2.txt": "2\n"})
    return repo


def _rebase_deny(command: str, branch: str, upstream: str, onto: str,
                 commits: list[str]) -> str:
    n = len(commits)
    them = "them" if n != 1 else "it"
    return (
        f"[R-GIT-BRANCH-OVERWRITE] `{command}` would drop {n} commit{'s' if n != 1 else ''} from "
        f"the branch {branch} that no other branch, tag or remote-tracking ref holds ({upstream} "
        f"reaches {them}, the new base {onto} does not, so the rebase does not replay {them}):\n"
        + "".join(f"  - {c}\n" for c in commits) + "\n"
        f"Keep them first: put a branch at the tip (git branch {branch}-keep {branch}) or push it "
        f"(git push -u origin {branch}); then the rebase is allowed. To move only the newest "
        "commits, name the last commit to leave behind as the upstream (git rebase --onto NEW "
        "<that commit>); or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def test_rebase_onto_dropping_the_whole_branch_is_denied(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    w1, w2 = feat.rev("feat~1")[:7], feat.rev("feat")[:7]
    cmd = "git rebase --onto main feat"
    checked = check_and_hook_alike(cmd, feat.path, monkeypatch, capsys)
    assert checked["text"] == _rebase_deny(cmd, "feat", "feat", "main", [f"{w2} w2", f"{w1} w1"])
    # the same with the branch named, and from another branch
    cmd = "git rebase --onto main feat feat"
    assert decide_command(cmd, cwd=str(feat.path)).text == _rebase_deny(
        cmd, "feat", "feat", "main", [f"{w2} w2", f"{w1} w1"])
    feat.switch("main")
    assert decide_command(cmd, cwd=str(feat.path)).rule_id == "R-GIT-BRANCH-OVERWRITE"


def test_rebase_onto_dropping_older_commits_names_only_those(feat: GitRepo) -> None:
    w1 = feat.rev("feat~1")[:7]
    cmd = "git rebase --onto main HEAD~1"
    assert decide_command(cmd, cwd=str(feat.path)).text == _rebase_deny(
        cmd, "feat", "'HEAD~1'", "main", [f"{w1} w1"])


def test_rebase_onto_with_nothing_at_risk_is_allowed(
        feat: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The dropped commits are held by another ref (a branch at the tip, an upstream branch), or
    nothing is dropped (no --onto, --root, --keep-base, an upstream inside the new base, a
    rebase in progress), or git refuses (no such revision)."""
    cwd = str(feat.path)
    for cmd in ("git rebase main", "git rebase --onto main main", "git rebase --onto main HEAD~2",
                "git rebase --root --onto main", "git rebase --keep-base main",
                "git rebase --continue", "git rebase --abort",
                "git rebase --onto no-such-rev feat", "git rebase --onto main no-such-rev",
                "git rebase -i HEAD~2"):
        assert decide_command(cmd, cwd=cwd).verdict.value == "allow", cmd
    feat.branch("feat-keep")
    checked = check_and_hook_alike("git rebase --onto main feat", feat.path, monkeypatch,
                                      capsys)
    assert checked["verdict"] == "allow"
    feat.git("branch", "-D", "feat-keep")
    feat.git("branch", "-q", "w1-only", "feat~1")  # `w1-only` holds w1: only w2 is at risk
    assert decide_command("git rebase --onto main w1-only", cwd=cwd).verdict.value == "allow"
    cmd = "git rebase --onto main feat"
    assert decide_command(cmd, cwd=cwd).text == _rebase_deny(
        cmd, "feat", "feat", "main", [f"{feat.rev('feat')[:7]} w2"])


def test_rebase_onto_the_configured_upstream(feat: GitRepo) -> None:
    """Without an upstream operand git takes the branch's upstream: a branch that holds the
    commits itself, so nothing is lost; a rebase of an unknown word's value is unread."""
    feat.git("branch", "-q", "--set-upstream-to=main")
    assert decide_command("git rebase --onto HEAD~1", cwd=str(feat.path)).verdict.value == "allow"
    d = decide_command("git rebase --onto main $X", cwd=str(feat.path))
    assert (d.verdict.value, d.rule_id) == ("deny", "R-GIT-UNPARSED-DESTRUCTIVE")


# -- 5, 6. WorktreeCreate names: one function decides for the hook and `check --creation` -----

_WAY = ("Choose a name of letters, digits, '.', '_' and '-' that begins with a letter, a digit or "
        "'_' and is at most 100 characters long.")
BAD_NAMES = [
    ("../x", "it holds '/': use letters, digits, '.', '_' and '-' only"),
    ("a b", "it holds ' ': use letters, digits, '.', '_' and '-' only"),
    ("-rf", "it begins with '-', which commands given the path read as an option"),
    ("--help", "it begins with '-', which commands given the path read as an option"),
    ("..", "'..' names a directory that exists already (this one or its parent)"),
    (".", "'.' names a directory that exists already (this one or its parent)"),
    (".hidden", "it begins with '.', which would make the worktree a hidden directory"),
    ("a..b", "it holds '..', which git does not allow in a branch name (check-ref-format)"),
    ("x.lock", "it ends with '.lock', which git does not allow in a branch name (check-ref-format)"),
    ("x.", "it ends with '.', which git does not allow in a branch name (check-ref-format)"),
    ("a" * 300, "it is 300 characters long; at most 100 fit (the branch worktree-<name> is a file "
                "name under .git/refs/heads/)"),
]


@pytest.mark.parametrize(("name", "why"), BAD_NAMES, ids=[n[:20] for n, _ in BAD_NAMES])
def test_worktree_name_refused_alike_with_its_real_reason(
        tmp_path: Path, name: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.hookutil import run_hook

    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n"})
    reason = f"The worktree name {name[:200]!r} cannot be used: {why}."
    assert main(["check", "--json", "--cwd", str(repo.path), f"--creation={name}"]) == 2
    checked = json.loads(capsys.readouterr().out)
    assert (checked["verdict"], checked["rule_id"], checked["reason"], checked["way_out"]) == \
        ("deny", "R-WORKTREE-NAME", reason, _WAY)
    ran = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(repo.path), "name": name})
    assert (ran.returncode, ran.stdout) == (2, b"")
    assert ran.stderr.decode() == f"branchkeeper: [R-WORKTREE-NAME] {reason} {_WAY}\n"
    assert not (repo.path / ".claude").exists()


def test_worktree_name_usable_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing at risk: a usable name is allowed by `check` and created by the hook."""
    from tests.hookutil import run_hook

    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n"})
    assert main(["check", "--json", "--cwd", str(repo.path), "--creation", "feat_1.x"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "allow"
    ran = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(repo.path), "name": "feat_1.x"})
    path = repo.path / ".claude" / "worktrees" / "feat_1.x"
    assert (ran.returncode, ran.stdout) == (0, f"{path}\n".encode())
    assert repo.has_ref("refs/heads/worktree-feat_1.x")


def test_worktree_create_empty_name_says_it_is_empty(tmp_path: Path) -> None:
    from tests.hookutil import run_hook

    ran = run_hook("WorktreeCreate", {"session_id": "s", "cwd": str(tmp_path), "name": ""})
    assert (ran.returncode, ran.stdout) == (1, b"")
    assert ran.stderr == (b"branchkeeper: WorktreeCreate failed, the worktree was not created: "
                          b"malformed hook input: field 'name' is empty\n")


# -- 4. `git clean -e PATTERN` spares what the pattern matches --------------------------------

def _clean_deny(cwd: Path, command: str, paths: list[str], what: str) -> str:
    return (f"[R-GIT-DISCARD-CHANGES] `{command}` would discard uncommitted work in {cwd} ({what}):\n"
            + "".join(f"  - {p}\n" for p in paths) + "\n"
            f"Commit the work first (git -C {cwd} add -A && git -C {cwd} commit) or stash it "
            f"(git -C {cwd} stash push --include-untracked), then run the command again; or ask "
            "a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


@pytest.fixture
def untracked(tmp_path: Path) -> GitRepo:
    """One untracked file, u.txt (the only thing `git clean -f` would delete), and an ignored
    one."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={".gitignore": "*.log\n"})
    (repo.path / "u.txt").write_text("mine\n")
    (repo.path / "x.log").write_text("log\n")
    return repo


def test_clean_excluding_everything_it_would_delete_is_allowed(
        untracked: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in ("git clean -e u.txt -f", "git clean -f -e '*'", "git clean -fx -e u.txt -e '*.log'",
                "git clean -f --exclude=u.txt", "git clean -fd -eu.txt"):
        assert check_and_hook_alike(cmd, untracked.path, monkeypatch, capsys)["verdict"] == \
            "allow", cmd


def test_clean_with_excludes_still_judges_what_they_do_not_spare(
        untracked: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (untracked.path / "v.txt").write_text("also mine\n")
    cwd = untracked.path
    cmd = "git clean -e u.txt -f"
    checked = check_and_hook_alike(cmd, cwd, monkeypatch, capsys)
    assert checked["text"] == _clean_deny(cwd, cmd, ["v.txt"], "files git does not track")
    cmd = "git clean -fx -e v.txt"
    assert decide_command(cmd, cwd=str(cwd)).text == _clean_deny(
        cwd, cmd, ["u.txt", "x.log"], "files git does not track, ignored ones included")
    # with -X the patterns add to the ignore rules: u.txt is then deleted too
    cmd = "git clean -fX -e u.txt"
    assert decide_command(cmd, cwd=str(cwd)).text == _clean_deny(
        cwd, cmd, ["u.txt", "x.log"], "files git does not track, ignored ones included")


# -- 2. `git mv -f SRC DST` writes over DST ---------------------------------------------------

@pytest.fixture
def moves(tmp_path: Path) -> GitRepo:
    """a.txt clean, b.txt with an uncommitted edit, u.txt untracked, d/a.txt clean."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", files={"a.txt": "a\n", "b.txt": "b\n", "d/a.txt": "da\n"})
    (repo.path / "b.txt").write_text("b, edited\n")
    (repo.path / "u.txt").write_text("mine\n")
    return repo


def _mv_deny(cwd: Path, command: str, paths: list[str]) -> str:
    return _clean_deny(cwd, command, paths,
                       "uncommitted changes or untracked files the move writes over")


def test_mv_force_over_uncommitted_work_is_denied(
        moves: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cwd = moves.path
    cmd = "git mv -f a.txt b.txt"
    checked = check_and_hook_alike(cmd, cwd, monkeypatch, capsys)
    assert checked["text"] == _mv_deny(cwd, cmd, ["b.txt"])
    cmd = "git mv --force a.txt u.txt"
    assert decide_command(cmd, cwd=str(cwd)).text == _mv_deny(cwd, cmd, ["u.txt"])
    (cwd / "d" / "a.txt").write_text("da, edited\n")
    cmd = "git mv -f a.txt d"
    assert decide_command(cmd, cwd=str(cwd)).text == _mv_deny(cwd, cmd, ["d/a.txt"])


def test_mv_over_nothing_at_risk_is_allowed(
        moves: GitRepo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without -f git refuses an existing destination; a clean tracked destination is in
    HEAD; a new name overwrites nothing; a dry run moves nothing; several sources need a
    directory; the moved file's own edits move with it."""
    for cmd in ("git mv a.txt b.txt", "git mv -f b.txt a.txt", "git mv -f a.txt new.txt",
                "git mv -f a.txt d", "git mv -f -n a.txt b.txt", "git mv -f a.txt b.txt d",
                "git mv -f a.txt b.txt u.txt"):
        assert check_and_hook_alike(cmd, moves.path, monkeypatch, capsys)["verdict"] == \
            "allow", cmd


# -- 3. hook input over 4 MiB: judged on what was read, never let through unjudged --------------

_BIG = 5 * 1024 * 1024


def _pre(cwd: Path, tool: str, tool_input: dict[str, object]) -> bytes:
    return json.dumps({"session_id": "s", "cwd": str(cwd), "tool_name": tool,
                       "tool_input": tool_input}).encode()


def _cut_deny(why: str) -> str:
    return ("[R-GIT-UNPARSED-DESTRUCTIVE] The hook input is larger than 4194304 bytes (4 MiB) and "
            f"the guard read only its beginning: {why}, so the tool call cannot be judged.\n\n"
            "Split the work into smaller tool calls (a shorter command, a smaller file written in "
            "parts); or ask a human.\n\n" + BRANCH_LIMIT_PRINCIPLE)


def _answer(ran: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    out = json.loads(ran.stdout)["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


def test_oversized_command_cut_off_is_denied(feat: GitRepo) -> None:
    from tests.hookutil import run_hook

    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Bash", {
        "command": "git reset --hard main #" + "x" * _BIG}))
    assert ran.returncode == 0
    assert _answer(ran) == ("deny", _cut_deny("the command lies past that point"))
    padded = (b'{"session_id": "s", "cwd": "' + str(feat.path).encode() + b'", "tool_name": "Bash",'
              + b" " * _BIG + b'"tool_input": {"command": "ls"}}')
    ran = run_hook("PreToolUse", None, raw=padded)
    assert _answer(ran) == ("deny", _cut_deny(
        "what it read is not a whole event (field 'tool_input' must be a JSON object)"))
    # not even the start of an object within the limit (it once failed open as malformed)
    ran = run_hook("PreToolUse", None, raw=b" " * (4 * 1024 * 1024 + 10))
    assert _answer(ran) == ("deny", _cut_deny(
        "what it read is not a whole event (input must be a JSON object)"))


def test_oversized_input_with_the_command_read_whole_is_judged(feat: GitRepo) -> None:
    """A command read in full is judged as a small payload's would be, in both states."""
    from tests.hookutil import run_hook

    cmd = "git rebase --onto main feat"
    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Bash", {
        "command": cmd, "description": "d" * _BIG}))
    assert _answer(ran) == ("deny", decide_command(cmd, cwd=str(feat.path)).text)
    feat.branch("feat-keep")
    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Bash", {
        "command": cmd, "description": "d" * _BIG}))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")


def test_oversized_write_is_judged_by_its_path(feat: GitRepo) -> None:
    """A protected path is asked (its content, cut off, counts as unknown); another path
    passes; after a tool a payload that large still fails open (nothing there guards)."""
    from tests.hookutil import run_hook

    settings = feat.path / ".claude" / "settings.json"
    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Write", {
        "file_path": str(settings), "content": "{}" + " " * _BIG}))
    verdict, text = _answer(ran)
    assert (verdict, text.split("]")[0]) == ("ask", "[R-BRANCHKEEPER-TAMPER")
    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Write", {
        "file_path": str(feat.path / "data.txt"), "content": "x" * _BIG}))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    ran = run_hook("PreToolUse", None, raw=_pre(feat.path, "Write", {
        "content": "x" * _BIG, "file_path": str(settings)}))
    assert _answer(ran) == ("deny", _cut_deny("the path the tool writes lies past that point"))
    post = json.dumps({"session_id": "s", "cwd": str(feat.path), "tool_name": "Bash",
                       "tool_input": {"command": "ls"}, "tool_response": "x" * _BIG}).encode()
    ran = run_hook("PostToolUse", None, raw=post)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", (
        b"branchkeeper hook PostToolUse: ignored: malformed hook input: input larger than "
        b"4194304 bytes\n"))
