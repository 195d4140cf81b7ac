"""Which CUDA a framework wheel is built for, told from what the wheel itself states. Pure.

One reader for every form torch, jax, paddle and tensorflow have used, shared by the PyPI route of
recipes (``cuenv.engines.pypiroute``), ``create -r`` and ``check`` of requirement files, and the
lockfile readers:

* requirements (METADATA ``Requires-Dist``, a lockfile's dependency list):
  ``cuda-toolkit[cublas,cudart,...]==13.0.2`` (torch 2.11+), ``nvidia-cuda-runtime-cu12==12.1.105`` /
  ``nvidia-cuda-runtime==13.0.96`` (exact pins), ``nvidia-cuda-runtime-cu12>=12.5.82,<13`` (tensorflow's
  ranges: the lower bound), any other ``nvidia-*-cuXX`` (the major only), ``jax-cudaXX-plugin`` (the major);
* the version's local tag: ``2.1.0+cu121``, ``0.4.22+cuda12.cudnn89`` (jaxlib), paddle's ``2.6.1.post118``;
* extras: ``jax[cuda12]``, ``tensorflow[and-cuda]`` (the latter says CUDA without a version: only with its requirements).

Requirements are judged with their markers for Linux on the given machine and Python, so a
``platform_machine == 'x86_64'`` pin does not leak into aarch64. Nothing is guessed: a form not
listed here gives ``cuda=None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from packaging.requirements import InvalidRequirement, Requirement

from cuenv.knowledge import derive, packages
from cuenv.knowledge.packages import canonical

_RUNTIME: Final = re.compile(r"^nvidia-cuda-runtime(?:-cu(\d+))?$")
_JAX_PLUGIN: Final = re.compile(r"^jax-cuda(\d+)-(?:plugin|pjrt)$")
_BUILD_DOTTED: Final = re.compile(r"cuda(\d+)\.(\d+)")
_BUILD_DIGITS: Final = re.compile(r"cuda(\d{3})(?![\d.])")
_LOCAL: Final = re.compile(r"\+(?:cu|cuda)(\d+)(?:\.|$)", re.IGNORECASE)
_POST: Final = re.compile(r"\.post(\d{3,})$")
_EXTRA: Final = re.compile(r"^cuda(\d+)(?:-local)?$")
# cuda-toolkit extras that carry the runtime a framework links: any of them states the CUDA release
_TOOLKIT_RUNTIME: Final = frozenset({"cudart", "all", "cuda-runtime", "cuda_runtime"})


@dataclass(frozen=True)
class WheelCuda:
    cuda: str | None  # "12.1": the CUDA major.minor the wheel is built for; None when it says only a major, or nothing
    major: int | None  # 12
    evidence: str  # what said so, as written ("cuda-toolkit[cudart]==13.0.2"), or why nothing did
    exact: bool = True  # False when the minor is a lower bound (tensorflow's ranges)

    @property
    def known(self) -> bool:
        return self.major is not None


NOTHING: Final = WheelCuda(None, None, "no CUDA requirement, tag or extra")


def _mm(version: str) -> tuple[str, int] | None:
    parts = version.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return f"{int(parts[0])}.{int(parts[1])}", int(parts[0])


def _digits(tag: str) -> tuple[str, int] | None:
    """ "121" -> ("12.1", 12); "118" -> ("11.8", 11); "92" -> None (ambiguous before 3 digits)."""
    if len(tag) < 3 or not tag.isdigit():
        return None
    return f"{int(tag[:-1])}.{int(tag[-1])}", int(tag[:-1])


def from_requirements(requires: Iterable[str], *, python: str = "3.12", machine: str = "x86_64",
                      extras: Iterable[str] = ()) -> WheelCuda:
    """The CUDA a wheel's requirements pin (see the module text for the forms), best evidence first."""
    extras = tuple(extras)
    best: WheelCuda | None = None
    rank_best = 99
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not derive.applies(req, python=python, extras=extras, machine=machine):
            continue
        name = canonical(req.name)
        pinned = derive.exact(str(req.specifier)) if req.specifier else None
        found, rank = None, 99
        if name == "cuda-toolkit" and pinned:
            mm = _mm(pinned)
            if mm:
                has_rt = bool(_TOOLKIT_RUNTIME & {e.lower() for e in req.extras}) or not req.extras
                said = f"cuda-toolkit[{','.join(sorted(req.extras))}]{req.specifier}" if req.extras else f"cuda-toolkit{req.specifier}"
                found, rank = WheelCuda(mm[0], mm[1], said), (0 if has_rt else 2)
        elif (m := _RUNTIME.match(name)) is not None:
            if pinned and (mm := _mm(pinned)):
                found, rank = WheelCuda(mm[0], mm[1], f"{name}=={pinned}"), 1
            else:
                low = derive.Pin(None, ",".join(sorted(str(s) for s in req.specifier))).lowest
                if low and (mm := _mm(low)):
                    found, rank = WheelCuda(mm[0], mm[1], f"{name}{req.specifier}", exact=False), 3
                elif m.group(1):
                    found, rank = WheelCuda(None, packages.suffix_major(m.group(1)), f"{name}{req.specifier}"), 4
        elif (major := packages.nvidia_major(name) or _jax_plugin_major(name)) is not None:
            found, rank = WheelCuda(None, major, f"{name}{req.specifier}"), 5
        if found is not None and rank < rank_best:
            best, rank_best = found, rank
    return best or NOTHING


