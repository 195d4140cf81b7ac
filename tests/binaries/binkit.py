"""Helpers for the fat binary tests: real builds with the system nvcc, NVIDIA's cuobjdump from its
PyPI wheel, real NVIDIA library wheels, and a byte-level builder of small ELF files for the fuzz tests.

Builds are kept in the repository's ``.test-cache/fatbins/`` keyed by the source, the flags and the
nvcc version, so only the first run on a machine pays for nvcc.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import stat
import struct
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.shells.envbuild import download

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("CUENV_TEST_CACHE", REPO / ".test-cache"))
WHEELS = CACHE / "wheels"

# NVIDIA's cuobjdump, the reference the reader is checked against (the 13.x wheels hold nvidia/cu13/bin).
CUOBJDUMP_WHEEL = "nvidia-cuda-cuobjdump==13.2.51"
# A small real NVIDIA library with kernels: libnvjpeg.so.12 carries SASS sm_50..sm_90 and PTX 9.0 (3.5 MB wheel).
NVJPEG_WHEEL = "nvidia-nvjpeg-cu12==12.3.2.81"

KERNEL = """\
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
extern "C" void launch(float *a, const float *b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }
"""


@dataclass(frozen=True)
class Build:
    """One nvcc build and what it must contain (SASS and PTX by nvcc's names)."""

    name: str
    flags: tuple[str, ...]
    sass: frozenset[str]
    ptx: frozenset[str]
    compressed: frozenset[str] = frozenset()  # kinds whose every entry is compressed
    shared: bool = True


def gencode(arch: str, code: str) -> tuple[str, ...]:
    return ("-gencode", f"arch={arch},code={code}")


BUILDS: tuple[Build, ...] = (
    Build("mixed", (*gencode("compute_75", "sm_75"), *gencode("compute_86", "sm_86"), *gencode("compute_90", "compute_90")),
          frozenset({"sm_75", "sm_86"}), frozenset({"compute_90"}), frozenset({"ptx"})),
    Build("ptx-only", (*gencode("compute_75", "compute_75"), "--compress-mode=none"),
          frozenset(), frozenset({"compute_75"})),
    Build("compress-all", (*gencode("compute_80", "sm_80"), *gencode("compute_80", "compute_80"), "-Xfatbin", "-compress-all"),
          frozenset({"sm_80"}), frozenset({"compute_80"}), frozenset({"sass", "ptx"})),
    Build("compress-speed", (*gencode("compute_89", "sm_89"), *gencode("compute_89", "compute_89"), "--compress-mode=speed"),
          frozenset({"sm_89"}), frozenset({"compute_89"}), frozenset({"ptx"})),
    Build("newest", (*gencode("compute_110", "sm_110"), *gencode("compute_120", "sm_120"), *gencode("compute_121", "sm_121"),
                     *gencode("compute_121", "compute_121")),
          frozenset({"sm_110", "sm_120", "sm_121"}), frozenset({"compute_121"}), frozenset({"ptx"})),
    Build("arch-family", (*gencode("compute_90a", "sm_90a"), *gencode("compute_100f", "sm_100f"),
                          *gencode("compute_100a", "compute_100a"), *gencode("compute_120f", "compute_120f")),
          frozenset({"sm_90a", "sm_100f"}), frozenset({"compute_100a", "compute_120f"}), frozenset({"ptx"})),
    Build("rdc-object", ("-rdc=true", *gencode("compute_86", "sm_86")),
          frozenset({"sm_86"}), frozenset(), frozenset({"sass"}), shared=False),
)


def nvcc() -> str | None:
    return shutil.which("nvcc") or next((p for p in ("/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc") if os.access(p, os.X_OK)), None)


def nvcc_version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True, timeout=60).stdout
    return out.strip().splitlines()[-1]


def build(exe: str, spec: Build) -> Path:
    """The built file for ``spec``, compiled once per machine into the test cache."""
    key = hashlib.sha256("\0".join((KERNEL, nvcc_version(exe), *spec.flags, str(spec.shared))).encode()).hexdigest()[:12]
    folder = CACHE / "fatbins"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{spec.name}-{key}{'.so' if spec.shared else '.o'}"
    with open(folder / ".lock", "w") as lock:  # pytest-xdist workers share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            src = folder / f"{spec.name}-{key}.cu"
            src.write_text(KERNEL)
            kind = ["-shared", "-Xcompiler", "-fPIC"] if spec.shared else ["-c", "-Xcompiler", "-fPIC"]
            tmp = out.with_suffix(".tmp" + out.suffix)
            subprocess.run([exe, *kind, *spec.flags, str(src), "-o", str(tmp)], check=True, capture_output=True, timeout=600)
            tmp.rename(out)
    return out


