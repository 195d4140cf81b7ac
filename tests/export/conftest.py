"""Fixtures for export tests: real environments built by `cuenv create` (venv: NVIDIA's wheels from
PyPI; rattler: the local test channel plus a tiny `python` package, so that a recipe's Python spec
resolves), and a recipe whose variable holds every character that quoting gets wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines import channel as _channel
from tests.export.exportkit import cuenv, recipe_with_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


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
