"""Parse what someone actually installed (``torch==2.1.0+cu121``) into a Stack. Pure.

Accepted forms (name==version, extras in brackets, local tags after '+'):
  torch==2.1.0+cu121   torch==2.5.1 (the PyPI default wheel)   torch==2.3.0+cpu   torch==2.3.0 --index cu118
  paddlepaddle-gpu==2.6.1.post118   paddlepaddle-gpu==2.6.1   paddlepaddle-gpu==3.0.0 --index cu126   paddlepaddle==2.6.1
  tensorflow==2.15.0   tensorflow[and-cuda]==2.15.0   tensorflow-cpu==2.15.0
  jax[cuda12]==0.4.30   jax[cuda13]   jax==0.4.30 (CPU)
  cuda==12.1   cuda-toolkit==12.4 (a toolkit release: runtime and nvcc)
Anything else, or a release the knowledge base does not know, is a UsageError (exit 2) with a hint.
"""

from __future__ import annotations

import re

from cuenv.errors import UsageError
from cuenv.knowledge import builds, facts, matrix, packages
from cuenv.knowledge.stack import Stack

TYPE_CHECKING = False  # no `typing` at run time: `check` starts here (issue 29)
if TYPE_CHECKING:
    from typing import Final

# Patterns compiled on first use (by `re`'s own cache): a recipe's check reads none of them.
_SPEC: Final = r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?:==\s*(?P<version>[A-Za-z0-9.+!_-]+))?$"
_INDEX: Final = r"^(cu\d{3,}|cpu)$"
EXAMPLES: Final = "torch==2.1.0+cu121, paddlepaddle-gpu==2.6.1.post118, tensorflow==2.15.0, jax[cuda12]==0.4.30, cuda==12.1"


def looks_like_spec(text: str) -> bool:
    """True for text written as a package spec (has '==' or '[extras]'), as opposed to a recipe name."""
    return "==" in text or "[" in text


def parse_spec(text: str, index: str | None = None) -> Stack:
    """The Stack a package spec installs. ``index``: the cuXYZ index it came from (``--index``)."""
    m = re.match(_SPEC, text.strip())
    if not m:
        raise UsageError(f"Cannot read {text!r} as a package spec.", hint=f"Write a name, == and a version, for example {EXAMPLES}.")
    raw_name = packages.distribution(m.group("name"))
    if raw_name is None:
        raise UsageError(
            f"cuenv does not know the package {m.group('name')!r}.",
            hint=f"Known packages: {', '.join(packages.framework_packages() + packages.CUDA_TOOLKIT)}.",
        )
    kind, cpu = packages.family(raw_name), raw_name in packages.CPU_ONLY
    extras = tuple(e.strip().lower() for e in (m.group("extras") or "").split(",") if e.strip())
    version = m.group("version")
    if index is not None:
        index = index.strip().lower()
        if not re.match(_INDEX, index):
            raise UsageError(f"{index!r} is not an index name.", hint="Write the index as cuXYZ (cu126) or cpu.")
    label = text.strip() + (f" --index {index}" if index else "")
    if kind == "cuda":
        return _toolkit(version, label)
    if version is None:
        raise UsageError(f"{text!r} names no version.", hint=f"Pin the version you installed (`pip show {raw_name}` says which).")
    if kind == "torch":
        return _torch(version, index, label)
    if kind == "paddle":
        return _paddle(version, index, label, gpu=not cpu)
    if kind == "tensorflow":
        return _tensorflow(version, label, cpu=cpu or index == "cpu")
    return _jax(version, extras, label)


def _torch(version: str, index: str | None, label: str) -> Stack:
    base, _, plus = version.partition("+")
    local = plus.lower() or None
    if local and index and local != index:
        raise UsageError(f"{label!r} names two builds ({local} and {index}).", hint="Give the variant once.")
    variant = local or index
    if matrix.torch_release(base) is None:
        raise UsageError(
            f"cuenv does not know torch {base}.",
            hint="Known torch releases: " + ", ".join(matrix.torch_releases()) + ".",
        )
    stack = builds.torch_stack(base, variant, label=label)
    if stack is None and variant is not None:
        stack = _unlisted("torch", base, variant, matrix.torch_variant_fact(base, variant), label)
    if stack is None:
        known = ", ".join(("cpu",) + matrix.torch_variants(base))
        raise UsageError(f"torch {base} has no build {variant!r}.", hint=f"Builds of torch {base}: {known}.")
    return stack


