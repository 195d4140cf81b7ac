"""Detect the NVIDIA driver, the newest CUDA it supports, and the GPUs. Facts, no policy.

Sources, in order, each filling only what the earlier ones left unknown (issue 2):
NVML through pynvml -> libcuda through ctypes -> ``nvidia-smi --query-gpu`` CSV -> the plain
``nvidia-smi`` table -> ``/proc/driver/nvidia/version`` and ``/sys/module/nvidia/version``.
No driver at all is a normal result: ``Machine(driver=None, notes=(why each source failed,))``.

The probed machine is cached as JSON keyed by the machine fingerprint, so repeated commands
do not initialise NVML again. Overrides (CUENV_DRIVER, CUENV_GPUS, CONDA_OVERRIDE_CUDA) are
applied after the cache and never stored. Parsers are pure and tested on real outputs.
Nothing heavy is imported at module level (pynvml, ctypes and xml load on use).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import shutil
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Final, Iterable, Mapping, Sequence

from cuenv import versions
from cuenv.errors import ToolError, UsageError
from cuenv.fingerprint import OVERRIDES, fingerprint
from cuenv.machine import Driver, Gpu, Machine

_LOGGER = logging.getLogger(__name__)

QUERY_FIELDS: Final = ("index", "name", "uuid", "compute_cap", "memory.total", "driver_version")
SMI_TIMEOUT: Final = 10.0  # a wedged driver can hang nvidia-smi for minutes
CACHE_FILE: Final = "machine.json"
_CACHE_FORMAT: Final = "1"
_NA: Final = frozenset({"", "n/a", "[n/a]", "[not supported]", "not supported", "unknown error", "err!", "none"})


# --------------------------------------------------------------------------- parsers (pure)


@dataclass(frozen=True)
class SmiReport:
    """What one nvidia-smi output says. ``None`` where it did not say."""

    driver_version: str | None = None
    cuda_version: str | None = None  # newest CUDA the driver supports (header "CUDA Version")
    smi_version: str | None = None  # the NVIDIA-SMI tool itself; may differ from the driver
    gpus: tuple[Gpu, ...] = ()


def _value(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return None if text.lower() in _NA else text


def _version_in(text: str | None) -> str | None:
    """The first dotted number in ``text`` ("12.2 [Deprecated]" -> "12.2"); None for N/A."""
    m = re.search(r"\d+(?:\.\d+)+|\d+", text or "")
    return m.group(0) if m and _value(text) else None


def _mib(text: str | None) -> int | None:
    """ "81920", "81920 MiB" or "80 GiB" -> MiB."""
    value = _value(text)
    if value is None:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B)?\s*$", value, re.IGNORECASE)
    if not m:
        return None
    number, unit = float(m.group(1)), (m.group(2) or "MiB").lower()
    scale = {"kib": 1 / 1024, "kb": 1 / 1024, "mib": 1, "mb": 1, "gib": 1024, "gb": 1024}[unit]
    return int(number * scale)


def parse_proc_version(text: str) -> str | None:
    """The driver version in /proc/driver/nvidia/version (proprietary, open, Jetson forms)."""
    m = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)\b", text)
    if m:
        return m.group(1)
    first = text.strip().splitlines()[0] if text.strip() else ""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)+)\s*", first)  # /sys/module/nvidia/version: just the number
    return m.group(1) if m else None


def _header_fields(line: str) -> dict[str, str]:
    """ "Driver Version: 535.54.03   CUDA Version: 12.2" -> {"driver version": ..., "cuda version": ...}."""
    pairs = re.findall(r"([A-Za-z][A-Za-z .]*?)\s*:\s*(\S+(?:\s*\[[^\]]*\])?)", line)
    return {label.strip().lower(): value for label, value in pairs}


def _classify_header(fields: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(driver, cuda) from header labels, whatever the driver generation calls them.

    Seen: "Driver Version" + "CUDA Version" (410-580), none for CUDA (< 410),
    "KMD Version" + "CUDA UMD Version" (610+).
    """
    driver = cuda = None
    for label, value in fields.items():
        if "cuda" in label:
            cuda = cuda or _version_in(value)
        elif "driver" in label or "kmd" in label:
            driver = driver or _version_in(value)
    return driver, cuda


