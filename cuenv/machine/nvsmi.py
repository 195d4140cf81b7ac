"""What nvidia-smi and /proc say about the driver and GPUs, parsed. Pure; tested on real outputs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Mapping, Sequence

from cuenv.machine.model import Gpu

QUERY_FIELDS: Final = ("index", "name", "uuid", "compute_cap", "memory.total", "driver_version")
_NA: Final = frozenset({"", "n/a", "[n/a]", "[not supported]", "not supported", "unknown error", "err!", "none"})


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
    # the Persistence-M column ends the cell: On/Off, or N/A on Jetson ("Orin (nvgpu)   N/A"); Windows: WDDM/TCC
    m = re.match(r"^\s*(\d+)\s+(.*?)\s*(?:\s(On|Off|N/A|WDDM|TCC))?\s*$", block[0][0])
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
