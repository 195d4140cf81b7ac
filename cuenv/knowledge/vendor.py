"""Derive compatibility facts from the vendors' own metadata on PyPI.

Each function reads one vendor's wheels through a ``pypi.Client`` and returns rows (plain dicts,
ready for YAML), every row with its ``source``. cuenv.knowledge.refresh writes them to
cuenv/knowledge/data/vendor.yaml and compares them with what is there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from packaging.version import Version

from cuenv.knowledge import derive, packages
from cuenv.knowledge.packages import canonical
from cuenv.knowledge.pypi import Client, File

Row = dict[str, Any]

TOOLKIT_PIECES: Final = ("cudart", "nvcc", "nvrtc", "cublas", "nvvm", "crt")
FIRST: Final = {  # the first release whose PyPI wheels pull NVIDIA's wheels
    "torch": "1.13", "tensorflow": "2.14", "jax-cuda12-plugin": "0.4", "jax-cuda13-plugin": "0.7",
    "onnxruntime-gpu": "1.21",  # the first whose wheels record the CUDA they were built with (build_and_package_info.py)
}


def wheels(client: Client, project: str) -> dict[str, list[File]]:
    """version -> its wheels, for the final releases of ``project`` (yanked files left out)."""
    out: dict[str, list[File]] = {}
    for f in client.files(project):
        name = derive.wheel_name(f.filename) if f.filename.endswith(".whl") else None
        if name is None or f.yanked:
            continue
        out.setdefault(name.version, []).append(f)
    final = set(derive.final_versions(out))
    return {v: fs for v, fs in out.items() if v in final}


def newest_per_minor(client: Client, project: str, first: str | None = None) -> dict[str, str]:
    per = derive.newest_per_minor(wheels(client, project))
    if first is not None:
        per = {k: v for k, v in per.items() if Version(k) >= Version(first)}
    return per


def _pick(files: list[File], platform: str, python: str | None = None) -> File | None:
    """The wheel for a cuenv platform ("linux-64"), preferring ``python`` ("3.12"), else the newest."""
    fitting = []
    for f in files:
        name = derive.wheel_name(f.filename)
        if name and any(derive.platform_key(p) == platform for p in name.platforms):
            fitting.append((name, f))
    if not fitting:
        return None
    for name, f in fitting:
        if python and any(derive.python_key(t) == python for t in name.pythons):
            return f
    plain = [(n, f) for n, f in fitting if not any(t.endswith("t") for t in n.pythons)] or fitting
    return max(plain, key=lambda nf: derive.sort_pythons(
        k for t in nf[0].pythons if (k := derive.python_key(t))) or [""])[1]


def _tags(files: list[File]) -> tuple[list[str], list[str]]:
    pythons: set[str] = set()
    platforms: set[str] = set()
    for f in files:
        name = derive.wheel_name(f.filename)
        if name is None:
            continue
        pythons.update(k for t in name.pythons if (k := derive.python_key(t)))
        platforms.update(k for p in name.platforms if (k := derive.platform_key(p)))
    return derive.sort_pythons(pythons), sorted(platforms)


def _python_of(f: File) -> str:
    name = derive.wheel_name(f.filename)
    keys = [k for t in (name.pythons if name else ()) if (k := derive.python_key(t))]
    return keys[0].rstrip("t") if keys else "3.12"


def _source(project: str, version: str, f: File, what: str = "METADATA") -> str:
    return f"pypi:{project}=={version} ({f.filename} {what})"


def _spec(pin: derive.Pin | None) -> str | None:
    return pin.spec if pin else None


# ---------------------------------------------------------------------------------------------
# NVIDIA
# ---------------------------------------------------------------------------------------------


def host_compilers(client: Client) -> list[Row]:
    """Newest gcc/clang and the MSVC range nvcc accepts, per CUDA minor (its newest wheel)."""
    rows: list[Row] = []
    for project in packages.HOST_CONFIG_WHEELS:
        for mm, version in newest_per_minor(client, project).items():
            f = _pick(wheels(client, project)[version], "linux-64")
            text = client.member(f, "crt/host_config.h") if f else None
            if f is None or text is None:
                continue
            lim = derive.host_limits(text.decode("utf-8", "replace"))
            rows.append({"cuda": mm, "gcc_max": lim.gcc_max, "clang_max": lim.clang_max, "msvc": lim.msvc,
                         "source": _source(project, version, f, "include/crt/host_config.h")})
    return sorted(rows, key=lambda r: Version(r["cuda"]))


CCCL_WHEEL: Final = "nvidia-cuda-cccl"


def ptx_isa(client: Client) -> list[Row]:
    """PTX ISA -> the CUDA release (and driver branch) that introduced it, from the newest CCCL wheel's header."""
    found = wheels(client, CCCL_WHEEL)
    if not found:
        return []
    version = max(found, key=Version)
    f = _pick(found[version], "linux-64")
    text = client.member(f, "__cccl/ptx_isa.h") if f else None
    if f is None or text is None:
        return []
    source = _source(CCCL_WHEEL, version, f, "include/cccl/cuda/std/__cccl/ptx_isa.h")
    return [{"ptx": ptx, "cuda": cuda, **({"driver_branch": drv} if drv else {}), "source": source}
            for ptx, cuda, drv in derive.ptx_isa_table(text.decode("utf-8", "replace"))]


