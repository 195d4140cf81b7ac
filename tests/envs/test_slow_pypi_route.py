"""Opt-in (`--run-slow`): real torch environments of the catalogue recipes, from PyPI alone (issue 19 §2).

``--framework-index pypi`` is the route a PyPI-only network gets: torch 2.4.1 on PyPI is PyTorch's
CUDA 12.1 build and 2.6.0 its CUDA 12.4 build (their wheels' metadata pin nvidia-cuda-runtime-cu12
12.1.105 and 12.4.127), so ``torch-cu121@2.4.1`` and ``torch-cu124@2.6.0`` install without
download.pytorch.org. Each is several GB.
"""

from __future__ import annotations

import json
import os
import time

import pytest

PROBE = """
import json, re, torch
cudnn = torch.backends.cudnn.version()
maps = open("/proc/self/maps").read()
libs = sorted({p for p in re.findall(r"(/\\S+/lib(?:cudart|cudnn|cublas)[^/\\s]*\\.so[.\\d]*)", maps)})
print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda, "cudnn": cudnn,
                  "available": torch.cuda.is_available(), "libs": libs}))
"""


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize(("ref", "version", "cuda"), [("torch-cu121@2.4.1", "2.4.1", "12.1"),
                                                      ("torch-cu124@2.6.0", "2.6.0", "12.4"),
                                                      # torch 2.11+ on PyPI requires cuda-toolkit[...]==13.0.x (issue 27)
                                                      ("torch-cu130@2.11.0", "2.11.0", "13.0")])
def test_torch_from_pypi_only(cuenv, ref: str, version: str, cuda: str) -> None:
    name = "t" + cuda.replace(".", "")
    t0 = time.monotonic()
    made = cuenv("create", ref, "-n", name, "--engine", "venv", "--framework-index", "pypi", timeout=3600)
    elapsed = time.monotonic() - t0
    assert made.returncode == 0, made.stderr
    info = json.loads(cuenv("info", name, "--json").stdout)
    print(f"\n{ref}: {elapsed:.0f} s, {info['size_bytes'] / 1e9:.2f} GB, resolved {info['resolved']}")
    assert info["resolved"]["framework"] == f"torch {version}"
    assert info["resolved"]["libcudart"].startswith(cuda)
    probe = cuenv("run", name, "--", "python", "-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout)
    # The installed distribution is PyPI's (no local +cuXXX: asserted above); inside, torch still calls
    # itself the CUDA build it is (torch.__version__ 2.4.1+cu121 in PyPI's 2.4.1 wheel).
    assert got["version"] in (version, f"{version}+cu{cuda.replace('.', '')}"), got["version"]
    assert (got["cuda"], got["available"]) == (cuda, False)
    assert got["cudnn"] >= 90100
    prefix = os.path.realpath(info["path"])
    # The loader picked the environment's own CUDA libraries, never a system one.
    assert got["libs"] and all(lib.startswith(prefix) for lib in got["libs"]), got["libs"]
    assert any("libcudnn" in lib for lib in got["libs"]) and any("libcudart" in lib for lib in got["libs"])
