"""A real local conda channel for tests, built from NVIDIA's real CUDA wheels (issue 4, tests).

The packages are plain conda archives (``info/index.json``, ``info/paths.json``, ``info/files``
plus payload), repackaging the real ``libcudart`` and ``ptxas`` from NVIDIA's PyPI wheels:

=================  ==========  ======  ==============================================================
name               version     subdir  content
=================  ==========  ======  ==============================================================
cuda-version       12.1, 11.8  noarch  nothing; constrains ``__cuda >=12`` / ``__cuda >=11``
cuda-cudart        12.1.105    linux   targets/x86_64-linux/lib/libcudart.so.12 (+ lib/ symlink),
                                       targets/x86_64-linux/include/cuda_runtime_api.h   (.conda)
cuda-cudart        11.8.89     linux   lib/libcudart.so.11.0                             (.tar.bz2)
cuda-nvcc-tools    12.1.105    linux   bin/ptxas                                         (.conda)
cuda-nvcc          12.1.105    linux   nothing: depends on cuda-nvcc-tools (the recipes' name for nvcc)
python             3.11.9      linux   nothing (metadata only: stands in for the interpreter)
pip                24.0        noarch  nothing (metadata only: conda makes every python depend on pip)
pytorch-cuda       12.1        noarch  nothing: depends on cuda-cudart 12.1 (the pytorch channel's CUDA pin)
pytorch            2.5.1       linux   torch/version.py only; build py3.11_cuda12.1_cudnn9.1.0_0, needs __cuda
cuenv-hello        1.0         noarch  etc/cuenv-hello.txt holding a prefix placeholder  (.tar.bz2)
=================  ==========  ======  ==============================================================

Wheels are fetched once with ``pip download --require-hashes`` into the repository's
``.test-cache/`` and the channel is rebuilt only when this file changes. Any test module (the
lockfile tests too) can call :func:`cached_channel`; ``tests/engines/conftest.py`` wraps it in a
session fixture.
"""

from __future__ import annotations

import asyncio
import bz2
import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = Path(os.environ.get("CUENV_TEST_CACHE", REPO / ".test-cache"))
TIMESTAMP = 1_700_000_000_000  # fixed (ms): identical inputs give identical archives and repodata
PLACEHOLDER = "/opt/anaconda1anaconda2anaconda3"

# Every wheel a test downloads, with its PyPI sha256 (verified by pip --require-hashes).
WHEELS: dict[str, str] = {
    "nvidia-cuda-runtime-cu12==12.1.105": "6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40",
    "nvidia-cuda-nvcc-cu12==12.1.105": "a0712a05ffd57d9f017580ffcc808b207f7f4ef7a5ca8ac1312318b153739a18",
    "nvidia-cuda-runtime-cu11==11.8.89": "f587bd726eb2f7612cf77ce38a2c1e65cf23251ff49437f6161ce0d647f64f7c",
}


@dataclass(frozen=True)
class Payload:
    path: str  # where the file lands in the prefix
    wheel: str | None = None  # requirement in WHEELS the bytes come from
    member: str | None = None  # path inside that wheel
    text: str | None = None  # or literal text
    symlink: str | None = None  # or a relative symlink target
    executable: bool = False


@dataclass(frozen=True)
class Spec:
    name: str
    version: str
    subdir: str  # linux-64 | noarch
    fmt: str = ".tar.bz2"  # .tar.bz2 | .conda
    build: str = "h0_0"
    depends: tuple[str, ...] = ()
    constrains: tuple[str, ...] = ()
    files: tuple[Payload, ...] = field(default=())

    @property
    def stem(self) -> str:
        return f"{self.name}-{self.version}-{self.build}"


_RT12, _NVCC12, _RT11 = list(WHEELS)
_T = "targets/x86_64-linux"

