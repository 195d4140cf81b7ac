"""The driver check against the gcc-built fake libnvidia-ml / libcuda (real pynvml and ctypes paths, in
a child process) at several versions, with /proc, /sys and /dev built under an injected --root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.machine import fakedriver

REPO = Path(__file__).resolve().parents[2]
A100 = ("NVIDIA A100-SXM4-80GB", "8.0", 81920)
T4 = ("Tesla T4", "7.5", 15360)


def make_root(tmp: Path, *, proc: str | None = None, sys_version: str | None = None,
              nodes: tuple[str, ...] = ("nvidia0", "nvidiactl", "nvidia-uvm")) -> Path:
    root = tmp / "root"
    if proc is not None:
        (root / "proc/driver/nvidia").mkdir(parents=True)
        (root / "proc/driver/nvidia/version").write_text(
            f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {proc}  Thu Aug 10 12:00:00 UTC 2023\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    if sys_version is not None:
        (root / "sys/module/nvidia").mkdir(parents=True)
        (root / "sys/module/nvidia/version").write_text(sys_version + "\n")
    (root / "dev").mkdir(parents=True, exist_ok=True)
    for node in nodes:
        (root / "dev" / node).write_text("")
        (root / "dev" / node).chmod(0o666)
    return root


def doctor(tmp: Path, root: Path, env: dict[str, str]) -> tuple[int, dict]:
    child = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUENV_", "CONDA_OVERRIDE"))}
    child.pop("LD_LIBRARY_PATH", None)
    child.update(PYTHONPATH=str(REPO), PATH="/usr/bin:/bin", CUENV_HOME=str(tmp / "home"),
                 CUENV_CACHE_DIR=str(tmp / "cache"), CUENV_CONFIG=str(tmp / "config.yaml"), **env)
    proc = subprocess.run([sys.executable, "-m", "cuenv", "doctor", "--json", "--root", str(root)], env=child,
                          capture_output=True, text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def check(data: dict, name: str) -> dict:
    return next(c for c in data["checks"] if c["name"] == name)


@pytest.mark.parametrize(("version", "cuda", "newest"), [("470.57.02", 11040, "11.4"), ("535.104.05", 12020, "12.2"),
                                                         ("580.95.05", 13000, "13.0")])
def test_healthy_driver_at_several_versions(fake_libs, tmp_path, version, cuda, newest):
    root = make_root(tmp_path, proc=version)
    code, data = doctor(tmp_path, root, fakedriver.driver_env(fake_libs, version=version, cuda=cuda, gpus=[A100]))
    driver = check(data, "driver")
    assert driver["status"] == "ok" and driver["findings"] == []
    assert driver["detail"][:4] == [
        f"driver {version}, newest CUDA {newest} (from nvml)",
        f"kernel module {version} (/proc/driver/nvidia/version)",
        f"user-space library {version} (NVML)",
        "device nodes: /dev/nvidia-uvm, /dev/nvidia0, /dev/nvidiactl",
    ]
    assert driver["detail"][4] == f"libcuda: libcuda.so.1 -> {fake_libs}/libcuda.so.1  [version unknown; via LD_LIBRARY_PATH]"
    assert check(data, "machine")["detail"][1] == "GPU 0: NVIDIA A100-SXM4-80GB, cc 8.0, 80 GiB, BF16 yes, FP8 no"


def test_kernel_module_older_than_the_library(fake_libs, tmp_path):
    """An unattended upgrade: user space 550.54.14 while the loaded module is still 535.104.05."""
    root = make_root(tmp_path, proc="535.104.05")
    code, data = doctor(tmp_path, root, fakedriver.driver_env(fake_libs, version="550.54.14", cuda=12040, gpus=[A100]))
    assert code == 1 and data["ok"] is False
    driver = check(data, "driver")
    assert [f["code"] for f in driver["findings"]] == ["driver-library-mismatch"]
    finding = driver["findings"][0]
    assert finding["message"].startswith("The loaded kernel module is 535.104.05 but the user-space driver library is "
                                         "550.54.14 (NVML)")
    assert "reboot" in finding["fix"].lower() and "rmmod" in finding["fix"]


def test_nvml_refusing_and_the_library_file_names_the_version(fake_libs, tmp_path):
    """NVML fails with 'Driver/library version mismatch'; the version comes from libnvidia-ml.so.X's file name,
    laid out as the driver installs it (versioned file, .so.1 link); the module version from /sys."""
    libs = tmp_path / "driver-libs"
    libs.mkdir()
    shutil.copy(fake_libs / "libnvidia-ml.so.1", libs / "libnvidia-ml.so.550.54.14")
    (libs / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.550.54.14")
    shutil.copy(fake_libs / "libcuda.so.1", libs / "libcuda.so.1")
    root = make_root(tmp_path, sys_version="535.104.05")
    env = fakedriver.driver_env(libs, version="550.54.14", cuda=12040, gpus=[A100], nvml_fail=18)
    code, data = doctor(tmp_path, root, env)
    driver = check(data, "driver")
    assert [f["code"] for f in driver["findings"]] == ["driver-library-mismatch"]
    assert "kernel module 535.104.05 (/sys/module/nvidia/version)" in driver["detail"]
    assert "user-space library 550.54.14 (libnvidia-ml.so.550.54.14)" in driver["detail"]


def test_module_loaded_without_device_nodes(fake_libs, tmp_path):
    root = make_root(tmp_path, proc="535.104.05", nodes=("nvidiactl",))
    code, data = doctor(tmp_path, root, fakedriver.driver_env(fake_libs, gpus=[A100]))
    assert [f["code"] for f in check(data, "driver")["findings"]] == ["device-nodes-missing"]


def test_turing_card_warns_about_bf16(fake_libs, tmp_path):
    root = make_root(tmp_path, proc="470.57.02")
    code, data = doctor(tmp_path, root, fakedriver.driver_env(fake_libs, version="470.57.02", cuda=11040, gpus=[T4]))
    machine = check(data, "machine")
    assert machine["status"] == "warning"
    found = [f for f in machine["findings"] if f["code"] != "low-disk"]  # this shared machine's disk may be full
    assert [(f["code"], f["severity"]) for f in found] == [("bf16-unsupported", "warning")]
    assert found[0]["message"].startswith("Tesla T4 (compute capability 7.5) has no BF16 support")
