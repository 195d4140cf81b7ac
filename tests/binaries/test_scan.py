"""Scanning folders, wheels and environments: owners, the per-file cache, damaged files (issue 20)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.binaries import scan
from tests.binaries import binkit
from tests.binaries.test_parsers import GOOD
from tests.shells import envbuild

NVJPEG_SASS = ("sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")


def test_wheel_is_scanned_member_by_member_and_cached(nvjpeg_wheel: Path, tmp_path: Path) -> None:
    cold = scan.scan(nvjpeg_wheel, cache_dir=tmp_path)
    assert (cold.scanned, cold.cached, cold.problems) == (1, 0, ())
    [lib] = cold.files
    assert lib.path.endswith("!nvidia/nvjpeg/lib/libnvjpeg.so.12")
    assert lib.owner == scan.Owner("nvidia-nvjpeg-cu12", "12.3.2.81", "wheel")
    assert (lib.archs("sass"), lib.archs("ptx")) == (NVJPEG_SASS, ("compute_90",))
    warm = scan.scan(nvjpeg_wheel, cache_dir=tmp_path)
    assert (warm.scanned, warm.cached) == (1, 1)
    assert warm.files == cold.files


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, nvjpeg_wheel: Path) -> Path:
    """A real uv venv with NVIDIA's nvjpeg and a CUDA extension wheel built here by nvcc (sm_75, sm_86, PTX 9.0)."""
    nvcc = binkit.nvcc()
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    lib = binkit.build(nvcc, binkit.BUILDS[0]).read_bytes()
    ext = binkit.make_wheel(tmp_path_factory.mktemp("wheels"), "myext", "0.1", {"myext/_C.so": lib, "myext/__init__.py": b""})
    prefix = tmp_path_factory.mktemp("venv") / "env"
    envbuild.make_venv(prefix, [nvjpeg_wheel, ext], binkit.CACHE / "uv")
    return prefix


def test_environment_files_are_named_with_their_owning_package(venv: Path, tmp_path: Path) -> None:
    report = scan.scan(venv, cache_dir=tmp_path)
    assert report.problems == ()
    found = {Path(f.path).name: (f.owner.label if f.owner else None, f.archs("sass"), f.archs("ptx")) for f in report.files}
    assert found == {
        "libnvjpeg.so.12": ("nvidia-nvjpeg-cu12==12.3.2.81", NVJPEG_SASS, ("compute_90",)),
        "_C.so": ("myext==0.1", ("sm_75", "sm_86"), ("compute_90",)),
    }
    assert report.scanned >= 2 and report.cached == 0


def test_cache_answers_until_a_file_changes(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "liba.so").write_bytes(GOOD)
    (tree / "libb.so.1").write_bytes(GOOD)
    (tree / "libb.so").symlink_to("libb.so.1")  # one file, scanned once
    (tree / "README.txt").write_bytes(GOOD)  # not a library name: not opened
    os.mkfifo(tree / "libfifo.so")  # not a regular file: never opened (it would block)
    cache = tmp_path / "cache"
    first = scan.scan(tree, cache_dir=cache)
    assert (first.scanned, first.cached, len(first.files)) == (2, 0, 2)
    assert json.loads((cache / scan.CACHE_FILE).read_text())["format"] == scan.CACHE_FORMAT
    assert (scan.scan(tree, cache_dir=cache).scanned, scan.scan(tree, cache_dir=cache).cached) == (2, 2)
    (tree / "liba.so").write_bytes(b"not an elf")
    os.utime(tree / "liba.so", ns=(1, 1))
    third = scan.scan(tree, cache_dir=cache)
    assert third.cached == 1 and [Path(f.path).name for f in third.files] == ["libb.so.1"]
    (tree / "libb.so.1").unlink()  # an uninstalled package: its row leaves the cache with the next scan
    scan.scan(tree, cache_dir=cache)
    rows = json.loads((cache / scan.CACHE_FILE).read_text())["files"]
    assert [Path(k).name for k in rows] == ["liba.so"]


