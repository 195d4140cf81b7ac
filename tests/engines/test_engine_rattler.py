"""The rattler engine end to end on the local channel of repackaged NVIDIA binaries."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cuenv.engines import get_engine
from cuenv.engines.base import (
    HashMismatch,
    PackagesNotFound,
    Request,
    Solution,
    Target,
    Unsatisfiable,
)
from cuenv.engines.rattler import channel_source, virtual_packages
from cuenv.errors import UsageError

SPECS = ("cuda-cudart", "cuda-version 12.1.*", "cuda-nvcc-tools", "cuenv-hello")


@pytest.fixture
def engine():
    return get_engine("rattler", os.environ)


def _request(channel: Path, specs: tuple[str, ...] = SPECS) -> Request:
    return Request(engine="rattler", python=None, conda_channels=(str(channel),), conda_specs=specs)


def test_virtual_packages_from_the_target() -> None:
    assert virtual_packages(Target(cuda="12.4", glibc="2.36"), kernel="6.1.0") == (
        ("__unix", "0", "0"), ("__linux", "6.1.0", "0"), ("__glibc", "2.36", "0"), ("__cuda", "12.4", "0"),
        ("__archspec", "1", "x86_64"),
    )
    no_driver = virtual_packages(Target(cuda=None, glibc=None), host_glibc="2.31")
    assert ("__glibc", "2.31", "0") in no_driver and not [v for v in no_driver if v[0] == "__cuda"]
    with pytest.raises(UsageError, match="'abc' is not a valid CUDA version"):
        virtual_packages(Target(cuda="abc", glibc="2.36"))


def test_channel_source(tmp_path: Path) -> None:
    assert channel_source("conda-forge") == "conda-forge"
    assert channel_source("https://conda.anaconda.org/nvidia") == "https://conda.anaconda.org/nvidia"
    assert channel_source(str(tmp_path)) == tmp_path.resolve().as_uri()


def test_solve_install_and_read_back(engine, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    solution = engine.solve(_request(conda_channel), target=Target(cuda="12.4", glibc="2.36"), cache_dir=cache_dir)
    assert [(p.name, p.version, p.build) for p in solution.packages] == [
        ("cuda-cudart", "12.1.105", "h0_0"), ("cuda-nvcc-tools", "12.1.105", "h0_0"),
        ("cuda-version", "12.1", "h0_0"), ("cuenv-hello", "1.0", "h0_0"),
    ]
    cudart = solution.find("cuda-cudart")
    assert cudart.url == (conda_channel / "linux-64" / "cuda-cudart-12.1.105-h0_0.conda").resolve().as_uri()
    assert cudart.channel == conda_channel.resolve().as_uri() and cudart.subdir == "linux-64"
    assert len(cudart.sha256) == 64 and len(cudart.md5) == 32
    assert Solution.from_json(solution.to_json()) == solution

    prefix = tmp_path / "envs" / "cu121"
    engine.install(prefix, solution, cache_dir=cache_dir)
    assert engine.installed(prefix) == solution.packages
    assert (prefix / "etc" / "cuenv-hello.txt").read_text() == f"prefix={prefix}\n"  # placeholder rewritten
    layout = engine.layout(prefix)
    assert layout.kind == "conda" and layout.cuda_home == prefix
    assert layout.lib_dirs == (prefix / "lib", prefix / "targets/x86_64-linux/lib")
    assert layout.include_dirs == (prefix / "targets/x86_64-linux/include",)
    probe = ("import ctypes; lib = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); "
             "print(lib.cudaRuntimeGetVersion(ctypes.byref(v)), v.value)")
    env = dict(os.environ, LD_LIBRARY_PATH=str(layout.lib_dirs[0]))
    assert subprocess.run(["python3", "-c", probe], env=env, capture_output=True, text=True, check=True).stdout.split() == ["0", "12010"]
    ptxas = subprocess.run([str(layout.bin_dirs[0] / "ptxas"), "--version"], capture_output=True, text=True, check=True)
    assert "release 12.1" in ptxas.stdout


def test_too_low_cuda_is_refused_with_the_solver_tree(engine, conda_channel: Path, cache_dir: Path) -> None:
    with pytest.raises(Unsatisfiable) as info:
        engine.solve(_request(conda_channel, ("cuda-cudart", "cuda-version 12.1.*")), target=Target(cuda="11.8", glibc="2.36"),
                     cache_dir=cache_dir)
    assert "__cuda >=12" in info.value.message and "cuda-version 12.1 would constrain" in info.value.message
    assert info.value.hint.startswith("The target driver supports CUDA 11.8; this stack needs a newer one.")
    # The same driver gets the CUDA 11.8 stack, and a target with no driver ignores __cuda (as conda does).
    old = engine.solve(_request(conda_channel, ("cuda-cudart", "cuda-version 11.8.*")), target=Target(cuda="11.8", glibc="2.36"),
                       cache_dir=cache_dir)
    assert old.find("cuda-cudart").version == "11.8.89"
    none = engine.solve(_request(conda_channel, ("cuda-version 12.1.*",)), target=Target(cuda=None, glibc="2.36"), cache_dir=cache_dir)
    assert none.find("cuda-version").version == "12.1"


def test_missing_package_and_bad_spec(engine, conda_channel: Path, cache_dir: Path) -> None:
    target = Target(cuda="12.4", glibc="2.36")
    with pytest.raises(PackagesNotFound) as info:
        engine.solve(_request(conda_channel, ("nope-pkg",)), target=target, cache_dir=cache_dir)
    assert info.value.names == ("nope-pkg",)
    with pytest.raises(UsageError, match="Invalid conda spec"):
        engine.solve(_request(conda_channel, ("cuda-cudart >=<1",)), target=target, cache_dir=cache_dir)
    with pytest.raises(UsageError, match="at least one channel"):
        engine.solve(Request(engine="rattler", python=None, conda_specs=("x",)), target=target, cache_dir=cache_dir)


def test_edited_sha256_is_refused_before_anything_is_linked(engine, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    solution = engine.solve(_request(conda_channel), target=Target(cuda="12.4", glibc="2.36"), cache_dir=cache_dir)
    edited = solution.replace(packages=tuple(
        p.replace(sha256="0" * 64) if p.name == "cuenv-hello" else p for p in solution.packages
    ))
    prefix = tmp_path / "never"
    with pytest.raises(HashMismatch) as info:
        engine.install(prefix, edited, cache_dir=cache_dir)
    assert info.value.what == "cuenv-hello-1.0-h0_0.tar.bz2"
    assert not prefix.exists()


def test_tampered_archive_is_refused(engine, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    from tests.engines import channel as builder

    copy = builder.copy_channel(conda_channel, tmp_path / "chan")
    solution = engine.solve(_request(copy, ("cuda-version 12.1.*",)), target=Target(cuda="12.4", glibc="2.36"), cache_dir=tmp_path / "c")
    archive = copy / "noarch" / "cuda-version-12.1-h0_0.tar.bz2"
    archive.write_bytes(archive.read_bytes() + b"\0")
    with pytest.raises(HashMismatch):
        engine.install(tmp_path / "p", solution, cache_dir=tmp_path / "c")
    assert not (tmp_path / "p").exists()


def test_switching_a_prefix_to_another_solution(engine, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    target = Target(cuda="12.4", glibc="2.36")
    new = engine.solve(_request(conda_channel, ("cuda-cudart", "cuda-version 12.1.*")), target=target, cache_dir=cache_dir)
    old = engine.solve(_request(conda_channel, ("cuda-cudart", "cuda-version 11.8.*")), target=target, cache_dir=cache_dir)
    prefix = tmp_path / "p"
    engine.install(prefix, old, cache_dir=cache_dir)
    assert (prefix / "lib" / "libcudart.so.11.0").exists()
    engine.install(prefix, new, cache_dir=cache_dir)
    assert engine.installed(prefix) == new.packages
    assert not (prefix / "lib" / "libcudart.so.11.0").exists()
