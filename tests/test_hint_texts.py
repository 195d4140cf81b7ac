"""Every hint works: a hint is concrete, built from the values at hand, never a form to fill in.

The hints are read from the source with ``ast``: every ``hint=``/``fix=`` argument, a ``Finding``'s
fix, every name that holds a hint (``HINT``, ``hint = ...``), and every text that shows a
`cuenv ...` command in backticks (messages, renders, the TUI's toasts). An f-string's holes are the
values at hand; what is left must hold no placeholder (``NAME``, ``FILE``, ``X.Y``, ``<version>``, a
`cuenv ... ` elision). The commands they name are run as written by the tests that provoke them.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cuenv"
HOLE = "{}"  # an f-string's value: a value at hand, never a placeholder

# Upper-case words that are real names, not blanks: acronyms and variables (a name with `_` is a variable).
REAL = frozenset({"A", "CUDA", "GPU", "NVIDIA", "TLS", "YAML", "TOML", "JSON", "UTF", "PEP", "PTX", "SASS", "JIT",
                  "MPS", "WSL2", "VCS", "CDI", "PS1", "PWD", "CPU", "HTTP", "HTTPS", "OCI", "ABI", "NCCL", "FP16",
                  "FP32", "BF16", "RTX", "A100", "CUDAHOSTCXX", "INFO",
                  "O"})  # the TUI help's shifted o key
NOUNS = frozenset({"PATH", "URL"})  # the variable and the noun in prose; blanks in a command or after a flag
_WORD = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*(?!\w)")
_AFTER_FLAG = re.compile(r"(?<![\w-])--?[a-z][\w-]* ([A-Z][A-Z0-9]*)(?!\w)")
_ANGLED = re.compile(r"<[a-z][^<>]*>")
_SPAN = re.compile(r"`([^`]+)`")

# Texts whose blanks are justified ("file: [blanks]" -> why): no hint, and no message to a user.
ALLOWED: dict[str, str] = {
    "cuenv/cli/completion.py: ['DIR']": "a comment inside the fish completion script, naming a metavar",
}


def _texts(node: ast.expr) -> list[str]:
    """Every reading of a hint expression (both arms of a conditional), holes as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out = [""]
        for value in node.values:
            parts = _texts(value) if isinstance(value, ast.Constant) else [HOLE]
            out = [a + b for a in out for b in parts]
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in _texts(node.left) for b in _texts(node.right)]
    if isinstance(node, ast.IfExp):
        return _texts(node.body) + _texts(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [t for v in node.values for t in _texts(v)]
    return [HOLE]


def _is_hint_name(target: ast.expr) -> bool:
    name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
    return "hint" in name.lower() or name.lower().strip("_") == "fix"


def hints(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every hint in one module, and of every other text that shows a `cuenv` command or a flag
    with its value (a message, a render, a note)."""
    out: list[tuple[int, str]] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    # argparse's own texts: a metavar is the blank it names (`--cuda X.Y`), and help may say so
    docstrings |= {id(m) for n in ast.walk(tree) if isinstance(n, ast.Call) for kw in n.keywords
                   if kw.arg in ("help", "metavar", "description", "epilog", "usage") for m in ast.walk(kw.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            exprs = [kw.value for kw in node.keywords if kw.arg in ("hint", "fix")]
            if isinstance(node.func, ast.Name) and node.func.id == "Finding" and len(node.args) > 3:
                exprs.append(node.args[3])
            out += [(e.lineno, t) for e in exprs for t in _texts(e)]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_is_hint_name(t) for t in targets):
                out += [(node.value.lineno, t) for t in _texts(node.value)]
        elif isinstance(node, (ast.Constant, ast.JoinedStr)) and id(node) not in docstrings:
            out += [(node.lineno, t) for t in _texts(node) if "`cuenv " in t or _AFTER_FLAG.search(t)]
    return out


def placeholders(text: str) -> list[str]:
    """The blanks in a hint: what the user would have to fill in before it runs or reads as meant."""
    found = _ANGLED.findall(text)
    for span in _SPAN.findall(text):
        found += [w for w in _WORD.findall(span) if w not in REAL and "_" not in w]
        found += ["..."] if "..." in span.replace("[...]", "") else []
    prose = _SPAN.sub("", text)
    found += [w for w in _WORD.findall(prose) if w not in REAL | NOUNS and "_" not in w]
    found += [w for w in _AFTER_FLAG.findall(prose) if w in NOUNS]
    return sorted(set(found))


@functools.cache
def _all_hints() -> list[tuple[str, int, str]]:
    return [(str(path.relative_to(PACKAGE.parent)), line, text)
            for path in sorted(PACKAGE.rglob("*.py")) for line, text in hints(path)]


def test_no_hint_leaves_a_blank_to_fill_in() -> None:
    blanks = sorted({f"{path}:{line}: {placeholders(text)}: {text}" for path, line, text in _all_hints()
                     if placeholders(text) and f"{path}: {placeholders(text)}" not in ALLOWED})
    assert blanks == [], "\n".join(blanks)


def test_every_allowance_is_still_needed() -> None:
    used = {f"{path}: {placeholders(text)}" for path, _, text in _all_hints() if placeholders(text)}
    assert set(ALLOWED) <= used


@pytest.mark.parametrize(("text", "blanks"), [
    ("Create it: `cuenv create RECIPE -n {}`.", ["RECIPE"]),
    ("Run `cuenv create ... -n {} --force`.", ["..."]),
    ("Name the file: `cuenv allow PATH`.", ["PATH"]),
    ("Pin it, for example {}==<version>.", ["<version>"]),
    ("Pass --cuda X.Y, or pin it.", ["X", "Y"]),
    ("Add the page (-f URL).", ["URL"]),
    ("Write a line `env: NAME` in it.", ["NAME"]),
    ("Check the channel/index URL; put conda on PATH; CUENV_HOME is full.", []),
    ("Run `cuenv create torch-cu121 -n {}`; CUDA 12.1 needs NVIDIA driver 530.", []),
    ("Install py-rattler (`pip install py-rattler`) or use `- pip: [...]`.", []),
])
def test_the_scan_sees_blanks_and_passes_real_names(text: str, blanks: list[str]) -> None:
    assert placeholders(text) == blanks


def test_the_scan_reads_every_kind_of_hint(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('HINT = "a"\nraise E("m", hint=f"b {x} c")\nFinding("c", "error", "m", "d" if x else "e")\n'
                      'print("run `cuenv list`")\nfix = "f"\nraise E("pick one with --python X.Y")\n'
                      'p.add_argument("--cuda", metavar="X.Y", help="--cuda X.Y")\n', encoding="utf-8")
    assert sorted(t for _, t in hints(source)) == ["a", "b {} c", "d", "e", "f", "pick one with --python X.Y",
                                                   "run `cuenv list`"]


_FILLED = "zq"  # what a hole is read as; an objection to it is to the sample, not to the hint


def _commands() -> list[tuple[str, str]]:
    """Every `cuenv ...` command a hint or message names, an f-string's holes filled with a plain value."""
    return sorted({(f"{path}:{line}", span.replace(HOLE, _FILLED)) for path, line, text in _all_hints()
                   for span in _SPAN.findall(text) if span.startswith("cuenv ")})


def test_every_command_a_hint_names_exists_with_those_options() -> None:
    """The command and its subcommand exist, and argparse takes every option as written (a command named in prose
    may leave out what it requires: `cuenv image push` with --insecure, `cuenv create --from-lock` and a file)."""
    import shlex

    from cuenv.cli.parser import build_parser
    from cuenv.errors import UsageError

    parser = build_parser()
    wrong = []
    for where, command in _commands():
        try:
            _, extras = parser.parse_known_args(shlex.split(command)[1:])
        except UsageError as exc:
            named = "expected one argument" in exc.message and command.split()[-1].startswith("-")
            if "required" not in exc.message and _FILLED not in exc.message and not named:
                wrong.append(f"{where}: `{command}`: {exc.message}")
            continue
        except SystemExit:  # --help or --version: they exist
            continue
        if [e for e in extras if _FILLED not in e]:
            wrong.append(f"{where}: `{command}`: not options of it: {extras}")
    assert wrong == [], "\n".join(wrong)
    assert len(_commands()) > 100  # the scan sees the hints
    assert parser.parse_known_args(["list", "--nosuch"])[1] == ["--nosuch"]  # and the parse sees a wrong option
