"""cuenv.engines.pypiroute: which CUDA build PyPI serves, read from real wheel metadata (PEP 658)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.engines import mirrors
from cuenv.engines import pypiroute as r
from tests.engines import pypimirror

FIXTURES = Path(__file__).with_name("fixtures") / "pypi-metadata"
METADATA = {
    "2.4.1": "torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl",
    "2.5.1": "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl",
    "2.6.0": "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl",
    "2.9.1": "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl",
    "2.11.0": "torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl",
}
VENDOR = ("https://download.pytorch.org/whl/cu121",)


def meta(version: str) -> str:
    return (FIXTURES / (METADATA[version] + ".metadata")).read_text(encoding="utf-8")


@pytest.mark.parametrize(("version", "cuda", "req"), [
    ("2.4.1", "12.1", "nvidia-cuda-runtime-cu12==12.1.105"),
    ("2.5.1", "12.4", "nvidia-cuda-runtime-cu12==12.4.127"),
    ("2.6.0", "12.4", "nvidia-cuda-runtime-cu12==12.4.127"),
    ("2.9.1", "12.8", "nvidia-cuda-runtime-cu12==12.8.90"),
    # torch 2.11+ requires NVIDIA's cuda-toolkit meta-package, not nvidia-cuda-runtime (issue 27)
    ("2.11.0", "13.0", "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.2"),
])
def test_cuda_build_from_real_torch_metadata(version: str, cuda: str, req: str) -> None:
    assert r.cuda_of_metadata(meta(version)) == (cuda, req)


def test_markers_for_other_platforms_and_extras_do_not_count() -> None:
    text = ("Metadata-Version: 2.1\nName: fw\nVersion: 1\n"
            'Requires-Dist: nvidia-cuda-runtime-cu11==11.8.89; platform_machine == "aarch64"\n'
            'Requires-Dist: nvidia-cuda-runtime-cu12==12.6.77; extra == "cuda"\n'
            "Requires-Dist: nvidia-cuda-runtime==13.0.96\n\nRequires-Dist: nvidia-cuda-runtime-cu12==12.1.1\n")
    assert r.cuda_of_metadata(text) == ("13.0", "nvidia-cuda-runtime==13.0.96")
    assert r.cuda_of_metadata("Name: x\nRequires-Dist: numpy\n") == (None, None)


@given(st.text(max_size=400))
def test_metadata_parser_never_raises(text: str) -> None:
    cuda, req = r.cuda_of_metadata(text)
    assert (cuda is None) == (req is None)


@given(st.integers(11, 19), st.integers(0, 9), st.integers(0, 999))
def test_any_runtime_pin_gives_its_major_minor(major: int, minor: int, patch: int) -> None:
    text = f"Name: fw\nRequires-Dist: nvidia-cuda-runtime-cu{major} (=={major}.{minor}.{patch})\n"
    assert r.cuda_of_metadata(text)[0] == f"{major}.{minor}"


def _index_page(version: str, *, metadata: bool | None) -> str:
    files = [{"filename": f"torch-{version}-{t}-manylinux_2_28_x86_64.whl", "url": f"https://f.example/{t}.whl",
              "size": 1000, **({} if metadata is None else {"core-metadata": metadata})}
             for t in ("cp313-cp313", "cp311-cp311")]
    return json.dumps({"files": files})


def test_target_python_first_and_a_range_read_when_no_metadata_is_served() -> None:
    """torch 2.14.1: the index served no .metadata; the wheel's own METADATA answers (issue 27)."""
    asked: list[str] = []

    def fetch(url: str, accept: str):
        asked.append(url)
        if url.endswith("/torch/"):
            return _index_page("2.14.1", metadata=None), "application/vnd.pypi.simple.v1+json"
        raise OSError("HTTP 404")

    read: list[str] = []

    def read_wheel(wheel: r.IndexFile) -> str:
        read.append(wheel.filename)
        return meta("2.11.0").replace("13.0.2", "13.0.3")

    found = r.pypi_build("torch", "2.14.1", fetch=fetch, python="3.11", read_wheel=read_wheel)
    assert found.cuda == "13.0" and "cuda-toolkit[" in found.evidence
    assert asked[1].endswith("/cp311-cp311.whl.metadata")  # the environment's Python first, not cuenv's own
    assert read == ["torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"]


def test_a_failed_range_read_is_an_answer() -> None:
    def fetch(url: str, accept: str):
        if url.endswith("/torch/"):
            return _index_page("2.14.1", metadata=False), "application/vnd.pypi.simple.v1+json"
        raise AssertionError("metadata=False: no .metadata is asked for")

    def read_wheel(wheel: r.IndexFile) -> str:
        raise OSError("connection reset")

    found = r.pypi_build("torch", "2.14.1", fetch=fetch, python="3.11", read_wheel=read_wheel)
    assert found.cuda is None and "connection reset" in found.evidence


def test_requirements_lose_the_local_label() -> None:
    assert r.strip_local(["torch==2.4.1+cu121", "numpy<2"], "torch") == ("torch==2.4.1", "numpy<2")
    assert r.strip_local(["numpy"], "torch") is None
    assert r.pinned_project(["numpy<2", "Torch==2.4.1+cu121"], ["torch", "paddlepaddle-gpu"]) == ("torch", "2.4.1")
    assert r.pinned_project(["torch>=2"], ["torch"]) is None


# -- the decision ------------------------------------------------------------------------------------
def build(version: str, cuda: str | None) -> r.PypiBuild:
    return r.PypiBuild("torch", version, cuda, "nvidia-cuda-runtime-cu12==... in torch-...whl")


