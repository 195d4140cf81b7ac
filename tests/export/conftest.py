"""Fixtures for export tests: real environments built by `cuenv create` (venv: NVIDIA's wheels from
PyPI; rattler: the local test channel plus a tiny `python` package, so that a recipe's Python spec
resolves), and a recipe whose variable holds every character that quoting gets wrong."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "engines"))

import channel as _channel  # noqa: E402

# Space, both quotes, $VAR, $(cmd), backslash (also trailing), ${x}, [tcl], a glob, UTF-8, braces.
HOSTILE = "it's \"q\" $HOME $(id) `id` a\\b ${x} [expr 1] *.py ünï {brace} end\\"


def cuenv(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    run_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run([sys.executable, "-m", "cuenv", *args], capture_output=True, text=True, env=run_env)
    if check and done.returncode != 0:
        raise AssertionError(f"cuenv {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


def recipe_with_env(dest: Path, *, name: str, conda_channel: Path | None = None) -> Path:
    """cuda-12.1's recipe as `name`, with HOSTILE in a variable; with a channel, a conda-only recipe."""
    import yaml

    data = yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())
    data["name"] = name
    data["env"] = {"CUENV_HOSTILE": HOSTILE}
    if conda_channel is not None:
        data["install"] = {"conda": {"channels": [str(conda_channel)], "nvcc": False,
                                     "specs": ["cuda-version=12.1", "cuda-cudart", "cuda-nvcc-tools", "cuenv-hello"]}}
        data["smoke_test"] = {"python": "import ctypes\nctypes.CDLL('libcudart.so.12')\nprint('ok')\n"}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


@pytest.fixture(scope="session")
def export_channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The engine tests' channel plus `python` 3.11 (site-packages only: the recipes ask for a Python)."""
    import asyncio

    import rattler.index

    root = _channel.copy_channel(_channel.cached_channel(), tmp_path_factory.mktemp("channel") / "ch")
    py = _channel.Spec("python", "3.11.0", "linux-64", files=(
        _channel.Payload("lib/python3.11/site-packages/cuenv-test.txt", text="a test python's site-packages\n"),))
    _channel.build_archive(py, {}, root / py.subdir)
    asyncio.run(rattler.index.index_fs(root, write_zst=False, write_shards=False))
    return root


@pytest.fixture
def recipes(tmp_path: Path, export_channel: Path) -> Path:
    folder = tmp_path / "recipes"
    recipe_with_env(folder, name="hostile-12.1")
    recipe_with_env(folder, name="conda-12.1", conda_channel=export_channel)
    return folder


@pytest.fixture
def venv_env(recipes: Path) -> str:
    """A real venv with NVIDIA's CUDA 12.1 runtime and ptxas wheels, and the hostile variable."""
    cuenv("--recipes", str(recipes), "create", "hostile-12.1", "--engine", "venv")
    return "hostile-12.1"


@pytest.fixture
def conda_env(recipes: Path) -> str:
    cuenv("--recipes", str(recipes), "create", "conda-12.1", "--engine", "rattler")
    return "conda-12.1"


def meta_of(name: str) -> dict:
    return json.loads((Path(os.environ["CUENV_HOME"]) / "envs" / name / ".cuenv" / "meta.json").read_text())


def have(*tools: str) -> bool:
    return all(shutil.which(t) for t in tools)
