"""Fixtures for creates from project files: the lockfile tests' local conda channel (real NVIDIA libraries
repackaged, tests/engines/channel.py) and a project folder as the working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.engines import channel as ch
from tests.lockfiles import lockchannel


@pytest.fixture(scope="session")
def local_channel() -> Path:
    return lockchannel.build()


@pytest.fixture(scope="session")
def venv_python_channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-package channel whose ``python`` is this interpreter behind a venv's pyvenv.cfg: a prefix that
    installs it has a working ``bin/python`` (the lock channel's python is metadata only), so a pip layer
    can really be installed into it. Built per run: the symlink points at this machine's interpreter."""
    import asyncio
    import sys

    import rattler.index

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    cfg = (f"home = {Path(sys.executable).parent}\ninclude-system-site-packages = false\n"
           f"version = {sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}\n")
    spec = ch.Spec("python", f"{version}.99", "linux-64", build="h0_venv", files=(
        ch.Payload("pyvenv.cfg", text=cfg),
        ch.Payload("bin/python", symlink=sys.executable),
        ch.Payload(f"lib/python{version}/site-packages/.cuenv-test", text="site-packages of the stand-in\n"),
    ))
    root = tmp_path_factory.mktemp("venv-python-channel")
    ch.build_archive(spec, {}, root / "linux-64")
    (root / "noarch").mkdir()
    asyncio.run(rattler.index.index_fs(root, write_zst=False, write_shards=False))
    return root


@pytest.fixture
def no_conda(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """An environment with no conda, mamba or micromamba reachable: `auto` must choose by itself."""
    import sys

    from cuenv.engines import CONDA_FAMILY, find_conda_executable

    for name in ("CONDA_EXE", "MAMBA_EXE"):
        monkeypatch.delenv(name, raising=False)
    # uv still needs an interpreter on PATH to resolve for another Python version.
    environ = dict(os.environ, PATH=os.pathsep.join((str(Path(sys.executable).parent), "/usr/bin", "/bin")))
    if any(find_conda_executable(tool, environ) for tool in CONDA_FAMILY):
        pytest.skip("a conda executable is installed system-wide")
    return environ
