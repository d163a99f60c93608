"""Walk a tree-sitter-bash tree into `Invocation` records (spec sections 3, 11, 13).

tree-sitter-bash binds redirects and pipes to whole lists (`a && b | c` parses as
`(a && b) | c`), which is not bash's grammar. So each statement sequence is first flattened to
the surface order of items and operators, then regrouped with bash's precedence: pipelines
bind tighter than `&&`/`||`/`;`/`&`, and a redirect belongs to the last command before it.
"""

from __future__ import annotations

import itertools
from typing import Any

from branchkeeper.shell.model import Redirect
from branchkeeper.shell.scope import Inv, Scope, Special, resolve
from branchkeeper.shell.words import Word, node_text, parse_redirect_op, word_fields, word_value
from branchkeeper.shell.wrappers import classify_special

MAX_DEPTH = 12  # nested `bash -c` / eval / heredoc-to-shell levels
#: Most simple commands one parse yields. Only function calls multiply them (each call walks the
#: body again: six calls per level over eight levels would be 1.7 million), so a call past this
#: is not walked and the parse is cut, as for nesting too deep.
MAX_INVOCATIONS = 1000
_PIPE_OPS = frozenset({"|", "|&"})
_SEQ_OPS = frozenset({"&&", "||", ";", "&", ";;", ";&", ";;&", "\n"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_STATEMENTS = frozenset(
    {
        "command", "list", "pipeline", "redirected_statement", "subshell",
        "compound_statement", "if_statement", "while_statement", "for_statement",
        "c_style_for_statement", "case_statement", "function_definition", "negated_command",
        "declaration_command", "unset_command", "variable_assignment", "variable_assignments",
        "test_command", "do_group", "elif_clause", "else_clause", "case_item", "ERROR",
    }
)  # fmt: skip
_HEREDOC_PARTS = frozenset({"heredoc_start", "heredoc_body", "heredoc_end", "<<", "<<-"})


# The classes below are plain classes with __slots__, not dataclasses: the hook imports this
# module on every tool call, and a dataclass costs more to define.
class Inherit:
    """What an enclosing construct passes to the commands inside it."""

    __slots__ = ("dynamic", "in_pipeline", "reads_pipe", "redirects", "stdin_text")

    def __init__(self, redirects: tuple[Redirect, ...] = (), in_pipeline: bool = False,
                 dynamic: bool = False, reads_pipe: bool = False,
                 stdin_text: str | None = None) -> None:
        self.redirects = redirects
        self.in_pipeline = in_pipeline
        self.dynamic = dynamic
        self.reads_pipe = reads_pipe
        self.stdin_text = stdin_text


class Ctx:
    """Per-parse state: the source bytes of the current (possibly nested) text and the output."""

    __slots__ = ("depth", "out", "parse", "reasons", "scripts", "src")

    def __init__(self, src: bytes, out: list[Inv], reasons: list[str], depth: int = 0,
                 parse: Any = None, scripts: Any = None) -> None:
        self.src = src
        self.out = out
        self.reasons = reasons
        self.depth = depth
        self.parse = parse
        #: the script files read (a ``shell.scriptfile.Reads``, made at the first one)
        self.scripts = scripts


Entry = tuple[str, Any, list[Any]]  # ("op", optext, []) or ("item", node, extra redirects)


def run_text(text: str, scope: Scope, ctx: Ctx, inh: Inherit, parse: Any) -> list[Inv]:
    """Parse `text` (a `bash -c` string, heredoc body, eval string) and walk it in `scope`."""
    if ctx.depth >= MAX_DEPTH:
        ctx.reasons.append("commands nested too deeply")
        return []
    data = text.encode("utf-8", "surrogateescape")
    tree = parse(data)
    root = tree.root_node
    if root.has_error:
        ctx.reasons.append(f"syntax the parser cannot read ({_error_where(root, data)})")
    sub = Ctx(data, ctx.out, ctx.reasons, ctx.depth + 1, parse, ctx.scripts)
    return run_container(root, scope, sub, inh)


def _error_where(root: Any, src: bytes) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"missing {node.type!r} at byte {node.start_byte}"
        if node.is_error:
            return f"error at byte {node.start_byte}: {node_text(node, src)[:40]!r}"
        stack.extend(reversed(node.children))
    return "error"


def run_container(node: Any, scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    """Walk the children of a block-like node as one statement sequence; return stdout invs."""
    entries: list[Entry] = []
    for child in node.children:
        if child.type == "comment":
            continue
        if child.is_named and child.type in _STATEMENTS:
            flatten(child, entries)
        elif child.is_named:
            scan_substitutions(child, scope, ctx)
            entries.append(("op", ";", []))
        else:
            entries.append(("op", child.type if child.type in _SEQ_OPS | _PIPE_OPS else ";", []))
    return run_entries(entries, scope, ctx, inh)


def flatten(node: Any, out: list[Entry]) -> None:
    """Flatten lists, pipelines and redirected statements into surface-order entries."""
    t = node.type
    if t in ("list", "pipeline", "negated_command"):
        for child in node.children:
            if child.is_named:
                flatten(child, out)
            elif child.type in _SEQ_OPS or child.type in _PIPE_OPS:
                out.append(("op", child.type, []))
        return
    if t == "redirected_statement":
        body = node.child_by_field_name("body")
        redirs: list[Any] = []
        tail: list[Entry] = []
        for child in node.children:
            if body is not None and child.id == body.id:
                continue
            if child.type in _REDIRECTS:
                redirs.append(child)
                _heredoc_tail(child, redirs, tail)
        start = len(out)
        if body is None:  # a redirect alone (`> f`): bash runs it as the null command
            out.append(("item", node, []))  # the redirects are added below
        else:
            flatten(body, out)
        for i in range(len(out) - 1, start - 1, -1):
            if out[i][0] == "item":
                out[i][2].extend(redirs)
                break
        out.extend(tail)
        return
    entry: Entry = ("item", node, [])
    out.append(entry)
    if t == "command":
        tail = []
        for child in node.children:
            if child.type == "heredoc_redirect":
                _heredoc_tail(child, entry[2], tail)
        out.extend(tail)


def _heredoc_tail(node: Any, redirs: list[Any], tail: list[Entry]) -> None:
    """tree-sitter puts the rest of a heredoc's line (`| bash`, `&& x`, `> f`) inside it."""
    if node.type != "heredoc_redirect":
        return
    for child in node.children:
        if child.type in _HEREDOC_PARTS:
            continue
        if child.type in _REDIRECTS:
            redirs.append(child)
        elif child.is_named:
            flatten(child, tail)
        elif child.type in _SEQ_OPS or child.type in _PIPE_OPS:
            tail.append(("op", child.type, []))


def run_entries(entries: list[Entry], scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    """Group entries into pipelines and run them in order; return the stdout invocations."""
    pipelines: list[tuple[list[tuple[Any, list[Any]]], str]] = []
    cur: list[tuple[Any, list[Any]]] = []
    after_pipe = False
    for kind, val, extra in entries:
        if kind == "op":
            if val in _PIPE_OPS:
                after_pipe = True
            elif cur:
                pipelines.append((cur, val))
                cur, after_pipe = [], False
            continue
        if cur and not after_pipe:
            pipelines.append((cur, ";"))
            cur = []
        cur.append((val, extra))
        after_pipe = False
    if cur:
        pipelines.append((cur, ";"))
    stdout: list[Inv] = []
    for items, term in pipelines:
        if len(items) == 1 and term != "&":
            stdout = run_item(items[0][0], items[0][1], scope, ctx, inh)
            continue
        results = []
        text: str | None = None  # what the previous element writes, when known
        for i, (n, x) in enumerate(items):
            sub = Inherit(inh.redirects, True, inh.dynamic, i > 0,
                          text if n.type == "command" else None)
            results.append(run_item(n, x, scope.copy(), ctx, sub, members=True))
            text = _pipe_text(n, x, results[-1][1])
        for (outs, _), (_, nxt) in itertools.pairwise(results):
            for inv in outs:
                inv.downstream.extend(nxt)
        stdout = results[-1][0]
    return stdout


def _pipe_text(node: Any, extra: list[Any], members: list[Inv]) -> str | None:
    """What a pipeline element writes down the pipe when it is one plain ``echo``/``printf``
    of literal words without redirects (shell/pipetext.py), else None."""
    if node.type != "command" or extra or len(members) != 1 or any(
            c.type in _REDIRECTS for c in node.children):
        return None
    inv = members[0]
    if inv.wrappers or inv.forced_dynamic or not inv.words or any(w.dynamic for w in inv.words):
        return None
    if inv.words[0].value not in ("echo", "printf"):
        return None
    from branchkeeper.shell.pipetext import output_of  # only for such a pipe

    return output_of(tuple(w.value for w in inv.words))


def run_item(
    node: Any, extra: list[Any], scope: Scope, ctx: Ctx, inh: Inherit, *, members: bool = False
) -> Any:
    """Run one pipeline element. Returns stdout invs, or (stdout, members) when `members`."""
    start = len(ctx.out)
    stdout = _run_item(node, extra, scope, ctx, inh)
    if members:
        # Commands made by `$(...)` inside the element do not read the pipe.
        mine = [inv for inv in ctx.out[start:] if inv.in_pipeline]
        return stdout, mine or stdout
    return stdout


def _run_item(node: Any, extra: list[Any], scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    t = node.type
    if t == "command":
        return run_command(node, extra, scope, ctx, inh)
    redirs = tuple(make_redirects(extra, scope, ctx))
    if t == "redirected_statement":  # a redirect alone, `> f` (flatten): read as `: > f`
        inv = Inv([Word(":", False)], scope.cwd, dict(scope.env), set(scope.env_dynamic),
                  inh.dynamic, [*inh.redirects, *redirs], inh.in_pipeline,
                  node_text(node, ctx.src), inh.reads_pipe, stdin_text=inh.stdin_text)
        ctx.out.append(inv)
        return [inv]
    sub = Inherit(inh.redirects + redirs, inh.in_pipeline, inh.dynamic, inh.reads_pipe)
    if t == "subshell":
        return run_container(node, scope.copy(), ctx, sub)
    if t == "function_definition":
        # bash runs the body where the function is called, in the caller's shell: kept here
        # and walked at each call (run_function); a function never called runs nothing
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None:
            ctx.reasons.append("defines a shell function the guard cannot read")
            return []
        scope.functions[node_text(name, ctx.src)] = (body, ctx.src)
        return []
    if t in ("for_statement", "select_statement"):
        var = node.child_by_field_name("variable")
        if var is not None:  # takes each listed value in turn: not one the guard can know
            scope.assign(node_text(var, ctx.src), "", dynamic=True, export=False)
    if t in ("declaration_command", "unset_command", "variable_assignment", "variable_assignments"):
        _assignments(node, scope, ctx)
        return []
    if t == "test_command":
        scan_substitutions(node, scope, ctx)
        return []
    return run_container(node, scope, ctx, sub)


def _assignments(node: Any, scope: Scope, ctx: Ctx) -> None:
    """`export A=b`, `A=b`, `unset A`: keep exported names in the scope's environment."""
    scan_substitutions(node, scope, ctx)
    keyword = node.children[0].type if node.children else ""
    assigns = [node] if node.type == "variable_assignment" else list(node.named_children)
    for child in assigns:
        if child.type == "variable_name" and keyword == "unset":
            name = node_text(child, ctx.src)
            for table in (scope.env, scope.vars):
                table.pop(name, None)
            scope.env_dynamic.discard(name)
            scope.unset.add(name)
        elif child.type == "variable_name" and keyword == "export":  # exports its value
            name = node_text(child, ctx.src)
            value = scope.lookup(name)
            if value is None:
                scope.env_dynamic.add(name)
            scope.env[name] = value or ""
        elif child.type == "variable_assignment":
            name_node = child.child_by_field_name("name")
            value_node = child.child_by_field_name("value")
            if name_node is None:
                continue
            name = node_text(name_node, ctx.src)
            word = word_value(value_node, ctx.src, variables=scope) if value_node \
                else Word("", False)
            dynamic = word.dynamic or "[" in name or (value_node is not None and
                                                      value_node.type == "array")
            scope.assign(name.split("[", 1)[0], word.value, dynamic=dynamic,
                         export=keyword == "export")


def scan_substitutions(node: Any, scope: Scope, ctx: Ctx) -> None:
    """Run every `$(...)`, backtick and `<(...)` inside a non-statement node (they execute)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in ("command_substitution", "process_substitution"):
            run_container(cur, scope.copy(), ctx, Inherit())
            continue
        stack.extend(reversed(cur.children))


def make_redirects(nodes: list[Any], scope: Scope, ctx: Ctx) -> list[Redirect]:
    """Redirect nodes -> Redirect records, resolving file targets against the scope's cwd."""
    out: list[Redirect] = []
    for node in nodes:
        if node.type == "heredoc_redirect":
            out.append(_heredoc(node, ctx))
            scan_substitutions(node, scope, ctx)
            continue
        op, fd, dest = parse_redirect_op(node, ctx.src)
        if dest is None:
            out.append(Redirect(op, fd, "", None, False))
            continue
        scan_substitutions(dest, scope, ctx)
        word = word_value(dest, ctx.src, variables=scope)
        if op == "<<<":
            out.append(Redirect(op, fd, word.value, None, word.dynamic, body=word.value + "\n"))
            continue
        is_dup = op in (">&", "<&") and (word.value.isdigit() or word.value == "-")
        path = None if word.dynamic or is_dup else resolve(scope.cwd, word.value)
        out.append(Redirect(op, fd, word.value, path, word.dynamic))
    return out


def _heredoc(node: Any, ctx: Ctx) -> Redirect:
    op = "<<"
    delim = ""
    body = ""
    quoted = False
    dynamic = False
    for child in node.children:
        if child.type in ("<<", "<<-"):
            op = child.type
        elif child.type == "heredoc_start":
            raw = node_text(child, ctx.src)
            quoted = any(q in raw for q in "'\"\\")
            delim = raw.replace("'", "").replace('"', "").replace("\\", "")
        elif child.type == "heredoc_body":
            body = node_text(child, ctx.src)
            dynamic = not quoted and any(c.is_named and c.type != "heredoc_content"
                                         for c in child.children)
    if op == "<<-":
        body = "\n".join(line.lstrip("\t") for line in body.split("\n"))
    return Redirect(op, None, delim, None, dynamic, body=body)


def run_command(node: Any, extra: list[Any], scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    """One simple command: expand, strip wrappers, follow cd / shells / eval / xargs."""
    prefix_env: dict[str, str] = {}
    prefix_dyn: set[str] = set()
    word_nodes: list[Any] = []
    redirect_nodes: list[Any] = []
    children = node.children
    for i, child in enumerate(children):
        t = child.type
        if t == "variable_assignment":
            scan_substitutions(child, scope, ctx)
            name_node = child.child_by_field_name("name")
            value_node = child.child_by_field_name("value")
            if name_node is not None:
                w = word_value(value_node, ctx.src, variables=scope) if value_node else None
                prefix_env[node_text(name_node, ctx.src)] = w.value if w else ""
                if w is not None and w.dynamic:
                    prefix_dyn.add(node_text(name_node, ctx.src))
        elif t in _REDIRECTS:
            redirect_nodes.append(child)
        elif t == "command_name" or (child.is_named and t != "comment"):
            word_nodes.append(child.named_children[0] if t == "command_name" else child)
        elif t == "$" and i + 1 < len(children) and children[i + 1].start_byte == child.end_byte:
            continue  # `$"..."` (translated string): the `$` is not part of the value
    redirects = [*inh.redirects, *make_redirects(redirect_nodes + extra, scope, ctx)]
    for r in redirect_nodes + extra:
        # tree-sitter takes the words after a redirect's target (`git >/dev/null reset --hard`)
        # for more targets; bash takes them for arguments of the command
        if r.type == "file_redirect":
            targets = [c for c in r.children if c.is_named and c.type != "file_descriptor"]
            word_nodes.extend(targets[1:])
    for wn in word_nodes:
        scan_substitutions(wn, scope, ctx)
    words: list[Word] = []
    made = 0  # how many words the previous node made
    for k, wn in enumerate(word_nodes):
        gap = ctx.src[word_nodes[k - 1].end_byte : wn.start_byte] if k else b""
        if gap and not gap.replace(b"\\\n", b""):
            # tree-sitter treats a line continuation as a word break; bash joins the halves.
            del words[len(words) - made:]
            prev = word_value(word_nodes[k - 1], ctx.src, variables=scope)
            word = word_value(wn, ctx.src, variables=scope)
            words.append(Word(prev.value + word.value, prev.dynamic or word.dynamic))
            made = 1
            continue
        fields = word_fields(wn, ctx.src, variables=scope)
        words.extend(fields)
        made = len(fields)
    if not words:
        return []
    end = max([node.end_byte, *(r.end_byte for r in extra)])
    env = {**scope.env, **prefix_env}
    env_dyn = (scope.env_dynamic - set(prefix_env)) | prefix_dyn
    inv = Inv(words, scope.cwd, env, env_dyn, inh.dynamic, redirects, inh.in_pipeline,
              ctx.src[node.start_byte : end].decode("utf-8", "replace"), inh.reads_pipe,
              stdin_text=inh.stdin_text)  # fmt: skip
    return _follow(inv, scope, ctx, inh)


#: Builtins that assign the variables they name from input the guard cannot see.
_READERS = frozenset({"read", "mapfile", "readarray", "getopts"})


def run_function(inv: Inv, scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    """A call of a shell function defined earlier in the command: its body runs here, in the
    caller's shell (a ``cd`` in it moves the caller), with the call's words for its positional
    parameters (``$1``...) and the call's redirects."""
    body, src = scope.functions[inv.words[0].value]
    if ctx.depth >= MAX_DEPTH:
        ctx.reasons.append("commands nested too deeply")
        return []
    if len(ctx.out) >= MAX_INVOCATIONS:
        if "shell functions that run too many commands" not in ctx.reasons:
            ctx.reasons.append("shell functions that run too many commands")
        return []
    sub = Ctx(src, ctx.out, ctx.reasons, ctx.depth + 1, ctx.parse, ctx.scripts)
    outs = tuple(r for r in inv.redirects if r.op not in ("<", "<<", "<<-", "<<<", "<&"))
    saved = scope.args, scope.args_open
    zero = scope.args[0] if scope.args else Word("$0", True)
    scope.args, scope.args_open = (zero, *inv.words[1:]), inv.forced_dynamic
    try:
        return run_container(body, scope, sub, Inherit(outs, inh.in_pipeline,
                                                       inh.dynamic or inv.forced_dynamic))
    finally:
        scope.args, scope.args_open = saved


def _follow(inv: Inv, scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    special: Special = classify_special(inv, scope)
    if special.reason:
        ctx.reasons.append(special.reason)
    ctx.out.append(inv)
    stdout = [inv]
    head = inv.words[0] if inv.words else None
    if head is not None and not head.dynamic and head.value in scope.functions:
        return stdout + run_function(inv, scope, ctx, inh)
    if head is not None and head.value in _READERS:
        for w in inv.words[1:]:
            if not w.value.startswith("-") and w.value.isidentifier():
                scope.assign(w.value, "", dynamic=True, export=False)
    for text, dyn, same_scope, args in special.scripts:
        # eval and trap run in this shell; anything else in a new shell process
        sub_scope = scope if same_scope else scope.child(
            args, args_open=dyn, splits=not (inv.words and inv.words[0].value.endswith(
                ("zsh", "fish"))))
        # The script's commands inherit the shell's output redirects, not its stdin feed, and
        # the pipe it reads (`... | bash -c 'sh'`: that sh reads the pipe).
        outs = tuple(r for r in inv.redirects if r.op not in ("<", "<<", "<<-", "<<<", "<&"))
        sub_inh = Inherit(outs, inh.in_pipeline, inh.dynamic or dyn, inv.reads_pipe)
        stdout.extend(run_text(text, sub_scope, ctx, sub_inh, ctx.parse))
    if special.files:
        stdout.extend(_run_files(inv, special, scope, ctx, inh))
    for inner in special.inner:
        stdout.extend(_follow(inner, scope.copy(), ctx, inh))
    return stdout


def _run_files(inv: Inv, special: Special, scope: Scope, ctx: Ctx, inh: Inherit) -> list[Inv]:
    """The script files ``inv`` runs (``./x.sh``, ``bash x.sh``, ``source x.sh``), read by
    :mod:`branchkeeper.shell.scriptfile` and walked as ``bash -c`` (``source``: in this
    shell); one that cannot be read runs like any program, one a bound stops is unread."""
    from branchkeeper.shell.scriptfile import Reads, missing, read_script

    if ctx.scripts is None:
        ctx.scripts = Reads()
    reads: Reads = ctx.scripts
    stdout: list[Inv] = []
    for path, same_scope, args, by_path in special.files:
        if by_path and path is not None and ctx.out[:1] == [inv] and not inv.redirects \
                and missing(path):
            # `./git reset --hard` with no ./git: bash runs nothing (nothing earlier in the
            # command could have made it; a redirect would still open its file)
            ctx.out.remove(inv)
            return []
        text, why = read_script(path, reads, by_path=by_path)
        if why:
            ctx.reasons.append(why)
        if text is None:
            if same_scope and not why:
                ctx.reasons.append(f"{inv.words[0].value} runs commands from a file the guard "
                                   "does not read")
            continue
        sub_scope = scope if same_scope else scope.child(args, args_open=inv.forced_dynamic)
        outs = tuple(r for r in inv.redirects if r.op not in ("<", "<<", "<<-", "<<<", "<&"))
        sub_inh = Inherit(outs, inh.in_pipeline, inh.dynamic or inv.forced_dynamic,
                          inv.reads_pipe)
        reads.stack.append(str(path))
        try:
            stdout.extend(run_text(text, sub_scope, ctx, sub_inh, ctx.parse))
        finally:
            reads.stack.pop()
    return stdout
