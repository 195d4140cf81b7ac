"""The ways people install a Python CLI today, tried for real (issue 18): `uv tool install` of the
checkout and of a built wheel, `pipx install`, and a virtual environment, each on Debian's own /usr/bin/python3
(externally managed) when this machine has it. Each installed cuenv runs, knows how it was
installed, and its hint for adding a package is a command that works: the test runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.selfinstall import Installation, detect

REPO = Path(__file__).resolve().parents[2]
DEBIAN_PYTHON = Path("/usr/bin/python3")
SYSTEM_PYTHON = str(DEBIAN_PYTHON) if DEBIAN_PYTHON.exists() else sys.executable


def _uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "UV_PYTHON")}
    env.update(UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
               UV_CACHE_DIR=os.environ.get("CUENV_TEST_CACHE", str(REPO / ".test-cache")) + "/uv",
               UV_PYTHON_DOWNLOADS="never", NO_COLOR="1")
    return env


def _run(argv, env, timeout=600, cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert done.returncode == 0, f"{argv} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


def _how(python: Path, env) -> tuple[str, str]:
    code = "from cuenv.selfinstall import detect; i = detect(); print(i.kind); print(i.add('six'))"
    kind, add = _run([python, "-c", code], env).stdout.splitlines()
    return kind, add


# -- pure -------------------------------------------------------------------------------------------
def test_uv_tool_add_keeps_the_source_python_and_earlier_extras(tmp_path: Path):
    receipt = {"requirements": [{"name": "cuenv", "directory": "/src/cuenv"}, {"name": "six"}],
               "python": "/usr/bin/python3"}
    inst = Installation("uv-tool", tmp_path, "/x/bin/python", receipt)
    assert inst.add("textual>=0.80") == \
        "uv tool install --python /usr/bin/python3 --with six --with 'textual>=0.80' /src/cuenv"


def test_each_kind_names_its_own_command(tmp_path: Path):
    (tmp_path / "bin").mkdir()
    assert Installation("pipx", tmp_path, "p").add("x") == "pipx inject cuenv x"
    assert Installation("venv", tmp_path, "/v/bin/python").add("x") == "uv pip install --python /v/bin/python x"
    (tmp_path / "bin" / "pip").touch()
    assert Installation("venv", tmp_path, "/v/bin/python").add("x") == "/v/bin/python -m pip install x"
    assert "pip install" not in Installation("externally-managed", tmp_path, "/usr/bin/python3").add("x")


def test_detects_a_receipt_pipx_and_a_venv(tmp_path: Path):
    (tmp_path / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "cuenv", directory = "/s" }]\n')
    assert detect(tmp_path, "/usr").kind == "uv-tool"
    other = tmp_path / "p"
    other.mkdir()
    (other / "pipx_metadata.json").write_text("{}")
    assert detect(other, "/usr").kind == "pipx"
    assert detect(tmp_path / "nothing", "/usr").kind == "venv"


@pytest.mark.skipif(not DEBIAN_PYTHON.exists(), reason="no /usr/bin/python3 here")
def test_debians_python_is_externally_managed_and_pip_refuses(tmp_path: Path):
    """Why the README does not say `python3 -m pip install .` (PEP 668)."""
    env = {**_env(tmp_path), "PYTHONPATH": str(REPO)}
    kind, add = _how(DEBIAN_PYTHON, env)
    if kind != "externally-managed":
        pytest.skip(f"{DEBIAN_PYTHON} is not externally managed here ({kind})")
    assert "uv tool install" in add
    pip = subprocess.run([DEBIAN_PYTHON, "-m", "pip", "install", "--dry-run", "six"], env=env,
                         capture_output=True, text=True, timeout=120)
    if "No module named pip" not in pip.stderr:
        assert pip.returncode != 0 and "externally-managed-environment" in pip.stderr


# -- real installs (PyPI for the dependencies) ---------------------------------------------------------
@pytest.mark.network
@pytest.mark.parametrize("source", ["checkout", "wheel"])
def test_uv_tool_install(source: str, tmp_path: Path):
    env = _env(tmp_path)
    target: Path = REPO
    if source == "wheel":
        _run([_uv(), "build", "--wheel", "-o", tmp_path / "dist", REPO], env)
        target = next((tmp_path / "dist").glob("cuenv-*.whl"))
    _run([_uv(), "tool", "install", "--python", SYSTEM_PYTHON, target], env, cwd=tmp_path)
    exe = tmp_path / "bin" / "cuenv"
    assert _run([exe, "--version"], env).stdout.startswith("cuenv ")
    assert "usage: cuenv" in _run([exe, "tui", "--help"], env).stdout
    python = tmp_path / "tools" / "cuenv" / "bin" / "python"
    _run([python, "-c", "import textual"], env)  # the TUI comes with cuenv, no extra
    kind, add = _how(python, env)
    assert kind == "uv-tool"
    assert add.startswith("uv tool install") and add.endswith(str(target))
    _run(add.split(), {**env, "PATH": f"{Path(_uv()).parent}:{env['PATH']}"}, cwd=tmp_path)  # the hint works
    _run([python, "-c", "import six, cuenv"], env)
    assert _run([exe, "--version"], env).stdout.startswith("cuenv ")


@pytest.mark.network
def test_pipx_install(tmp_path: Path):
    """`pipx install` of the checkout (Debian's pipx and Python when there), its hint run for real."""
    pipx = shutil.which("pipx")
    if pipx is None:
        pytest.skip("pipx is not installed (Debian: apt install pipx)")
    env = {**_env(tmp_path), "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
           "PIPX_DEFAULT_PYTHON": SYSTEM_PYTHON, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run([pipx, "install", REPO], env, cwd=tmp_path, timeout=900)
    exe = tmp_path / "bin" / "cuenv"
    assert _run([exe, "--version"], env).stdout.startswith("cuenv ")
    assert "usage: cuenv" in _run([exe, "tui", "--help"], env).stdout
    python = tmp_path / "pipx" / "venvs" / "cuenv" / "bin" / "python"
    _run([python, "-c", "import textual"], env)  # the TUI comes with cuenv, no extra
    kind, add = _how(python, env)
    assert (kind, add) == ("pipx", "pipx inject cuenv six")
    _run([pipx, *add.split()[1:]], env, timeout=900)  # the hint works
    _run([python, "-c", "import six, cuenv"], env)


@pytest.mark.network
def test_venv_route(tmp_path: Path):
    """README's route: python3 -m venv, then the venv's pip installs the checkout."""
    env = _env(tmp_path)
    venv = tmp_path / "venv"
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", venv], env=env, capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        if "ensurepip" in made.stdout + made.stderr:
            pytest.skip("this Python has no venv/ensurepip (Debian: apt install python3-venv)")
        raise AssertionError(made.stderr)
    _run([venv / "bin" / "pip", "install", "-q", REPO], {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}, timeout=900)
    assert _run([venv / "bin" / "cuenv", "--version"], env).stdout.startswith("cuenv ")
    kind, add = _how(venv / "bin" / "python", env)
    assert (kind, add) == ("venv", f"{venv / 'bin' / 'python'} -m pip install six")
    _run(add.split(), env)
    _run([venv / "bin" / "python", "-c", "import six, textual"], env)


def test_no_hint_tells_a_user_to_pip_install_an_extra():
    """The hints name commands from cuenv.selfinstall, never `pip install 'cuenv[...]'`."""
    offenders = []
    for path in (REPO / "cuenv").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "pip install 'cuenv[" in text or 'pip install "cuenv[' in text or "pip install cuenv[" in text:
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders
