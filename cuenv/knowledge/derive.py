"""Pure readers of vendor metadata: a wheel's Requires-Dist, its file name, nvcc's host_config.h.

No I/O: cuenv.knowledge.refresh fetches the text, these functions turn it into facts. Anything
they cannot read comes back as None, never as a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from packaging.markers import (
    InvalidMarker,
    UndefinedComparison,
    UndefinedEnvironmentName,
)
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from cuenv.knowledge.packages import canonical

# The machine cuenv's builds are judged for: Linux x86_64 (the only platform every vendor ships CUDA for).
LINUX_X86_64: Final = {
    "platform_system": "Linux", "sys_platform": "linux", "os_name": "posix",
    "platform_machine": "x86_64", "implementation_name": "cpython", "platform_python_implementation": "CPython",
}

# NVIDIA's wheel names: nvidia-cuda-runtime-cu12, nvidia-cuda-runtime (CUDA 13), nvidia-cudnn-cu13, ...
_NVIDIA = re.compile(r"^nvidia-(?P<lib>cuda-runtime|cudnn|nccl|cuda-nvcc|cublas)(?:-cu(?P<major>\d+))?$")


@dataclass(frozen=True)
class Pin:
    """One NVIDIA library a wheel asks for: its CUDA major and the version specifier."""

    major: int | None  # 12 for nvidia-cudnn-cu12; None for unsuffixed CUDA 13 names
    spec: str  # "==9.26.0.51", ">=9.10.2.21,<10"

    @property
    def exact(self) -> str | None:
        return exact(self.spec)

    @property
    def lowest(self) -> str | None:
        """The version the specifier pins or starts at (==, >= or ~=)."""
        from cuenv.knowledge.versions import lower_bound

        return lower_bound(self.spec)


@dataclass(frozen=True)
class Needs:
    """What a wheel pulls from NVIDIA on Linux x86_64 (with the given extras)."""

    cudart: Pin | None = None
    cudnn: Pin | None = None
    nccl: Pin | None = None
    nvcc: Pin | None = None
    toolkit: str | None = None  # cuda-toolkit[...]==13.2.2: the runtime comes from that release

    @property
    def cuda(self) -> str | None:
        """The CUDA major.minor the wheel pins (or starts at): from cuda-toolkit or the runtime wheel."""
        version = self.toolkit or (self.cudart.lowest if self.cudart else None)
        return minor(version) if version else None

    @property
    def cuda_major(self) -> int | None:
        if self.toolkit:
            return int(self.toolkit.split(".")[0])
        for pin in (self.cudart, self.cudnn, self.nccl):
            if pin is not None and pin.major is not None:
                return pin.major
        if self.cudart is not None and self.cudart.lowest:
            return int(self.cudart.lowest.split(".")[0])
        return None


def exact(spec: str) -> str | None:
    """ "==13.0.96.*" or "==9.26.0.51" -> the version; None for ranges."""
    m = re.fullmatch(r"===?([0-9]+(?:\.[0-9]+)*)(?:\.\*)?", spec)
    return m.group(1) if m else None


def _spec(req: Requirement) -> str:
    return ",".join(sorted(str(s) for s in req.specifier)) if req.specifier else ""


def applies(req: Requirement, *, python: str, extras: Iterable[str] = (), machine: str = "x86_64") -> bool:
    """Whether a requirement is installed on Linux ``machine`` under ``python`` ("3.12") with ``extras``."""
    if req.marker is None:
        return True
    env = dict(LINUX_X86_64, platform_machine=machine, python_version=python, python_full_version=f"{python}.0")
    try:
        return any(req.marker.evaluate(dict(env, extra=e)) for e in ("", *extras))
    except (UndefinedComparison, UndefinedEnvironmentName, InvalidMarker):
        return False


def needs(requires: Iterable[str], *, python: str = "3.12", extras: Iterable[str] = (), machine: str = "x86_64") -> Needs:
    """Read the CUDA pieces out of Requires-Dist lines (unparsable lines are skipped)."""
    extras = tuple(extras)
    found: dict[str, Pin] = {}
    toolkit = None
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not applies(req, python=python, extras=extras, machine=machine):
            continue
        name = canonical(req.name)
        if name == "cuda-toolkit":
            toolkit = exact(_spec(req)) or toolkit
            continue
        m = _NVIDIA.match(name)
        if m is None:
            continue
        lib = {"cuda-runtime": "cudart", "cuda-nvcc": "nvcc"}.get(m.group("lib"), m.group("lib"))
        major = int(m.group("major")) if m.group("major") else (13 if lib in ("cudart", "nvcc", "cublas") else None)
        found.setdefault(lib, Pin(major, _spec(req)))
    return Needs(found.get("cudart"), found.get("cudnn"), found.get("nccl"), found.get("nvcc"), toolkit)


def toolkit_pins(requires: Iterable[str]) -> dict[str, str]:
    """cuda-toolkit's own metadata: extra -> exact version it pins ({"cudart": "13.0.96", ...})."""
    out: dict[str, str] = {}
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        pinned = exact(_spec(req))
        m = re.search(r'extra\s*==\s*"([^"]+)"', str(req.marker or ""))
        if pinned and m:
            out.setdefault(m.group(1), pinned)
    return out


@dataclass(frozen=True)
class WheelName:
    project: str
    version: str
    pythons: tuple[str, ...]  # interpreter tags: "cp312", "cp314t", "py3"
    platforms: tuple[str, ...]  # "manylinux_2_28_x86_64", "win_amd64"


def wheel_name(filename: str) -> WheelName | None:
    try:
        name, version, _build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    # free-threaded builds carry the "t" in the ABI tag (cp314-cp314t)
    pythons = sorted({t.interpreter + ("t" if t.abi.endswith("t") and t.abi.startswith("cp") else "") for t in tags})
    platforms = sorted({t.platform for t in tags})
    return WheelName(str(name), str(version), tuple(pythons), tuple(platforms))


