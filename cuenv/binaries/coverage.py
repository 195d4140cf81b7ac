"""Which GPUs a scanned file runs on: natively (SASS), only by PTX JIT, or not at all. Pure.

The rules (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility";
"Feature Availability" for the ``a`` and ``f`` targets):

* SASS for sm_XY runs on compute capability X.Z for Z >= Y (same major); sm_XYa (arch-specific)
  only on X.Y itself; sm_XYf (family-specific) on the family members X.Z, Z >= Y.
* PTX for compute_XY is JIT-compiled by the driver for any compute capability >= X.Y;
  compute_XYa only for X.Y, compute_XYf for X.Z, Z >= Y. The driver must know the PTX ISA version
  (a CUDA 13.0 toolkit writes PTX 9.0, which a CUDA 12 driver rejects).
* Every fat binary is a module the runtime loads on its own (one per translation unit). Libraries
  carry modules built for some GPUs only and launch them only there: cuBLASLt has sm_80-only and
  sm_90-only modules, PyTorch's FlashAttention module has sm_80 and up. So a library runs on a GPU
  natively when some module has SASS for it, only by JIT when no module has SASS but some has PTX
  it can use, and not at all when no module has either: then any kernel it launches fails with "no
  kernel image is available". The modules without code for the GPU are counted, not judged.
  Modules without kernels (nvcc's device-link stub, ``Entry.empty``) are never launched and do not count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from cuenv.binaries.fatbin import Entry
from cuenv.binaries.scan import FileReport

NATIVE: Final = "native"
JIT: Final = "jit"
NONE: Final = "none"
_RANK: Final = {NATIVE: 0, JIT: 1, NONE: 2}


def cc_key(cc: str) -> tuple[int, int]:
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


def sass_runs(entry: Entry, cc: tuple[int, int]) -> bool:
    have = (entry.arch // 10, entry.arch % 10)
    if entry.variant == "a":
        return have == cc
    return have[0] == cc[0] and have[1] <= cc[1]


def ptx_jits(entry: Entry, cc: tuple[int, int]) -> bool:
    have = (entry.arch // 10, entry.arch % 10)
    if entry.variant == "a":
        return have == cc
    if entry.variant == "f":
        return have[0] == cc[0] and have[1] <= cc[1]
    return have <= cc


@dataclass(frozen=True)
class Coverage:
    """One file on one compute capability."""

    cc: str
    status: str  # native | jit | none
    modules: int  # fat binaries with SASS or PTX
    jit_modules: int  # of those, how many only by PTX JIT
    missing_modules: int  # of those, how many without code for this GPU (specialised for others)
    ptx_version: str | None  # the newest PTX ISA version JIT would compile here; None without JIT


def covers(report: FileReport, cc: str) -> Coverage | None:
    """How ``report``'s file runs on compute capability ``cc``; None when it has no GPU code."""
    want = cc_key(cc)
    modules = native = jit = missing = 0
    ptx: tuple[int, int] | None = None
    for fb in report.fatbins:
        code = [e for e in fb.entries if e.loadable]
        if not code:
            continue
        modules += 1
        if any(e.kind == "sass" and sass_runs(e, want) for e in code):
            native += 1
            continue
        usable = [e for e in code if e.kind == "ptx" and ptx_jits(e, want)]
        if not usable:
            missing += 1
            continue
        jit += 1
        # The driver JITs the newest PTX that fits; the oldest ISA among modules is not the limit.
        best = max(usable, key=lambda e: e.arch)
        version = cc_key(best.ptx_version or "0.0")
        ptx = version if ptx is None or version > ptx else ptx
    if not modules:
        return None
    status = NATIVE if native else JIT if jit else NONE
    return Coverage(cc, status, modules, jit, missing, f"{ptx[0]}.{ptx[1]}" if ptx else None)


def worst(statuses: list[str]) -> str:
    return max(statuses, key=_RANK.__getitem__) if statuses else NATIVE
