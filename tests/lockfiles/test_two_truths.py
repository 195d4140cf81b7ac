"""A lock with two truths: conda's pytorch 1.13.1 (CUDA 11.7) and, in its pip layer, torch 2.3.1+cu121 with
nvidia-*-cu12 wheels (issue 25, case 1). Python imports the wheel, so its CUDA decides; the conda packages
that say otherwise are reported, never silently chosen."""

from __future__ import annotations

from cuenv.cli.machine_flags import described_machine
from cuenv.engines.base import Package
from cuenv.knowledge.compat import check, verdict
from cuenv.lock.foreign.stack import derive


def _conda(name: str, version: str, build: str) -> Package:
    return Package(name, version, "conda", f"https://conda.anaconda.org/pytorch/linux-64/{name}-{version}-{build}.tar.bz2",
                   "0" * 64, build=build, channel="https://conda.anaconda.org/pytorch", subdir="linux-64")


def _wheel(name: str, version: str) -> Package:
    return Package(name, version, "pypi", f"https://files.pythonhosted.org/x/{name}-{version}-py3-none-any.whl", "0" * 64)


CONDA = [_conda("pytorch", "1.13.1", "py3.10_cuda11.7_cudnn8.5.0_0"), _conda("cudatoolkit", "11.7.1", "h4bc3d14_13"),
         _conda("pytorch-cuda", "11.7", "h778d358_5"), _conda("python", "3.10.14", "h955ad1f_1")]
PIP = [_wheel("torch", "2.3.1+cu121"), _wheel("nvidia-cuda-runtime-cu12", "12.1.105"), _wheel("nvidia-cudnn-cu12", "8.9.2.26")]


def test_the_pip_layers_torch_decides_and_the_conda_truth_is_reported():
    derived = derive([*CONDA, *PIP], platform="linux-64", label="conda-lock.yml [linux-64]")
    assert derived.stack.cuda == "12.1" and derived.stack.framework_version == "2.3.1"
    assert derived.evidence[0] == "CUDA 12.1 from nvidia-cuda-runtime-cu12 12.1.105"
    assert any(e.startswith("Python imports the wheel torch 2.3.1+cu121") for e in derived.evidence)
    assert "cudatoolkit 11.7.1 says CUDA 11.7" in derived.conflicts
    assert "pytorch-cuda 11.7 says CUDA 11.7" in derived.conflicts
    # and the verdict follows: driver 470 serves CUDA 11.7 but not the 12.1 that Python loads
    old = described_machine("470.82.01", [], ["8.6"])
    assert not verdict(check(derived.stack, old))
    assert verdict(check(derived.stack, described_machine("535.104.05", [], ["8.6"])))


def test_without_a_pip_torch_the_conda_runtime_still_decides():
    derived = derive([*CONDA, _wheel("nvidia-cuda-runtime-cu12", "12.1.105")], platform="linux-64", label="x")
    assert derived.stack.cuda == "11.7" and "nvidia-cuda-runtime-cu12 12.1.105 says CUDA 12.1" in derived.conflicts
