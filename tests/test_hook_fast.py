"""The no-git fast path decided from the raw stdin bytes (issue 16): it reads exactly what
``json.loads`` reads, or gives up; it never answers for a command the guard must see."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from branchkeeper.adapters.hooks.fast import NOT_STRING, scan, silent

WANTED = frozenset({(b"tool_name",), (b"tool_input", b"command")})
SPEC = ("tool_name", frozenset({"Bash"}), ("tool_input", "command"), "pre", b"",
        frozenset({"Read"}))

# JSON text with duplicate keys, odd spacing and no backslash (the only inputs scan accepts).
_ws = st.sampled_from(["", " ", "\n", "\t ", "  \r\n"])
_str = st.text(alphabet=st.characters(blacklist_characters='"\\', blacklist_categories=("Cs", "Cc")),
               max_size=8).map(lambda s: f'"{s}"')
_scalar = st.sampled_from(["1", "-2.5e3", "true", "false", "null", "0"]) | _str
_key = st.sampled_from(['"tool_name"', '"tool_input"', '"command"', '"x"']) | _str


def _obj(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(_ws, _key, _ws, _ws, children, _ws).map(
        lambda t: f"{t[0]}{t[1]}{t[2]}:{t[3]}{t[4]}{t[5]}")
    return st.lists(pair, max_size=4).map(lambda ps: "{" + ",".join(ps) + "}")


_value = st.recursive(_scalar, lambda kids: _obj(kids) | st.lists(kids, max_size=3).map(
    lambda xs: "[" + ",".join(xs) + "]"), max_leaves=12)
_document = _obj(_value)


def _reference(text: str) -> dict[tuple[bytes, ...], bytes]:
    obj = json.loads(text)  # duplicate keys: the last one counts
    out: dict[tuple[bytes, ...], bytes] = {}

    def put(path: tuple[bytes, ...], value: Any) -> None:
        out[path] = value.encode() if isinstance(value, str) else NOT_STRING

    if "tool_name" in obj:
        put((b"tool_name",), obj["tool_name"])
    inner = obj.get("tool_input")
    if isinstance(inner, dict) and "command" in inner:
        put((b"tool_input", b"command"), inner["command"])
    return out


@settings(max_examples=400, deadline=None)
@given(_document)
def test_scan_reads_what_json_loads_reads(text: str) -> None:
    assert scan(text.encode(), WANTED) == _reference(text)


@pytest.mark.parametrize("data", [
    b'{"tool_name":"Bash","tool_input":{"command":"echo \\"x\\""}}',  # an escape anywhere
    b'{"tool_name":"Bash","tool_input":{"command":"ls"}',  # unbalanced
    b'{"tool_name":"Bash","tool_input":{"command":"ls"}}}',
    b'{"tool_name":"Bash","tool_input":{"command":"ls"}} {}',  # two documents
    b'["tool_name","Bash"]', b'', b'{"a" "b"}', b'{"a":}', b'{"a":1 2}', b'{"a":1,,"b":2}',
])
def test_scan_gives_up_on_anything_else(data: bytes) -> None:
    assert scan(data, WANTED) is None


def _pre(command: object, tool: object = "Bash", cwd: str = "/r") -> bytes:
    return json.dumps({"session_id": "s", "cwd": cwd, "tool_name": tool,
                       "tool_input": {"command": command}}).encode()


@pytest.mark.parametrize(("data", "answer"), [
    (_pre("ls -la"), b""),
    (_pre("make test && pytest -q"), b""),
    (_pre("ls", tool="Read"), b""),  # a tool with nothing to judge
    (_pre("git status"), None),
    (_pre("rm -rf build"), None),
    (_pre("find . -delete"), None),
    (_pre("g''it branch -D x"), None),
    (_pre("$(echo git) branch -D x"), None),
    (_pre("/usr/bin/g?t branch -D x"), None),
    (_pre("echo {g,}it"), None),
    (_pre("echo `id`"), None),
    (_pre("branchkeeper delete --allow-unproven x"), None),
    (_pre('echo "hi"'), None),  # the quote is escaped in JSON: full path
    (_pre(5), None),
    (_pre("ls", tool="Agent"), None),
    (b'{"tool_name":"Bash","tool_input":{"command":"ls"},"tool_input":{"command":"git x"}}',
     None),
    (b'{"cwd":"/r","tool_name":"Bash","tool_input":{"command":"git x"},'
     b'"tool_input":{"command":"ls"}}', b""),
    # what R-BRANCHKEEPER-TAMPER protects: named in the command, or the directory it runs in
    (_pre("echo x > .claude/settings.json"), None),
    (_pre("echo x > .branchkeeper.yaml"), None),
    (_pre("branchkeeper uninstall"), None),
    (_pre("ls", cwd="/r/.git"), None),
    # what may empty a file (R-FILE-TRUNCATE): a redirect of a command that writes nothing
    (_pre("> notes.txt"), None),
    (_pre("make; : > notes.txt"), None),
    (_pre("true &> notes.txt"), None),
    (_pre("echo -n > notes.txt"), None),
    (_pre("cp /dev/null notes.txt"), None),
    (_pre("truncate -s0 notes.txt"), None),
    # a script run by name, which the guard reads
    (_pre("./cleanup.sh"), None),
    (_pre("bash scripts/x.sh"), None),
    (_pre("make && sh x.sh"), None),
    (_pre("source env.sh"), None),
    (_pre(". env.sh"), None),
    (_pre("nice -n 5 /opt/tools/run"), None),
    (_pre("ls src/ docs/"), b""),
    (_pre("make > build.log 2>&1"), b""),  # a command that writes: a rewrite, not judged
    (_pre("make >> build.log 2>/dev/null"), b""),
    (_pre("echo done >/dev/null"), b""),
    (_pre("echo x > settings.json", cwd="/r/.claude"), None),
    (b'{"tool_name":"Bash","tool_input":{"command":"ls"}}', None),  # no cwd: full path
    (b'{"cwd":5,"tool_name":"Bash","tool_input":{"command":"ls"}}', None),
])
def test_silent_answers_only_a_command_the_guard_has_nothing_in(data: bytes,
                                                                answer: bytes | None) -> None:
    assert silent(data, SPEC) == answer


def test_after_a_tool_only_git_matters() -> None:
    post = (*SPEC[:3], "post", b"{}", frozenset())
    assert silent(_pre("rm -rf build"), post) == b"{}"
    assert silent(_pre("cd x && git commit -m y"), post) is None


def test_fast_path_words_cover_the_reader() -> None:
    """Every shell and wrapper the reader follows to a script file is one the fast path sends
    to the guard."""
    from branchkeeper.adapters.hooks.fast import SCRIPT_RUNNERS, WRAPPER_WORDS
    from branchkeeper.shell import wrappers

    assert {*wrappers.SHELLS, "source", "."} <= set(SCRIPT_RUNNERS)
    assert wrappers._WRAPPERS - {"{"} <= set(WRAPPER_WORDS)