def parse_smi_table(text: str) -> SmiReport:
    """Parse the plain ``nvidia-smi`` table of any driver generation (single or multi-GPU, MIG)."""
    lines = text.splitlines()
    smi_version = driver = cuda = None
    for line in lines:
        if "NVIDIA-SMI" in line:
            m = re.search(r"NVIDIA-SMI\s+(\d+(?:\.\d+)+)", line)
            smi_version = m.group(1) if m else None
            driver, cuda = _classify_header(_header_fields(line.replace("NVIDIA-SMI", "")))
            break
    gpus: list[Gpu] = []
    block: list[list[str]] = []
    in_body = False

    def flush() -> None:
        if block:
            gpus.append(_table_gpu(block))
            block.clear()

    for line in lines:
        stripped = line.strip()
        if "MIG devices:" in line or "Processes:" in line:
            break  # what follows are MIG slices and processes, not GPUs
        if stripped.startswith("|=") or stripped.startswith("+="):
            in_body = True
            continue
        if not in_body:
            continue
        if stripped.startswith("+") or not stripped:
            flush()
            continue
        cells = [c for c in stripped.strip("|").split("|")]
        first = re.match(r"^\s*(\d+)\s+(.*\S)\s*$", cells[0])
        if first and re.search(r"[A-Za-z]", first.group(2)) and not block:
            block.append(cells)
        elif block:
            block.append(cells)
    flush()
    return SmiReport(driver, cuda, smi_version, tuple(gpus))


def _table_gpu(block: Sequence[Sequence[str]]) -> Gpu:
    m = re.match(r"^\s*(\d+)\s+(.*?)\s*(?:\s(On|Off))?\s*$", block[0][0])
    assert m is not None  # the caller matched this shape
    index, name = int(m.group(1)), m.group(2).strip()
    memory = None
    mig = False
    for cells in block[1:]:
        joined = "|".join(cells)
        usage = re.search(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB", joined)
        if usage and memory is None:
            memory = int(usage.group(2))
        if cells and cells[-1].strip() == "Enabled":
            mig = True
    return Gpu(index=index, name=name, compute_capability=None, memory_mib=memory, mig=mig)


def parse_smi_xml(text: str) -> SmiReport:
    """Parse ``nvidia-smi -q -x`` (nvsmi_device_v6 .. v12 and newer)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"nvidia-smi -q -x printed XML that does not parse: {exc}") from None

    def find(node: ET.Element, path: str) -> str | None:
        found = node.find(path)
        return _value(found.text) if found is not None and found.text is not None else None

    gpus = []
    for index, node in enumerate(root.findall("gpu")):
        gpus.append(
            Gpu(
                index=index,
                name=find(node, "product_name") or "",
                compute_capability=None,
                memory_mib=_mib(find(node, "fb_memory_usage/total")),
                uuid=find(node, "uuid"),
                architecture=find(node, "product_architecture"),
                mig=(find(node, "mig_mode/current_mig") or "").lower() == "enabled",
            )
        )
    return SmiReport(
        driver_version=_version_in(find(root, "driver_version")),
        cuda_version=_version_in(find(root, "cuda_version")),
        gpus=tuple(gpus),
    )


_FIELD_ALIASES: Final = {"gpu_name": "name", "gpu_uuid": "uuid", "memory.total [mib]": "memory.total"}


def parse_smi_csv(text: str, fields: Sequence[str] = QUERY_FIELDS) -> SmiReport:
    """Parse ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]``.

    A header line, unit suffixes ("81920 MiB") and N/A-style values are all accepted.
    """
    import csv

    names = [_FIELD_ALIASES.get(f.strip().lower(), f.strip().lower()) for f in fields]
    rows = [r for r in csv.reader(text.splitlines(), skipinitialspace=True) if any(c.strip() for c in r)]
    if rows:
        head = [re.sub(r"\s*\[[^\]]*\]$", "", c.strip().lower()) for c in rows[0]]
        if [_FIELD_ALIASES.get(h, h) for h in head] == names:
            rows = rows[1:]
    gpus = []
    driver = None
    for position, row in enumerate(rows):
        if len(row) != len(names):
            continue
        values = {n: _value(v) for n, v in zip(names, row)}
        driver = driver or _version_in(values.get("driver_version"))
        cc = values.get("compute_cap")
        index = values.get("index")
        gpus.append(
            Gpu(
                index=int(index) if index and index.isdigit() else position,
                name=values.get("name") or "",
                compute_capability=cc if cc and re.fullmatch(r"\d+\.\d+", cc) else None,
                memory_mib=_mib(values.get("memory.total")),
                uuid=values.get("uuid"),
            )
        )
    return SmiReport(driver_version=driver, gpus=tuple(gpus))


# --------------------------------------------------------------------------- overrides


@dataclass(frozen=True)
class Overrides:
    driver_set: bool = False  # True: the driver below replaces the detected one (None = no driver)
    driver: Driver | None = None
    gpus: tuple[Gpu, ...] | None = None  # None: keep the detected GPUs
    notes: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Nothing left to probe: driver and GPUs are both given."""
        return self.driver_set and self.gpus is not None


