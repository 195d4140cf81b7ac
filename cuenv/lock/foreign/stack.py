"""The CUDA stack a set of locked packages needs, read from the packages themselves (issue 15 §3). Pure.

A lockfile names no "CUDA version"; its packages do, in several ways at once:

============================================  ==============================================================
evidence                                      example
============================================  ==============================================================
the CUDA runtime package                      conda ``cuda-cudart 11.8.89``, ``cudatoolkit 11.3.1``;
                                              wheel ``nvidia-cuda-runtime-cu12 12.1.105``
the framework's build                         conda ``pytorch`` build ``py3.10_cuda11.8_cudnn8.7.0_0`` (pytorch
                                              channel), ``cuda126_mkl_py312_h..._300`` (conda-forge);
                                              wheel ``torch 2.4.1+cu121``; PyPI's default torch wheel
other wheels' builds                          ``vllm 0.26.0+cu129``, ``xformers 0.0.28+cu118`` (local tags)
the CUDA meta packages                        ``pytorch-cuda 11.8``, ``cuda-version 12.1``
a virtual-package requirement                 ``__cuda >=12`` in a package's depends (in its constrains it
                                              bounds a driver only where there is one: not a need)
cuDNN                                         conda ``cudnn 8.9.2``, wheel ``nvidia-cudnn-cu12 9.1.0.70``, the
                                              ``cudnnX.Y`` of a pytorch-channel build
nvcc                                          conda ``cuda-nvcc``, ``nvcc_linux-64``; CUDA 13 wheel ``nvidia-cuda-nvcc``
============================================  ==============================================================

The runtime that is actually installed wins (it is what the driver must serve), then the
framework's build, then the meta packages, then ``__cuda``; a wheel built with a newer release of the
same major raises it (its binaries need what that release needs); every other source that disagrees is
reported, not hidden. A framework wheel in the pip layer over conda packages (conda's pytorch 1.13.1
for CUDA 11.7 and a torch 2.3.1+cu121 wheel) is what Python imports: the pip layer's runtime and
framework then come first, and the conda packages that disagree are the reported conflicts.
Architectures come from the knowledge base only where it knows that exact build (torch wheels);
otherwise they are left unknown rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from cuenv.engines.base import Package
from cuenv.knowledge import wheelcuda
from cuenv.knowledge.packages import CONDA_CUDA_META, CUDA_CONDA, canonical, nvidia_major
from cuenv.knowledge.stack import Stack
from cuenv.lock.model import PLATFORMS, os_of

# The pytorch channel: py3.10_cuda11.8_cudnn8.7.0_0, py3.8_cuda10.2.89_cudnn7.6.5_0, py3.10_cuda11.8_cudnn8_0.
_PYTORCH_CHANNEL: Final = re.compile(r"^py\d+\.\d+_cuda(\d+)\.(\d+)(?:\.\d+)*(?:_cudnn(\d+)(?:\.(\d+))?(?:\.\d+)*)?_\d+$")
# conda-forge: cuda126_mkl_py312_h..._300, cuda120_py311h..._0, cpu_mkl_..., cpu_generic_...
_CONDA_FORGE: Final = re.compile(r"^cuda(\d{2,3})_")
_CPU_BUILD: Final = re.compile(r"(^|_)cpu(_|$)|^py\d+\.\d+_\d+$")
_CUDA_SPEC: Final = re.compile(r"^__cuda(?:\s*(?P<op>>=|==|=|>|~=)?\s*(?P<version>\d+(?:\.\d+)?))?")
_RUNTIME_WHEEL: Final = re.compile(r"^nvidia-cuda-runtime(-cu(\d+))?$")
_CUDNN_WHEEL: Final = re.compile(r"^nvidia-cudnn(-cu\d+)?$")
_JAX_PLUGIN: Final = re.compile(r"^jax-(cuda\d+)-plugin$")


@dataclass(frozen=True)
class Derived:
    """A stack and how it was read: ``evidence`` says where each number came from, ``conflicts``
    what else in the file disagrees."""

    stack: Stack
    evidence: tuple[str, ...]
    conflicts: tuple[str, ...] = ()


def mm(version: str) -> str | None:
    """"11.8.89" -> "11.8"; None when the version has no numeric major.minor."""
    match = re.match(r"^(\d+)\.(\d+)", version)
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def derive(packages: Iterable[Package], *, platform: str, label: str,
           depends: Mapping[str, Iterable[str]] | None = None, constrains: Mapping[str, Iterable[str]] | None = None,
           virtual_packages: Iterable[str] = ()) -> Derived:
    """The stack ``packages`` need on ``platform``; see the module docstring for the evidence read.
    ``depends``/``constrains``: each conda package's requirements and run constraints (``__cuda``)."""
    pkgs = sorted(packages, key=lambda p: p.key)
    by_name = {(p.kind, canonical(p.name)): p for p in pkgs}
    cuda: list[tuple[str, str]] = []  # (version, where from), strongest first
    cudnn: list[tuple[str, str]] = []
    evidence: list[str] = []
    framework = _framework(by_name, platform)
    runtime = [(mm(p.version), f"{p.name} {p.version}", p.kind) for p in pkgs
               if (p.kind == "conda" and p.name in CUDA_CONDA["libcudart"])
               or (p.kind == "pypi" and _RUNTIME_WHEEL.match(canonical(p.name)))]
    # the wheel forms as one reader knows them (cuda-toolkit 13.0.2 of torch 2.11+): cuenv.knowledge.wheelcuda
    runtime += [(found.cuda, f"{p.name} {p.version}", p.kind) for p in pkgs
                if p.kind == "pypi" and canonical(p.name) == "cuda-toolkit"
                and (found := wheelcuda.from_requirements([f"cuda-toolkit=={p.version}"])).cuda]
    if framework is not None and framework.layer == "pypi" and framework.stack.cuda:
        # Two truths (conda's pytorch/cudatoolkit and a torch wheel in the pip layer): PyPI packages install
        # over conda's, so Python imports the wheel, which loads its own CUDA; its layer decides, and the conda
        # packages that say otherwise are reported as conflicts.
        cuda += [(v, why) for v, why, kind in runtime if v and kind == "pypi"]
        cuda.append((framework.stack.cuda, framework.why))
        cuda += [(v, why) for v, why, kind in runtime if v and kind == "conda"]
        if any(v != framework.stack.cuda for v, _ in cuda):
            evidence.append(f"Python imports {framework.why} (PyPI packages install over conda's): its CUDA decides")
    else:
        cuda += [(v, why) for v, why, _ in runtime if v]
        if framework is not None and framework.stack.cuda:
            cuda.append((framework.stack.cuda, framework.why))
    cuda += [(v, f"{p.name} {p.version}") for p in pkgs if p.kind == "conda" and p.name in CONDA_CUDA_META
             for v in [mm(p.version)] if v]
    cuda += list(_cuda_floors(depends or {}))
    cudnn += [(v, f"{p.name} {p.version}") for p in pkgs
              if (p.kind == "conda" and p.name == "cudnn") or (p.kind == "pypi" and _CUDNN_WHEEL.match(canonical(p.name)))
              for v in [mm(p.version)] if v]
    if framework is not None and framework.stack.cudnn:
        cudnn.append((mm(framework.stack.cudnn) or framework.stack.cudnn, framework.why))
    nvcc = [p for p in pkgs if (p.kind == "conda" and p.name in CUDA_CONDA["nvcc"])
            or (p.kind == "pypi" and canonical(p.name) == "nvidia-cuda-nvcc")]  # cu11/cu12 nvcc wheels hold no nvcc
    # Other wheels built for a CUDA release (vllm 0.26.0+cu129, xformers ...+cu118): the set needs the newest
    # release any of its binaries was built with, within the runtime's major; another major is a conflict.
    built = [(found.cuda, f"{p.name} {p.version}") for p in pkgs
             if p.kind == "pypi" and canonical(p.name) != "torch" and "+" in p.version
             and (found := wheelcuda.from_version(p.version)).cuda]
    chosen_cuda = cuda[0][0] if cuda else None
    chosen_cudnn = cudnn[0][0] if cudnn else None
    newer = [(v, why) for v, why in built if chosen_cuda is None or (v.split(".")[0] == chosen_cuda.split(".")[0]
                                                                     and _release(v) > _release(chosen_cuda))]
    if newer:
        top = max(newer, key=lambda b: _release(b[0]))
        if chosen_cuda:
            evidence.append(f"CUDA {top[0]} from {top[1]}, built with it: newer than {cuda[0][1]}")
        cuda.insert(0, top)
        chosen_cuda = top[0]
    cuda += [b for b in built if b not in cuda]
    # NVIDIA's libraries for another CUDA major than the chosen one (xgboost 3.4's nvidia-nccl-cu13 beside torch's cu12
    # set, held-out-14): CUDA 13's wheels install apart (nvidia/cu13/), so the set holds both and the driver must
    # serve the newest; cu11 and cu12 wheels write the same folders, which is a conflict
    other = sorted({(m, f"{p.name} {p.version}") for p in pkgs if p.kind == "pypi" and (m := nvidia_major(canonical(p.name))) is not None
                    and chosen_cuda and m != int(chosen_cuda.split(".")[0])})
    apart = [(m, why) for m, why in other if m >= 13 and m > int(str(chosen_cuda).split(".")[0])]
    if apart:
        major, why = apart[-1]
        evidence.append(f"CUDA {major} from {why}, beside CUDA {chosen_cuda} from {cuda[0][1]}: CUDA {major}'s wheels "
                        f"install apart (nvidia/cu{major}/), and the driver must serve CUDA {major}")
        cuda.insert(0, (f"{major}.0", why))
        chosen_cuda = f"{major}.0"
    conflicts_of_major = [f"{why} is built for CUDA {m}, whose wheels share folders with CUDA {chosen_cuda}'s"
                          for m, why in other if (m, why) not in apart and m < 13 and chosen_cuda and int(chosen_cuda.split(".")[0]) < 13]
    if chosen_cuda:
        evidence.insert(0, f"CUDA {chosen_cuda} from {cuda[0][1]}")
    else:
        evidence.insert(0, "no CUDA package, CUDA build or __cuda requirement is locked: a CPU-only stack")
    if chosen_cudnn:
        evidence.append(f"cuDNN {chosen_cudnn} from {cudnn[0][1]}")
    if framework is not None:
        evidence.append(f"{framework.stack.framework} {framework.stack.framework_version} "
                        f"({framework.stack.variant or 'build unknown'}) from {framework.why}")
    if nvcc:
        evidence.append(f"nvcc from {nvcc[0].name} {nvcc[0].version}")
    # A platform's virtual packages are what it was solved with, not what its packages need:
    # pixi's `cuda = "12"` platform may well lock a CPU build.
    evidence += [f"solved for {vp.strip()} (pixi platform)" for vp in virtual_packages if vp.strip().startswith("__cuda")]
    conflicts = [f"{why} says CUDA {v}" for v, why in cuda[1:] if v != chosen_cuda and not _is_floor_of(v, chosen_cuda, why)
                 and not (apart and v.split(".")[0] != str(chosen_cuda).split(".")[0])]  # the major beside: said in evidence
    conflicts += conflicts_of_major
    # `constrains: __cuda >=12.4` (ffmpeg's NVENC builds) needs no CUDA: it bounds a driver only where one is
    for floor, why in _cuda_floors(constrains or {}, verb="constrains"):
        if chosen_cuda is None or _release(floor) > _release(chosen_cuda):
            evidence.append(f"{why}: it needs no CUDA, but where a driver is present conda picks this build "
                            f"only if it serves CUDA {floor}")
    conflicts += [f"{why} says cuDNN {v}" for v, why in cudnn[1:] if v != chosen_cudnn]
    base = framework.stack if framework is not None else Stack(label=label, cuda=None)
    arch_known = framework is not None and framework.stack.cuda == chosen_cuda
    stack = base.replace(
        label=label, cuda=chosen_cuda, cudnn=chosen_cudnn,
        sass=base.sass if arch_known else (), ptx=base.ptx if arch_known else (),
        has_nvcc=bool(nvcc) and chosen_cuda is not None, os=(os_of(platform) if platform in PLATFORMS else "linux",),
    )
    return Derived(stack=stack, evidence=tuple(evidence), conflicts=tuple(dict.fromkeys(conflicts)))


