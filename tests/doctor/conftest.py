"""Fixtures for the doctor tests: real NVIDIA wheels (the engine tests' hash-checked helper), a real
venv environment (the shell tests' builder), system toolkit trees built here, and the gcc-built fake
driver of the machine tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.doctor.doctorkit import NVCC12, RT11, RT12, unpack
from tests.engines import channel
from tests.machine import fakedriver
from tests.shells import envbuild

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def wheels() -> dict[str, Path]:
    try:
        found = channel.ensure_wheels(wanted=(RT12, NVCC12, RT11))
    except subprocess.CalledProcessError:
        pytest.skip("NVIDIA's wheels could not be downloaded from PyPI")
    return found




@pytest.fixture(scope="session")
def venv_template(tmp_path_factory: pytest.TempPathFactory, wheels: dict[str, Path]) -> Path:
    """A real uv venv with NVIDIA's CUDA 12.1 runtime and nvcc (ptxas) wheels, built once."""
    prefix = tmp_path_factory.mktemp("template") / "venv"
    envbuild.make_venv(prefix, [wheels[RT12], wheels[NVCC12]], channel.DEFAULT_CACHE / "uv")
    return prefix


@pytest.fixture
def cuda_env(isolated: Path, venv_template: Path):
    """The environment `cuda-12.1` registered in this test's CUENV_HOME, as `cuenv create` leaves it."""
    envs = isolated / "home" / "envs"
    return envbuild.build_cuda_env(envs, "cuda-12.1", "12.1", channel.DEFAULT_CACHE, template=venv_template)


@pytest.fixture
def cuda11_tree(tmp_path: Path, wheels: dict[str, Path]) -> Path:
    """A system CUDA 11.8 toolkit tree from the real cu11 runtime wheel (lib64 + the header)."""
    root = tmp_path / "opt" / "cuda-11.8"
    unpack(wheels[RT11], "nvidia/cuda_runtime/lib/libcudart.so.11.0", root / "lib64" / "libcudart.so.11.0")
    unpack(wheels[RT11], "nvidia/cuda_runtime/include/cuda_runtime_api.h", root / "include" / "cuda_runtime_api.h")
    return root




@pytest.fixture(scope="session")
def fake_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not fakedriver.have_gcc():
        pytest.skip("gcc is needed to build the fake driver libraries")
    return fakedriver.build_libs(tmp_path_factory.mktemp("fake-driver"))