def _os_name() -> str:
    return "windows" if sys.platform.startswith("win") else "linux" if sys.platform.startswith("linux") else sys.platform


def max_cuda_for_driver(version: str, os_name: str = "linux") -> str | None:
    """Newest CUDA (major.minor) a driver supports, from the knowledge base.

    Uses ``cuenv.matrix.max_cuda_for_driver`` when that module is present; otherwise a private
    fallback built from the reference's toolkit_min_driver rows.
    """
    try:
        from cuenv.matrix import max_cuda_for_driver as kb
    except ImportError:
        return _fallback_max_cuda(version, os_name)
    result = kb(version, os_name)
    return None if result is None else str(result)


# CUDA X.Y GA -> minimum driver (Linux, Windows), from /work/shared/reference/cuda-facts.yaml
# driver.toolkit_min_driver (release notes Table 3). 13.1, 13.2, 13.4, 13.5 minimums are not
# known there, so a driver between 580.65 and 610.43 is credited with 13.0 only.
_MIN_DRIVER: Final = (
    ("10.2", "440.33", "441.22"), ("11.0", "450.36.06", "451.22"), ("11.1", "455.23", "456.38"),
    ("11.2", "460.27.03", "460.82"), ("11.3", "465.19.01", "465.89"), ("11.4", "470.42.01", "471.11"),
    ("11.5", "495.29.05", "496.04"), ("11.6", "510.39.01", "511.23"), ("11.7", "515.43.04", "516.01"),
    ("11.8", "520.61.05", "520.06"), ("12.0", "525.60.13", "527.41"), ("12.1", "530.30.02", "531.14"),
    ("12.2", "535.54.03", "536.25"), ("12.3", "545.23.06", "545.84"), ("12.4", "550.54.14", "551.61"),
    ("12.5", "555.42.02", "555.85"), ("12.6", "560.28.03", "560.76"), ("12.8", "570.26", "570.65"),
    ("12.9", "575.51.03", "576.02"), ("13.0", "580.65.06", None), ("13.3", "610.43.02", None),
)


def _fallback_max_cuda(version: str, os_name: str) -> str | None:
    have = versions.driver(version)
    best = None
    for cuda, linux, windows in _MIN_DRIVER:
        floor = windows if os_name == "windows" else linux
        if floor is not None and have >= versions.driver(floor):
            best = cuda
    return best


def _gpus_override(text: str) -> tuple[Gpu, ...]:
    from cuenv import gpus as catalogue

    found = []
    for index, item in enumerate(p.strip() for p in text.split(",")):
        if not item:
            continue
        if re.fullmatch(r"\d+\.\d+|(?:sm_|compute_)\d{2,3}[afp]?|\d{2,3}", item, re.IGNORECASE):
            cc = versions.cc(item)
            text_cc = f"{cc.major}.{cc.minor}"
            found.append(Gpu(index, f"compute capability {text_cc}", text_cc,
                             architecture=catalogue.architecture_for(text_cc)))
            continue
        model = catalogue.lookup(item)
        if model is None:
            raise UsageError(
                f"Unknown GPU {item!r} in CUENV_GPUS.",
                hint="Give its compute capability instead: CUENV_GPUS=8.6 (or --cc 8.6).",
            )
        found.append(Gpu(index, item, model.compute_capability, model.memory_mib,
                         architecture=model.architecture))
    return tuple(found)