PACKAGES: tuple[Spec, ...] = (
    Spec("cuda-version", "12.1", "noarch", constrains=("__cuda >=12", "cudatoolkit 12.1|12.1.*")),
    Spec("cuda-version", "11.8", "noarch", constrains=("__cuda >=11", "cudatoolkit 11.8|11.8.*")),
    Spec(
        "cuda-cudart", "12.1.105", "linux-64", fmt=".conda",
        depends=("cuda-version >=12.1,<12.2.0a0",),
        files=(
            Payload(f"{_T}/lib/libcudart.so.12", _RT12, "nvidia/cuda_runtime/lib/libcudart.so.12"),
            Payload("lib/libcudart.so.12", symlink=f"../{_T}/lib/libcudart.so.12"),
            Payload(f"{_T}/include/cuda_runtime_api.h", _RT12, "nvidia/cuda_runtime/include/cuda_runtime_api.h"),
        ),
    ),
    Spec(
        "cuda-cudart", "11.8.89", "linux-64",
        depends=("cuda-version >=11.8,<11.9.0a0",),
        files=(Payload("lib/libcudart.so.11.0", _RT11, "nvidia/cuda_runtime/lib/libcudart.so.11.0"),),
    ),
    Spec(
        "cuda-nvcc-tools", "12.1.105", "linux-64", fmt=".conda",
        depends=("cuda-version >=12.1,<12.2.0a0",),
        files=(Payload("bin/ptxas", _NVCC12, "nvidia/cuda_nvcc/bin/ptxas", executable=True),),
    ),
    # what the recipes' conda sections name for nvcc (conda-forge's metapackage; its compiler activation is left out)
    Spec("cuda-nvcc", "12.1.105", "linux-64", depends=("cuda-nvcc-tools 12.1.105.*", "cuda-version >=12.1,<12.2.0a0")),
    # framework-shaped, as the pytorch channel builds them: a CUDA build string, the CUDA pin through
    # pytorch-cuda, and a hard dependency on the driver's __cuda (a GPU-less solve fails without a target)
    Spec("pytorch-cuda", "12.1", "noarch", build="ha16c6d3_6", depends=("cuda-cudart >=12.1,<12.2", "cuda-version 12.1.*")),
    Spec(
        "pytorch", "2.5.1", "linux-64", build="py3.11_cuda12.1_cudnn9.1.0_0",
        depends=("python >=3.11,<3.12.0a0", "pytorch-cuda >=12.1,<12.2", "__cuda >=12.1"),
        files=(Payload("lib/python3.11/site-packages/torch/version.py",
                       text="__version__ = '2.5.1'\ncuda = '12.1'\n"),
               Payload("lib/python3.11/site-packages/torch/__init__.py", text="from torch.version import __version__\n")),
    ),
    # metadata only: recipes name a Python, and conda engines install it (no interpreter is needed here)
    Spec("python", "3.11.9", "linux-64", build="h0_cuenv"),
    # conda adds pip to every python (its add_pip_as_python_dependency, on by default): metadata only too
    Spec("pip", "24.0", "noarch", build="h0_cuenv", depends=("python >=3.8",)),
    Spec(
        "cuenv-hello", "1.0", "noarch",
        files=(Payload("etc/cuenv-hello.txt", text=f"prefix={PLACEHOLDER}\n"),),
    ),
)


