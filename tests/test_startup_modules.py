"""What each everyday command imports (issue 29): counted in modules, never timed.

Start-up is guarded here by what a command loads, so that a heavy import slipping into `--help`,
`list` or `check` fails a test on any machine, loaded or not; the time itself is measured by
benchmarks/bench_startup.py as paired runs against `python -c pass`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Modules a command must not load: each costs more than it is worth on that path (measured with
# `python -X importtime`): the TUI, the solvers, the YAML parser, the mirror settings of uv/pip/conda
# (TOML and INI readers), and `dataclasses`, which imports `inspect` (as much CPU as a bare start).
HEAVY = ("textual", "rich", "rattler", "yaml", "tomllib", "configparser", "cuenv.engines.mirrors", "dataclasses", "hashlib")
# What the fast path (cuenv.cli.quick) spares a plain command line: the argparse parser with its help
# formatter (shutil, gettext's locale), platformdirs (tempfile, random) where XDG answers, and `typing`
# (the modules on this path import it for type checkers only: `TYPE_CHECKING = False`).
PARSER = ("argparse", "cuenv.cli.parser", "shutil", "locale", "platformdirs", "typing")

PROBE = """
import json, sys
sys.argv = ["cuenv", *json.loads(sys.argv[1])]
from cuenv.cli import main as m
try:
    m.main(sys.argv[1:])
finally:
    sys.__stdout__.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def _modules(argv: list[str], env: dict[str, str]) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True, env=env, check=False)
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


@pytest.fixture()
def env(tmp_path, monkeypatch):
    import os

    return dict(os.environ, CUENV_HOME=str(tmp_path / "home"), CUENV_CONFIG=str(tmp_path / "none.yaml"))


@pytest.fixture()
def one_env(env, tmp_path):
    """A store with one complete environment of the recorded shape, its verdict cached for this machine
    (`list` reads its meta and that verdict; a stale one is recomputed, which needs the knowledge)."""
    from cuenv.machine.fingerprint import fingerprint

    meta = tmp_path / "home" / "envs" / "e1" / ".cuenv"
    meta.mkdir(parents=True)
    (meta / "meta.json").write_text(json.dumps({
        "schema": 1, "name": "e1", "recipe": {"name": "cuda-12.1"}, "engine": "venv", "cuda": "12.1",
        "resolved": {"libcudart": "12.1.105"}, "stack": {"cuda": "12.1"}, "layout": {"prefix": str(meta.parent), "kind": "venv"},
        "tools": {"nvcc": {"source": "shim", "path": None, "toolkit": None}},
        "validation": {"fingerprint": fingerprint(env), "findings": []}}))
    (meta / "complete").write_text("")
    return env


@pytest.mark.parametrize(("argv", "allowed"), [
    (["--help"], set()),
    (["list"], set()),
    (["list", "--json"], set()),
    (["info", "e1"], set()),
])
def test_everyday_commands_load_nothing_heavy(argv, allowed, one_env):
    loaded = _modules(argv, one_env)
    assert not (set(HEAVY) - allowed) & loaded, sorted((set(HEAVY) - allowed) & loaded)


@pytest.mark.parametrize(("argv", "allowed"), [(["list"], set()), (["list", "--json", "-q"], set()), (["info", "e1"], {"typing"})])
def test_plain_lines_build_no_parser(argv, allowed, one_env):
    """A plain `list` or `info NAME` takes the fast path: no argparse, no help formatter, no platformdirs
    (and `list` no typing)."""
    loaded = _modules(argv, one_env)
    assert not (set(PARSER) - allowed) & loaded, sorted((set(PARSER) - allowed) & loaded)


# What `check`, `suggest` and `info` may not load besides HEAVY (issue 29): the parser, `typing` (type
# checkers only), and what only probing, a subprocess or a download needs. They read the knowledge from its
# shipped form (cuenv.shipped), the machine from CUENV_DRIVER/CUENV_GPUS or the flags.
EVERYDAY = (*HEAVY, *PARSER, "logging", "subprocess", "packaging", "difflib", "inspect", "cuenv.machine.probes",
            "cuenv.runner")
MACHINE = {"CUENV_DRIVER": "550.54.14", "CUENV_GPUS": "8.6"}  # this machine, as benchmarks/bench_startup.py runs it
# The shipped data read once, as a user's first run after an install does (cuenv.shipped keeps the parse
# beside the bytecode, so not under PYTHONDONTWRITEBYTECODE): the guards hold for every later run.
WARM = """
from cuenv.knowledge import gpus, matrix
from cuenv.recipes.catalogue import Catalogue, builtin_dir
matrix.kb(), gpus._data(), Catalogue(builtin_dir()).all()
"""


@pytest.fixture(scope="module")
def warm() -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", WARM], env=env, check=True)


