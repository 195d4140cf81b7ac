"""Helpers shared by the doctor tests (a unique module name: every test folder has a conftest)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RT12, NVCC12, RT11 = "nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105", "nvidia-cuda-runtime-cu11==11.8.89"
REPORTS = Path(__file__).with_name("fixtures") / "reports"


def unpack(wheel: Path, member: str, dest: Path) -> Path:
    """One file of a wheel, written to ``dest``."""
    import zipfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        dest.write_bytes(zf.read(member))
    return dest


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
