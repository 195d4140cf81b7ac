"""Fixtures for the doctor tests: real NVIDIA wheels (shared, hash-checked helpers of the engine and
shell tests), a real venv environment, system toolkit trees and custom linker caches built here,
and the gcc-built fake driver of the machine tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for helper in ("engines", "machine"):  # channel.ensure_wheels, fakedriver: shared, not copied
    sys.path.insert(0, str(TESTS / helper))

import channel  # noqa: E402
import fakedriver  # noqa: E402

from tests.shells import envbuild  # noqa: E402

RT12, NVCC12, RT11 = "nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105", "nvidia-cuda-runtime-cu11==11.8.89"
REPORTS = Path(__file__).with_name("fixtures") / "reports"


@pytest.fixture(scope="session")
def wheels() -> dict[str, Path]:
    try:
        found = channel.ensure_wheels(wanted=(RT12, NVCC12, RT11))
    except subprocess.CalledProcessError:
        pytest.skip("NVIDIA's wheels could not be downloaded from PyPI")
    return found


def unpack(wheel: Path, member: str, dest: Path) -> Path:
    """One file of a wheel, written to ``dest``."""
    import zipfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        dest.write_bytes(zf.read(member))
    return dest


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


def build_ld_cache(cache: Path, *dirs: Path) -> Path:
    """A linker cache holding ``dirs`` plus the trusted folders, written by the real ldconfig."""
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if ldconfig is None:
        pytest.skip("ldconfig is needed to build a linker cache")
    cache.parent.mkdir(parents=True, exist_ok=True)
    empty = cache.with_name("ld.so.conf")
    empty.write_text("")
    subprocess.run([ldconfig, "-X", "-f", str(empty), "-C", str(cache), *map(str, dirs)], check=True,
                   capture_output=True)
    return cache


@pytest.fixture(scope="session")
def fake_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not fakedriver.have_gcc():
        pytest.skip("gcc is needed to build the fake driver libraries")
    return fakedriver.build_libs(tmp_path_factory.mktemp("fake-driver"))
