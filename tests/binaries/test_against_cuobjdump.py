"""The reader against real nvcc builds and NVIDIA's own cuobjdump (issue 20, tests)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cuenv.binaries import scan
from tests.binaries import binkit

pytestmark = pytest.mark.network  # cuobjdump comes from PyPI


@pytest.mark.parametrize("spec", binkit.BUILDS, ids=[b.name for b in binkit.BUILDS])
def test_build_holds_what_nvcc_was_asked_for(spec: binkit.Build, built: dict[str, Path]) -> None:
    report = scan.scan_file(built[spec.name])
    assert report.problems == ()
    assert set(report.archs("sass")) == spec.sass
    assert set(report.archs("ptx")) == spec.ptx
    for kind in ("sass", "ptx"):
        flags = {e.compressed for e in report.entries if e.kind == kind}
        assert flags <= {kind in spec.compressed}, (kind, flags)
    assert all(e.ptx_version == "9.0" for e in report.entries if e.kind == "ptx")  # CUDA 13.0 writes PTX ISA 9.0


@pytest.mark.parametrize("spec", binkit.BUILDS, ids=[b.name for b in binkit.BUILDS])
def test_every_entry_matches_cuobjdump(spec: binkit.Build, built: dict[str, Path], cuobjdump: Path) -> None:
    """Same entries, same count, same order: cuobjdump lists ELF and PTX files in file order per kind."""
    report = scan.scan_file(built[spec.name])
    ours = binkit.as_cuobjdump_names(report.entries)
    theirs = binkit.listed_by_cuobjdump(cuobjdump, built[spec.name])
    assert theirs, "cuobjdump listed nothing"
    assert Counter(ours) == Counter(theirs)
    for kind in ("sass", "ptx"):
        assert [a for k, a in ours if k == kind] == [a for k, a in theirs if k == kind]


def test_lto_ir_is_recognised_and_not_counted_as_runnable(nvcc: str) -> None:
    spec = binkit.Build("lto", ("-rdc=true", *binkit.gencode("compute_90", "lto_90")),
                        frozenset(), frozenset(), shared=False)
    report = scan.scan_file(binkit.build(nvcc, spec))
    assert [(e.kind, e.name) for e in report.entries] == [("lto-ir", "compute_90")]
    assert not report.has_gpu_code  # LTO-IR needs a link step; the runtime cannot load it


def test_real_nvidia_library_matches_cuobjdump(nvjpeg_wheel: Path, cuobjdump: Path, tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(nvjpeg_wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("libnvjpeg.so.12"))
        lib = tmp_path / "libnvjpeg.so.12"
        lib.write_bytes(zf.read(member))
    report = scan.scan_file(lib)
    assert report.problems == ()
    assert Counter(binkit.as_cuobjdump_names(report.entries)) == Counter(binkit.listed_by_cuobjdump(cuobjdump, lib))
    assert report.archs("sass") == ("sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")
    assert report.archs("ptx") == ("compute_90",)
    # NVIDIA ships its PTX compressed, and most cubins too (one small module's are stored as is).
    assert all(e.compressed for e in report.entries if e.kind == "ptx")
    assert sum(e.compressed for e in report.entries if e.kind == "sass") == 100


@pytest.mark.parametrize("name", ["mixed", "compress-all"])
def test_the_device_link_stub_is_told_apart_from_kernels(name: str, built: dict[str, Path]) -> None:
    """nvcc links a kernel-less stub module (a cubin per SASS target, no PTX) into every shared object;
    stored or compressed, it is recognised, so a GPU reached only by PTX JIT is not reported as missing."""
    report = scan.scan_file(built[name])
    stub, kernels = report.fatbins
    assert {e.kind for e in stub.entries} == {"sass"} and all(e.empty for e in stub.entries)
    assert not any(e.empty for e in kernels.entries)