def read_overrides(environ: Mapping[str, str], os_name: str | None = None) -> Overrides:
    """Validate CUENV_DRIVER, CUENV_GPUS and CONDA_OVERRIDE_CUDA; raise UsageError on bad values."""
    os_name = os_name or _os_name()
    driver_set, driver, notes = False, None, []
    raw = environ.get("CUENV_DRIVER", "").strip()
    if raw:
        driver_set = True
        if raw.lower() == "none":
            notes.append("CUENV_DRIVER=none: planning a machine without a driver")
        else:
            try:
                versions.driver(raw)
            except UsageError:
                raise UsageError(
                    f"CUENV_DRIVER={raw!r} is not a driver version.",
                    hint="Write it like 535.104.05, or `none` for a machine without an NVIDIA driver.",
                ) from None
            driver = Driver(raw, max_cuda_for_driver(raw, os_name), "override")
            notes.append(f"driver {raw} from CUENV_DRIVER")
    if "CONDA_OVERRIDE_CUDA" in environ:
        raw_cuda = environ["CONDA_OVERRIDE_CUDA"].strip()
        driver_set = True
        if raw_cuda == "":
            # conda's rule: an empty CONDA_OVERRIDE_CUDA means "no __cuda", i.e. no usable driver.
            driver = None
            notes.append("CONDA_OVERRIDE_CUDA is empty: no driver, as conda reads it")
        else:
            try:
                cuda = versions.cuda(raw_cuda)
            except UsageError:
                raise UsageError(
                    f"CONDA_OVERRIDE_CUDA={raw_cuda!r} is not a CUDA version.",
                    hint="Set it like conda expects (CONDA_OVERRIDE_CUDA=12.4), set it empty for no driver, or unset it.",
                ) from None
            max_cuda = f"{cuda.major}.{cuda.minor}"
            driver = Driver(driver.version if driver else "", max_cuda, "override")
            notes.append(f"newest CUDA {max_cuda} from CONDA_OVERRIDE_CUDA")
    gpus = None
    raw_gpus = environ.get("CUENV_GPUS", "").strip()
    if raw_gpus:
        gpus = () if raw_gpus.lower() == "none" else _gpus_override(raw_gpus)
        notes.append("GPUs from CUENV_GPUS")
    return Overrides(driver_set, driver, gpus, tuple(notes))


def apply_overrides(machine: Machine, overrides: Overrides) -> Machine:
    """Pure: the machine with the overridden parts replaced."""
    return replace(
        machine,
        driver=overrides.driver if overrides.driver_set else machine.driver,
        gpus=overrides.gpus if overrides.gpus is not None else machine.gpus,
        notes=machine.notes + overrides.notes,
    )


# --------------------------------------------------------------------------- sources (I/O)


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
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            gpus.append(
                Gpu(
                    index=index,
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    compute_capability=_try(lambda: "%d.%d" % pynvml.nvmlDeviceGetCudaComputeCapability(handle), pynvml),
                    memory_mib=_try(lambda: pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20, pynvml),
                    uuid=_try(lambda: _text(pynvml.nvmlDeviceGetUUID(handle)), pynvml),
                    mig=bool(_try(lambda: pynvml.nvmlDeviceGetMigMode(handle)[0] == 1, pynvml)),
                )
            )
        return Probe("nvml", version, cuda, tuple(gpus))
    except pynvml.NVMLError as exc:
        raise _Skip(f"NVML query failed: {exc}") from None
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _try(fn: Callable[[], object], pynvml) -> object:  # noqa: ANN001 - the lazily imported module
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


def _run_smi(argv: Sequence[str], environ: Mapping[str, str]):  # noqa: ANN202 - runner.Completed
    from cuenv import runner

    return runner.run(argv, timeout=SMI_TIMEOUT, env=environ)


def _from_smi_csv(environ: Mapping[str, str], root: Path) -> Probe:
    from cuenv import runner

    exe = _smi(environ)
    fields = list(QUERY_FIELDS)
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
    report = parse_smi_csv(out.stdout, fields)
    if not report.gpus and not report.driver_version:
        raise _Skip("nvidia-smi --query-gpu printed nothing usable")
    return Probe("nvidia-smi", report.driver_version, None, report.gpus)


