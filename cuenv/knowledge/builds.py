"""Stacks for the builds the knowledge base knows: torch wheels, Paddle, TensorFlow, JAX, bare CUDA.

Pure factories over cuenv.knowledge.matrix. Specs (cuenv.knowledge.specs) and candidate lists (``cuenv suggest``,
the "nearest build that runs here" of a finding) both come from here, so a label always reads
like something a user can install.
"""

from __future__ import annotations

from cuenv.knowledge import matrix
from cuenv.knowledge.stack import Stack

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    from typing import Final

FRAMEWORKS: Final = ("torch", "paddle", "tensorflow", "jax", "cuda")
BOTH_OSES: Final = ("linux", "windows")


def torch_stack(version: str, variant: str | None = None, *, label: str | None = None) -> Stack | None:
    """A torch wheel: ``variant`` "cu121", "cpu", or None for the PyPI default of that release."""
    build = matrix.torch_build(version, variant)
    if build is None:
        return None
    version = _full(version)
    tag = build.variant
    if label is None:
        label = f"torch=={version}+{tag}"
    return Stack(
        label=label, cuda=build.cuda, cudnn=build.cudnn, sass=build.sass, ptx=build.ptx,
        os=BOTH_OSES, framework="torch", framework_version=version, variant=tag,
        arch_x86_only=build.cuda is not None, arch_aarch64=build.aarch64,
    )


def unlisted_stack(framework: str, version: str, variant: str, why: str, *, label: str) -> Stack | None:
    """A build cuenv's tables neither list nor rule out (torch 2.9.1+cu129): judged by its CUDA tag alone.

    Its arch list and cuDNN stay unknown; ``Stack.unknown`` carries why, and check says so.
    None when the tag names no CUDA release.
    """
    cuda = matrix.variant_cuda(variant)
    if cuda is None:
        return None
    return Stack(label=label, cuda=cuda, os=BOTH_OSES, framework=framework, framework_version=_full(version),
                 variant=variant.lower(), unknown=why)


def paddle_stack(version: str, variant: str, *, label: str | None = None) -> Stack | None:
    """paddlepaddle-gpu: variant "post118"/"default" (2.x) or an index name "cu126" (3.x); "cpu"."""
    version = _full(version)
    if variant == "cpu":
        return Stack(label=label or f"paddlepaddle=={version}", cuda=None, os=BOTH_OSES,
                     framework="paddle", framework_version=version, variant="cpu")
    build = matrix.paddle_build(version, variant)
    if build is None:
        return None
    if label is None:
        if variant.startswith("post"):
            label = f"paddlepaddle-gpu=={version}.{variant}"
        elif variant == "default":
            label = f"paddlepaddle-gpu=={version}"
        else:
            label = f"paddlepaddle-gpu=={version} --index {variant}"
    return Stack(label=label, cuda=build.cuda, cudnn=build.cudnn, os=BOTH_OSES,
                 framework="paddle", framework_version=version, variant=build.variant)


def tensorflow_stack(version: str, *, cpu: bool = False, label: str | None = None) -> Stack | None:
    """tensorflow[and-cuda], or before it a GPU build on the system's CUDA: GPU builds are Linux-only (native
    Windows GPU ended with 2.10)."""
    version = _full(version)
    build = matrix.tf_build(version)
    if build is None:
        return None
    if cpu:
        return Stack(label=label or f"tensorflow-cpu=={version}", cuda=None, os=BOTH_OSES,
                     framework="tensorflow", framework_version=version, variant="cpu")
    name = "tensorflow[and-cuda]" if build.variant == "and-cuda" else "tensorflow"
    return Stack(label=label or f"{name}=={version}", cuda=build.cuda, cudnn=build.cudnn,
                 os=("linux",), framework="tensorflow", framework_version=version, variant=build.variant)


