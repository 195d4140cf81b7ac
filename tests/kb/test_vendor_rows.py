"""cuda.yaml against vendor.yaml, row by row: where both state a fact, they agree.

vendor.yaml is what `python -m cuenv.knowledge.refresh` derives from PyPI (tests/kb/test_refresh.py
re-derives it); cuda.yaml holds the facts cuenv's checks read. No network here.
"""

from __future__ import annotations

import pytest

from cuenv.knowledge import derive, matrix, refresh

VENDOR = refresh.load()


def _rows(section: str, key: str) -> dict[str, dict]:
    return {derive.minor(r[key]): r for r in VENDOR[section]}


def test_every_vendor_row_names_its_wheel() -> None:
    for section in refresh.KEYS:
        for row in VENDOR[section]:
            assert row["source"].startswith("pypi:") and ".whl" in row["source"], row


@pytest.mark.parametrize("row", VENDOR["host_compilers"], ids=lambda r: r["cuda"])
def test_host_compiler_row_matches_the_header(row: dict) -> None:
    kb = next(r for r in matrix.kb()["host_compilers"] if r["cuda"] == row["cuda"])
    assert (kb["gcc_max"], kb["clang_max"], kb.get("msvc")) == (row["gcc_max"], row["clang_max"], row["msvc"])
    assert "VENDOR" in kb["sources"]
    assert matrix.max_gcc(row["cuda"]) == row["gcc_max"]


def test_host_compiler_rows_not_on_pypi_cite_another_source() -> None:
    derived = {r["cuda"] for r in VENDOR["host_compilers"]}
    for kb in matrix.kb()["host_compilers"]:
        assert kb["cuda"] in derived or (kb["sources"] and "VENDOR" not in kb["sources"]), kb


@pytest.mark.parametrize("row", VENDOR["ptx_isa"], ids=lambda r: r["ptx"])
def test_ptx_isa_row_matches_cccl(row: dict) -> None:
    """Every PTX ISA CCCL's header states is in cuda.yaml with the same CUDA release, citing VENDOR."""
    kb = next((r for r in matrix.kb()["ptx_isa"] if r["ptx"] == row["ptx"]), None)
    assert kb is not None, f"PTX ISA {row['ptx']} (CUDA {row['cuda']}) is missing from cuda.yaml"
    assert kb["cuda"] == row["cuda"] and "VENDOR" in kb["sources"]
    assert matrix.ptx_isa_cuda(row["ptx"]) == row["cuda"]


def test_ptx_isa_reaches_cuda_13_5() -> None:
    assert [matrix.ptx_isa_cuda(p) for p in ("9.3", "9.4", "9.5")] == ["13.3", "13.4", "13.5"]


@pytest.mark.parametrize("release", [r for r in matrix.torch_releases() if matrix.torch_pypi_default(r)], ids=str)
def test_torch_pypi_default_matches_the_wheel(release: str) -> None:
    """Every release whose PyPI wheel the tables describe (1.13 on; 1.0-1.12 are known by their builds alone)."""
    row = _rows("torch", "torch").get(release)
    assert row is not None, f"torch {release}: the tables name its PyPI wheel's CUDA, the vendor rows have no wheel"
    default = matrix.kb()["pytorch"]["releases"][matrix.torch_releases().index(release)]["pypi_default"]
    assert default["cuda"] == row["cuda"]
    assert default["cudnn"] == derive.Pin(None, row["cudnn"]).exact
    if "cudart" in default:
        assert f"=={default['cudart']}" == row["cudart"]
    assert matrix.torch_pypi_default(release) == "cu" + row["cuda"].replace(".", "")


def test_every_torch_release_on_pypi_is_known() -> None:
    assert set(_rows("torch", "torch")) <= set(matrix.torch_releases())


@pytest.mark.parametrize("row", VENDOR["tensorflow"], ids=lambda r: r["tensorflow"])
def test_tensorflow_row_matches_and_cuda(row: dict) -> None:
    build = matrix.tf_build(row["tensorflow"])
    assert build is not None, f"tensorflow {row['tensorflow']} missing from cuda.yaml"
    assert build.cuda == row["cuda"]
    assert build.cudnn == derive.minor(derive.Pin(None, row["cudnn"]).lowest or "")


@pytest.mark.parametrize("extra", matrix.jax_extras())
def test_jax_plugin_minimum_cuda_matches_the_newest_plugin(extra: str) -> None:
    rows = [r for r in VENDOR["jax"] if r["plugin"] == f"jax-{extra}-plugin"]
    newest = max(rows, key=lambda r: derive.Version(r["version"]))
    plugin = next(p for p in matrix.kb()["jax"]["plugins"] if p["extra"] == extra)
    assert plugin["min_cuda"] == newest["cuda"]


@pytest.mark.parametrize("row", VENDOR["onnxruntime"], ids=lambda r: r["onnxruntime_gpu"])
def test_onnxruntime_gpu_build_matches_the_wheel(row: dict) -> None:
    """Every onnxruntime-gpu minor whose wheel records its CUDA (build_and_package_info.py) is in cuda.yaml
    with that CUDA, citing VENDOR; the table says nothing of a release it lacks, or of a nightly."""
    kb = next((r for r in matrix.kb()["onnxruntime_gpu"]["builds"] if r["release"] == derive.minor(row["onnxruntime_gpu"])), None)
    assert kb is not None and kb["cuda"] == row["cuda"] and "VENDOR" in kb["sources"], row
    assert matrix.onnxruntime_gpu_cuda(row["onnxruntime_gpu"]) == row["cuda"]
    assert matrix.onnxruntime_gpu_cuda(row["onnxruntime_gpu"] + ".dev20260210001") is None


def test_onnxruntime_gpu_rows_all_come_from_wheels() -> None:
    derived = {derive.minor(r["onnxruntime_gpu"]) for r in VENDOR["onnxruntime"]}
    assert {r["release"] for r in matrix.kb()["onnxruntime_gpu"]["builds"]} == derived
    assert matrix.onnxruntime_gpu_cuda("1.18.0") is None  # its wheel records no CUDA: not covered


def test_torch_companions_match_their_wheels() -> None:
    """Every torchvision/torchaudio row cuenv reads is the torch pin its Linux wheel's METADATA states, and back."""
    derived = {(r["project"], str(r["version"])): str(r["torch"]) for r in VENDOR["companions"]}
    table = {(r["project"], r["release"]): r["torch"] for r in matrix.kb()["torch_companions"]["releases"]}
    assert table == derived and len(table) > 40
    assert all("VENDOR" in r["sources"] for r in matrix.kb()["torch_companions"]["releases"])
    assert matrix.companion_torch("torchvision", "0.20.0") == "2.5.0"
    assert matrix.companion_torch("torchvision", "0.20.0+cu121") == "2.5.0" and matrix.companion_torch("torchvision", "9.9") is None
