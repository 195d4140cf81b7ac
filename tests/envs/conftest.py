"""Fixtures for the environment tests: the CLI as a real process, a local conda channel recipe,
and a conflicting "system CUDA" built by the test (never this machine's own)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.engines import channel as _channel
from tests.envs.envkit import TESTS


@pytest.fixture
def cuenv(isolated: Path):
    """Run `python -m cuenv ...` in a child process with this test's CUENV_HOME; returns CompletedProcess."""

    def invoke(*argv: str, env: dict[str, str] | None = None, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cuenv", *argv], capture_output=True, text=True,
                              env=dict(os.environ) if env is None else env, timeout=timeout, **kw)

    return invoke


@pytest.fixture(scope="session")
def conda_channel() -> Path:
    return _channel.cached_channel()


@pytest.fixture
def local_recipes(tmp_path: Path, conda_channel: Path) -> Path:
    """A user recipe folder with `local-cuda-12.1`: the cuda-12.1 recipe installed from the local channel."""
    import yaml

    src = TESTS.parent / "recipes" / "cuda-12.1.yaml"
    data = yaml.safe_load(src.read_text())
    data["name"] = "local-cuda-12.1"
    data["install"]["conda"] = {"channels": [conda_channel.as_uri()],
                                "specs": ["cuda-version=12.1", "cuda-cudart", "cuda-nvcc-tools"], "nvcc": False}
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "local-cuda-12.1.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


@pytest.fixture(scope="session")
def cudart_12_4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real libcudart.so.12 of CUDA 12.4 (from NVIDIA's wheel): the 'wrong' runtime of the conflict."""
    from tests.shells.envbuild import download

    wheel = download(TESTS.parent / ".test-cache" / "wheels", "nvidia-cuda-runtime-cu12==12.4.127")
    out = tmp_path_factory.mktemp("cudart124")
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("lib/libcudart.so.12"))
        (out / "libcudart.so.12").write_bytes(zf.read(member))
    return out / "libcudart.so.12"


@pytest.fixture
def system_cuda(tmp_path: Path, cudart_12_4: Path) -> dict[str, str]:
    """A conflicting CUDA install made by the test: ptxas claiming 13.0 on PATH, CUDA 12.4's libcudart on
    LD_LIBRARY_PATH, CUDA_HOME pointing at it. Returns the caller environment that has it."""
    root = tmp_path / "usr-local-cuda"
    (root / "bin").mkdir(parents=True)
    (root / "lib64").mkdir()
    ptxas = root / "bin" / "ptxas"
    ptxas.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    ptxas.chmod(0o755)
    shutil.copy2(cudart_12_4, root / "lib64" / "libcudart.so.12")
    env = dict(os.environ)
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env['PATH']}"
    env["LD_LIBRARY_PATH"] = str(root / "lib64")
    env["CUDA_HOME"] = str(root)
    return env