def jax_stack(version: str, extra: str | None, *, label: str | None = None) -> Stack | None:
    """jax[cuda12] / jax[cuda13] (Linux only); extra None or "cpu" = CPU-only jax."""
    version = _full(version) if version else ""
    pin = f"=={version}" if version else ""
    if extra in (None, "cpu"):
        return Stack(label=label or f"jax{pin}", cuda=None, os=BOTH_OSES, framework="jax",
                     framework_version=version or None, variant="cpu")
    plugin = matrix.jax_plugin(extra)
    if plugin is None:
        return None
    # The plugins carry no published arch list; CUDA 13 cannot target below 7.5 (see check's
    # toolkit bound), which is the only arch fact cuenv can state for them.
    # cudnn stays None: the plugin takes a range (>= 9.x) and pip resolves the newest.
    return Stack(label=label or f"jax[{plugin.variant}]{pin}", cuda=plugin.cuda,
                 os=("linux",), framework="jax", framework_version=version or None, variant=plugin.variant)


def toolkit_stack(cuda: str, *, label: str | None = None) -> Stack | None:
    """A CUDA toolkit release: runtime plus nvcc. SASS = what its nvcc targets, PTX = the newest."""
    mm = matrix.mm_str(cuda)
    if mm not in matrix.cuda_releases():
        return None
    targets = matrix.nvcc_targets(mm)
    return Stack(label=label or f"cuda=={mm}", cuda=mm, sass=targets, ptx=targets[-1:], has_nvcc=True,
                 os=BOTH_OSES, framework=None, variant=f"cu{mm.replace('.', '')}")


def candidates(framework: str = "torch") -> list[Stack]:
    """Every build of ``framework`` the knowledge base can describe, GPU builds only."""
    out: list[Stack] = []
    if framework == "torch":
        for rel in matrix.torch_releases():
            if matrix.torch_status(rel) == "unconfirmed" or matrix.torch_pypi_default(rel) is None:
                continue  # unconfirmed, or a release known by its builds alone (before 1.13): nothing to recommend
            for variant in matrix.torch_variants(rel):
                s = torch_stack(rel, variant)
                if s is not None:
                    out.append(s)
    elif framework == "paddle":
        for rel in matrix.paddle_releases():
            if not rel[-1].isdigit():
                continue  # pre-releases are not recommended
            for variant in matrix.paddle_variants(rel):
                s = paddle_stack(rel, variant)
                if s is not None:
                    out.append(s)
    elif framework == "tensorflow":
        # a release on the system's CUDA is read in files, never suggested: cuenv cannot build its CUDA with pip
        out = [s for rel in matrix.tf_releases() if (s := tensorflow_stack(rel)) is not None and s.variant == "and-cuda"]
    elif framework == "jax":
        out = [s for extra in matrix.jax_extras() if (s := jax_stack("", extra)) is not None]
    elif framework == "cuda":
        out = [s for mm in matrix.cuda_releases() if matrix.nvcc_targets(mm) and (s := toolkit_stack(mm))]
    return out


def same_release(stack: Stack) -> list[Stack]:
    """Other GPU builds of the stack's framework release (torch 2.1.0 -> cu118, cu121)."""
    if stack.framework == "torch" and stack.framework_version:
        found = (torch_stack(stack.framework_version, v) for v in matrix.torch_variants(stack.framework_version))
    elif stack.framework == "paddle" and stack.framework_version:
        found = (paddle_stack(stack.framework_version, v) for v in matrix.paddle_variants(stack.framework_version))
    elif stack.framework == "jax":
        found = (jax_stack(stack.framework_version or "", e) for e in matrix.jax_extras())
    else:
        return []
    return [s for s in found if s is not None and s.label != stack.label]


def _full(version: str) -> str:
    """A release row "2.1" becomes an installable version "2.1.0"; full versions are kept."""
    parts = version.split(".")
    return version if len(parts) >= 3 or not version[-1:].isdigit() else ".".join(parts + ["0"] * (3 - len(parts)))