def _from_smi_table(environ: Mapping[str, str], root: Path) -> Probe:
    exe = _smi(environ)
    try:
        out = _run_smi([exe], environ)
    except ToolError as exc:
        raise _Skip(f"nvidia-smi failed: {exc.message}") from None
    report = parse_smi_table(out.stdout)
    if report.driver_version is None and report.cuda_version is None:
        raise _Skip("the nvidia-smi table had no driver header")
    return Probe("nvidia-smi-table", report.driver_version, report.cuda_version, report.gpus or None)


def _from_proc(environ: Mapping[str, str], root: Path) -> Probe:
    for rel in ("proc/driver/nvidia/version", "sys/module/nvidia/version"):
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        version = parse_proc_version(text)
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
        fill = {k: v for k, v in asdict(other).items() if getattr(gpu, k) in (None, "") and v not in (None, "")}
        merged.append(replace(gpu, **fill))
    return tuple(merged)


def _complete_gpu(gpu: Gpu) -> Gpu:
    """Fill compute capability, architecture and memory from the catalogue where the driver did not."""
    from cuenv import gpus as catalogue

    model = catalogue.lookup(gpu.name) if gpu.name else None
    cc = gpu.compute_capability or (model.compute_capability if model else None)
    memory = gpu.memory_mib if gpu.memory_mib is not None else (model.memory_mib if model else None)
    arch = catalogue.architecture_for(cc) if cc else gpu.architecture
    return replace(gpu, compute_capability=cc, architecture=arch, memory_mib=memory)


def _glibc() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (AttributeError, ValueError, OSError):
        return None
    return text.split()[-1] if text else None


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
        max_cuda = max_cuda_for_driver(version, _os_name())
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
        os=_os_name(),
        arch=platform.machine() or "unknown",
        glibc=_glibc(),
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- cache and entry point


def cache_key(environ: Mapping[str, str], root: Path = Path("/")) -> str:
    """Fingerprint without overrides, plus what decides which driver pieces are found."""
    base = {k: v for k, v in environ.items() if k not in OVERRIDES}
    smi = shutil.which("nvidia-smi", path=environ.get("PATH", "")) or "-"
    return "|".join((_CACHE_FORMAT, fingerprint(base, root), smi, environ.get("LD_LIBRARY_PATH", "")))


def machine_from_json(data: Mapping) -> Machine:
    driver = Driver(**data["driver"]) if data.get("driver") else None
    return Machine(
        driver=driver,
        gpus=tuple(Gpu(**g) for g in data.get("gpus", ())),
        os=data.get("os", "linux"),
        arch=data.get("arch", "x86_64"),
        glibc=data.get("glibc"),
        notes=tuple(data.get("notes", ())),
    )


def _read_cache(path: Path, key: str) -> Machine | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return machine_from_json(data["machine"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, stale format or damaged: detect again


def _write_cache(path: Path, key: str, machine: Machine) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "machine": machine.to_json()}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only cache must not break detection
        _LOGGER.debug("could not write %s: %s", path, exc)


def detect(environ: Mapping[str, str], *, root: Path = Path("/"), cache_dir: Path | None = None,
           refresh: bool = False) -> Machine:
    """This machine's driver and GPUs, with CUENV_DRIVER / CUENV_GPUS / CONDA_OVERRIDE_CUDA applied.

    With ``cache_dir``, a probe is reused while the cache key matches; ``refresh`` probes anyway
    and rewrites the cache.
    """
    overrides = read_overrides(environ)
    if overrides.complete:
        base = Machine(driver=None, os=_os_name(), arch=platform.machine() or "unknown", glibc=_glibc())
        return apply_overrides(base, overrides)
    machine = None
    if cache_dir is not None:
        key = cache_key(environ, root)
        path = Path(cache_dir) / CACHE_FILE
        machine = None if refresh else _read_cache(path, key)
    if machine is None:
        machine = probe(environ, root)
        if cache_dir is not None:
            _write_cache(path, key, machine)
    return apply_overrides(machine, overrides)
