"""Fake NVIDIA driver pieces for tests (issue 2): gcc-built libnvidia-ml.so.1 and libcuda.so.1,
and a fake ``nvidia-smi`` that prints a fixture. Reused by the doctor tests.

    libs = build_libs(tmp_dir)                        # once per session (gcc, ~0.2 s)
    env = driver_env(libs, version="535.104.05", cuda=12020,
                     gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 81920)])
    subprocess.run([sys.executable, "-m", "cuenv", "info", "--json"], env={**os.environ, **env})

The libraries read FAKE_* variables at every call (see fakes/fake_gpus.h), so one build serves
every test. They only take effect in a new process (the loader reads LD_LIBRARY_PATH at start).
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path
from typing import Iterable, Sequence

FAKES = Path(__file__).with_name("fakes")
FIXTURES = Path(__file__).with_name("fixtures")


def have_gcc() -> bool:
    return shutil.which("gcc") is not None


def build_libs(dest: Path) -> Path:
    """Compile the fake libraries into ``dest`` (returned); needs gcc."""
    dest.mkdir(parents=True, exist_ok=True)
    for source, soname in (("fake_nvml.c", "libnvidia-ml.so.1"), ("fake_cuda.c", "libcuda.so.1")):
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-Wl,-soname,{soname}",
             "-I", str(FAKES), "-o", str(dest / soname), str(FAKES / source)],
            check=True, capture_output=True, text=True,
        )
    return dest


def gpu_spec(gpus: Iterable[Sequence]) -> str:
    """[("NVIDIA T4", "7.5", 15360), ("NVIDIA A100-SXM4-80GB", "8.0", 81920, "mig")] -> FAKE_GPUS."""
    return ";".join(":".join(str(part) for part in gpu) for gpu in gpus)


def driver_env(libs: Path | None, *, version: str = "535.104.05", cuda: int = 12020,
               gpus: Iterable[Sequence] = (), nvml_fail: int | None = None,
               cuda_fail: int | None = None) -> dict[str, str]:
    """Variables that make a child process see this fake driver (``libs=None``: no libraries)."""
    env = {"FAKE_DRIVER_VERSION": version, "FAKE_CUDA_VERSION": str(cuda), "FAKE_GPUS": gpu_spec(gpus)}
    if libs is not None:
        env["LD_LIBRARY_PATH"] = str(libs)
    if nvml_fail is not None:
        env["FAKE_NVML_FAIL"] = str(nvml_fail)
    if cuda_fail is not None:
        env["FAKE_CUDA_FAIL"] = str(cuda_fail)
    return env


def fake_smi(bin_dir: Path, *, table: str | None = None, csv_text: str | None = None,
             csv_error: str | None = None, fail_text: str | None = None, fail_code: int = 9) -> Path:
    """Write an ``nvidia-smi`` into ``bin_dir``.

    ``table``: fixture printed for a plain call. ``csv_text``: printed for ``--query-gpu``
    (tests write it from the GPUs they chose, as the fake libraries do). ``csv_error``: fixture
    printed, with exit 2, when ``compute_cap`` is asked for (what drivers before ~510 do).
    ``fail_text``: every call prints it and exits ``fail_code`` (a driver nvidia-smi cannot reach).
    """
    bin_dir.mkdir(parents=True, exist_ok=True)
    lines = ["#!/bin/sh"]
    if fail_text is not None:
        (bin_dir / "nvidia-smi.fail").write_text(fail_text, encoding="utf-8")
        lines += [f"cat '{bin_dir / 'nvidia-smi.fail'}'", f"exit {fail_code}"]
    else:
        lines.append('case "$1" in')
        lines.append("  --query-gpu=*)")
        if csv_error is not None:
            lines.append(f"    case \"$1\" in *compute_cap*) cat '{FIXTURES / csv_error}'; exit 2;; esac")
        if csv_text is not None:
            (bin_dir / "nvidia-smi.csv").write_text(csv_text, encoding="utf-8")
            lines.append(f"    cat '{bin_dir / 'nvidia-smi.csv'}'; exit 0;;")
        else:
            lines.append("    echo 'No devices were found'; exit 6;;")
        lines.append("esac")
        lines.append(f"cat '{FIXTURES / table}'" if table else "echo 'No devices were found'; exit 6")
    path = bin_dir / "nvidia-smi"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
