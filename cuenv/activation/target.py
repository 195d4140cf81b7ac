"""Where an environment's CUDA pieces are, whatever engine built it (issue 4 §4).

Activation, doctor and export only ever look at this record, never at engine internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from cuenv.plain import Plain


class CudaLayout(Plain):
    """A plain class (no ``dataclasses``: `list` reads one per environment, issue 29); read-only by convention."""

    __slots__ = ("prefix", "kind", "bin_dirs", "lib_dirs", "include_dirs", "cuda_home")

    def __init__(self, prefix: Path, kind: str, bin_dirs: tuple[Path, ...] = (), lib_dirs: tuple[Path, ...] = (),
                 include_dirs: tuple[Path, ...] = (), cuda_home: Path | None = None) -> None:
        self.prefix = prefix  # the environment's root (conda prefix, venv dir, or system toolkit)
        self.kind = kind  # conda | venv | system
        self.bin_dirs = bin_dirs  # first on PATH: the env's bin, then nvcc/ptxas dirs
        self.lib_dirs = lib_dirs  # first on LD_LIBRARY_PATH: libcudart, cuDNN, cuBLAS, ...
        self.include_dirs = include_dirs
        self.cuda_home = cuda_home  # a tree with bin/, include/, lib64/ for tools that want $CUDA_HOME


@dataclass(frozen=True)
class ActivationTarget:
    """Everything `cuenv use` needs to switch a shell to one environment."""

    name: str  # "torch-cu121" or "system:13.0"
    layout: CudaLayout
    env_vars: Mapping[str, str] = field(default_factory=dict)  # the recipe's variables
    activate_scripts: tuple[Path, ...] = ()  # conda's etc/conda/activate.d/*.sh (posix shells)
    shims_dir: Path | None = None  # the shims of the CUDA tools it lacks: on PATH right after its own bins
    # conda's activate.d/deactivate.d scripts that may run (paths relative to the prefix): None = all of
    # them (packages cuenv installed from their channel or lock, hashes checked); an unpacked archive's
    # are only those of packages proven against the package itself (issue 31 §4)
    conda_scripts: frozenset[str] | None = None