@pytest.mark.parametrize("argv", [
    ["check", "cuda-12.1"],  # this machine
    ["check", "cuda-12.1", "--json"],
    ["check", "torch-cu121", "--driver", "470.57", "--cc", "8.6"],  # a recipe for a described machine, with a fix
    ["check", "cuda==12.1", "--driver", "535.104.05", "--cc", "8.6", "--gcc", "13"],  # a spec
    ["check", "torch==2.1.0+cu121", "--driver", "470.82.01", "--gpu", "RTX 4090"],
    ["suggest", "torch"],
    ["suggest", "--driver", "550.54.14", "--cc", "6.1", "--cc", "8.9"],
])
def test_check_and_suggest_load_nothing_they_do_not_use(argv, env, warm):
    loaded = _modules(argv, dict(env, **MACHINE))
    assert not set(EVERYDAY) & loaded, sorted(set(EVERYDAY) & loaded)


def test_info_loads_nothing_it_does_not_use(env, tmp_path, warm):
    """`cuenv info`: no parser, typing or dataclasses. Toolkits are looked for in an empty folder and on a
    PATH without nvcc: a wrapper script there is asked its version (cuenv.runner, one subprocess)."""
    (tmp_path / "roots").mkdir()
    bare = dict(env, **MACHINE, CUENV_TOOLKIT_ROOTS=str(tmp_path / "roots"), PATH=str(Path(sys.executable).parent))
    loaded = _modules(["info"], bare)
    allowed = {"shutil"}  # shutil.which: the nvcc on PATH, conda and uv
    assert not (set(EVERYDAY) - allowed) & loaded, sorted((set(EVERYDAY) - allowed) & loaded)


def test_check_of_a_recipe_builds_no_parser(env):
    loaded = _modules(["check", "cuda-12.1", "--driver", "550.54.14", "--cc", "8.6"], env)
    assert not {"cuenv.cli.parser", "platformdirs", "locale"} & loaded


def test_help_builds_no_subcommand_parser(env):
    """`cuenv --help` lists the commands from a static table: no command module is imported."""
    loaded = _modules(["--help"], env)
    assert not {m for m in loaded if m.startswith("cuenv.commands.")}
    assert "typing" not in loaded  # the parser and the help text name types for type checkers only


@pytest.mark.parametrize("argv", [["list"], ["list", "--sys"]])  # the fast path, and argparse (an abbreviation)
def test_a_command_configures_only_its_own_parser(argv, env):
    loaded = _modules(argv, env)
    assert {m for m in loaded if m.startswith("cuenv.commands.")} == {"cuenv.commands.list_"}


def test_check_of_a_recipe_resolves_no_mirrors(env):
    """`cuenv check RECIPE` downloads nothing: uv's, pip's and conda's settings are not read."""
    loaded = _modules(["check", "cuda-12.1", "--driver", "550.54.14", "--cc", "8.6"], env)
    assert not {"cuenv.engines.mirrors", "configparser", "textual", "rattler"} & loaded


def test_a_cuenv_lockfile_is_read_without_the_other_tools_readers(env, tmp_path):
    """`create --from-lock cuenv.lock` reads cuenv's own format: not the readers of conda-lock, pixi, pylock
    or uv files (their TOML, PEP 508 and PEP 751 parsers), nor the framework index route (issue 29)."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "lockfile.md").read_text(encoding="utf-8")
    lock = tmp_path / "cuenv.lock"
    lock.write_text(doc.split("```yaml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    loaded = _modules(["create", "--from-lock", str(lock), "-n", "x", "--dry-run", "--target-driver", "550.54.14"], env)
    assert "cuenv.lock.model" in loaded  # the probe did read the lock
    assert not {"cuenv.lock.foreign", "packaging.requirements", "packaging.pylock", "tomllib",
                "cuenv.engines.pypiroute"} & loaded, sorted(loaded)


def test_a_lockfile_read_again_needs_no_yaml(env, tmp_path):
    """The second read of the same lock takes its kept parse (cuenv.keptparse): no PyYAML (issue 29)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "lockfile.md").read_text(encoding="utf-8")
    lock = tmp_path / "cuenv.lock"
    lock.write_text(doc.split("```yaml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    argv = ["create", "--from-lock", str(lock), "-n", "x", "--dry-run", "--target-driver", "550.54.14"]
    env = dict(env, CUENV_CACHE_DIR=str(tmp_path / "cache"))
    assert "yaml" in _modules(argv, env)
    assert "yaml" not in _modules(argv, env)


def test_a_shipped_recipes_python_range_needs_no_packaging(warm):
    """A venv create asks whether the recipe allows this interpreter: answered with the kept check."""
    import os

    probe = ("import sys\nfrom cuenv.envs.create import choose_python\nfrom cuenv.recipes.catalogue import Catalogue, builtin_dir\n"
             "recipe = Catalogue(builtin_dir()).find('cuda-12.1')\n"
             "print(choose_python(recipe, None, None, 'venv'), 'packaging' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["None", "False"], done.stderr
