"""Which vendor packages bring `nvcc` for a CUDA release, per engine (issue 17 §2).

`cuenv create RECIPE --with-nvcc` adds them to the recipe's install, so "I need nvcc 12.1" has a
one-command answer. Facts, with their sources:

* conda (conda, mamba, micromamba, rattler): NVIDIA's ``cuda-nvcc`` package, on conda-forge for
  every CUDA >= 12.0 (https://github.com/conda-forge/cuda-nvcc-feedstock; CUDA 12 was the first
  release packaged there component by component) and on the ``nvidia`` channel. Pinned to the release.
* venv (PyPI): only CUDA 13 wheels carry a real ``nvcc`` (``nvidia-cuda-nvcc`` puts
  ``nvidia/cu13/bin/nvcc``); ``nvidia-nvvm`` and ``nvidia-cuda-crt`` must be of the same minor or
  ptxas rejects the PTX ("Unsupported .version"). NVIDIA's cu11/cu12 ``nvidia-cuda-nvcc-cu1x`` wheels
  hold ptxas, libnvvm and headers but no ``nvcc`` (checked 12.1 ... 12.9; shared platform notes).
"""

from __future__ import annotations

from cuenv.errors import UsageError
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` or dataclasses at run time: every create of a recipe asks here (issue 29)
if TYPE_CHECKING:
    from typing import Final

CONDA_FIRST: Final = (12, 0)  # conda-forge's first CUDA with a cuda-nvcc package
WHEEL_FIRST: Final = (13, 0)  # the first CUDA whose PyPI wheels carry bin/nvcc
SUGGESTED_CONDA_ENGINE: Final = "rattler"  # a dependency of cuenv: always there


class CompilerPackages(Plain):
    __slots__ = ("engine_kind", "specs")

    def __init__(self, engine_kind: str, specs: tuple[str, ...]) -> None:
        self.engine_kind = engine_kind  # "conda" or "venv"
        self.specs = specs  # conda match specs, or pip requirements


def _release(cuda: str) -> tuple[int, int]:
    try:
        major, minor = cuda.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        raise UsageError(f"{cuda!r} is not a CUDA release like 12.1.") from None


def available(engine_kind: str, cuda: str) -> bool:
    return _release(cuda) >= (CONDA_FIRST if engine_kind == "conda" else WHEEL_FIRST)


def packages(engine_kind: str, cuda: str, *, recipe: str, has_conda: bool, name: str | None = None) -> CompilerPackages:
    """The compiler packages for ``cuda`` with this kind of engine, or a UsageError that names what
    works instead (keeping the ``-n name`` the user gave, so that it runs as written)."""
    major, minor = _release(cuda)
    if engine_kind == "conda":
        if not available("conda", cuda):
            raise UsageError(
                f"No conda package of nvcc for CUDA {cuda} on conda-forge (it starts with CUDA 12.0).",
                hint=f"Install a CUDA {cuda} toolkit from NVIDIA and run `cuenv use system:{major}.{minor}`.",
            )
        return CompilerPackages("conda", (f"cuda-nvcc={major}.{minor}",))
    if not available("venv", cuda):
        named = f" -n {name}" if name else ""
        how = (f"`cuenv create {recipe} --with-nvcc --engine {SUGGESTED_CONDA_ENGINE}{named}`" if has_conda and available("conda", cuda)
               else f"install a CUDA {cuda} toolkit and run `cuenv use system:{major}.{minor}`")
        raise UsageError(
            f"NVIDIA's CUDA {major} wheels on PyPI carry no nvcc (ptxas only), so the venv engine cannot add one.",
            hint=f"Get nvcc {major}.{minor}: {how}.",
        )
    pin = f"=={major}.{minor}.*"
    return CompilerPackages("venv", (f"nvidia-cuda-nvcc{pin}", f"nvidia-nvvm{pin}", f"nvidia-cuda-crt{pin}"))


def create_hint(*, recipe: str, cuda: str | None, has_conda: bool, venv_has_nvcc: bool, env_name: str) -> str | None:
    """The one `cuenv create` command that builds ``recipe`` with its compiler under a new name, or
    None when no engine can (then only a system toolkit helps)."""
    if not cuda:
        return None
    name = f"{env_name}-nvcc"
    if venv_has_nvcc or available("venv", cuda):
        return f"cuenv create {recipe} --with-nvcc --engine venv -n {name}"
    if has_conda and available("conda", cuda):
        return f"cuenv create {recipe} --with-nvcc --engine {SUGGESTED_CONDA_ENGINE} -n {name}"
    return None
