"""The package layout holds (issue 13): no import circles, the core never imports its edges, and the
core packages import in one declared order (issue 24 §5).

Imports are read from the source with ``ast``, function-level imports included: a lazy import is
still a dependency, and a circle through one is still a circle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cuenv"
EDGES = ("cuenv.cli", "cuenv.commands", "cuenv.tui")  # the only packages allowed to import the core
CORE = ("cuenv.knowledge", "cuenv.machine", "cuenv.recipes", "cuenv.envs", "cuenv.engines", "cuenv.lock",
        "cuenv.activation", "cuenv.export", "cuenv.doctor", "cuenv.binaries", "cuenv.trust")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The cuenv modules ``name`` imports, anywhere in its body."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("cuenv"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
    out.discard(name)
    return {m for m in out if m in known}


def graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _imports(name, path, known) for name, path in mods.items()}


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_core_never_imports_the_cli_the_commands_or_the_tui() -> None:
    arrows = sorted(f"{src} -> {dst}" for src, dsts in graph().items() if _in(src, CORE)
                    for dst in dsts if _in(dst, EDGES))
    assert arrows == []


def test_the_tui_calls_the_core_not_the_commands() -> None:
    arrows = sorted(f"{src} -> {dst}" for src, dsts in graph().items() if _in(src, ("cuenv.tui",))
                    for dst in dsts if _in(dst, ("cuenv.commands",)) or dst == "cuenv.cli.main")
    assert arrows == []


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    g = graph()
    # A package's __init__ re-exporting its own modules is not a circle between modules.
    g = {m: {d for d in ds if not (m.startswith(d + ".") and d in g)} for m, ds in g.items()}
    assert _cycles(g) == []


# The core's layers, lowest first: a module imports only from its own layer or a lower one, lazy imports
# inside functions included (docs/reference/architecture.md draws the same order). A name in a layer is a
# package or one module; a module is placed by the longest name that holds it. cuenv.envs.folder is the
# environment folder's map: every layer above it may name those paths (and tell a shim), only envs/ writes them.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cuenv.errors", "cuenv.atomic", "cuenv.runner", "cuenv.shipped", "cuenv.result"),
    ("cuenv.trust",),
    ("cuenv.envs.folder",),
    ("cuenv.knowledge",),
    ("cuenv.machine",),
    ("cuenv.activation",),
    ("cuenv.engines",),
    ("cuenv.lock",),
    ("cuenv.recipes",),
    ("cuenv.binaries",),
    ("cuenv.envs",),
    ("cuenv.export", "cuenv.doctor"),
)


def layer_of(module: str) -> int | None:
    placed = [(len(name), i) for i, names in enumerate(LAYERS) for name in names
              if module == name or module.startswith(name + ".")]
    return max(placed)[1] if placed else None


def test_every_core_package_has_a_layer() -> None:
    assert [p for p in CORE if layer_of(p) is None] == []


def upward(g: dict[str, set[str]]) -> list[str]:
    return sorted(f"{src} -> {dst}" for src, dsts in g.items() for dst in dsts
                  if (a := layer_of(src)) is not None and (b := layer_of(dst)) is not None and b > a)


def test_the_core_imports_only_downward() -> None:
    assert upward(graph()) == []


def test_an_upward_import_is_caught_and_the_folder_map_is_not_one() -> None:
    g = {"cuenv.knowledge.compat": {"cuenv.machine.model"}, "cuenv.engines.venv": {"cuenv.envs.folder"},
         "cuenv.lock.io": {"cuenv.envs.locksync"}, "cuenv.envs.create": {"cuenv.lock.model"}}
    assert upward(g) == ["cuenv.knowledge.compat -> cuenv.machine.model", "cuenv.lock.io -> cuenv.envs.locksync"]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_error_guard_around_cuenv_itself(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        ):
            guarded = [n for n in ast.walk(ast.Module(body=node.body, type_ignores=[]))
                       if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("cuenv") or
                       isinstance(n, ast.Import) and any(a.name.startswith("cuenv") for a in n.names)]
            assert not guarded, f"{path}:{node.lineno} guards cuenv's own import"


_SUPPRESSION = re.compile(r"#\s*(noqa\b[:\s]*[A-Z0-9, ]*|type:\s*ignore(\[[\w, -]+\])?)(?P<rest>.*)$")


def _code_files() -> list[Path]:
    root = PACKAGE.parent
    return sorted([*PACKAGE.rglob("*.py"), *(root / "tests").rglob("*.py"), *(root / "benchmarks").rglob("*.py")])


def test_every_suppression_carries_its_reason() -> None:
    """`# noqa: X - why` or `# type: ignore[x]  # why`: a bare suppression hides the next reader's question."""
    bare = []
    for path in _code_files():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = _SUPPRESSION.search(text)
            if m and "noqa" + "-free" not in text and not re.match(r"\s*(-|--|#)?\s*\S", m["rest"] or ""):
                bare.append(f"{path.relative_to(PACKAGE.parent)}:{number}")
    assert bare == []


