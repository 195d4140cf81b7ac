"""Opt-in (`--run-slow`): a real PyTorch environment from PyPI, several GB (issue 4, tests).

download.pytorch.org is not reachable from cuenv's build machines, so this uses PyPI's own torch 2.8.0
wheel, which PyTorch builds for CUDA 12.8 and which pulls NVIDIA's cu12 wheels (cuDNN, cuBLAS, NCCL ...).
"""

from __future__ import annotations

import json
import time

import pytest
import yaml

from tests.envs.envkit import TESTS


@pytest.mark.slow
@pytest.mark.network
def test_real_torch_environment(cuenv, tmp_path):
    data = yaml.safe_load((TESTS.parent / "recipes" / "torch-cu128.yaml").read_text())
    data["name"] = "torch-pypi-cu128"
    data["framework"]["version"] = "2.8.0"
    data["framework"]["versions"] = ["2.8.0"]
    data.pop("overrides", None)
    data["install"] = {"venv": {"requirements": ["torch=={version}"], "nvcc": False}}
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "torch-pypi-cu128.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    t0 = time.monotonic()
    made = cuenv("create", "torch-pypi-cu128", "--recipes", str(folder), "--engine", "venv", timeout=3600)
    elapsed = time.monotonic() - t0
    assert made.returncode == 0, made.stderr
    info = json.loads(cuenv("info", "torch-pypi-cu128", "--json").stdout)
    print(f"\ntorch env: {elapsed:.0f} s, {info['size_bytes'] / 1e9:.2f} GB, resolved {info['resolved']}")
    assert info["resolved"]["framework"] == "torch 2.8.0" and info["resolved"]["libcudart"].startswith("12.8")
    probe = cuenv("run", "torch-pypi-cu128", "--", "python", "-c",
                  "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.is_available())")
    assert probe.returncode == 0, probe.stderr
    version, cuda, cudnn, available = probe.stdout.split()
    assert (version, cuda, available) == ("2.8.0+cu128", "12.8", "False") and int(cudnn) >= 91000