def _unlisted(framework: str, version: str, variant: str, fact: facts.Fact, label: str) -> Stack | None:
    """A build the tables do not list: unknown -> judged by its CUDA tag; known-no -> refused with the source."""
    if fact.state == "no":
        name = "torch" if framework == "torch" else "paddlepaddle-gpu"
        known = matrix.torch_variants(version) if framework == "torch" else matrix.paddle_variants(version)
        raise UsageError(f"{name} {version} has no build {variant!r}: {fact.why} (source: {fact.source}).",
                         hint=f"Builds cuenv knows of {name} {version}: {', '.join(known)}.")
    if fact.state == "unknown":
        return builds.unlisted_stack(framework, version, variant, fact.why, label=label)
    return None


def _paddle(version: str, index: str | None, label: str, *, gpu: bool) -> Stack:
    base, variant = version, None
    m = re.match(r"^(?P<base>.+?)\.(?P<post>post\d+)$", version)
    if m:
        base, variant = m.group("base"), m.group("post")
    base, _, local = base.partition("+")  # 3.x wheels from Paddle's per-CUDA index: 3.3.1+cu130 (pip freeze)
    if local:
        if index and local.lower() != index:
            raise UsageError(f"{label!r} names two builds ({local} and {index}).", hint="Give the variant once.")
        variant = local.lower()
    if not gpu or index == "cpu":
        stack = builds.paddle_stack(base, "cpu", label=label)
        assert stack is not None
        return stack
    release = matrix.paddle_release(base)
    if release is None:
        raise UsageError(
            f"cuenv does not know paddlepaddle-gpu {base}.",
            hint="Known PaddlePaddle releases: " + ", ".join(matrix.paddle_releases()) + ".",
        )
    variants = matrix.paddle_variants(base)
    if variant is None:
        variant = index or ("default" if "default" in variants else None)
    if variant is None:
        raise UsageError(
            f"paddlepaddle-gpu {base} comes from a per-CUDA index; cuenv cannot tell which.",
            hint="Say which with --index, one of: " + ", ".join(variants) + ".",
        )
    stack = builds.paddle_stack(base, variant, label=label)
    if stack is None:
        stack = _unlisted("paddle", base, variant, matrix.paddle_variant_fact(base, variant), label)
    if stack is None:
        raise UsageError(f"paddlepaddle-gpu {base} has no build {variant!r}.", hint="Builds: " + ", ".join(variants) + ".")
    return stack


def _tensorflow(version: str, label: str, *, cpu: bool) -> Stack:
    stack = builds.tensorflow_stack(version, cpu=cpu, label=label)
    if stack is None:
        raise UsageError(
            f"cuenv does not know a tested GPU configuration for tensorflow {version}.",
            hint="Known TensorFlow releases: " + ", ".join(matrix.tf_releases()) + ".",
        )
    return stack


def _jax(version: str, extras: tuple[str, ...], label: str) -> Stack:
    gpu = [e.removesuffix("-local") for e in extras if e.startswith("cuda")]
    base, _, local = version.partition("+")
    tag = re.match(r"cuda(\d+)", local)  # jaxlib 0.4.x from JAX's own index: 0.4.22+cuda12.cudnn89
    if tag and not gpu:
        gpu = [f"cuda{tag.group(1)}"]
    stack = builds.jax_stack(base if tag else version, gpu[0] if gpu else None, label=label)
    if stack is None:
        raise UsageError(
            f"cuenv does not know the jax extra {gpu[0]!r}.",
            hint="Known extras: " + ", ".join(matrix.jax_extras()) + ".",
        )
    return stack


def _toolkit(version: str | None, label: str) -> Stack:
    if version is None:
        raise UsageError("A CUDA toolkit spec needs its release.", hint="For example cuda==12.1.")
    try:
        stack = builds.toolkit_stack(version, label=label)
    except UsageError:
        stack = None
    if stack is None:
        raise UsageError(
            f"cuenv does not know CUDA {version}.",
            hint="Known CUDA releases: " + ", ".join(matrix.cuda_releases()) + ".",
        )
    return stack