def from_version(version: str) -> WheelCuda:
    """A local version tag or paddle's post suffix: 2.1.0+cu121, 0.4.22+cuda12.cudnn89, 2.6.1.post118."""
    m = _LOCAL.search(version)
    if m:
        got = _digits(m.group(1))
        if got:
            return WheelCuda(got[0], got[1], f"the local tag of {version}")
        if m.group(1).isdigit() and len(m.group(1)) <= 2:  # jaxlib +cuda12: the major only
            return WheelCuda(None, int(m.group(1)), f"the local tag of {version}")
    m = _POST.search(version)
    if m and (got := _digits(m.group(1))):
        return WheelCuda(got[0], got[1], f"the post suffix of {version}")
    return NOTHING


def _jax_plugin_major(name: str) -> int | None:
    """jax-cuda12-plugin -> 12."""
    found = _JAX_PLUGIN.match(name)
    return int(found.group(1)) if found else None


def from_build(build: str) -> WheelCuda:
    """A conda build string's CUDA: ``cuda10.1_0``, ``py3.9_cuda11.3_cudnn8.2.0_0`` (X.Y), conda-forge's
    ``cuda118py311h...`` and ``cuda120_py311_...`` (three digits; ``cuda92`` is ambiguous: nothing)."""
    m = _BUILD_DOTTED.search(build)
    if m:
        return WheelCuda(f"{int(m.group(1))}.{int(m.group(2))}", int(m.group(1)), f"the build {build}")
    m = _BUILD_DIGITS.search(build)
    got = _digits(m.group(1)) if m else None
    return WheelCuda(got[0], got[1], f"the build {build}") if got else NOTHING


def from_extras(extras: Iterable[str]) -> WheelCuda:
    """jax[cuda12] -> major 12."""
    for extra in extras:
        m = _EXTRA.match(extra.strip().lower())
        if m:
            return WheelCuda(None, int(m.group(1)), f"the extra [{extra.strip()}]")
    return NOTHING


def wheel_cuda(*, version: str = "", requires: Iterable[str] = (), extras: Iterable[str] = (),
               python: str = "3.12", machine: str = "x86_64") -> WheelCuda:
    """Every form at once: requirements first (what the wheel installs), then its version tag, then extras."""
    found = from_requirements(requires, python=python, machine=machine, extras=extras)
    if found.cuda is not None:
        return found
    tagged = from_version(version) if version else NOTHING
    if tagged.known and (tagged.cuda is not None or not found.known):
        return tagged
    return found if found.known else from_extras(extras)
