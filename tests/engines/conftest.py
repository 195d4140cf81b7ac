"""Fixtures for the engine tests: the local conda channel, fake conda tools, a shared cache."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.engines import channel as _channel

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def conda_channel() -> Path:
    """The local conda channel built from NVIDIA's wheels (see channel.py), shared by all tests."""
    return _channel.cached_channel()


@pytest.fixture
def cache_dir() -> Path:
    """cuenv's cache (uv and rattler) shared across the session, as CUENV_CACHE_DIR is."""
    path = Path(os.environ["CUENV_CACHE_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


class FakeConda:
    def __init__(self, root: Path, channel_dir: Path) -> None:
        self.bin = root / "bin"
        self.log = root / "argv.jsonl"
        self.bin.mkdir(parents=True)
        source = (HERE / "fake_conda.py").read_text()
        for tool in ("mamba", "micromamba"):  # conda is tested for real (realconda.py)
            exe = self.bin / tool
            exe.write_text(f"#!{sys.executable}\n" + source)
            exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
        self.environ = {
            "PATH": f"{self.bin}{os.pathsep}/usr/bin:/bin",
            "HOME": str(root),
            "FAKE_CONDA_LOG": str(self.log),
            "FAKE_CONDA_RECORDINGS": str(HERE / "recordings"),
            "FAKE_CONDA_CHANNEL": str(channel_dir),
        }

    def calls(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def fake_conda(tmp_path: Path, conda_channel: Path) -> FakeConda:
    return FakeConda(tmp_path / "fake", conda_channel)


@pytest.fixture(scope="session")
def real_conda() -> Path:
    """The real conda (conda's source, classic solver): CUENV_TEST_CONDA from .ci/run, else installed
    once into .test-cache by the vendored install.sh (realconda.py)."""
    from tests.engines import realconda

    try:
        return realconda.conda_exe()
    except LookupError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def conda_overlay(real_conda: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What makes `conda` the real one: PATH first, its package cache and HOME in the session's tmp
    folder (conda writes ~/.conda/environments.txt). Lay it over a test's own environment."""
    root = tmp_path_factory.mktemp("real-conda")
    (root / "bin").mkdir()
    (root / "bin" / "conda").symlink_to(real_conda)  # conda alone: its prefix's python and pip stay off PATH
    return {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', os.defpath)}", "HOME": str(root / "home"),
            "CONDA_PKGS_DIRS": str(root / "pkgs")}


@pytest.fixture
def conda_environ(conda_overlay: dict[str, str]) -> dict[str, str]:
    """This test's environment (its own CUENV_HOME) with the real conda first on PATH."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA_", "MAMBA_"))}
    return {**environ, **conda_overlay}
