"""Fixtures for the lockfile tests: a local conda channel with a Python, recipes that use it, a CLI runner.

The channel is tests/engines/channel.py's (NVIDIA's real libcudart and ptxas, repackaged) plus an
empty ``python`` package, because `cuenv create` asks conda engines for the recipe's Python, and a
linux-aarch64 subdir so that one lock can hold two platforms.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engines"))

import channel as _channel  # noqa: E402 - after sys.path is set above

EXTRA = (
    _channel.Spec("python", "3.11.9", "linux-aarch64", build="h0_cuenv"),
    _channel.Spec("cuda-cudart", "12.1.105", "linux-aarch64", depends=("cuda-version >=12.1,<12.2.0a0",),
                  files=(_channel.Payload("lib/libcudart.so.12", text="aarch64 stand-in\n"),)),
)

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


def _build(cache: Path) -> Path:
    key = hashlib.sha256(Path(_channel.__file__).read_bytes() + Path(__file__).read_bytes()).hexdigest()[:12]
    final = cache / f"lock-channel-{key}"
    if (final / "noarch" / "repodata.json").is_file():
        return final
    with _channel._file_lock(cache / ".lock-channel.lock"):
        if not (final / "noarch" / "repodata.json").is_file():
            tmp = cache / f".{final.name}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            import rattler.index

            wheels = _channel.ensure_wheels(cache)
            for spec in _channel.PACKAGES + EXTRA:
                _channel.build_archive(spec, wheels, tmp / spec.subdir)
            asyncio.run(rattler.index.index_fs(tmp, write_zst=False, write_shards=False))
            os.replace(tmp, final)
    return final


@pytest.fixture(scope="session")
def lock_channel() -> Path:
    return _build(_channel.DEFAULT_CACHE)


@pytest.fixture
def recipes(tmp_path: Path, lock_channel: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user recipe folder (CUENV_RECIPES) with `local-cu121` (and `local-hello`, one more package)."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "local-cu121.yaml").write_text(RECIPE.format(name="local-cu121", channel=lock_channel, extra=""))
    (folder / "local-hello.yaml").write_text(RECIPE.format(name="local-hello", channel=lock_channel, extra=', "cuenv-hello"'))
    monkeypatch.setenv("CUENV_RECIPES", str(folder))
    return folder
