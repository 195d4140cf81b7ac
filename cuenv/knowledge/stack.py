"""A stack is what a build asks of a machine (its hardware contract); a finding is one verdict on it.

Recipes, environments, lockfiles and specs such as ``torch==2.1.0+cu121`` all reduce to a Stack,
so one pure ``check(stack, machine)`` answers "will this run there?" for every one of them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Final, Iterable

SEVERITIES: Final = ("error", "warning", "info")

# Findings that say "this machine has no GPU to judge" rather than "this stack is wrong for it":
# building on a GPU-less login node or CI runner is normal (issue 4 §1), and activating there too.
NO_GPU_HERE: Final = frozenset({"no-driver", "no-gpu"})

# The one word per finding that tables show (`cuenv recipes`, the TUI), where a sentence does not fit.
REASON_WORD: Final = {
    "driver-too-old": "driver", "driver-minor-compat": "minor-compat", "arch-unsupported": "arch",
    "arch-ptx-jit": "ptx-jit", "no-driver": "no-driver", "no-gpu": "no-gpu", "cpu-only-build": "cpu-only",
    "cudnn-mismatch": "cudnn", "compiler-too-new": "compiler", "os-unsupported": "os",
    "build-unknown": "unknown", "gpu-ignored-by-driver": "driver-gpu",
}


@dataclass(frozen=True)
class Stack:
    label: str  # what the user named: "torch-cu121", "torch==2.1.0+cu121", "env:myenv"
    cuda: str | None  # CUDA runtime "12.1"; None for a CPU-only build
    cudnn: str | None = None  # "9.1"
    sass: tuple[str, ...] = ()  # compute capabilities with SASS, e.g. ("7.0", "8.0", "9.0")
    ptx: tuple[str, ...] = ()  # compute capabilities embedded as PTX
    has_nvcc: bool = False  # ships a compiler, so the host gcc matters
    os: tuple[str, ...] = ("linux",)
    framework: str | None = None  # "torch"
    framework_version: str | None = None  # "2.5.1"
    variant: str | None = None  # "cu121", "cpu", "post118"
    unknown: str | None = None  # why cuenv's tables neither list nor rule out this build; None = known
    # sass/ptx above hold for every platform unless arch_x86_only: then they are the x86_64 (and Windows)
    # wheel's, and arch_aarch64 is the (sass, ptx) of the aarch64 wheel where known (None = unknown)
    arch_x86_only: bool = False
    arch_aarch64: tuple[tuple[str, ...], tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Finding:
    code: str  # stable, documented in docs/reference/findings.md
    severity: str  # error | warning | info
    message: str  # names the numbers
    fix: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return asdict(self)


def no_gpu_here(findings: Iterable[Finding]) -> bool:
    """True when the only errors say this machine has no driver or GPU to judge (a login node, a CI
    runner): building and activating there is normal (issue 30 §4), so it is no failure of the stack."""
    errors = {f.code for f in findings if f.severity == "error"}
    return bool(errors) and errors <= NO_GPU_HERE
