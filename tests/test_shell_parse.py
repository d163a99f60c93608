"""Tests of the shell-command reader and quoting (issue 5 section 1; design guarantee 5)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchkeeper.shell.parse import MAX_INPUT_BYTES, git_invocations, parse_command, rm_recursive_targets
from branchkeeper.shell.quoting import git_cmd, shell_quote

CWD = "/repo"


def argvs(cmd: str) -> list[tuple[str, ...]]:
    return [inv.argv for inv in parse_command(cmd, cwd=CWD).invocations]


ARGV_CASES = [
    ("git status", [("git", "status")]),
    ("git   status  ", [("git", "status")]),
    ("a && b || c; d", [("a",), ("b",), ("c",), ("d",)]),
    ("a\nb\n\nc", [("a",), ("b",), ("c",)]),
    ("a | b |& c", [("a",), ("b",), ("c",)]),
    ("( a; b ) && { c; }", [("a",), ("b",), ("c",)]),
    ("! a", [("a",)]),
    ("a &\nb", [("a",), ("b",)]),
    ("echo 'single $x' \"double\" plain", [("echo", "single $x", "double", "plain")]),
    ('echo "a\\"b" "c\\\\d" "e\\$f" "g\\h"', [("echo", 'a"b', "c\\d", "e$f", "g\\h")]),
    ("echo a\\ b c\\\\d \\'", [("echo", "a b", "c\\d", "'")]),
    ("echo $'a\\nb\\t\\x41\\u00e9'", [("echo", "a\nb\tA\u00e9")]),
    ("echo ab\"cd\"'ef'", [("echo", "abcdef")]),
    ('echo "a$"', [("echo", "a$")]),
    ("echo $\"t\"", [("echo", "t")]),
    ("echo 'it'\"'\"'s'", [("echo", "it's")]),
    ("echo a\\\nb", [("echo", "ab")]),
    ("git commit -m 'line1\nline2'", [("git", "commit", "-m", "line1\nline2")]),
    ("echo ~ ~/x", [("echo", "~", "~/x")]),
    ("echo {}", [("echo", "{}")]),
    ("x=1 y=2", []),
    ("export GIT_DIR=/g", []),
    ("# just a comment", []),
    ("", []),
    ("git branch -D $(git branch --merged)",
     [("git", "branch", "--merged"), ("git", "branch", "-D", "$(git branch --merged)")]),
    ("diff <(git show a:f) <(git show b:f)",
     [("git", "show", "a:f"), ("git", "show", "b:f"), ("diff", "<(git show a:f)",
                                                      "<(git show b:f)")]),
    ("if git diff --quiet; then git branch -d x; else echo no; fi",
     [("git", "diff", "--quiet"), ("git", "branch", "-d", "x"), ("echo", "no")]),
    ("while read b; do git branch -D \"$b\"; done < list",
     [("read", "b"), ("git", "branch", "-D", "$b")]),
    ("case $x in a) git a;; b) git b;; esac", [("git", "a"), ("git", "b")]),
    ("[ -d x ] && git status", [("git", "status")]),
    ("test -d x && git status", [("test", "-d", "x"), ("git", "status")]),
    ("[[ -d x ]] && git status", [("git", "status")]),
    ("sudo -u bob env A=1 nice -n 5 git gc", [("git", "gc")]),
    ("command -v git", [("command", "-v", "git")]),
    ("xargs -0 -n1 git branch -d", [("git", "branch", "-d")]),
    ("stdbuf -oL git log", [("git", "log")]),
]


@pytest.mark.parametrize(("cmd", "expected"), ARGV_CASES, ids=[c for c, _ in ARGV_CASES])
def test_argv(cmd: str, expected: list[tuple[str, ...]]) -> None:
    assert argvs(cmd) == expected


def test_home_resolves_tilde() -> None:
    parsed = parse_command("cd ~/proj && git status", cwd=CWD, home="/home/u")
    assert [(i.argv, i.cwd) for i in parsed.invocations] == [
        (("cd", "/home/u/proj"), CWD),
        (("git", "status"), "/home/u/proj"),
    ]


CWD_CASES = [
    ("cd sub && git status", "/repo/sub"),
    ("cd sub; cd ../other; git status", "/repo/other"),
    ("cd /abs/x && git status", "/abs/x"),
    ("cd -- sub && git status", "/repo/sub"),
    ("cd sub && cd - && git status", "/repo"),
    ("(cd sub) && git status", "/repo"),
    ("{ cd sub; } && git status", "/repo/sub"),
    ("cd sub | cat; git status", "/repo"),
    ("cd \"$X\" && git status", None),
    ("cd $(git rev-parse --show-toplevel) && git status", None),
    ("cd && git status", None),
    ("pushd sub && git status", "/repo/sub"),
    ("pushd sub && popd && git status", "/repo"),
    ("env -C /e git status", "/e"),
    ("bash -c 'cd in && git status'", "/repo/in"),
]


@pytest.mark.parametrize(("cmd", "cwd"), CWD_CASES, ids=[c for c, _ in CWD_CASES])
def test_effective_cwd(cmd: str, cwd: str | None) -> None:
    gits = [i for i in parse_command(cmd, cwd=CWD).invocations if i.argv[:1] == ("git",)]
    assert [i.cwd for i in gits][-1] == cwd


def test_bash_c_does_not_leak_cwd() -> None:
    parsed = parse_command("bash -c 'cd in' && git status", cwd=CWD)
    assert parsed.invocations[-1].cwd == CWD


GIT_GLOBAL_CASES = [
    ("git status", ("status", (), CWD, None, None, ())),
    ("git -C a -C b status", ("status", (), "/repo/a/b", None, None, ())),
    ("git -C /x -C ../y log -1", ("log", ("-1",), "/y", None, None, ())),
    ("git --git-dir=.git --work-tree=. status", ("status", (), CWD, "/repo/.git", "/repo", ())),
    ("git --git-dir /g --work-tree /w status", ("status", (), CWD, "/g", "/w", ())),
    ("GIT_DIR=g GIT_WORK_TREE=/w git status", ("status", (), CWD, "/repo/g", "/w", ())),
    ("git -C d --git-dir=g status", ("status", (), "/repo/d", "/repo/d/g", None, ())),
    ("git -c a.b=1 -c c.d= --no-pager -p -P --literal-pathspecs status",
     ("status", (), CWD, None, None, (("a.b", "1"), ("c.d", "")))),
    ("git --bare log", ("log", (), CWD, CWD, None, ())),
    ("git --version", (None, (), CWD, None, None, ())),
    ("git", (None, (), CWD, None, None, ())),
    ("/usr/bin/git status -s", ("status", ("-s",), CWD, None, None, ())),
    ("export GIT_DIR=/g; git status", ("status", (), CWD, "/g", None, ())),
    ("export GIT_DIR=/g; unset GIT_DIR; git status", ("status", (), CWD, None, None, ())),
]


@pytest.mark.parametrize(("cmd", "expected"), GIT_GLOBAL_CASES,
                         ids=[c for c, _ in GIT_GLOBAL_CASES])  # fmt: skip
def test_git_globals(cmd: str, expected: tuple[object, ...]) -> None:
    (g,) = git_invocations(parse_command(cmd, cwd=CWD))
    assert (g.subcommand, g.args, g.cwd, g.git_dir, g.work_tree, g.config) == expected
    assert g.dynamic is False


DYNAMIC_CASES = [
    ("git branch -D $(cat x)", True),
    ("git branch -D `cat x`", True),
    ('git branch -D "$B"', True),
    ("git branch -D ${B}", True),
    ("git branch -D feat*", True),
    ("git branch -D feat?", True),
    ("git branch -D feat[12]", True),
    ("git branch -D {a,b}", True),
    ("git branch -D x{1..3}", True),
    ("git branch -D $((1+2))", True),
    ("git branch -D ~x", True),
    ("git branch -D 'feat*'", False),
    ("git branch -D \\*", False),
    ("git branch -D '$B'", False),
    ("git branch -D lane-f-adoption", False),
    ("git -C \"$D\" status", True),
    ("GIT_DIR=$X git status", True),
    ("git branch --merged | xargs git branch -d", True),
]


@pytest.mark.parametrize(("cmd", "dynamic"), DYNAMIC_CASES, ids=[c for c, _ in DYNAMIC_CASES])
def test_dynamic(cmd: str, dynamic: bool) -> None:
    assert git_invocations(parse_command(cmd, cwd=CWD))[-1].dynamic is dynamic


def test_redirects_and_pipes() -> None:
    parsed = parse_command("cd w && git diff >out 2>&1 | tee -a /t/x; git show >>'a b'", cwd=CWD)
    by_name = {i.argv[:2]: i for i in parsed.invocations}
    diff = by_name[("git", "diff")]
    assert [(r.op, r.fd, r.target, r.path, r.dynamic, r.writes_stdout) for r in diff.redirects] == [
        (">", None, "out", "/repo/w/out", False, True),
        (">&", 2, "1", None, False, False),
    ]
    assert diff.pipe_to == ("tee", "-a", "/t/x")
    assert diff.in_pipeline and by_name[("tee", "-a")].in_pipeline
    assert by_name[("tee", "-a")].pipe_to is None
    show = by_name[("git", "show")]
    assert [(r.op, r.path) for r in show.redirects] == [(">>", "/repo/w/a b")]
    assert show.pipe_to is None and not show.in_pipeline
    assert diff.source == "git diff >out 2>&1"


def test_pipeline_binds_tighter_than_and() -> None:
    parsed = parse_command("git fetch && git diff | tee x", cwd=CWD)
    fetch, diff, tee = parsed.invocations
    assert (fetch.pipe_to, fetch.in_pipeline) == (None, False)
    assert diff.pipe_to == ("tee", "x")
    assert tee.in_pipeline and tee.pipe_to is None


def test_heredoc_body_is_data_unless_fed_to_a_shell() -> None:
    data = parse_command("cat <<EOF > n.md\ngit branch -D x\nEOF\ngit status", cwd=CWD)
    assert [i.argv for i in data.invocations] == [("cat",), ("git", "status")]
    assert data.invocations[0].redirects[0].body == "git branch -D x\n"
    code = parse_command("cat <<'EOF' | bash\ngit branch -D x\nEOF", cwd=CWD)
    assert code.unparsed and code.unparsed_reason == "a shell reads its commands from a pipe"
    fed = parse_command("sh <<-EOF\n\tgit branch -D y\n\tEOF", cwd=CWD)
    assert [i.argv for i in fed.invocations][-1] == ("git", "branch", "-D", "y")


def test_unquoted_heredoc_substitution_runs() -> None:
    parsed = parse_command("cat <<EOF\n$(git branch -D x)\nEOF", cwd=CWD)
    assert ("git", "branch", "-D", "x") in [i.argv for i in parsed.invocations]


UNPARSED_CASES = [
    ("git branch -D x )", "syntax the parser cannot read"),
    ("echo 'unterminated", "syntax the parser cannot read"),
    ("if true; then git x", "syntax the parser cannot read"),
    ("eval \"$CMD\"", "eval of a string the guard cannot read"),
    ("source ./env.sh && git status", "source runs commands from a file the guard does not read"),
    (". ./env.sh", ". runs commands from a file the guard does not read"),
    ("alias g=git; g branch -D x", "defines an alias"),
    ("$GIT branch -D x", "the command name comes from an expansion"),
    ("bash -c \"$SCRIPT\"", "a shell runs a -c string the guard cannot read"),
    ("curl -s x | sh", "a shell reads its commands from a pipe"),
    ("env -S 'git branch -D \"x\"'", "env -S splits a string the guard does not read"),
    ("env -S \"$CMD\" x", "env -S splits a string the guard does not read"),
    ("echo a\x00b", "command contains a NUL character"),
    ("git \ud800", "command is not valid Unicode"),
    ("x" * (MAX_INPUT_BYTES + 1), f"command longer than {MAX_INPUT_BYTES} bytes"),
]


@pytest.mark.parametrize(("cmd", "reason"), UNPARSED_CASES, ids=[c[:40] for c, _ in UNPARSED_CASES])
def test_unparsed(cmd: str, reason: str) -> None:
    parsed = parse_command(cmd, cwd=CWD)
    assert parsed.unparsed
    assert parsed.unparsed_reason.startswith(reason)


def test_unparsed_still_lists_what_it_found() -> None:
    parsed = parse_command("alias g=git; git branch -D x", cwd=CWD)
    assert parsed.unparsed
    assert [i.argv for i in parsed.invocations] == [("alias", "g=git"), ("git", "branch", "-D", "x")]


def test_functions_run_where_they_are_called() -> None:
    """Issue 17: a function body runs at each call, in the caller's shell (a `cd` in it moves
    the caller); a function never called runs nothing."""
    never = parse_command("f() { git branch -D x; }", cwd=CWD)
    assert (never.unparsed, [i.argv for i in never.invocations]) == (False, [])
    called = parse_command("f() { cd sub; }; f && rm -rf build; f", cwd=CWD)
    assert [(i.argv, i.cwd) for i in called.invocations] == [
        (("f",), CWD), (("cd", "sub"), CWD), (("rm", "-rf", "build"), CWD + "/sub"),
        (("f",), CWD + "/sub"), (("cd", "sub"), CWD + "/sub")]
    last = parse_command("g() { rm -rf a; }; g() { rm -rf b; }; g", cwd=CWD)
    assert [i.argv for i in last.invocations] == [("g",), ("rm", "-rf", "b")]
    deep = parse_command("f() { f; }; f", cwd=CWD)
    assert (deep.unparsed, deep.unparsed_reason) == (True, "commands nested too deeply")


def test_variables_from_the_environment_and_the_command() -> None:
    """Issue 17: `$NAME` takes the value the command gave it, else the environment's; a name
    unset, assigned twice, a loop variable or read from input is unknown, and so is an
    unquoted value that would split."""
    env = {"HOME": "/home/u", "TMPDIR": "/tmp", "SPACED": "a b", "EMPTY": ""}

    def argv(text: str) -> list[tuple[tuple[str, ...], tuple[bool, ...]]]:
        found = parse_command(text, cwd=CWD, home="/home/u", env=env).invocations
        return [(i.argv, i.dynamic_args) for i in found if i.name == "rm"]

    assert argv('rm -rf "$TMPDIR/build" ${HOME}/x $PWD/y') == [
        (("rm", "-rf", "/tmp/build", "/home/u/x", CWD + "/y"), (False,) * 5)]
    assert argv("X=/tmp/a; rm -rf $X") == [(("rm", "-rf", "/tmp/a"), (False,) * 3)]
    assert argv("unset TMPDIR; rm -rf \"$TMPDIR/b\"") == [(("rm", "-rf", "/b"), (False,) * 3)]
    assert argv("X=a; X=b; rm $X") == [(("rm", "$X"), (False, True))]
    assert argv("for d in a b; do rm $d; done") == [(("rm", "$d"), (False, True))]
    assert argv("read d; rm $d") == [(("rm", "$d"), (False, True))]
    assert argv("rm $SPACED \"$SPACED\" $NOPE ${HOME:-x}") == [
        (("rm", "a", "b", "a b", "$NOPE", "/home/u"), (False, False, False, False, True, False))]
    # `${NAME:-WORD}`: the value when set and not empty, WORD when empty; a name the
    # environment does not give stays unknown (the hook's environment may not be the shell's)
    assert argv("rm ${EMPTY:-d} ${NOPE:-/tmp/z} ${EMPTY-d}") == [
        (("rm", "d", "${NOPE:-/tmp/z}", "${EMPTY-d}"), (False, False, True, True))]
    without = parse_command("rm -rf $TMPDIR/b", cwd=CWD).invocations[0]
    assert without.dynamic_args == (False, False, True)


def test_deep_nesting_is_unparsed_not_raised() -> None:
    parsed = parse_command("(" * 3000 + "git x" + ")" * 3000, cwd=CWD)
    assert parsed.unparsed
    nested = "eval " * 20 + "git x"
    assert parse_command(nested, cwd=CWD).unparsed_reason == "commands nested too deeply"


RM_CASES = [
    ("rm -rf wt", ("/repo/wt",)),
    ("rm -fr ../wt /abs", ("/wt", "/abs")),
    ("rm -r -f wt", ("/repo/wt",)),
    ("rm --recursive --force wt", ("/repo/wt",)),
    ("rm -R wt", ("/repo/wt",)),
    ("sudo rm -rf -- -odd", ("/repo/-odd",)),
    ("cd .. && rm -rf wt", ("/wt",)),
    ("rm -rf \"$WT\"", ("$WT",)),
    ("rm -f file", ()),
    ("rm file", ()),
    ("echo rm -rf x", ()),
]


@pytest.mark.parametrize(("cmd", "targets"), RM_CASES, ids=[c for c, _ in RM_CASES])
def test_rm_targets(cmd: str, targets: tuple[str, ...]) -> None:
    invs = parse_command(cmd, cwd=CWD).invocations
    assert rm_recursive_targets(invs[-1]) == targets == invs[-1].rm_targets


def test_quote_examples() -> None:
    assert shell_quote("feature/alpha-beta") == "feature/alpha-beta"
    assert shell_quote("") == "''"
    assert shell_quote("it's") == "'it'\"'\"'s'"
    assert shell_quote("=ls") == "'=ls'"
    assert shell_quote("a b\nc") == "'a b\nc'"
    assert shell_quote("ünï") == "'ünï'"
    assert git_cmd("branch", "-D", "--", "-x") == "git branch -D -- -x"
    assert git_cmd("update-ref", "-d", "refs/heads/a b") == "git update-ref -d 'refs/heads/a b'"
    with pytest.raises(ValueError):
        shell_quote("a\x00b")


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_quote_parse_round_trip(s: str) -> None:
    parsed = parse_command("printf %s " + shell_quote(s), cwd=CWD)
    assert not parsed.unparsed, parsed.unparsed_reason
    assert [i.argv for i in parsed.invocations] == [("printf", "%s", s)]
    assert not parsed.invocations[0].dynamic


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_branch_name_round_trip(name: str) -> None:
    (g,) = git_invocations(parse_command(git_cmd("branch", "-D", "--", name), cwd=CWD))
    assert g.args == ("-D", "--", name)


@settings(max_examples=40, deadline=None)
@given(_TEXT)
def test_quote_round_trip_through_bash(s: str) -> None:
    out = subprocess.run(
        ["bash", "-c", "printf %s " + shell_quote(s)], capture_output=True, check=True
    ).stdout
    assert out.decode("utf-8", "surrogateescape") == s


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_never_raises_on_text(s: str) -> None:
    parsed = parse_command(s, cwd=CWD)
    assert isinstance(parsed.unparsed, bool)
    for g in git_invocations(parsed):
        assert g.args == g.invocation.argv[len(g.invocation.argv) - len(g.args):]


@settings(max_examples=300, deadline=None)
@given(st.binary())
def test_parser_never_raises_on_decoded_bytes(b: bytes) -> None:
    for text in (b.decode("utf-8", "replace"), b.decode("latin-1"),
                 b.decode("utf-8", "surrogateescape")):  # fmt: skip
        parse_command(text, cwd=CWD)


_SHELLISH = st.lists(
    st.sampled_from(["git", "branch", "-D", "x", "&&", "|", ";", "(", ")", "{", "}", "'", '"',
                     "$(", "`", "<<", "EOF", "\n", "\\", "$x", "*", "bash", "-c", "cd", ">"]),
    max_size=25,
).map(" ".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_SHELLISH)
def test_parser_never_raises_on_shell_fragments(s: str) -> None:
    from branchkeeper.shell.gitargv import creation, destruction
    from branchkeeper.shell.gitevac import evacuation

    for g in git_invocations(parse_command(s, cwd=CWD)):
        creation(g)
        destruction(g)
        evacuation(g)


def test_non_ascii_input_cannot_crash_the_parser() -> None:
    """tree-sitter-bash's scanner crashed the process on some non-ASCII input (a native
    segfault, not an exception); the parser sees ASCII stand-ins and argv keeps the text."""
    import subprocess
    import sys

    script = (
        "from branchkeeper.shell.parse import parse_command\n"
        "for _ in range(300):\n"
        "    p = parse_command('{\\U000771a8\\U000ee563k: && git branch -D \\u00fcn', cwd='/')\n"
        "print(p.invocations[-1].argv)\n"
    )
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "('git', 'branch', '-D', 'ün')\n"


def test_bash_language_loaded_without_the_package_init() -> None:
    """The parser loads tree-sitter-bash's compiled binding on its own (the package's
    ``__init__`` costs the hook ~8 ms of imports); it is the same language the package gives."""
    import tree_sitter
    import tree_sitter_bash

    from branchkeeper.shell.parse import _bash_language

    ours, theirs = tree_sitter.Language(_bash_language()), tree_sitter.Language(tree_sitter_bash.language())
    assert (ours.node_kind_count, ours.field_count) == (theirs.node_kind_count, theirs.field_count)
    text = b"cd x && git -C y switch -c 'z' | cat <<EOF\nbody\nEOF\n"
    assert str(tree_sitter.Parser(ours).parse(text).root_node) == \
        str(tree_sitter.Parser(theirs).parse(text).root_node)


def test_function_calls_that_multiply_are_cut() -> None:
    """Each call walks the function's body again: six calls a level over eight levels would be
    1.7 million commands (a peer's test). The walk stops at MAX_INVOCATIONS and says why."""
    from branchkeeper.shell.walk import MAX_INVOCATIONS

    levels = "".join(f"f{i}() {{ {'; '.join([f'f{i - 1}'] * 6)}; }}; " for i in range(1, 9))
    parsed = parse_command("f0() { rm -rf build; }; " + levels + "f8", cwd="/r")
    assert parsed.unparsed and parsed.unparsed_reason == "shell functions that run too many commands"
    assert len(parsed.invocations) <= MAX_INVOCATIONS + 6 * 8  # the calls still pending
    few = parse_command("f() { rm -rf build; }; " + "f; " * 300, cwd="/r")
    assert not few.unparsed and [i.argv for i in few.invocations].count(("rm", "-rf", "build")) == 300