def test_a_damaged_cache_is_only_a_cold_scan(tmp_path: Path, nvjpeg_wheel: Path) -> None:
    (tmp_path / "c").mkdir()
    cache = tmp_path / "c" / scan.CACHE_FILE
    cache.write_text("{broken")
    lib = tmp_path / "liba.so"
    lib.write_bytes(GOOD)
    assert scan.scan(lib, cache_dir=tmp_path / "c").files[0].archs("ptx") == ("compute_90",)
    wheel = Path(shutil.copy(nvjpeg_wheel, tmp_path))
    for files in ([1, 2], {str(lib): [1, 2]},
                  {str(lib): {"size": lib.stat().st_size, "mtime": lib.stat().st_mtime_ns, "report": {"fatbins": 3}},
                   str(wheel): {"size": wheel.stat().st_size, "mtime": wheel.stat().st_mtime_ns, "members": [[1]]}}):
        cache.write_text(json.dumps({"format": scan.CACHE_FORMAT, "files": files}))
        assert scan.scan(lib, cache_dir=tmp_path / "c").files[0].archs("ptx") == ("compute_90",)
        assert scan.scan(wheel, cache_dir=tmp_path / "c").files[0].archs("ptx") == ("compute_90",)


def test_conda_prefix_owners_come_from_conda_meta(tmp_path: Path) -> None:
    # conda-meta/<name>-<version>-<build>.json as conda and rattler write it: name, version, files (prefix-relative)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libcufoo.so.1").write_bytes(GOOD)
    (tmp_path / "conda-meta").mkdir()
    (tmp_path / "conda-meta" / "cufoo-1.2-h0_0.json").write_text(
        json.dumps({"name": "cufoo", "version": "1.2", "build": "h0_0", "files": ["lib/libcufoo.so.1"]}))
    (tmp_path / "conda-meta" / "broken-1-0.json").write_text("{")
    [lib] = scan.scan(tmp_path, cache_dir=None).files
    assert lib.owner is not None and lib.owner.label == "cufoo 1.2 (conda)"


def test_damaged_files_and_wheels_are_findings(tmp_path: Path, nvjpeg_wheel: Path) -> None:
    cut = tmp_path / "libcut.so"
    cut.write_bytes(GOOD[:-100])
    report = scan.scan(cut)
    assert [len(f.problems) for f in report.files] == [1]
    bad = tmp_path / "bad-1.0-py3-none-any.whl"
    bad.write_bytes(b"PK\x03\x04 not really")
    assert "not a readable wheel" in scan.scan(bad).problems[0]
    half = tmp_path / "half-1.0-py3-none-any.whl"
    half.write_bytes(nvjpeg_wheel.read_bytes()[: 2_000_000])
    assert scan.scan(half).problems  # the central directory is gone: one clear problem, no traceback
    assert scan.scan(tmp_path / "missing.so").problems == (f"{tmp_path / 'missing.so'} does not exist",)


def test_large_folders_skip_what_is_not_a_library(tmp_path: Path) -> None:
    shutil.copytree(Path(scan.__file__).parent, tmp_path / "src")
    report = scan.scan(tmp_path, cache_dir=tmp_path / "cache")
    assert (report.scanned, report.files) == (0, ())


def _small_wheel(tmp: Path) -> bytes:
    return binkit.make_wheel(tmp, "tiny", "1.0", {"tiny/libk.so": GOOD * 4}).read_bytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=8))
def test_damaged_wheels_never_raise(tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    data = bytearray(_small_wheel(tmp_path / "src"))
    for at, value in flips:
        data[at % len(data)] = value
    wheel = tmp_path / "tiny-1.0-py3-none-any.whl"
    wheel.write_bytes(bytes(data))
    report = scan.scan(wheel)  # no cache: every example is read afresh
    assert all(isinstance(p, str) for p in report.problems)
    assert all(isinstance(p, str) for f in report.files for p in f.problems)


def test_a_real_conda_prefix_names_its_packages(tmp_path: Path) -> None:
    """A conda package holding the nvcc-built library, installed by rattler: owners come from conda-meta."""
    import asyncio

    rattler = pytest.importorskip("rattler")
    from tests.engines import channel

    nvcc = binkit.nvcc()
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    wheel = binkit.make_wheel(tmp_path / "w", "myext", "0.1", {"myext/_C.so": binkit.build(nvcc, binkit.BUILDS[0]).read_bytes()})
    spec = channel.Spec("cuda-myext", "0.1", "linux-64",
                        files=(channel.Payload("lib/libmyext.so", wheel="myext", member="myext/_C.so"),))
    archive = channel.build_archive(spec, {"myext": wheel}, tmp_path / "channel" / "linux-64")
    record = asyncio.run(rattler.RepoDataRecord.from_package_archive(archive))
    record.url = archive.as_uri()
    prefix = tmp_path / "prefix"
    asyncio.run(rattler.install([record], target_prefix=prefix, cache_dir=tmp_path / "pkgs", show_progress=False))
    [lib] = scan.scan(prefix).files
    assert (Path(lib.path).name, lib.owner) == ("libmyext.so", scan.Owner("cuda-myext", "0.1", "conda"))
    assert lib.archs("sass") == ("sm_75", "sm_86")
