"""A scan judged for a machine: the findings, their messages and fixes (issue 20)."""

from __future__ import annotations

from cuenv.binaries import assess
from cuenv.binaries.fatbin import Entry, Fatbin
from cuenv.binaries.scan import FileReport, Owner, ScanReport
from cuenv.knowledge.stack import Stack
from cuenv.machine.model import Driver, Gpu, Machine

ROOT = "/envs/demo"
EXT = FileReport(f"{ROOT}/lib/python3.11/site-packages/myext/_C.so", 1,
                 (Fatbin(0, (Entry("sass", 75, "", False, None, 1), Entry("sass", 86, "", False, None, 1),
                             Entry("ptx", 90, "", True, "9.0", 1))),),
                 owner=Owner("myext", "0.1", "pip"))
PTX_ONLY = FileReport(f"{ROOT}/lib/libjit.so", 1, (Fatbin(0, (Entry("ptx", 75, "", True, "9.0", 1),)),))


def machine(driver: str | None, *ccs: str) -> Machine:
    drv = Driver(driver, None, "flag") if driver else None
    return Machine(drv, tuple(Gpu(i, f"GPU {i}", cc) for i, cc in enumerate(ccs)))


def codes(a: assess.Assessment) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in a.findings]


def test_an_extension_built_for_other_gpus_is_named_with_its_package() -> None:
    a = assess.assess(ScanReport(ROOT, (EXT,), 3, 0), machine("580.65.06", "8.0", "8.0", "8.6"))
    [missing] = a.findings
    assert (missing.code, missing.severity) == ("kernels-missing", "error")
    assert missing.message == (
        "lib/python3.11/site-packages/myext/_C.so (myext==0.1) has no kernels for the GPU 0 and GPU 1 (8.0): it carries"
        " SASS sm_75 sm_86, PTX compute_90 ('no kernel image is available for execution on the device').")
    assert "myext with sm_80 kernels" in missing.fix and 'TORCH_CUDA_ARCH_LIST="8.0"' in missing.fix
    assert "`cuenv suggest --cc 8.0`" in missing.fix
    [lib] = a.libraries
    assert [(r.cc, r.status) for r in lib.runs] == [("8.0", "none"), ("8.6", "native")]
    assert lib.to_json()["owner"] == "myext==0.1"


def test_ptx_jit_needs_a_driver_that_knows_the_ptx_isa() -> None:
    old = assess.assess(ScanReport(ROOT, (PTX_ONLY,), 1, 0), machine("550.54.14", "8.9"))
    assert codes(old) == [("kernels-ptx-too-new", "error")]
    assert "ISA 9.0, from CUDA 13.0" in old.findings[0].message and "supports CUDA 12.4" in old.findings[0].message
    assert old.findings[0].fix.startswith("Install an NVIDIA driver >= 580.65.06")
    new = assess.assess(ScanReport(ROOT, (PTX_ONLY,), 1, 0), machine("580.65.06", "8.9"))
    assert codes(new) == [("kernels-ptx-jit", "warning")]
    assert "needs a driver for CUDA >= 13.0 (>= 580.65.06)" in new.findings[0].message
    unknown = assess.assess(ScanReport(ROOT, (PTX_ONLY,), 1, 0), machine(None, "8.9"))
    assert codes(unknown) == [("kernels-ptx-jit", "warning")]


def test_without_a_gpu_the_kernels_are_listed_not_checked() -> None:
    a = assess.assess(ScanReport(ROOT, (EXT,), 1, 0), machine(None))
    assert codes(a) == [("kernels-not-checked", "info")] and a.libraries[0].runs == ()
    empty = assess.assess(ScanReport(ROOT, (), 7, 0), machine(None, "8.0"))
    assert codes(empty) == [("kernels-none-found", "info")]
    assert empty.findings[0].message == f"No CUDA kernels (fat binaries) in the 7 shared objects of {ROOT}."


def test_damaged_files_are_findings() -> None:
    bad = FileReport(f"{ROOT}/lib/libcut.so", 10, problems=("not a valid ELF file: truncated",), owner=Owner("cut", "1", "conda"))
    a = assess.assess(ScanReport(ROOT, (bad,), 1, 0, problems=()), machine(None, "8.0"))
    assert codes(a) == [("kernels-unreadable", "warning")]
    assert a.findings[0].message.startswith("lib/libcut.so (cut 1 (conda)) could not be read completely: not a valid ELF")


def test_the_recipe_arch_list_is_held_against_the_framework_files() -> None:
    torch = FileReport(f"{ROOT}/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", 1,
                       (Fatbin(0, (Entry("sass", 75, "", True, None, 1), Entry("sass", 86, "", True, None, 1),
                                   Entry("ptx", 86, "", True, "8.4", 1))),),
                       owner=Owner("torch", "2.5.1", "pip"))
    said = Stack("torch-cu124", "12.4", sass=("7.5", "8.0"), ptx=("8.6",), framework="torch")
    a = assess.assess(ScanReport(ROOT, (torch, EXT), 2, 0), machine(None), declared=said)
    mismatch = [f for f in a.findings if f.code == "kernels-arch-mismatch"]
    assert [f.message for f in mismatch] == [
        "The recipe of torch-cu124, against lib/python3.11/site-packages/torch/lib/libtorch_cuda.so (torch==2.5.1):"
        " declares SASS 8.0 that it lacks; does not declare SASS 8.6 that it carries. cuenv's checks follow the files,"
        " not the declaration."]
    # A vendor library bundled in the framework's wheel, with its own arch list, does not count.
    bundled = FileReport(f"{ROOT}/lib/python3.11/site-packages/torch/lib/libcublasLt.so.11", 1,
                         (Fatbin(0, (Entry("sass", 35, "", True, None, 1),)),), owner=Owner("torch", "2.5.1", "pip"))
    bigger = FileReport(torch.path, 1, torch.fatbins * 2, owner=torch.owner)  # more modules than the bundled one
    again = assess.assess(ScanReport(ROOT, (bundled, bigger), 2, 0), machine(None), declared=said)
    assert [f.message for f in again.findings if f.code == "kernels-arch-mismatch"] == [f.message for f in mismatch]
    agreed = Stack("torch-cu124", "12.4", sass=("7.5", "8.6"), ptx=("8.6",), framework="torch")
    assert not [f for f in assess.assess(ScanReport(ROOT, (torch,), 1, 0), machine(None), declared=agreed).findings
                if f.code == "kernels-arch-mismatch"]


def test_a_component_of_a_package_that_runs_natively_is_a_warning() -> None:
    """cuSPARSELt inside the torch wheel on a Pascal GPU: torch runs (sm_60), cuSPARSELt has nothing for 6.1."""
    torch = Owner("torch", "2.5.1", "pip")
    main = FileReport(f"{ROOT}/torch/lib/libtorch_cuda.so", 1, (Fatbin(0, (Entry("sass", 60, "", True, None, 1),)),), owner=torch)
    part = FileReport(f"{ROOT}/torch/lib/libcusparseLt.so.0", 1, (Fatbin(0, (Entry("sass", 80, "", True, None, 1),)),), owner=torch)
    a = assess.assess(ScanReport(ROOT, (main, part), 2, 0), machine("550.54.14", "6.1"))
    assert codes(a) == [("kernels-missing", "warning")]
    assert a.findings[0].message.endswith("Other libraries of torch==2.5.1 run on it natively, so the package may use"
                                          " this one only on other GPUs.")
    alone = assess.assess(ScanReport(ROOT, (part,), 1, 0), machine("550.54.14", "6.1"))
    assert codes(alone) == [("kernels-missing", "error")]