# -- wheels --------------------------------------------------------------------------------
def ensure_wheels(cache: Path = DEFAULT_CACHE, *, wanted: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Download (once, hash-checked) the wheels named in ``wanted`` (default: all) into cache/wheels."""
    wanted = tuple(WHEELS) if wanted is None else wanted
    folder = cache / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    found = {req: _find_wheel(folder, req) for req in wanted}
    missing = [req for req, path in found.items() if path is None]
    if missing:
        with _file_lock(folder / ".lock"):
            reqs = folder / "requirements.txt"
            reqs.write_text("".join(f"{r} --hash=sha256:{WHEELS[r]}\n" for r in missing))
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:",
                 "--platform", "manylinux1_x86_64", "--python-version", "3.11", "--isolated",
                 "--index-url", "https://pypi.org/simple", "-r", str(reqs), "-d", str(folder), "-q"],
                check=True, stdout=subprocess.DEVNULL,
            )
        found = {req: _find_wheel(folder, req) for req in wanted}
    return {req: path for req, path in found.items() if path is not None}


def _find_wheel(folder: Path, req: str) -> Path | None:
    name, version = req.split("==")
    for path in folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"):
        if hashlib.sha256(path.read_bytes()).hexdigest() == WHEELS[req]:
            return path
    return None


# -- conda archives ------------------------------------------------------------------------
def _payload_bytes(item: Payload, wheels: dict[str, Path]) -> bytes:
    if item.text is not None:
        return item.text.encode()
    with zipfile.ZipFile(wheels[item.wheel]) as zf:
        return zf.read(item.member)


def _tarinfo(name: str, size: int = 0, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.uid, info.gid = size, mode, TIMESTAMP // 1000, 0, 0
    return info


def build_archive(spec: Spec, wheels: dict[str, Path], out_dir: Path) -> Path:
    """Write ``spec`` as a ``.tar.bz2`` into ``out_dir`` (and transmute it to ``.conda`` if asked)."""
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    paths = []
    has_prefix = []
    for item in sorted(spec.files, key=lambda f: f.path):
        if item.symlink is not None:
            info = _tarinfo(item.path)
            info.type, info.linkname = tarfile.SYMTYPE, item.symlink
            members.append((info, None))
            paths.append({"_path": item.path, "path_type": "softlink", "size_in_bytes": 0,
                          "sha256": hashlib.sha256(item.symlink.encode()).hexdigest()})
            continue
        data = _payload_bytes(item, wheels)
        entry = {"_path": item.path, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(),
                 "size_in_bytes": len(data)}
        if PLACEHOLDER.encode() in data:
            entry.update(prefix_placeholder=PLACEHOLDER, file_mode="text")
            has_prefix.append(f"{PLACEHOLDER} text {item.path}\n")
        paths.append(entry)
        members.append((_tarinfo(item.path, len(data), 0o755 if item.executable else 0o644), data))
    index = {
        "name": spec.name, "version": spec.version, "build": spec.build, "build_number": 0,
        "depends": list(spec.depends), "constrains": list(spec.constrains), "subdir": spec.subdir,
        "license": "NVIDIA Software License (repackaged for cuenv tests)", "timestamp": TIMESTAMP,
    }
    if spec.subdir == "noarch":
        index["noarch"] = "generic"
    else:
        index.update(arch="x86_64", platform="linux")
    info_files = {
        "info/index.json": json.dumps(index, indent=2, sort_keys=True),
        "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}, indent=2, sort_keys=True),
        "info/files": "".join(p["_path"] + "\n" for p in paths),
    }
    if has_prefix:
        info_files["info/has_prefix"] = "".join(has_prefix)
    for name, text in sorted(info_files.items()):
        members.append((_tarinfo(name, len(text.encode())), text.encode()))

    out_dir.mkdir(parents=True, exist_ok=True)
    tar_path = out_dir / f"{spec.stem}.tar.bz2"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    tar_path.write_bytes(bz2.compress(buf.getvalue(), compresslevel=1))
    if spec.fmt == ".tar.bz2":
        return tar_path
    from conda_package_handling import api as cph

    # zstd level 3, not cph's 19: the same format, and 11 s less CPU for ptxas on every cold run
    cph.transmute(str(tar_path), ".conda", out_folder=str(out_dir), zstd_compress_level=3)
    tar_path.unlink()
    return out_dir / f"{spec.stem}.conda"


def build_channel(root: Path, *, cache: Path = DEFAULT_CACHE, packages: tuple[Spec, ...] = PACKAGES) -> Path:
    """Build every package into ``root`` (linux-64/, noarch/) and index it with rattler."""
    import rattler.index

    wheels = ensure_wheels(cache)
    for sub in ("linux-64", "noarch"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for spec in packages:
        build_archive(spec, wheels, root / spec.subdir)
    asyncio.run(rattler.index.index_fs(root, write_zst=False, write_shards=False))
    return root


def _source_key() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def cached_channel(cache: Path = DEFAULT_CACHE) -> Path:
    """The test channel under ``cache``, built once per version of this file (safe under xdist)."""
    final = cache / f"conda-channel-{_source_key()}"
    if (final / "noarch" / "repodata.json").is_file():
        return final
    with _file_lock(cache / ".conda-channel.lock"):
        if not (final / "noarch" / "repodata.json").is_file():
            tmp = cache / f".{final.name}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            build_channel(tmp, cache=cache)
            os.replace(tmp, final)  # repodata holds relative file names: the move keeps it valid
    return final


def copy_channel(src: Path, dest: Path) -> Path:
    """A private, writable copy (for tests that tamper with archives or repodata)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


if __name__ == "__main__":  # python tests/engines/channel.py: build and print the channel's path
    print(cached_channel())
