"""Which file the dynamic loader would load for a library name, and why (issue 8 §2).

glibc's order for a DT_NEEDED name without a slash (ld.so(8)): the requester's DT_RPATH (only
when it has no DT_RUNPATH), LD_LIBRARY_PATH, the requester's DT_RUNPATH, the linker cache
(/etc/ld.so.cache, read with ``ldconfig -p``), then the default directories. ``$ORIGIN`` is
the requester's folder. The search is pure over an ``exists`` callable; the ELF reader reads
only the dynamic section.
"""

from __future__ import annotations

import os
import platform
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Final, Iterable, Mapping, Sequence

_CACHE_LINE: Final = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)(?:\s+OS ABI:[^=]*)?\s*=>\s*(\S.*?)\s*$")


def default_dirs(machine: str | None = None) -> tuple[str, ...]:
    """The directories glibc searches last (Debian/Ubuntu multiarch first, then the classic ones)."""
    arch = machine or platform.machine() or "x86_64"
    triplet = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu"}.get(arch)
    multi = (f"/lib/{triplet}", f"/usr/lib/{triplet}") if triplet else ()
    lib64 = ("/lib64", "/usr/lib64") if arch in ("x86_64", "aarch64", "ppc64le") else ()
    return (*multi, *lib64, "/lib", "/usr/lib")


def _cache_flags_match(flags: str, machine: str) -> bool:
    """Keep entries for this architecture: "libc6,x86-64" on x86_64, "libc6,AArch64" on aarch64."""
    low = flags.lower()
    if machine == "x86_64":
        return "x86-64" in low
    if machine == "aarch64":
        return "aarch64" in low
    return True


def parse_ldconfig_p(text: str, machine: str | None = None) -> tuple[tuple[str, str], ...]:
    """``ldconfig -p`` output -> ((soname, path), ...) in cache order, this architecture only."""
    arch = machine or platform.machine() or "x86_64"
    entries = []
    for line in text.splitlines():
        m = _CACHE_LINE.match(line)
        if m and _cache_flags_match(m.group(2), arch):
            entries.append((m.group(1), m.group(3)))
    return tuple(entries)


@dataclass(frozen=True)
class Dynamic:
    """The parts of an ELF dynamic section that decide library lookup."""

    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()


def read_dynamic(path: Path) -> Dynamic | None:
    """DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH of an ELF file; None when it is not ELF."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return parse_dynamic(data)


def parse_dynamic(data: bytes) -> Dynamic | None:
    if data[:4] != b"\x7fELF" or len(data) < 64:
        return None
    is64, little = data[4] == 2, data[5] == 1
    end = "<" if little else ">"
    try:
        if is64:
            phoff, = struct.unpack_from(end + "Q", data, 32)
            phentsize, phnum = struct.unpack_from(end + "HH", data, 54)
            ph_fmt, dyn_fmt = end + "IIQQQQQQ", end + "qQ"
        else:
            phoff, = struct.unpack_from(end + "I", data, 28)
            phentsize, phnum = struct.unpack_from(end + "HH", data, 42)
            ph_fmt, dyn_fmt = end + "IIIIIIII", end + "iI"
        loads, dynamic = [], None
        for i in range(phnum):
            fields = struct.unpack_from(ph_fmt, data, phoff + i * phentsize)
            if is64:
                p_type, _flags, off, vaddr, _paddr, filesz, _memsz, _align = fields
            else:
                p_type, off, vaddr, _paddr, filesz, _memsz, _flags, _align = fields
            if p_type == 1:  # PT_LOAD
                loads.append((vaddr, off, filesz))
            elif p_type == 2:  # PT_DYNAMIC
                dynamic = (off, filesz)
        if dynamic is None:
            return Dynamic()
        entries, size = [], struct.calcsize(dyn_fmt)
        for pos in range(dynamic[0], dynamic[0] + dynamic[1], size):
            tag, val = struct.unpack_from(dyn_fmt, data, pos)
            if tag == 0:
                break
            entries.append((tag, val))
        strtab = next((v for t, v in entries if t == 5), None)
        if strtab is None:
            return Dynamic()
        base = next((off + strtab - vaddr for vaddr, off, size_ in loads if vaddr <= strtab < vaddr + size_), strtab)

        def string(offset: int) -> str:
            start = base + offset
            return data[start:data.index(b"\0", start)].decode("utf-8", "replace")

        def paths(tag: int) -> tuple[str, ...]:
            return tuple(p for t, v in entries if t == tag for p in string(v).split(":") if p)

        sonames = [string(v) for t, v in entries if t == 14]
        return Dynamic(needed=tuple(string(v) for t, v in entries if t == 1), soname=sonames[0] if sonames else None,
                       rpath=paths(15), runpath=paths(29))
    except (struct.error, ValueError, IndexError):
        return None


def expand_origin(entries: Iterable[str], origin: str) -> tuple[str, ...]:
    return tuple(re.sub(r"\$(ORIGIN|\{ORIGIN\})", origin, e) for e in entries)


def split_path_list(value: str | None) -> tuple[str, ...]:
    """LD_LIBRARY_PATH entries; ';' also separates them for glibc. Empty entries mean the cwd."""
    if not value:
        return ()
    return tuple(p for p in re.split(r"[:;]", value))


def resolve(soname: str, *, ld_library_path: Sequence[str] = (), requester: str | None = None,
            dynamic: Dynamic | None = None, cache: Sequence[tuple[str, str]] = (),
            defaults: Sequence[str] = (), exists: Callable[[str], bool] = os.path.exists,
            cwd: str = ".") -> tuple[str | None, str]:
    """(path, why) the loader would pick for ``soname`` asked for by ``requester``; (None, "not found")."""
    origin = os.path.dirname(requester) if requester else cwd
    name = os.path.basename(requester) if requester else ""
    steps: list[tuple[str, Sequence[str]]] = []
    if dynamic is not None and dynamic.rpath and not dynamic.runpath:
        steps.append((f"RPATH of {name}", expand_origin(dynamic.rpath, origin)))
    steps.append(("LD_LIBRARY_PATH", [p or cwd for p in ld_library_path]))
    if dynamic is not None and dynamic.runpath:
        steps.append((f"RUNPATH of {name}", expand_origin(dynamic.runpath, origin)))
    for why, folders in steps:
        for folder in folders:
            candidate = os.path.join(folder, soname)
            if exists(candidate):
                return candidate, why
    for entry, path in cache:
        if entry == soname and exists(path):
            return path, "linker cache"
    for folder in defaults:
        candidate = os.path.join(folder, soname)
        if exists(candidate):
            return candidate, "default directory"
    return None, "not found"


def sonames_in(folder: str, pattern: str, listdir: Callable[[str], list[str]] = os.listdir) -> tuple[str, ...]:
    """The names in ``folder`` matching ``pattern`` (a regex on the whole name); () when unreadable."""
    try:
        names = listdir(folder)
    except OSError:
        return ()
    rx = re.compile(pattern)
    return tuple(sorted(n for n in names if rx.fullmatch(n)))


def cache_sonames(cache: Sequence[tuple[str, str]], pattern: str) -> tuple[str, ...]:
    rx = re.compile(pattern)
    return tuple(dict.fromkeys(s for s, _ in cache if rx.fullmatch(s)))


def env_lib_path(environ: Mapping[str, str]) -> tuple[str, ...]:
    return split_path_list(environ.get("LD_LIBRARY_PATH"))
