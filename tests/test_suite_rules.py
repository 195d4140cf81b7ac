"""Rules for the suite itself (issue 24 §7), read from the source with ``ast``.

Tests reach their helpers as packages (``from tests.engines import channel``): no ``sys.path`` edits,
no loading a file by its path. No assertion compares a wall-clock time: a loaded machine must not fail a
test, so a speed is measured in benchmarks/ (paired runs) and a test checks the property behind it
(the guard that fired, the bytes read, the work done). A timeout that only stops a hang is fine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns", "process_time"}
# (file, what) -> why the test needs it. Empty: no test of cuenv's own behaviour needs path surgery today;
# one that does (say, cuenv's handling of a module found on a user's sys.path) names itself and why here.
PATH_SURGERY_ALLOWED: dict[tuple[str, str], str] = {}


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "corpus/files" not in p.as_posix())


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def path_surgery(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each edit of sys.path and each module loaded from a file path."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name.startswith("sys.path.") or name.endswith(("spec_from_file_location", "SourceFileLoader",
                                                                "run_path", "addsitedir")):
                found.append((node.lineno, name))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, "sys.path =") for t in targets if _dotted(t) == "sys.path"
                      or (isinstance(t, ast.Subscript) and _dotted(t.value) == "sys.path")]
    return found


def _reads_clock(node: ast.AST, tainted: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _dotted(sub.func).split(".")[-1] in CLOCKS \
                and _dotted(sub.func).split(".")[0] in ("time", "monotonic", "perf_counter"):
            return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def timed_assertions(tree: ast.AST) -> list[int]:
    """Lines of ``assert`` statements that compare a value read from a clock (directly, or through
    names assigned from one in the same function: ``elapsed = time.monotonic() - start``)."""
    found = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        tainted: set[str] = set()
        changed = True
        while changed:  # names from names from a clock: until nothing new
            changed = False
            for node in ast.walk(scope):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                        and _reads_clock(node.value, tainted):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for name in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)} - tainted:
                        tainted.add(name)
                        changed = True
                if isinstance(node, ast.Call) and _dotted(node.func).endswith(".append") and \
                        any(_reads_clock(a, tainted) for a in node.args):  # times.append(time.monotonic())
                    base = _dotted(node.func).rsplit(".", 1)[0]
                    if base and base not in tainted:
                        tainted.add(base)
                        changed = True
        found += [node.lineno for node in ast.walk(scope) if isinstance(node, ast.Assert)
                  and any(isinstance(c, ast.Compare) and _reads_clock(c, tainted) for c in ast.walk(node.test))]
    return sorted(set(found))


def test_no_test_edits_sys_path_or_loads_a_file_as_a_module() -> None:
    found = []
    for path in _sources():
        rel = path.relative_to(TESTS.parent).as_posix()
        found += [f"{rel}:{line}: {what}" for line, what in path_surgery(ast.parse(path.read_text(encoding="utf-8")))
                  if (rel, what) not in PATH_SURGERY_ALLOWED]
    assert not found, "import helpers as packages (from tests.engines import channel), not by path:\n" + "\n".join(found)


def test_no_assertion_compares_elapsed_time() -> None:
    found = []
    for path in _sources():
        rel = path.relative_to(TESTS.parent).as_posix()
        found += [f"{rel}:{line}" for line in timed_assertions(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, ("a timed assertion fails on a loaded machine: check the property (the guard that fired, the work "
                       "done) and measure the speed in benchmarks/:\n" + "\n".join(found))


@pytest.mark.parametrize(("source", "lines"), [
    ("import time\ndef t():\n    start = time.monotonic()\n    run()\n    assert time.monotonic() - start < 1.5\n", [5]),
    ("from time import perf_counter\ndef t():\n    t0 = perf_counter()\n    run()\n    elapsed = perf_counter() - t0\n"
     "    took = elapsed * 1000\n    assert took < 20, took\n", [7]),
    ("import time\ndef t():\n    asked = []\n    asked.append(time.monotonic())\n    assert time.time() - asked[0] < 1\n", [5]),
    ("import time\ndef t():\n    deadline = time.monotonic() + 30\n    while busy() and time.monotonic() < deadline:\n"
     "        pass\n    assert done()\n", []),  # a bound on a wait, not a verdict
    ("def t(proc):\n    assert proc.wait(timeout=60) == 0\n", []),  # a hang guard
])
def test_the_timed_assertion_scan_sees_them(source: str, lines: list[int]) -> None:
    assert timed_assertions(ast.parse(source)) == lines


@pytest.mark.parametrize(("source", "count"), [
    ("import sys\nsys.path.insert(0, 'x')\nsys.path.append('y')\nsys.path[:0] = ['z']\n", 3),
    ("import importlib.util\nspec = importlib.util.spec_from_file_location('m', 'm.py')\n", 1),
    ("from tests.engines import channel\nimport sys\nprint(sys.path)\n", 0),
])
def test_the_path_scan_sees_them(source: str, count: int) -> None:
    assert len(path_surgery(ast.parse(source))) == count
