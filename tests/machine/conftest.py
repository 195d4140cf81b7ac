"""Fixtures for machine detection: the gcc-built fake driver and a child `cuenv` runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.machine import fakedriver

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fake_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not fakedriver.have_gcc():
        pytest.skip("gcc is needed to build the fake driver libraries")
    return fakedriver.build_libs(tmp_path_factory.mktemp("fake-driver"))


@pytest.fixture
def cuenv_child(tmp_path: Path):
    """Run `python -m cuenv ARGS` in a clean child with ``env`` on top; returns (code, json|text, stderr).

    PATH holds only a private bin folder plus the system folders, so the host's nvidia-smi (if
    any) is not seen unless a test puts a fake one there; the cache is private to the test.
    """

    def run(*args: str, env: dict[str, str] | None = None, path: list[Path] = ()) -> tuple[int, object, str]:
        child = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUENV_", "CONDA_OVERRIDE"))}
        child.pop("LD_LIBRARY_PATH", None)
        child.update(
            PYTHONPATH=str(REPO),
            PATH=os.pathsep.join([*(str(p) for p in path), "/usr/bin", "/bin"]),
            CUENV_HOME=str(tmp_path / "home"),
            CUENV_CACHE_DIR=str(tmp_path / "cache"),
            CUENV_CONFIG=str(tmp_path / "config.yaml"),
        )
        child.update(env or {})
        proc = subprocess.run([sys.executable, "-m", "cuenv", *args], env=child, capture_output=True, text=True,
                              timeout=60)
        out: object = proc.stdout
        if "--json" in args and proc.returncode == 0:
            out = json.loads(proc.stdout)
        return proc.returncode, out, proc.stderr

    return run
