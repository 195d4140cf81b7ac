"""cuenv.knowledge.wheelcuda: one reader of a framework wheel's CUDA, every form the frameworks use."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.knowledge import wheelcuda as w

FIXTURES = Path(__file__).parents[1] / "engines" / "fixtures" / "pypi-metadata"


def requires(filename: str) -> list[str]:
    text = (FIXTURES / filename).read_text(encoding="utf-8")
    return [line.split(":", 1)[1].strip() for line in text.split("\n\n", 1)[0].splitlines()
            if line.lower().startswith("requires-dist:")]


@pytest.mark.parametrize(("filename", "cuda"), [
    ("torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl.metadata", "12.1"),
    ("torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl.metadata", "12.8"),
    ("torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl.metadata", "13.0"),
])
def test_real_torch_metadata(filename: str, cuda: str) -> None:
    found = w.from_requirements(requires(filename), python="3.11")
    assert (found.cuda, found.exact) == (cuda, True)


def test_aarch64_markers_are_judged_for_aarch64() -> None:
    reqs = ['nvidia-cuda-runtime-cu12==12.4.127; platform_machine == "x86_64"', "nvidia-cudnn-cu12==9.1.0.70"]
    assert w.from_requirements(reqs).cuda == "12.4"
    arm = w.from_requirements(reqs, machine="aarch64")
    assert (arm.cuda, arm.major) == (None, 12)


@pytest.mark.parametrize(("kwargs", "cuda", "major"), [
    ({"requires": ['nvidia-cuda-runtime-cu12>=12.5.82,<13; extra == "and-cuda"'], "extras": ["and-cuda"]}, "12.5", 12),
    ({"requires": ['jax-cuda12-plugin[with-cuda]<=0.4.30,>=0.4.30; extra == "cuda12"'], "extras": ["cuda12"]}, None, 12),
    ({"version": "2.1.0+cu121"}, "12.1", 12),
    ({"version": "2.6.1.post118"}, "11.8", 11),
    ({"version": "0.4.22+cuda12.cudnn89"}, None, 12),
    ({"extras": ["cuda13"]}, None, 13),
    ({"requires": ["numpy"], "version": "2.1.0"}, None, None),
    ({"requires": ["cuda-toolkit[nvcc]==12.4.1"]}, "12.4", 12),
])
def test_every_form(kwargs: dict, cuda: str | None, major: int | None) -> None:
    found = w.wheel_cuda(**kwargs)
    assert (found.cuda, found.major) == (cuda, major), found


def test_the_runtime_beats_a_bare_toolkit_piece() -> None:
    reqs = ["cuda-toolkit[nvcc]==12.4.1", "nvidia-cuda-runtime-cu12==12.6.77"]
    assert w.from_requirements(reqs).cuda == "12.6"


@given(st.lists(st.text(max_size=80), max_size=6), st.text(max_size=30), st.lists(st.text(max_size=12), max_size=3))
def test_never_raises(reqs: list[str], version: str, extras: list[str]) -> None:
    found = w.wheel_cuda(requires=reqs, version=version, extras=extras)
    assert found.cuda is None or found.major == int(found.cuda.split(".")[0])