def platform_key(platform: str) -> str | None:
    """A wheel platform tag -> cuenv's platform name (linux-64, linux-aarch64, win-64, osx-arm64)."""
    if platform.endswith("x86_64") and ("linux" in platform):
        return "linux-64"
    if platform.endswith("aarch64") and "linux" in platform:
        return "linux-aarch64"
    if platform == "win_amd64":
        return "win-64"
    if platform.startswith("macosx") and platform.endswith(("arm64", "universal2")):
        return "osx-arm64"
    if platform.startswith("macosx") and platform.endswith("x86_64"):
        return "osx-64"
    return None


def python_key(tag: str) -> str | None:
    """Interpreter tag -> "3.12" ("3.14t" for free-threaded builds); None for py3/abi-less tags."""
    m = re.fullmatch(r"cp(\d)(\d+)(t?)", tag)
    return f"{m.group(1)}.{m.group(2)}{m.group(3)}" if m else None


def sort_pythons(keys: Iterable[str]) -> list[str]:
    def key(k: str) -> tuple[int, int, str]:
        major, minor = k.rstrip("t").split(".")
        return (int(major), int(minor), k)

    return sorted(set(keys), key=key)


# ---------------------------------------------------------------------------------------------
# nvcc's crt/host_config.h
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostLimits:
    gcc_max: int | None  # newest gcc major accepted
    clang_max: int | None  # newest clang major accepted (generic clang on Linux)
    msvc: str | None  # accepted _MSC_VER range, ">=1920,<1960"


_GCC: Final = re.compile(r"#error -- unsupported GNU version! gcc versions later than (\d+) are not supported")
_CLANG: Final = re.compile(r"#error -- unsupported clang version! clang version must be less than (\d+)")
_MSVC_IF: Final = re.compile(
    r"#if\s+_MSC_VER\s*<\s*(\d+)\s*\|\|\s*_MSC_VER\s*>=?\s*(\d+)\s*\n(?:\s*\n)*\s*#error -- unsupported Microsoft Visual Studio")


def host_limits(text: str) -> HostLimits:
    """The compiler versions nvcc's host_config.h lets through without -allow-unsupported-compiler."""
    gcc = _GCC.search(text)
    clang = _CLANG.search(text)
    msvc = _MSVC_IF.search(text)
    msvc_range = None
    if msvc:
        op = re.search(r"_MSC_VER\s*(>=?)\s*" + msvc.group(2), msvc.group(0))
        upper = int(msvc.group(2)) + (1 if op and op.group(1) == ">" else 0)
        msvc_range = f">={msvc.group(1)},<{upper}"
    return HostLimits(
        int(gcc.group(1)) if gcc else None,
        int(clang.group(1)) - 1 if clang else None,
        msvc_range,
    )


_PTX_ISA: Final = re.compile(r"//\s*PTX ISA (\d+)\.(\d+) is available from CUDA (\d+)\.(\d+)(?:,\s*driver r(\d+))?")


def ptx_isa_table(text: str) -> list[tuple[str, str, str | None]]:
    """(PTX ISA, the CUDA release that introduced it, its driver branch or None) from CCCL's ``ptx_isa.h``.

    Its comments state the table ('PTX ISA 9.0 is available from CUDA 13.0, driver r580'), oldest last;
    the result is oldest first. The text is matched, never compiled.
    """
    rows = {f"{a}.{b}": (f"{c}.{d}", drv) for a, b, c, d, drv in _PTX_ISA.findall(text)}
    ordered = sorted(rows.items(), key=lambda kv: tuple(int(p) for p in kv[0].split(".")))
    return [(ptx, cuda, drv or None) for ptx, (cuda, drv) in ordered]


_CAPS: Final = re.compile(r"""['"]cuda_compute_capabilities['"]\s*[,:]\s*\[([^\]]*)\]""")
_CAP: Final = re.compile(r"""['"](sm|compute)_(\d{2,3})[a-z]?['"]""")


def build_arch(text: str) -> tuple[list[str], list[str]] | None:
    """The SASS and PTX targets in a TensorFlow wheel's ``build_info.py`` (``cuda_compute_capabilities``).

    ``sm_89`` is SASS for 8.9, ``compute_90`` PTX for 9.0; None when the file names none. The text
    is matched, never run.
    """
    found = _CAPS.search(text)
    if found is None:
        return None
    sass: list[str] = []
    ptx: list[str] = []
    for kind, digits in _CAP.findall(found.group(1)):
        cc = f"{int(digits[:-1])}.{digits[-1]}"
        target = sass if kind == "sm" else ptx
        if cc not in target:
            target.append(cc)
    return (sass, ptx) if sass or ptx else None


# ---------------------------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------------------------


def final_versions(versions: Iterable[str]) -> list[str]:
    """Release versions (no pre/dev/local), oldest first; unparsable ones are dropped."""
    out = []
    for v in set(versions):
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not (parsed.is_prerelease or parsed.is_devrelease or parsed.local):
            out.append(parsed)
    return [str(v) for v in sorted(out)]


def newest_per_minor(versions: Iterable[str]) -> dict[str, str]:
    """{"2.14": "2.14.1", ...}: the newest release of each major.minor, oldest minor first."""
    best: dict[str, Version] = {}
    for v in final_versions(versions):
        parsed = Version(v)
        key = f"{parsed.major}.{parsed.minor}"
        if key not in best or parsed > best[key]:
            best[key] = parsed
    return {k: str(best[k]) for k in sorted(best, key=lambda k: Version(k))}


def minor(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"
