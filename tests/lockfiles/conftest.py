"""Fixtures for the lockfile tests: a local conda channel with a Python, recipes that use it, a CLI runner.

The channel is lockchannel.py's: tests/engines/channel.py's plus an empty ``python`` package, because
`cuenv create` asks conda engines for the recipe's Python, and a linux-aarch64 subdir so that one lock
can hold two platforms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lockfiles import lockchannel

RECIPE = """\
name: {name}
summary: CUDA 12.1 runtime from the local test channel
framework: null
cuda: "12.1"
cudnn: null
python:
  default: "3.11"
arch:
  sass: ["8.0", "9.0"]
  ptx: ["9.0"]
platforms: ["linux-64", "linux-aarch64"]
env:
  CUDA_DEVICE_ORDER: "yes"
smoke_test:
  python: "print('ok')"
install:
  conda:
    channels: ["{channel}"]
    specs: ["cuda-cudart", "cuda-version 12.1.*"{extra}]
    nvcc: false
"""


@pytest.fixture(scope="session")
def lock_channel() -> Path:
    return lockchannel.build()


@pytest.fixture
def recipes(tmp_path: Path, lock_channel: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user recipe folder (CUENV_RECIPES) with `local-cu121` (and `local-hello`, one more package)."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "local-cu121.yaml").write_text(RECIPE.format(name="local-cu121", channel=lock_channel, extra=""))
    (folder / "local-hello.yaml").write_text(RECIPE.format(name="local-hello", channel=lock_channel, extra=', "cuenv-hello"'))
    monkeypatch.setenv("CUENV_RECIPES", str(folder))
    return folder
