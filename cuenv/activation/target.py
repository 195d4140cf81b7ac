"""Where an environment's CUDA pieces are, whatever engine built it (issue 4 §4).

Activation, doctor and export only ever look at this record, never at engine internals.
"""

from __future__ import annotations

from pathlib import Path

from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from collections.abc import Mapping


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


class ActivationTarget(Plain):
    """Everything `cuenv use` needs to switch a shell to one environment (a plain class: start-up, issue 29)."""

    __slots__ = ("name", "layout", "env_vars", "activate_scripts", "shims_dir", "conda_scripts")

    def __init__(self, name: str, layout: CudaLayout, env_vars: Mapping[str, str] | None = None,
                 activate_scripts: tuple[Path, ...] = (), shims_dir: Path | None = None,
                 conda_scripts: frozenset[str] | None = None) -> None:
        self.name = name  # "torch-cu121" or "system:13.0"
        self.layout = layout
        self.env_vars: Mapping[str, str] = {} if env_vars is None else env_vars  # the recipe's variables
        self.activate_scripts = activate_scripts  # conda's etc/conda/activate.d/*.sh (posix shells)
        self.shims_dir = shims_dir  # the shims of the CUDA tools it lacks: on PATH right after its own bins
        # conda's activate.d/deactivate.d scripts that may run (paths relative to the prefix): None = all of
        # them (packages cuenv installed from their channel or lock, hashes checked); an unpacked archive's
        # are only those of packages proven against the package itself (issue 31 §4)
        self.conda_scripts = conda_scripts

    __hash__ = None  # type: ignore[assignment]  # holds a mapping
