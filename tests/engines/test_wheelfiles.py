"""NVIDIA wheels of two CUDA majors judged by the files they write, not their names (issue 25 §4): cu11 and
cu12 wheels share site-packages/nvidia/<component>/, CUDA 13 wheels live under nvidia/cu13/."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest

from cuenv.engines.base import MixedCudaMajors, Package
from cuenv.engines.venv import check_one_cuda_major
from cuenv.engines.wheelfiles import Unreadable, clashes, wheel_files


def _wheel(folder: Path, name: str, version: str, paths: list[str]) -> Package:
    filename = f"{name.replace('-', '_')}-{version}-py3-none-manylinux2014_x86_64.whl"
    path = folder / filename
    with zipfile.ZipFile(path, "w") as zf:
        for item in ["nvidia/__init__.py", *paths, f"{name.replace('-', '_')}-{version}.dist-info/RECORD"]:
            zf.writestr(item, f"{name} {item}")
    return Package(name, version, "pypi", path.as_uri(), "0" * 64, filename=filename)


def test_cu12_and_cu13_wheels_write_different_files_and_share_a_venv(tmp_path):
    cu12 = _wheel(tmp_path, "nvidia-cublas-cu12", "12.8.4.1", ["nvidia/cublas/include/cublas.h",
                                                               "nvidia/cublas/lib/libcublas.so.12"])
    cu13 = _wheel(tmp_path, "nvidia-cuda-runtime", "13.0.96", ["nvidia/cu13/include/cuda_runtime.h",
                                                               "nvidia/cu13/lib/libcudart.so.13"])
    assert check_one_cuda_major([cu12, cu13], files=lambda p: wheel_files(p.url)) == 13
    with pytest.raises(MixedCudaMajors):  # by names alone, as before
        check_one_cuda_major([cu12, cu13])


def test_cu11_and_cu12_wheels_that_write_the_same_file_are_refused_naming_it(tmp_path):
    cu11 = _wheel(tmp_path, "nvidia-cublas-cu11", "11.11.3.6", ["nvidia/cublas/include/cublas.h"])
    cu12 = _wheel(tmp_path, "nvidia-cublas-cu12", "12.8.4.1", ["nvidia/cublas/include/cublas.h"])
    with pytest.raises(MixedCudaMajors) as err:
        check_one_cuda_major([cu11, cu12], files=lambda p: wheel_files(p.url))
    assert "nvidia-cublas-cu11 and nvidia-cublas-cu12 both write nvidia/cublas/include/cublas.h" in err.value.message


def test_an_unreadable_file_list_falls_back_to_the_names(tmp_path):
    cu12 = _wheel(tmp_path, "nvidia-cublas-cu12", "12.8.4.1", ["nvidia/cublas/include/cublas.h"])
    gone = Package("nvidia-cuda-runtime", "13.0.96", "pypi", (tmp_path / "nowhere.whl").as_uri(), "0" * 64)
    with pytest.raises(MixedCudaMajors) as err:
        check_one_cuda_major([cu12, gone], files=lambda p: wheel_files(p.url))
    assert "could not be read" in err.value.message


def test_namespace_files_and_dist_info_are_not_clashes():
    assert clashes({"a": frozenset({"nvidia/__init__.py", "a-1.dist-info/RECORD"}),
                    "b": frozenset({"nvidia/__init__.py", "a-1.dist-info/RECORD"})}) is None
    assert clashes({"a": frozenset({"nvidia/x.h"}), "b": frozenset({"nvidia/x.h"})}) == ("nvidia/x.h", "a", "b")
    with pytest.raises(Unreadable):
        wheel_files("ftp://example.org/x.whl")


@pytest.mark.network
def test_a_real_cuda_13_wheel_on_pypi_is_read_by_two_range_requests():
    """nvidia-nvtx 13.0.85 (CUDA 13, no suffix) from PyPI: its files are under nvidia/cu13, read without the
    download. A fixed release: the newest may one day be a CUDA 14 one."""
    base = "https://pypi.org/pypi/nvidia-nvtx/json"
    try:
        data = json.load(urllib.request.urlopen(base, timeout=30))
    except OSError as exc:  # PyPI is the one network the suite may use; say so if it is not there
        pytest.skip(f"PyPI is not reachable: {exc}")
    wheel = next(f for f in data["releases"]["13.0.85"] if "x86_64" in f["filename"] and "manylinux" in f["filename"])
    files = wheel_files(urllib.parse.urljoin(base, wheel["url"]))
    assert any(p.startswith("nvidia/cu13/include/nvtx3/") for p in files)
    assert not any(p.startswith("nvidia/nvtx/") for p in files)


@pytest.mark.network
def test_cuda_12_and_13_nvidia_wheels_install_side_by_side(tmp_path, cache_dir):
    """Real wheels from PyPI: nvidia-nvtx-cu12 writes nvidia/nvtx/, nvidia-nvtx (CUDA 13) nvidia/cu13/: solved,
    installed, both there. cu11 + cu12 runtimes stay refused, naming a file both write."""
    from cuenv.engines import get_engine
    from cuenv.engines.base import Request, Target

    engine = get_engine("venv", {**__import__("os").environ})
    target = Target(cuda="13.0", glibc="2.36")
    request = Request(engine="venv", python=None, index_urls=("https://pypi.org/simple",),
                      requirements=("nvidia-nvtx-cu12==12.8.90", "nvidia-nvtx==13.0.85"))
    solution = engine.solve(request, target=target, cache_dir=cache_dir)
    engine.install(tmp_path / "env", solution, cache_dir=cache_dir)
    site = next((tmp_path / "env" / "lib").glob("python3.*/site-packages"))
    assert (site / "nvidia" / "nvtx" / "include").is_dir() and (site / "nvidia" / "cu13" / "include").is_dir()
    both = Request(engine="venv", python=None, index_urls=("https://pypi.org/simple",),
                   requirements=("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-runtime-cu11==11.8.89"))
    with pytest.raises(MixedCudaMajors, match="both write nvidia/cuda_runtime/"):
        engine.solve(both, target=target, cache_dir=cache_dir)
