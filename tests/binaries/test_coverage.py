"""Which compute capabilities a file runs on, natively or by PTX JIT: the rules, one table (issue 20)."""

from __future__ import annotations

import pytest

from cuenv.binaries import coverage
from cuenv.binaries.fatbin import Entry, Fatbin
from cuenv.binaries.scan import FileReport


def sass(arch: int, variant: str = "") -> Entry:
    return Entry("sass", arch, variant, False, None, 1)


def ptx(arch: int, variant: str = "", version: str = "9.0") -> Entry:
    return Entry("ptx", arch, variant, True, version, 1)


def lib(*modules: tuple[Entry, ...]) -> FileReport:
    return FileReport("lib.so", 1, tuple(Fatbin(i, m) for i, m in enumerate(modules)))


MIXED = lib((sass(75), sass(86), ptx(90)))


@pytest.mark.parametrize(("report", "cc", "status"), [
    (MIXED, "7.5", "native"), (MIXED, "8.6", "native"), (MIXED, "8.9", "native"),  # sm_86 runs on 8.9
    (MIXED, "8.0", "none"),  # 8.0 < 8.6 and PTX 9.0 > 8.0: the classic "no kernel image" case
    (MIXED, "7.0", "none"), (MIXED, "9.0", "jit"), (MIXED, "12.0", "jit"),
    (lib((sass(90, "a"),)), "9.0", "native"), (lib((sass(90, "a"),)), "9.1", "none"),
    (lib((sass(100, "f"),)), "10.3", "native"), (lib((sass(103, "f"),)), "10.0", "none"),
    (lib((ptx(100, "a"),)), "10.0", "jit"), (lib((ptx(100, "a"),)), "10.3", "none"),
    (lib((ptx(120, "f"),)), "12.1", "jit"), (lib((ptx(120, "f"),)), "13.0", "none"),
    (lib((ptx(75),)), "12.1", "jit"),
])
def test_status(report: FileReport, cc: str, status: str) -> None:
    got = coverage.covers(report, cc)
    assert got is not None and got.status == status


def test_modules_specialised_for_other_gpus_are_counted_not_judged() -> None:
    """As in cuBLASLt (sm_80-only and sm_90-only modules) or PyTorch's FlashAttention module (sm_80 and up):
    the library runs where some module has code, and the others are counted."""
    report = lib((sass(75), sass(86)), (sass(86),), (ptx(80, version="8.4"),), ())
    assert coverage.covers(report, "7.5") == coverage.Coverage("7.5", "native", modules=3, jit_modules=0, missing_modules=2,
                                                               ptx_version=None)
    assert coverage.covers(report, "8.6") == coverage.Coverage("8.6", "native", 3, 1, 0, "8.4")
    assert coverage.covers(report, "9.0") == coverage.Coverage("9.0", "jit", 3, 1, 2, "8.4")
    assert coverage.covers(report, "7.0") == coverage.Coverage("7.0", "none", 3, 0, 3, None)


def test_jit_names_the_newest_ptx_isa_the_driver_must_accept() -> None:
    report = lib((ptx(75, version="7.8"), ptx(90, version="8.4")), (ptx(80, version="9.0"),))
    assert coverage.covers(report, "12.0") == coverage.Coverage("12.0", "jit", 2, 2, 0, "9.0")


def test_no_gpu_code_is_no_answer() -> None:
    assert coverage.covers(lib((Entry("lto-ir", 90, "", False, None, 1),)), "9.0") is None
    assert coverage.worst(["native", "jit", "native"]) == "jit" and coverage.worst([]) == "native"


def test_kernel_less_stub_modules_do_not_count() -> None:
    stub = (Entry("sass", 75, "", False, None, 1, empty=True),)
    report = lib(stub, (sass(75), ptx(75)))
    assert coverage.covers(report, "9.0") == coverage.Coverage("9.0", "jit", 1, 1, 0, "9.0")
    assert coverage.covers(lib(stub), "7.5") is None
