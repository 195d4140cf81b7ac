"""Package names: which distributions make up each framework, which are CUDA's own parts, and the one
name normaliser (issue 24 §4). Every list of package names cuenv matches against lives here, and
every comparison of package names goes through :func:`canonical`; tests/knowledge/test_packages.py
holds the rest of cuenv to that.

The names are the vendors' own, as published on PyPI and conda-forge:

- torch: PyPI ``torch``; conda ``pytorch`` (conda-forge and the pytorch channel).
- paddle: ``paddlepaddle-gpu`` (the CUDA builds, on PyPI and on Paddle's own index) and ``paddlepaddle``
  (the CPU build). Two alias tables disagreed here: `cuenv suggest` read both as "paddle" (the family,
  right), the spec reader read ``paddlepaddle`` as "paddle-cpu" (the build, right too); the family and the
  CPU-only flag are now two facts, :data:`FRAMEWORKS` and :data:`CPU_ONLY`.
- tensorflow: ``tensorflow`` (CUDA on Linux, through its ``and-cuda`` extra), ``tensorflow-cpu``, and
  ``tensorflow-gpu`` (empty on PyPI since 2.12, still pinned by older files; a meta-package on conda-forge).
- jax: ``jax`` with ``jaxlib``; CUDA comes as ``jax-cudaNN-plugin`` and ``jax-cudaNN-pjrt`` (``jax[cudaNN]``).
- CUDA parts: NVIDIA's wheels carry a ``-cu11``/``-cu12`` suffix, and from CUDA 13 none for the toolkit's
  own parts (``nvidia-cuda-runtime``, ``nvidia-cuda-nvcc``) but ``-cu13`` for cuDNN and NCCL, which
  version apart from the toolkit; conda names them ``cuda-cudart``, ``cuda-nvcc``, ``cudnn`` (and, before
  CUDA 11.8 on conda, ``cudatoolkit``).

Start-up: nothing is imported at load, and :func:`canonical` needs no ``packaging``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final

# A framework family -> its distributions on PyPI and conda, the CUDA build first.
FRAMEWORKS: Final = {
    "torch": ("torch", "pytorch"),
    "paddle": ("paddlepaddle-gpu", "paddlepaddle"),
    # tf-nightly*: TensorFlow's nightly builds on PyPI (pypi.org/project/tf-nightly), the same packaging
    "tensorflow": ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly", "tf-nightly-gpu", "tf-nightly-cpu"),
    "jax": ("jax", "jaxlib"),
}
CPU_ONLY: Final = frozenset({"paddlepaddle", "tensorflow-cpu", "tf-nightly-cpu"})  # builds without CUDA
# JAX's CUDA wheels (``jax[cuda12]``, ``jax[cuda13]``): the plugin, and the PJRT runtime it requires.
JAX_CUDA_PLUGINS: Final = ("jax-cuda12-plugin", "jax-cuda13-plugin")
JAX_CUDA_WHEELS: Final = (*JAX_CUDA_PLUGINS, "jax-cuda12-pjrt", "jax-cuda13-pjrt")
_WORDS: Final = {"tf": "tensorflow"}  # what people also call a framework (`cuenv suggest tf`)
# A bare CUDA toolkit, as a spec names it: `cuda==12.1`, PyPI's and conda's meta-package, conda's old one.
CUDA_TOOLKIT: Final = ("cuda", "cuda-toolkit", "cudatoolkit")

# One CUDA part -> NVIDIA's PyPI wheels (cu11, cu12, CUDA 13's) and the conda packages that carry it
# (conda-forge and NVIDIA's channel; ``cudatoolkit`` before CUDA 11.8, the ``nvcc_linux-*`` wrappers and
# ``cudatoolkit-dev`` of older conda-forge toolkits).
CUDA_WHEELS: Final = {
    "libcudart": ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime"),
    "cudnn": ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"),
    "nvcc": ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc"),
}
CUDA_CONDA: Final = {
    "libcudart": ("cuda-cudart", "cudatoolkit"),
    "cudnn": ("cudnn",),
    "nvcc": ("cuda-nvcc", "cuda-nvcc-tools", "nvcc_linux-64", "nvcc_linux-aarch64", "cudatoolkit-dev"),
}
CUDA_PARTS: Final = {part: CUDA_WHEELS[part] + CUDA_CONDA[part] for part in CUDA_WHEELS}  # as solutions list them
def suffix_major(digits: str) -> int:
    """The CUDA major of an NVIDIA wheel's ``-cuNN`` suffix: ``cu12`` -> 12. The older three-digit suffixes of
    pypi.nvidia.com (``nvidia-cublas-cu116``, the nvidia-tensorflow wheels) name a release: ``cu116`` -> 11."""
    return int(digits[:-1]) if len(digits) >= 3 else int(digits)


def nvidia_major(name: str) -> int | None:
    """The CUDA major an NVIDIA wheel's canonical name carries (``nvidia-nccl-cu13`` -> 13, ``nvidia-cublas-cu116``
    -> 11); None for any other name (CUDA 13's unsuffixed ``nvidia-cuda-runtime`` says it in its version)."""
    import re

    found = re.fullmatch(r"nvidia-[a-z0-9-]+-cu(\d+)", name)
    return suffix_major(found.group(1)) if found else None


# conda meta-packages whose version is the CUDA release: conda-forge's and NVIDIA's cuda-version, the
# pytorch channel's pytorch-cuda.
CONDA_CUDA_META: Final = ("pytorch-cuda", "cuda-version")
# conda packages whose pin states a CUDA release (cuenv.recipes.cudainfer), and those of them that install nvcc.
# cuda-compiler is the toolkit's compiler meta-package, versioned as the release it requires (12.1.1 runs with
# cuda-nvcc 12.1.105: conda-forge/cuda-compiler-feedstock recipe/meta.yaml@df1a335cbf7699d441fff1cad1707fdaf2b6e798).
CONDA_CUDA_PINS: Final = (*CONDA_CUDA_META, *CUDA_CONDA["libcudart"], *CUDA_CONDA["nvcc"], "cuda-toolkit", "cuda",
                          "cuda-runtime", "cuda-cudart-dev", "cuda-libraries", "cuda-compiler")
CONDA_WITH_NVCC: Final = (*CUDA_CONDA["nvcc"], "cuda-toolkit", "cuda", "cuda-compiler")
# conda builds for CUDA or the CPU, whose CUDA (if any) follows the driver when nothing else pins it;
# conda-forge's ``pytorch-gpu`` metapackage requires a ``pytorch *cuda*`` build, its CUDA the solver's choice.
# conda packages with CUDA and CPU builds of one version, the solver choosing by the driver: conda-forge's tensorflow
# too (its cudaXYZ... and cpu_... builds, conda-forge/tensorflow-feedstock)
CONDA_GPU_CAPABLE: Final = ("pytorch", "pytorch-gpu", "tensorflow", "tensorflow-gpu", "jaxlib", "cupy")
# Of those, the ones whose every CUDA build says so in its build string, so that an exact build string naming neither
# CUDA nor a GPU is a CPU build: conda-forge's tensorflow and jaxlib (their recipes' ``cuda{{ ... }}py...`` and
# ``cpu_py...`` build strings, conda-forge/tensorflow-feedstock and jaxlib-feedstock) and Anaconda's tensorflow
# (``gpu_py...`` beside ``mkl_py...`` and ``eigen_py...``; held-out-15's PhaseNet exports pin the latter two).
CONDA_BUILD_NAMES_CUDA: Final = ("tensorflow", "jaxlib")
# conda packages published for Windows only: the MSVC runtime (``vc``, ``vs2015_runtime``, ``vc14_runtime``), the
# Universal CRT (``ucrt``) and ``pywin32`` (conda-forge's vc-feedstock, ucrt-feedstock and pywin32-feedstock recipes
# build them `[win]` only; Anaconda's defaults likewise). A file that pins one was exported on Windows: conda on
# Linux finds no such package, with or without its build string (held-out-17's --no-builds exports).
CONDA_WINDOWS_ONLY: Final = ("vc", "vs2015_runtime", "vc14_runtime", "ucrt", "pywin32")
# RAPIDS' conda packages, built for CUDA only (rapidsai channel; the release selector's "Standard" packages and
# their libraries, https://docs.rapids.ai/install/ and each project's conda recipe): one without a CUDA pin
# beside it is a GPU package whose CUDA the solver picks from the driver, never a CPU-only one.
CONDA_RAPIDS: Final = ("rapids", "cudf", "dask-cudf", "libcudf", "cuml", "libcuml", "cugraph", "libcugraph",
                       "pylibcugraph", "nx-cugraph", "cuspatial", "libcuspatial", "cuproj", "cuxfilter", "cucim",
                       "pylibraft", "raft-dask", "libraft", "cuvs", "libcuvs", "rmm", "librmm", "kvikio", "libkvikio")
# Selectors of PyTorch's CPU build: the pytorch channel's ``cpuonly`` requires ``pytorch-mutex * cpu``, which
# every pytorch-channel build of pytorch/torchvision/torchaudio matches by its own mutex; conda-forge's
# ``pytorch-cpu`` metapackage requires a ``pytorch *cpu*`` build. Either decides the build the solver picks.
CONDA_TORCH_CPU: Final = ("cpuonly", "pytorch-cpu")
CONDA_TORCH_FAMILY: Final = ("pytorch", "torchvision", "torchaudio", "pytorch-gpu")
PYPI_TORCH_FAMILY: Final = ("torch", "torchvision", "torchaudio")  # released together, one CUDA build each
# cuenv.recipes.cudainfer's fallback for a requirements file uv did not resolve (offline, an index unreachable):
# packages whose PyPI metadata (Requires-Dist, directly or through one dependency) names torch. A file that lists
# one and names no torch leaves its CUDA to the resolver; the list only ever makes the answer unknown, never
# decides it: the set uv resolves does (cuenv.recipes.resolved).
TORCH_DEPENDENTS: Final = ("accelerate", "bitsandbytes", "coqui-tts", "deepspeed", "flash-attn", "kornia", "lhotse",
                           "lightning", "megatron-energon", "mmcv", "mmcv-full", "nemo-toolkit", "nerfacc",
                           "open-clip-torch", "openai-whisper", "peft", "pytorch-lightning", "sentence-transformers",
                           "sglang", "taming-transformers", "timm", "torchdiffeq", "torchmetrics", "torchsde",
                           "xformers", "xgrammar")

# PyG's compiled extensions, "with their own CPU and GPU kernel implementations", whose wheels PyG serves per torch
# build from find-links pages `https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html` (PyG's installation page,
# "Additional Libraries" and "Installation from Wheels", pytorch-geometric.readthedocs.io 2.7-2.8); PyPI has their sdists.
PYG_EXTENSIONS: Final = ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv")

# What `python -m cuenv.knowledge.refresh` reads from PyPI (cuenv.knowledge.vendor): where nvcc's host_config.h
# ships (the nvcc wheel for CUDA 11/12, the crt wheel for CUDA 13), and the projects whose releases it follows.
HOST_CONFIG_WHEELS: Final = ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-crt")
TRACKED_RELEASES: Final = ("torch", "jax", "jaxlib", "tensorflow", "paddlepaddle", "paddlepaddle-gpu", "cuda-toolkit",
                           "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu13")


def canonical(name: str) -> str:
    """The name as PyPI compares names: PEP 503's normative rule, runs of ``-_.`` become ``-``, lower case,
    as ``packaging.utils.canonicalize_name`` writes it (tests/kb/test_packages.py holds the two equal). Not an
    import of it: packaging.utils brings packaging.tags, a tenth of a warm create's instructions (issue 29)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def framework_packages() -> tuple[str, ...]:
    """Every framework distribution, family by family, each family's CUDA build first."""
    return tuple(n for names in FRAMEWORKS.values() for n in names)


def kernel_packages(family_name: str) -> tuple[str, ...]:
    """The distributions whose files hold a framework's own GPU kernels (JAX's are in its CUDA wheels)."""
    return FRAMEWORKS.get(family_name, ()) + (JAX_CUDA_WHEELS if family_name == "jax" else ())


def cuda_package_names(part: str) -> tuple[str, ...]:
    """The PyPI and conda names of one CUDA part ("libcudart", "cudnn", "nvcc"), as solutions list them."""
    return CUDA_PARTS.get(part, ())


_DISTRIBUTIONS: Final = {**{n: f for f, names in FRAMEWORKS.items() for n in names}, **{n: "cuda" for n in CUDA_TOOLKIT}}
_FAMILY_OF: Final = {**{f: f for f in FRAMEWORKS}, **_WORDS, **_DISTRIBUTIONS, **{n: "jax" for n in JAX_CUDA_WHEELS}}


def _known(name: str, table: dict[str, str]) -> str | None:
    """``canonical(name)`` when ``table`` has it. Every key is its own canonical form, so a hit on the
    lower-cased name is already the canonical one."""
    lowered = name.lower()
    if lowered in table:
        return lowered
    found = canonical(name)
    return found if found in table else None


def distribution(name: str) -> str | None:
    """The canonical name of a framework distribution or bare CUDA toolkit a spec may pin, None for others."""
    return _known(name, _DISTRIBUTIONS)


def family(name: str) -> str | None:
    """The framework family a distribution or word names ("pytorch" -> "torch", "tf" -> "tensorflow",
    "paddlepaddle" -> "paddle", "jax-cuda12-plugin" -> "jax"), "cuda" for a bare toolkit, None for others."""
    known = _known(name, _FAMILY_OF)
    return None if known is None else _FAMILY_OF[known]
