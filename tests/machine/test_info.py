"""`cuenv info` and `cuenv info --json`: the documented shape, the text, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuenv.commands import info
from cuenv.machine.model import Driver, Gpu, Machine


def test_json_shape_with_overrides(cli, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "CUENV_DRIVER": "535.104.05", "CUENV_GPUS": "NVIDIA A100-SXM4-80GB"}
    code, out, err = cli("info", "--json", environ=env)
    assert code == 0, err
    import json

    data = json.loads(out)
    assert data["driver"] == {"version": "535.104.05", "max_cuda": "12.2", "source": "override"}
    assert data["gpus"] == [{
        "index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0", "memory_mib": 81920,
        "uuid": None, "architecture": "Ampere", "mig": False,
        "fp16_tensor_cores": True, "bf16": True, "fp8": False, "tf32": True,
    }]
    assert isinstance(data["toolkits"], list) and set(data["engines"]) == {"conda", "mamba", "micromamba", "uv", "rattler"}
    assert {"os", "arch", "notes"} <= set(data)


def test_text_render():
    m = Machine(Driver("535.104.05", "12.2", "nvml"),
                (Gpu(0, "NVIDIA H100 80GB HBM3", "9.0", 81559, None, "Hopper"), Gpu(1, "NVIDIA GeForce ...", None)))
    text = info.render(info.report(m, [], {"conda": {"available": False, "path": None}}))
    assert "Driver    535.104.05, newest CUDA 12.2 (from nvml)" in text
    assert "0  NVIDIA H100 80GB HBM3  cc 9.0  Hopper  80 GiB  BF16 yes  FP8 yes" in text
    assert "1  NVIDIA GeForce ...  cc unknown  ?  memory unknown  BF16 ?  FP8 ?" in text
    assert "Toolkits  none found" in text and "not found: conda" in text


def test_no_driver_text(cli, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "CUENV_DRIVER": "none", "CUENV_GPUS": "none"}
    code, out, _ = cli("info", environ=env)
    assert code == 0
    assert "Driver    no NVIDIA driver found" in out and "GPUs      none" in out


@pytest.mark.parametrize(("var", "value", "message"), [
    ("CUENV_GPUS", "Voodoo 5=fast", "'Voodoo 5=fast' in CUENV_GPUS is not NAME=X.Y."),
    ("CONDA_OVERRIDE_CUDA", "twelve", "CONDA_OVERRIDE_CUDA='twelve' is not a CUDA version."),
    ("CUENV_DRIVER", "latest", "CUENV_DRIVER='latest' is not a driver version."),
])
def test_bad_overrides_are_two_lines_exit_2(cli, var, value, message):
    code, out, err = cli("info", environ={**os.environ, var: value})
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"error: {message}" and lines[1].startswith("hint: ") and len(lines) == 2


def test_info_name_is_an_environment(cli):
    code, _, err = cli("info", "nosuchenv")
    assert code == 2 and err.startswith("error: No environment named 'nosuchenv'.")


@pytest.mark.skipif(Path("/proc/driver/nvidia/version").exists() or not Path("/usr/local/cuda-13.0").exists(),
                    reason="describes the GPU-less build machine with its CUDA 13.0 toolkit")
def test_this_gpu_less_machine(cuenv_child):
    code, out, err = cuenv_child("info", path=[Path("/usr/local/bin")])
    assert code == 0, err
    assert "no NVIDIA driver found" in out
    assert "/usr/local/cuda-13.0  CUDA 13.0" in out
