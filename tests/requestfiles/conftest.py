"""Fixtures for creates from project files: the lockfile tests' local conda channel (real NVIDIA libraries
repackaged, tests/engines/channel.py) and a project folder as the working directory."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

_LOCKFILES = Path(__file__).resolve().parent.parent / "lockfiles" / "conftest.py"


def _channel_builder():
    spec = importlib.util.spec_from_file_location("_lockfiles_channel", _LOCKFILES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="session")
def local_channel() -> Path:
    module = _channel_builder()
    return module._build(module._channel.DEFAULT_CACHE)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def envs() -> Path:
    return Path(os.environ["CUENV_HOME"]) / "envs"


@pytest.fixture
def no_conda(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """An environment with no conda, mamba or micromamba reachable: `auto` must choose by itself."""
    for name in ("CONDA_EXE", "MAMBA_EXE"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    environ = dict(os.environ, PATH=str(empty))
    return environ
