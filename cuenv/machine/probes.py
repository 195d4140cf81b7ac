"""Ask the driver itself: NVML -> libcuda -> nvidia-smi CSV -> nvidia-smi table -> /proc and /sys.

Each source fills only what the earlier ones left unknown (issue 2). Nothing heavy is imported at
module level (pynvml and ctypes load on use).
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Final, Iterable, Mapping, Sequence, TypeVar

from cuenv.errors import ToolError
from cuenv.knowledge import matrix, versions
from cuenv.machine import nvsmi
from cuenv.machine.host import arch, glibc
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.machine.overrides import current_os

if TYPE_CHECKING:
    from types import ModuleType

    from cuenv.runner import Completed

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

SMI_TIMEOUT: Final = 10.0  # a wedged driver can hang nvidia-smi for minutes


class _Skip(Exception):
    """A source had nothing to say; the message says why (kept in Machine.notes)."""


@dataclass(frozen=True)
class Probe:
    source: str
    driver_version: str | None = None
    max_cuda: str | None = None
    gpus: tuple[Gpu, ...] | None = None  # None: this source does not list GPUs


def _from_nvml(environ: Mapping[str, str], root: Path) -> Probe:
    try:
        import pynvml
    except ImportError:
        raise _Skip("nvidia-ml-py (pynvml) is not installed") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise _Skip(f"NVML did not initialise: {exc}") from None
    try:
        version = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = None
        for getter in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
            try:
                cuda = versions.cuda_from_int(getattr(pynvml, getter)())
                break
            except (pynvml.NVMLError, AttributeError):
                continue
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            gpus.append(_nvml_gpu(pynvml, index, pynvml.nvmlDeviceGetHandleByIndex(index)))
        return Probe("nvml", version, cuda, tuple(gpus))
    except pynvml.NVMLError as exc:
        raise _Skip(f"NVML query failed: {exc}") from None
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _nvml_gpu(pynvml: ModuleType, index: int, handle: object) -> Gpu:
    cc = _try(lambda: "{}.{}".format(*pynvml.nvmlDeviceGetCudaComputeCapability(handle)), pynvml)
    return Gpu(
        index=index,
        name=_text(pynvml.nvmlDeviceGetName(handle)),
        compute_capability=cc,
        memory_mib=_try(lambda: pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20, pynvml),
        uuid=_try(lambda: _text(pynvml.nvmlDeviceGetUUID(handle)), pynvml),
        mig=bool(_try(lambda: pynvml.nvmlDeviceGetMigMode(handle)[0] == 1, pynvml)),
    )


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _try(fn: Callable[[], _T], pynvml: ModuleType) -> _T | None:
    try:
        return fn()
    except pynvml.NVMLError:
        return None  # this query is not supported on this GPU or driver; the others still count


def _from_libcuda(environ: Mapping[str, str], root: Path) -> Probe:
    import ctypes

    name = "nvcuda.dll" if sys.platform.startswith("win") else "libcuda.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        raise _Skip(f"{name} could not be loaded (no driver library on the loader path)") from None
    c_int = ctypes.c_int
    value = c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(value)) != 0 or value.value <= 0:
        raise _Skip("cuDriverGetVersion failed")
    max_cuda = versions.cuda_from_int(value.value)
    rc = lib.cuInit(0)
    if rc == 100:  # CUDA_ERROR_NO_DEVICE: a driver, but no GPU it can use
        return Probe("libcuda", None, max_cuda, ())
    if rc != 0:
        return Probe("libcuda", None, max_cuda, None)
    count = c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    gpus = []
    for index in range(count.value):
        device = c_int(0)
        if lib.cuDeviceGet(ctypes.byref(device), index) != 0:
            continue
        buf = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(buf, 256, device)
        major, minor = c_int(0), c_int(0)
        ok_cc = (lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device) == 0
                 and lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device) == 0)
        total = ctypes.c_size_t(0)
        ok_mem = lib.cuDeviceTotalMem_v2(ctypes.byref(total), device) == 0
        raw = (ctypes.c_ubyte * 16)()
        uuid = None
        if lib.cuDeviceGetUuid(ctypes.byref(raw), device) == 0:
            h = bytes(raw).hex()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        gpus.append(Gpu(index, buf.value.decode(errors="replace"),
                        f"{major.value}.{minor.value}" if ok_cc else None,
                        total.value // 2**20 if ok_mem else None, uuid))
    return Probe("libcuda", None, max_cuda, tuple(gpus))


def _smi(environ: Mapping[str, str]) -> str:
    exe = shutil.which("nvidia-smi", path=environ.get("PATH", ""))
    if exe is None:
        raise _Skip("nvidia-smi is not on PATH")
    return exe


def _run_smi(argv: Sequence[str], environ: Mapping[str, str]) -> Completed:
    from cuenv import runner

    return runner.run(argv, timeout=SMI_TIMEOUT, env=environ)


def _from_smi_csv(environ: Mapping[str, str], root: Path) -> Probe:
    from cuenv import runner

    exe = _smi(environ)
    fields = list(nvsmi.QUERY_FIELDS)
    while True:
        argv = [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
        try:
            out = _run_smi(argv, environ)
            break
        except runner.ToolFailed as exc:
            # Older drivers reject newer fields ("compute_cap" before ~510): drop it and ask again.
            m = re.search(r'Field "([^"]+)" is not a valid field', exc.stdout + exc.stderr)
            if m and m.group(1) in fields and len(fields) > 2:
                fields.remove(m.group(1))
                continue
            raise _Skip(f"nvidia-smi --query-gpu failed: {exc.message}") from None
        except ToolError as exc:
            raise _Skip(f"nvidia-smi --query-gpu failed: {exc.message}") from None
    report = nvsmi.parse_smi_csv(out.stdout, fields)
    if not report.gpus and not report.driver_version:
        raise _Skip("nvidia-smi --query-gpu printed nothing usable")
    return Probe("nvidia-smi", report.driver_version, None, report.gpus)


def _from_smi_table(environ: Mapping[str, str], root: Path) -> Probe:
    exe = _smi(environ)
    try:
        out = _run_smi([exe], environ)
    except ToolError as exc:
        raise _Skip(f"nvidia-smi failed: {exc.message}") from None
    report = nvsmi.parse_smi_table(out.stdout)
    if report.driver_version is None and report.cuda_version is None:
        raise _Skip("the nvidia-smi table had no driver header")
    return Probe("nvidia-smi-table", report.driver_version, report.cuda_version, report.gpus or None)


def _from_proc(environ: Mapping[str, str], root: Path) -> Probe:
    for rel in ("proc/driver/nvidia/version", "sys/module/nvidia/version"):
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        version = nvsmi.parse_proc_version(text)
        if version:
            return Probe("proc", version, None, None)
    raise _Skip("no NVIDIA kernel module is loaded (/proc/driver/nvidia/version is absent)")


SOURCES: Final = (
    ("nvml", _from_nvml),
    ("libcuda", _from_libcuda),
    ("nvidia-smi", _from_smi_csv),
    ("nvidia-smi-table", _from_smi_table),
    ("proc", _from_proc),
)


def _merge_gpus(have: tuple[Gpu, ...], more: tuple[Gpu, ...]) -> tuple[Gpu, ...]:
    """Fill the unknown fields of ``have`` from ``more`` (matched by index)."""
    by_index = {g.index: g for g in more}
    merged = []
    for gpu in have:
        other = by_index.get(gpu.index)
        if other is None:
            merged.append(gpu)
            continue
        fill = {k: v for k, v in other.fields().items() if getattr(gpu, k) in (None, "") and v not in (None, "")}
        merged.append(gpu.replace(**fill))
    return tuple(merged)


def _complete_gpu(gpu: Gpu) -> Gpu:
    """Fill compute capability, architecture and memory from the catalogue where the driver did not."""
    from cuenv.knowledge import gpus as catalogue

    model = catalogue.lookup(gpu.name) if gpu.name else None
    cc = gpu.compute_capability or (model.compute_capability if model else None)
    memory = gpu.memory_mib if gpu.memory_mib is not None else (model.memory_mib if model else None)
    arch = catalogue.architecture_for(cc) if cc else gpu.architecture
    return gpu.replace(compute_capability=cc, architecture=arch, memory_mib=memory)


def probe(environ: Mapping[str, str], root: Path = Path("/"),
          sources: Iterable[tuple[str, Callable[[Mapping[str, str], Path], Probe]]] | None = None) -> Machine:
    """Ask each source in turn (default: SOURCES) until driver version, newest CUDA and GPUs are known."""
    sources = SOURCES if sources is None else sources
    notes: list[str] = []
    version = max_cuda = None
    version_from = cuda_from = None
    gpu_list: tuple[Gpu, ...] | None = None
    for name, source in sources:
        if version and max_cuda and gpu_list is not None:
            break
        try:
            found = source(environ, root)
        except _Skip as exc:
            notes.append(f"{name}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a broken source must not hide the others
            _LOGGER.debug("source %s crashed", name, exc_info=True)
            notes.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if found.driver_version and not version:
            version, version_from = found.driver_version, found.source
        if found.max_cuda and not max_cuda:
            max_cuda, cuda_from = found.max_cuda, found.source
        if found.gpus is not None:
            gpu_list = found.gpus if gpu_list is None else _merge_gpus(gpu_list, found.gpus)
    driver = None
    if version and not max_cuda:
        max_cuda = matrix.max_cuda_for_driver(version, current_os())
        if max_cuda:
            notes.append(f"newest CUDA {max_cuda} derived from driver {version} (knowledge base)")
        cuda_from = version_from
    if version or max_cuda:
        if version_from and cuda_from and version_from != cuda_from:
            notes.append(f"driver version from {version_from}")
        driver = Driver(version or "", max_cuda, cuda_from or version_from or "unknown")
    return Machine(
        driver=driver,
        gpus=tuple(_complete_gpu(g) for g in (gpu_list or ())),
        os=current_os(),
        arch=arch(),
        glibc=glibc(),
        notes=tuple(notes),
    )