def cuda_toolkit(client: Client) -> list[Row]:
    """What each cuda-toolkit release pins (runtime, nvcc, ...): the library versions of a CUDA release."""
    rows: list[Row] = []
    for version, files in sorted(wheels(client, "cuda-toolkit").items(), key=lambda kv: Version(kv[0])):
        if Version(version).major < 11:
            continue
        f = files[0]
        pins = derive.toolkit_pins(client.metadata(f).get_all("Requires-Dist") or [])
        row: Row = {"release": version}
        row.update({k: pins[k] for k in TOOLKIT_PIECES if k in pins})
        row["source"] = _source("cuda-toolkit", version, f)
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# Frameworks
# ---------------------------------------------------------------------------------------------


def framework_row(client: Client, project: str, version: str, key: str, extras: Iterable[str] = ()) -> Row | None:
    files = wheels(client, project)[version]
    f = _pick(files, "linux-64", "3.12")
    if f is None:
        return None
    requires = client.metadata(f).get_all("Requires-Dist") or []
    n = derive.needs(requires, python=_python_of(f), extras=extras)
    pythons, platforms = _tags(files)
    row: Row = {key: version, "cuda": n.cuda, "cuda_major": n.cuda_major}
    if n.toolkit:
        row["toolkit"] = n.toolkit
    row.update({"cudart": _spec(n.cudart), "cudnn": _spec(n.cudnn), "nccl": _spec(n.nccl)})
    arm = _pick(files, "linux-aarch64", "3.12")
    if arm is not None:
        arm_needs = derive.needs(client.metadata(arm).get_all("Requires-Dist") or [], python=_python_of(arm),
                                 extras=extras, machine="aarch64")
        row["aarch64_cuda"] = arm_needs.cuda_major is not None
    row.update({"python": pythons, "platforms": platforms, "source": _source(project, version, f)})
    return row


def _rows(client: Client, project: str, key: str, extras: Iterable[str] = (),
          keep: Callable[[Row], bool] = lambda r: True) -> list[Row]:
    """One row per minor (its newest release), read side by side."""
    from concurrent.futures import ThreadPoolExecutor

    versions = list(newest_per_minor(client, project, FIRST.get(project)).values())
    with ThreadPoolExecutor(max_workers=8) as pool:
        rows = list(pool.map(lambda v: framework_row(client, project, v, key, extras), versions))
    return [row for row in rows if row is not None and keep(row)]


def torch(client: Client) -> list[Row]:
    """The PyPI torch wheel of each minor: the CUDA, cuDNN and NCCL its Linux wheel pulls."""
    return _rows(client, "torch", "torch")


TF_BUILD_INFO: Final = "tensorflow/python/platform/build_info.py"