def plan(setting: str, version: str, cuda_on_pypi: str | None) -> r.Route:
    return r.plan(cuda="12.1", project="torch", version=version, vendor_indexes=VENDOR,
                  requirements=(f"torch=={version}+cu121",), setting=setting, build=build(version, cuda_on_pypi))


def test_pypi_first_takes_pypi_when_its_build_is_the_recipes() -> None:
    route = plan("pypi-first", "2.4.1", "12.1")
    assert (route.first.name, route.first.index_urls, route.first.requirements) == ("pypi", ("https://pypi.org/simple",), ("torch==2.4.1",))
    assert route.then is not None and route.then.index_urls == VENDOR
    assert "is the CUDA 12.1 build" in route.reason


def test_pypi_first_goes_to_the_vendor_for_another_build() -> None:
    route = plan("pypi-first", "2.5.1", "12.4")
    assert (route.first.name, route.then) == ("vendor", None)
    assert "CUDA 12.4 build" in route.reason


def test_vendor_first_falls_back_to_pypi_only_for_the_same_build() -> None:
    assert plan("vendor-first", "2.4.1", "12.1").then.name == "pypi"
    assert plan("vendor-first", "2.5.1", "12.4").then is None
    assert plan("vendor", "2.4.1", "12.1") == r.Route(r.Source("vendor", VENDOR, ("torch==2.4.1+cu121",)), None,
                                                      "torch 2.4.1 from https://download.pytorch.org/whl/cu121",
                                                      build("2.4.1", "12.1"), "12.1")


def test_pypi_only_refuses_another_build_with_the_reason() -> None:
    with pytest.raises(r.RouteRefused, match=r"torch 2.5.1 for CUDA 12.1 is not on PyPI: PyPI's torch 2.5.1 is the CUDA 12.4 build"):
        plan("pypi", "2.5.1", "12.4")


def test_refusal_names_the_versions_pypi_serves() -> None:
    err = r.refusal(project="torch", version="2.5.1", cuda="12.1", vendor_indexes=VENDOR, reason="connection refused",
                    builds=[build("2.3.1", "12.1"), build("2.4.1", "12.1"), build("2.5.1", "12.4")], recipe="torch-cu121")
    assert err.message == ("torch 2.5.1 for CUDA 12.1 needs the vendor index https://download.pytorch.org/whl/cu121, "
                           "which failed: connection refused.")
    assert err.hint.startswith("PyPI serves the CUDA 12.1 build of torch 2.3.1, 2.4.1: `cuenv create torch-cu121@2.4.1`")


# -- asking an index through its mirror ----------------------------------------------------------------------
@pytest.fixture
def torch_mirror(tmp_path: Path):
    extra = {name: (FIXTURES / (name + ".metadata")).read_bytes() for name in METADATA.values()}
    root = pypimirror.build_mirror(tmp_path / "mirror", [], extra_metadata=extra)
    with pypimirror.serve(root) as base:
        yield base


def test_build_is_read_through_the_mirror_and_cached(torch_mirror: str, tmp_path: Path) -> None:
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixtures are the cp311 wheels' metadata")
    mirror = mirrors.merge([("test", [(mirrors.PYPI_SIMPLE, torch_mirror + "/simple")])])
    found = r.pypi_build("torch", "2.4.1", mirrors=mirror, cache_dir=tmp_path / "cache")
    assert (found.cuda, found.evidence) == ("12.1", "nvidia-cuda-runtime-cu12==12.1.105 in " + METADATA["2.4.1"])

    def offline(url: str, accept: str):  # the answer now comes from the cache alone
        raise OSError("offline")

    assert r.pypi_build("torch", "2.4.1", mirrors=mirror, cache_dir=tmp_path / "cache", fetch=offline) == found
    cached = json.loads((tmp_path / "cache" / "pypi-route.json").read_text())
    assert list(cached["builds"]) == ["https://pypi.org/simple|torch|2.4.1"]
    assert r.pypi_build("torch", "9.9.9", mirrors=mirror).evidence.endswith("lists no Linux x86_64 wheel of torch 9.9.9")


def test_an_unreachable_index_is_an_answer_not_an_exception(tmp_path: Path) -> None:
    mirror = mirrors.merge([("test", [(mirrors.PYPI_SIMPLE, "http://127.0.0.1:9/simple")])])
    found = r.pypi_build("torch", "2.4.1", mirrors=mirror, cache_dir=tmp_path)
    assert found.cuda is None and found.evidence.startswith("http://127.0.0.1:9/simple/torch/ could not be read (")
    assert not (tmp_path / "pypi-route.json").exists()  # a failure is not remembered


def test_json_index_pages_are_read_too() -> None:
    page = json.dumps({"meta": {"api-version": "1.1"}, "files": [
        {"filename": "torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl", "url": "../../f/torch.whl", "core-metadata": {"sha256": "00"}},
        {"filename": "torch-2.4.1-cp311-none-macosx_11_0_arm64.whl", "url": "https://x/t.whl"},
    ]})
    files = r.parse_index(page, "application/vnd.pypi.simple.v1+json", "https://m.example/simple/torch/")
    assert files[0] == r.IndexFile("torch-2.4.1-cp311-cp311-manylinux1_x86_64.whl", "https://m.example/f/torch.whl", True)
    assert [f.filename for f in r.linux_wheels(files, "torch", "2.4.1", python="3.11")] == [files[0].filename]


@pytest.mark.network
def test_pypi_itself_says_torch_2_4_1_is_the_cu121_build() -> None:
    found = r.pypi_build("torch", "2.4.1")
    if found.cuda is None:
        pytest.skip(f"PyPI's metadata could not be read here: {found.evidence}")
    assert found.cuda == "12.1"
