"""A stack is what a build asks of a machine (its hardware contract); a finding (cuenv.knowledge.findings)
is one verdict on it.

Recipes, environments, lockfiles and specs such as ``torch==2.1.0+cu121`` all reduce to a Stack,
so one pure ``check(stack, machine)`` answers "will this run there?" for every one of them.
"""

from __future__ import annotations

from cuenv.plain import Plain

__all__ = ["Stack"]  # findings have their own module, cuenv.knowledge.findings (start-up, issue 29)


class Stack(Plain):
    """A plain class (no ``dataclasses``: `list` builds one per environment, issue 29); read-only by convention."""

    __slots__ = ("label", "cuda", "cudnn", "sass", "ptx", "has_nvcc", "os", "framework", "framework_version",
                 "variant", "unknown", "arch_x86_only", "arch_aarch64")

    def __init__(self, label: str, cuda: str | None, cudnn: str | None = None, sass: tuple[str, ...] = (),
                 ptx: tuple[str, ...] = (), has_nvcc: bool = False, os: tuple[str, ...] = ("linux",),
                 framework: str | None = None, framework_version: str | None = None, variant: str | None = None,
                 unknown: str | None = None, arch_x86_only: bool = False,
                 arch_aarch64: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> None:
        self.label = label  # what the user named: "torch-cu121", "torch==2.1.0+cu121", "env:myenv"
        self.cuda = cuda  # CUDA runtime "12.1"; None for a CPU-only build
        self.cudnn = cudnn  # "9.1"
        self.sass = sass  # compute capabilities with SASS, e.g. ("7.0", "8.0", "9.0")
        self.ptx = ptx  # compute capabilities embedded as PTX
        self.has_nvcc = has_nvcc  # ships a compiler, so the host gcc matters
        self.os = os
        self.framework = framework  # "torch"
        self.framework_version = framework_version  # "2.5.1"
        self.variant = variant  # "cu121", "cpu", "post118"
        self.unknown = unknown  # why cuenv's tables neither list nor rule out this build; None = known
        # sass/ptx above hold for every platform unless arch_x86_only: then they are the x86_64 (and Windows)
        # wheel's, and arch_aarch64 is the (sass, ptx) of the aarch64 wheel where known (None = unknown)
        self.arch_x86_only = arch_x86_only
        self.arch_aarch64 = arch_aarch64
