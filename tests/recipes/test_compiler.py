"""`--with-nvcc`: which vendor packages bring nvcc for a CUDA release (issue 17 §2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.errors import UsageError
from cuenv.recipes import compiler


def test_conda_pins_cuda_nvcc_to_the_release() -> None:
    assert compiler.packages("conda", "12.1", recipe="cuda-12.1", has_conda=True).specs == ("cuda-nvcc=12.1",)


def test_cuda13_wheels_pin_nvvm_and_crt_to_the_same_minor() -> None:
    got = compiler.packages("venv", "13.0", recipe="cuda-13.0", has_conda=True)
    assert got.specs == ("nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*", "nvidia-cuda-crt==13.0.*")


def test_cuda12_wheels_have_no_nvcc_and_the_error_names_the_conda_route() -> None:
    with pytest.raises(UsageError) as err:
        compiler.packages("venv", "12.1", recipe="torch-cu121", has_conda=True)
    assert "carry no nvcc" in err.value.message
    assert "`cuenv create torch-cu121 --with-nvcc --engine rattler`" in (err.value.hint or "")
    with pytest.raises(UsageError) as err:
        compiler.packages("venv", "12.6", recipe="torch-cu126", has_conda=False)
    assert "cuenv use system:12.6" in (err.value.hint or "")


def test_cuda11_has_no_conda_forge_nvcc() -> None:
    with pytest.raises(UsageError, match="starts with CUDA 12.0"):
        compiler.packages("conda", "11.8", recipe="cuda-11.8", has_conda=True)
    assert compiler.create_hint(recipe="cuda-11.8", cuda="11.8", has_conda=True, venv_has_nvcc=False, env_name="c") is None


def test_create_hint() -> None:
    hint = compiler.create_hint(recipe="cuda-12.1", cuda="12.1", has_conda=True, venv_has_nvcc=False, env_name="cuda-12.1")
    assert hint == "cuenv create cuda-12.1 --with-nvcc --engine rattler -n cuda-12.1-nvcc"
    assert compiler.create_hint(recipe="jax-cu13", cuda="13.0", has_conda=False, venv_has_nvcc=False,
                                env_name="j") == "cuenv create jax-cu13 --with-nvcc --engine venv -n j-nvcc"
    assert compiler.create_hint(recipe="x", cuda=None, has_conda=True, venv_has_nvcc=True, env_name="x") is None


@given(st.text(max_size=12))
def test_bad_release_is_a_usage_error(text: str) -> None:
    try:
        compiler.packages("conda", text, recipe="r", has_conda=True)
    except UsageError:
        pass
