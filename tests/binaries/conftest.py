"""Fixtures for the fat binary tests: builds by the system nvcc (skipped without one), NVIDIA's
cuobjdump and a real NVIDIA library wheel from PyPI (downloaded once into .test-cache/)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.binaries import binkit


@pytest.fixture(scope="session")
def nvcc() -> str:
    exe = binkit.nvcc()
    if exe is None:
        pytest.skip("no nvcc on this machine (CI has /usr/local/bin/nvcc)")
    return exe


@pytest.fixture(scope="session")
def built(nvcc: str) -> dict[str, Path]:
    """name -> the file nvcc built for each of binkit.BUILDS."""
    return {spec.name: binkit.build(nvcc, spec) for spec in binkit.BUILDS}


@pytest.fixture(scope="session")
def cuobjdump() -> Path:
    try:
        return binkit.cuobjdump()
    except subprocess.CalledProcessError:
        pytest.skip("NVIDIA's cuobjdump wheel could not be downloaded from PyPI")


@pytest.fixture(scope="session")
def nvjpeg_wheel() -> Path:
    try:
        return binkit.download(binkit.WHEELS, binkit.NVJPEG_WHEEL)
    except subprocess.CalledProcessError:
        pytest.skip("NVIDIA's nvjpeg wheel could not be downloaded from PyPI")