# -- types (issue 24 §6) --------------------------------------------------------------------------
_ANN_COMMENT = re.compile(r"noqa:[^#\n]*\bANN\d")
# What `strict = true` turns on per module (mypy --help lists them); an override that sets any of these
# the other way, ignores errors or disables codes relaxes strict for the modules it names.
_STRICT_FLAGS = {"disallow_any_generics": True, "disallow_subclassing_any": True, "disallow_untyped_calls": True,
                 "disallow_untyped_defs": True, "disallow_incomplete_defs": True, "check_untyped_defs": True,
                 "disallow_untyped_decorators": True, "warn_unused_ignores": True, "warn_return_any": True,
                 "implicit_reexport": False, "strict_equality": True, "extra_checks": True, "ignore_errors": False}


def _mypy_config() -> dict[str, Any]:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # a dependency on Python 3.10
        import tomli as tomllib
    return tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _matches(pattern: str, module: str) -> bool:
    """mypy's per-module patterns: ``a.b`` names one module, ``a.b.*`` it and everything under it."""
    if pattern.endswith(".*"):
        return module == pattern[:-2] or module.startswith(pattern[:-1])
    return module == pattern


def test_no_type_is_written_as_a_comment() -> None:
    """A parameter or return type goes in the annotation, where mypy checks it, not in a noqa: ANN comment."""
    hits = [f"{path.relative_to(PACKAGE.parent)}:{number}" for path in sorted(PACKAGE.rglob("*.py"))
            for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _ANN_COMMENT.search(text)]
    assert hits == []


def _reexports(tree: ast.Module) -> list[str]:
    """The names a module's ``__all__`` lists that it imports from another cuenv module."""
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                and (n.level or (n.module or "").startswith("cuenv")) for a in n.names}
    listed = [e.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, (ast.List, ast.Tuple))
              and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
              for e in n.value.elts if isinstance(e, ast.Constant)]
    return [name for name in listed if name in imported]


def test_a_name_has_one_import_path() -> None:
    """A module exports only what it defines: `Finding` from cuenv.knowledge.findings, never also from stack.py.
    A package's ``__init__`` may gather its modules' names (its public face)."""
    found = [f"{path.relative_to(PACKAGE.parent)}: {names}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "__init__.py" and (names := _reexports(ast.parse(path.read_text(encoding="utf-8"))))]
    assert found == []
    assert _reexports(ast.parse('from cuenv.x import A, B\nfrom .y import C\n__all__ = ["A", "C", "D"]')) == ["A", "C"]


def test_every_package_is_core_or_an_edge() -> None:
    """A new package joins CORE or EDGES here (and so the rules above, and mypy's strict list below)."""
    packages = {f"cuenv.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    assert packages == set(CORE) | set(EDGES)


def test_mypy_checks_the_core_as_strict_does() -> None:
    """`mypy` (.ci/run) runs with ``strict = true``; only the edges may relax it, so every core module
    (envs/ included) is held to ``mypy --strict``."""
    config = _mypy_config()
    assert config.get("strict") is True and config.get("files") == ["cuenv"]
    overrides = config.get("overrides", [])
    assert isinstance(overrides, list)
    relaxed = [pattern for o in overrides
               if o.get("disable_error_code") or any(k in o and o[k] != v for k, v in _STRICT_FLAGS.items())
               for pattern in ([o["module"]] if isinstance(o["module"], str) else o["module"])]
    assert sorted(relaxed) == sorted(f"{edge}.*" for edge in EDGES)
    lenient = sorted(m for m in _modules() if any(_matches(p, m) for p in relaxed) and not _in(m, EDGES))
    assert lenient == []