def tensorflow(client: Client) -> list[Row]:
    """tensorflow[and-cuda] of each minor, with the GPU targets its Linux wheel was built for."""
    rows = _rows(client, "tensorflow", "tensorflow", extras=("and-cuda",))
    for row in rows:
        f = _pick(wheels(client, "tensorflow")[row["tensorflow"]], "linux-64", "3.12")
        text = client.member(f, TF_BUILD_INFO) if f else None
        arch = derive.build_arch(text.decode("utf-8", "replace")) if f and text else None
        if f and arch:
            row["arch"] = {"sass": arch[0], "ptx": arch[1]}
            row["arch_source"] = _source("tensorflow", row["tensorflow"], f, TF_BUILD_INFO)
    return rows


def jax(client: Client) -> list[Row]:
    """jax[cuda12] / jax[cuda13]: the plugin of each minor with its with-cuda pins."""
    rows = []
    for project in packages.JAX_CUDA_PLUGINS:
        for row in _rows(client, project, "version", extras=("with-cuda",)):
            rows.append({"plugin": project, **row})
    return rows


ORT_BUILD_INFO: Final = "onnxruntime/capi/build_and_package_info.py"
_ORT_CUDA: Final = re.compile(r"^cuda_version\s*=\s*['\"](\d+)\.(\d+)", re.MULTILINE)


def onnxruntime(client: Client) -> list[Row]:
    """onnxruntime-gpu of each minor: the CUDA its Linux wheel was built with, as the wheel itself records it
    (``cuda_version`` in onnxruntime/capi/build_and_package_info.py); the [cuda] extra, where there is one,
    names the same major's NVIDIA wheels."""
    rows: list[Row] = []
    per = wheels(client, "onnxruntime-gpu")
    for version in newest_per_minor(client, "onnxruntime-gpu", FIRST["onnxruntime-gpu"]).values():
        f = _pick(per[version], "linux-64", "3.12")
        text = client.member(f, ORT_BUILD_INFO) if f else None
        found = _ORT_CUDA.search(text.decode("utf-8", "replace")) if f and text else None
        if f is None or found is None:
            continue
        rows.append({"onnxruntime_gpu": version, "cuda": f"{int(found[1])}.{int(found[2])}", "cuda_major": int(found[1]),
                     "source": _source("onnxruntime-gpu", version, f, ORT_BUILD_INFO)})
    return rows


COMPANIONS: Final = {"torchvision": "0.14", "torchaudio": "0.13"}  # their minors beside torch 1.13 on


def companions(client: Client) -> list[Row]:
    """Every final torchvision and torchaudio release beside torch 1.13 on: the torch release its Linux wheel
    requires (``torch==2.5.1``), which decides the CUDA where the companion is pinned and torch is not."""
    from packaging.requirements import InvalidRequirement, Requirement

    rows: list[Row] = []
    for project, first in COMPANIONS.items():
        per = wheels(client, project)
        for version in sorted((v for v in per if Version(v) >= Version(first)), key=Version):
            f = _pick(per[version], "linux-64", "3.12")
            if f is None:
                continue
            pins = []
            for text in client.metadata(f).get_all("Requires-Dist") or []:
                try:
                    req = Requirement(text)
                except InvalidRequirement:
                    continue
                pins += [s.version for s in req.specifier if canonical(req.name) == "torch" and s.operator == "=="]
            if len(pins) == 1:
                rows.append({"project": project, "version": version, "torch": pins[0],
                             "source": _source(project, version, f)})
    return rows


def releases(client: Client) -> dict[str, dict[str, str]]:
    """Which releases exist: project -> {minor: newest final version}."""
    return {p: newest_per_minor(client, p) for p in packages.TRACKED_RELEASES}


SECTIONS: Final[dict[str, Callable[[Client], Any]]] = {
    "host_compilers": host_compilers,
    "ptx_isa": ptx_isa,
    "cuda_toolkit": cuda_toolkit,
    "torch": torch,
    "tensorflow": tensorflow,
    "jax": jax,
    "onnxruntime": onnxruntime,
    "companions": companions,
    "releases": releases,
}