def cuobjdump() -> Path:
    """NVIDIA's cuobjdump, unpacked once from its PyPI wheel."""
    wheel = download(WHEELS, CUOBJDUMP_WHEEL)
    target = CACHE / "cuobjdump" / wheel.stem / "cuobjdump"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            member = next(n for n in zf.namelist() if n.endswith("bin/cuobjdump"))
            tmp = target.with_suffix(f".{os.getpid()}")
            tmp.write_bytes(zf.read(member))
            tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR)
            tmp.rename(target)
    return target


_LISTED = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.(sm_\w+)\.(?:cubin|ptx)$")


def listed_by_cuobjdump(tool: Path, path: Path) -> list[tuple[str, str]]:
    """[(kind, arch)] as cuobjdump --list-elf --list-ptx names them: ("sass", "sm_86"), ("ptx", "sm_90")."""
    out = subprocess.run([str(tool), "--list-elf", "--list-ptx", str(path)], check=False,
                         capture_output=True, text=True, timeout=300)
    found = []
    for line in out.stdout.splitlines():
        m = _LISTED.match(line.strip())
        if m:
            found.append(("sass" if m.group(1) == "ELF" else "ptx", m.group(2)))
    return found


def as_cuobjdump_names(entries) -> list[tuple[str, str]]:
    """Our entries in cuobjdump's spelling: PTX as sm_XY, and family cubins without their 'f'."""
    out = []
    for e in entries:
        if e.kind == "sass":
            out.append(("sass", f"sm_{e.arch}{e.variant if e.variant == 'a' else ''}"))
        elif e.kind == "ptx":
            out.append(("ptx", f"sm_{e.arch}{e.variant}"))
    return out


# -- byte-level builders (no nvcc needed) ------------------------------------------------------
def fatbin_entry(kind: int, arch: int, *, flags: int = 0x11, payload: bytes = b"\0" * 16,
                 ptx: tuple[int, int] = (9, 0), header: int = 64) -> bytes:
    head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x101, header, len(payload), 0, 0, ptx[1], ptx[0], arch, 0, 0, flags, 0, 0)
    return head + b"\0" * (header - len(head)) + payload


def fatbin_blob(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf64(sections: dict[str, bytes]) -> bytes:
    """A minimal little-endian ELF64 shared object holding the given PROGBITS sections."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in (*sections, ".shstrtab"))
    body = bytearray(b"\0" * 64)
    placed = []
    for name, data in sections.items():
        while len(body) % 8:
            body.append(0)
        placed.append((names.index(name.encode() + b"\0"), 1, len(body), len(data)))
        body += data
    placed.append((names.index(b".shstrtab\0"), 3, len(body), len(names)))
    body += names
    while len(body) % 8:
        body.append(0)
    shoff = len(body)
    body += b"\0" * 64  # section 0
    for name_at, sh_type, offset, size in placed:
        body += struct.pack("<IIQQQQIIQQ", name_at, sh_type, 0, 0, offset, size, 0, 0, 8, 0)
    header = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    header += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(placed) + 1, len(placed))
    body[:64] = header
    return bytes(body)


def make_wheel(folder: Path, name: str, version: str, files: dict[str, bytes], *, requires: tuple[str, ...] = ()) -> Path:
    """A real, installable wheel (what `pip wheel` of a CUDA extension makes) holding ``files``, its
    dependencies ``requires`` (PEP 508 strings, its Requires-Dist)."""
    import base64

    dist = f"{name.replace('-', '_')}-{version}"
    deps = "".join(f"Requires-Dist: {r}\n" for r in requires)
    meta = {
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{deps}".encode(),
        f"{dist}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: cuenv-tests\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
    }
    members = {**files, **meta}
    record = "".join(
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for path, data in members.items()) + f"{dist}.dist-info/RECORD,,\n"
    out = folder / f"{dist}-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in members.items():
            zf.writestr(path, data)
        zf.writestr(f"{dist}.dist-info/RECORD", record)
    return out
