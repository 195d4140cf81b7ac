"""A stack is what a build asks of a machine (its hardware contract); a finding is one verdict on it.

Recipes, environments, lockfiles and specs such as ``torch==2.1.0+cu121`` all reduce to a Stack,
so one pure ``check(stack, machine)`` answers "will this run there?" for every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Findings have their own module (start-up, issue 29); their names stay importable from here too.
from cuenv.knowledge.findings import NO_GPU_HERE, REASON_WORD, SEVERITIES, Finding, no_gpu_here

__all__ = ["NO_GPU_HERE", "REASON_WORD", "SEVERITIES", "Finding", "Stack", "no_gpu_here"]


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