@dataclass(frozen=True)
class _Framework:
    stack: Stack
    why: str
    layer: str = "conda"  # conda | pypi: a PyPI wheel is what Python imports when both are locked


def _framework(by_name: Mapping[tuple[str, str], Package], platform: str) -> _Framework | None:
    from cuenv.knowledge import builds, matrix

    torch = by_name.get(("pypi", "torch"))
    if torch is not None:
        base, _, local = torch.version.partition("+")
        variant = local.lower() or (None if platform.startswith("linux") else "cpu")
        found = builds.torch_stack(base, variant) if matrix.torch_release(base) else None
        tagged = wheelcuda.from_version(torch.version)
        if found is None and variant and tagged.cuda:
            found = Stack(label="", cuda=tagged.cuda, framework="torch", framework_version=base, variant=variant)
        if found is None and local == "cpu":
            found = Stack(label="", cuda=None, framework="torch", framework_version=base, variant="cpu")
        if found is not None:
            kind = f"the {'PyPI default ' if not local else ''}wheel torch {torch.version}"
            return _Framework(found, kind, "pypi")
    pytorch = by_name.get(("conda", "pytorch")) or by_name.get(("conda", "libtorch"))
    if pytorch is not None and pytorch.build:
        why = f"{pytorch.name} {pytorch.version} build {pytorch.build}"
        channel = _PYTORCH_CHANNEL.match(pytorch.build)
        forge = _CONDA_FORGE.match(pytorch.build)
        if channel:
            cuda = f"{int(channel.group(1))}.{int(channel.group(2))}"
            cudnn = ".".join(g for g in channel.group(3, 4) if g) or None  # win-64 builds say only cudnn8
            return _Framework(Stack(label="", cuda=cuda, cudnn=cudnn, framework="torch",
                                    framework_version=pytorch.version, variant="cu" + cuda.replace(".", "")), why)
        if forge:
            digits = forge.group(1)
            cuda = f"{int(digits[:-1])}.{int(digits[-1])}"
            return _Framework(Stack(label="", cuda=cuda, framework="torch", framework_version=pytorch.version,
                                    variant="cu" + digits), why)
        if _CPU_BUILD.search(pytorch.build):
            return _Framework(Stack(label="", cuda=None, framework="torch", framework_version=pytorch.version,
                                    variant="cpu"), why)
    for (kind, name), pkg in sorted(by_name.items()):
        match = _JAX_PLUGIN.match(name) if kind == "pypi" else None
        if match:
            found = builds.jax_stack(pkg.version, match.group(1))
            if found is not None:
                return _Framework(found, f"the wheel {pkg.name} {pkg.version}", "pypi")
    paddle = by_name.get(("pypi", "paddlepaddle-gpu"))
    if paddle is not None:
        post = re.match(r"^(?P<base>.+?)\.(?P<post>post\d+)$", paddle.version)
        found = builds.paddle_stack(post.group("base"), post.group("post")) if post else None
        if found is not None:
            return _Framework(found, f"the wheel paddlepaddle-gpu {paddle.version}", "pypi")
    return None


def _cuda_floors(depends: Mapping[str, Iterable[str]], *, verb: str = "requires") -> Iterable[tuple[str, str]]:
    """``__cuda >=12`` in depends (or constrains): the lowest CUDA a driver must serve."""
    seen: dict[str, str] = {}
    for name, specs in sorted(depends.items()):
        for spec in specs:
            match = _CUDA_SPEC.match(spec.strip())
            if match and match.group("version") and match.group("op") not in (">",):
                version = mm(match.group("version") + ".0") or match.group("version")
                seen.setdefault(version, f"{name} {verb} {spec.strip()}")
    for version in sorted(seen, key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True):
        yield version, seen[version]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _is_floor_of(floor: str, chosen: str | None, why: str) -> bool:
    """``__cuda >=12`` agrees with CUDA 12.1: a floor is a conflict only when the chosen CUDA is below it."""
    if chosen is None or "requires" not in why:
        return False
    return _release(floor) <= _release(chosen)


