"""parse_spec: what someone installed -> Stack; bad input -> UsageError (exit 2) with a hint."""

from __future__ import annotations

import pytest

from cuenv.errors import UsageError
from cuenv.knowledge.specs import looks_like_spec, parse_spec


@pytest.mark.parametrize(("spec", "index", "want"), [
    ("torch==2.1.0+cu121", None, dict(cuda="12.1", variant="cu121", framework="torch", framework_version="2.1.0",
                                       sass=("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"), ptx=())),
    ("torch==2.5.1", None, dict(cuda="12.4", variant="cu124", cudnn="9.1.0.70", ptx=("9.0",))),  # PyPI default
    ("torch==2.11.0", None, dict(cuda="13.0", variant="cu130", cudnn="9.19.0.56")),
    ("torch==2.3.0+cpu", None, dict(cuda=None, variant="cpu")),
    ("torch==2.3.0", "cu118", dict(cuda="11.8", variant="cu118")),
    ("Torch == 2.7.1+CU128", None, dict(cuda="12.8", variant="cu128", sass=("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"))),
    ("paddlepaddle-gpu==2.6.1.post118", None, dict(cuda="11.8", cudnn="8.6", framework="paddle", variant="post118")),
    ("paddlepaddle-gpu==2.6.1", None, dict(cuda="11.8", variant="default")),
    ("paddlepaddle-gpu==3.0.0", "cu126", dict(cuda="12.6", cudnn="9.5", variant="cu126")),
    ("paddlepaddle==2.6.1", None, dict(cuda=None, variant="cpu")),
    ("tensorflow==2.15.0", None, dict(cuda="12.2", cudnn="8.9", os=("linux",))),
    ("tensorflow[and-cuda]==2.18.1", None, dict(cuda="12.5", cudnn="9.3")),
    ("tensorflow-cpu==2.15.0", None, dict(cuda=None)),
    ("jax[cuda12]==0.4.30", None, dict(cuda="12.3", variant="cuda12", os=("linux",))),
    ("jax[cuda13]==0.7.0", None, dict(cuda="13.0", variant="cuda13")),
    ("jax==0.4.30", None, dict(cuda=None)),
    ("cuda==12.1", None, dict(cuda="12.1", has_nvcc=True, ptx=("9.0",))),
    ("cuda-toolkit==13.0.2", None, dict(cuda="13.0", has_nvcc=True, sass=("7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"))),
])
def test_parse_spec(spec: str, index: str | None, want: dict) -> None:
    stack = parse_spec(spec, index)
    assert {k: getattr(stack, k) for k in want} == want
    assert stack.label.startswith(spec.strip())


def test_toolkit_sass_is_what_nvcc_targets() -> None:
    from cuenv.knowledge.matrix import nvcc_targets

    assert parse_spec("cuda==12.1").sass == nvcc_targets("12.1")


@pytest.mark.parametrize(("spec", "index", "fragment"), [
    ("torch===", None, "Cannot read"),
    ("torch==2.1.0 extra", None, "Cannot read"),
    ("numpy==1.26", None, "does not know the package"),
    ("torch", None, "names no version"),
    ("torch==9.9.0", None, "does not know torch 9.9.0"),
    ("torch==2.1.0+cu130", None, "has no build 'cu130'"),
    ("torch==2.1.0+cu121", "cu118", "names two builds"),
    ("torch==2.1.0", "cuda12", "is not an index"),
    ("paddlepaddle-gpu==3.0.0", None, "per-CUDA index"),
    ("paddlepaddle-gpu==2.6.1.post127", None, "no CUDA 12.7 release"),
    ("paddlepaddle-gpu==1.8.0", None, "does not know paddlepaddle-gpu"),
    ("tensorflow==1.12.0", None, "tested GPU configuration"),
    ("jax[cuda11]==0.4.30", None, "jax extra"),
    ("cuda==12.7", None, "does not know CUDA 12.7"),
    ("cuda==twelve", None, "does not know CUDA"),
])
def test_bad_specs_are_usage_errors_with_a_hint(spec: str, index: str | None, fragment: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_spec(spec, index)
    assert fragment in err.value.message
    assert err.value.hint and err.value.exit_code == 2


def test_looks_like_spec() -> None:
    assert looks_like_spec("torch==2.1.0") and looks_like_spec("jax[cuda12]")
    assert not looks_like_spec("torch-cu121")
