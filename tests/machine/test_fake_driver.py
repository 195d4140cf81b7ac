"""`cuenv info --json` in a child process against gcc-built fake libnvidia-ml / libcuda:
the real pynvml and ctypes paths, with the driver present, failing, absent, and in several versions."""

from __future__ import annotations

import pytest

from tests.machine import fakedriver

A100 = ("NVIDIA A100-SXM4-80GB", "8.0", 81920, "mig")
T4 = ("Tesla T4", "7.5", 15360)


@pytest.mark.parametrize(
    ("version", "cuda", "max_cuda"),
    [("470.57.02", 11040, "11.4"), ("535.104.05", 12020, "12.2"), ("580.95.05", 13000, "13.0"),
     ("610.43.02", 13030, "13.3")],
)
def test_nvml_reports_driver_and_gpus(fake_libs, cuenv_child, version, cuda, max_cuda):
    code, data, err = cuenv_child("info", "--json", env=fakedriver.driver_env(fake_libs, version=version, cuda=cuda,
                                                                             gpus=[A100, T4]))
    assert code == 0, err
    assert data["driver"] == {"version": version, "max_cuda": max_cuda, "source": "nvml"}
    assert [(g["index"], g["name"], g["compute_capability"], g["memory_mib"], g["architecture"], g["mig"], g["bf16"],
             g["fp8"]) for g in data["gpus"]] == [
        (0, "NVIDIA A100-SXM4-80GB", "8.0", 81920, "Ampere", True, True, False),
        (1, "Tesla T4", "7.5", 15360, "Turing", False, False, False),
    ]
    assert data["gpus"][0]["uuid"].startswith("GPU-")
    assert data["notes"] == []


def test_nvml_failing_falls_back_to_libcuda(fake_libs, cuenv_child):
    env = fakedriver.driver_env(fake_libs, version="535.104.05", cuda=12020, gpus=[T4], nvml_fail=18)
    code, data, err = cuenv_child("info", "--json", env=env)
    assert code == 0, err
    assert data["driver"] == {"version": "", "max_cuda": "12.2", "source": "libcuda"}
    assert [(g["name"], g["compute_capability"], g["memory_mib"]) for g in data["gpus"]] == [("Tesla T4", "7.5", 15360)]
    assert data["notes"][0].startswith("nvml: NVML did not initialise: ") and "mismatch" in data["notes"][0]


def test_libcuda_without_devices(fake_libs, cuenv_child):
    env = fakedriver.driver_env(fake_libs, cuda=12080, gpus=[T4], nvml_fail=9, cuda_fail=100)
    code, data, err = cuenv_child("info", "--json", env=env)
    assert code == 0, err
    assert data["driver"]["max_cuda"] == "12.8" and data["gpus"] == []


def test_zero_gpus_is_still_a_driver(fake_libs, cuenv_child):
    code, data, _ = cuenv_child("info", "--json", env=fakedriver.driver_env(fake_libs, gpus=[]))
    assert code == 0 and data["driver"]["source"] == "nvml" and data["gpus"] == []


def test_no_driver_at_all(cuenv_child):
    code, data, err = cuenv_child("info", "--json", env=fakedriver.driver_env(None))
    assert code == 0, err
    assert data["driver"] is None and data["gpus"] == []
    sources = [n.split(":")[0] for n in data["notes"]]
    assert sources[:2] == ["nvml", "libcuda"]


def test_fake_nvidia_smi_on_path_when_libraries_are_absent(cuenv_child, tmp_path):
    bin_dir = tmp_path / "bin"
    fakedriver.fake_smi(bin_dir, table="smi-table-495-mig-a100.txt")
    code, data, err = cuenv_child("info", "--json", env=fakedriver.driver_env(None), path=[bin_dir])
    assert code == 0, err
    assert data["driver"] == {"version": "495.29.05", "max_cuda": "11.5", "source": "nvidia-smi-table"}
    assert [(g["name"], g["compute_capability"], g["mig"], g["memory_mib"]) for g in data["gpus"]] == [
        ("NVIDIA A100-SXM...", "8.0", True, 81251)] * 2


def test_overrides_beat_the_fake_driver(fake_libs, cuenv_child):
    env = {**fakedriver.driver_env(fake_libs, gpus=[T4]), "CUENV_DRIVER": "525.60.13", "CUENV_GPUS": "NVIDIA H100 80GB HBM3"}
    code, data, _ = cuenv_child("info", "--json", env=env)
    assert code == 0
    assert data["driver"] == {"version": "525.60.13", "max_cuda": "12.0", "source": "override"}
    assert [(g["name"], g["compute_capability"], g["fp8"]) for g in data["gpus"]] == [("NVIDIA H100 80GB HBM3", "9.0", True)]


def test_cached_result_is_used_by_the_next_command(fake_libs, cuenv_child):
    env = fakedriver.driver_env(fake_libs, version="535.104.05", gpus=[T4])
    assert cuenv_child("info", "--json", env=env)[1]["driver"]["version"] == "535.104.05"
    # Same machine fingerprint, same libraries: the cache answers, NVML is not asked again.
    env["FAKE_DRIVER_VERSION"] = "999.99"
    assert cuenv_child("info", "--json", env=env)[1]["driver"]["version"] == "535.104.05"
    assert cuenv_child("info", "--json", "--refresh", env=env)[1]["driver"]["version"] == "999.99"
