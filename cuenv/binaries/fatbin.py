"""CUDA fat binaries: the SASS and PTX entries they hold, read from headers only. Pure, never raises.

A fat binary is a 16-byte header (magic 0xBA55ED50, version 1, header size 16, size of what
follows) and a run of entries, each a header plus a payload. The layout below is not documented
by NVIDIA; it was read from files built by nvcc 13.0 and checked entry by entry against NVIDIA's
``cuobjdump --list-elf --list-ptx`` (tests/binaries/test_against_cuobjdump.py), and agrees with
public readers such as n-eq/cuda-fatbin-decompression (``fatbin-decompress.h``)::

    offset  size  field
         0     2  kind: 1 PTX, 2 ELF (a cubin: SASS), 8 LTO-IR (NVVM IR for link-time optimisation)
         2     2  entry format version (0x0101)
         4     4  header size (payload starts here)
         8     8  payload size (padded)
        16     4  compressed size (0 when stored as is)
        20     4  offset of an options block in the header (PTX and newer cubins)
        24     2  minor  } PTX ISA version for PTX entries (9.0 from CUDA 13.0)
        26     2  major  }
        28     4  architecture: 86 for sm_86/compute_86
        40     8  flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 and 0x8000 compressed
                  (``--compress-mode=speed`` and the other modes), 0x100000 arch-specific
                  (sm_90a), 0x200000 family-specific (sm_100f)
        56     8  uncompressed size (when compressed)

Compressed payloads are never inflated: kind, architecture and PTX version are all in the header.
One more thing is read for SASS entries: whether the cubin holds any kernel. nvcc adds a device-link
stub module to every shared object it links, with a cubin per SASS target and no PTX; it defines
no kernel, so a GPU it has no cubin for never needs it. A stored cubin says so in its own section
table (no ``.text.*`` section); a compressed one by its uncompressed size: the stub is 1456 bytes
(nvcc 13.0, sm_80) and the smallest one-kernel cubin 3240, so under ``EMPTY_CUBIN_MAX`` is a stub.
Problems (a truncated file, a header that does not add up) are returned as text, not raised: a
corrupt library is a finding about that file, never an internal error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from cuenv.binaries import elf
from cuenv.binaries.elf import Buffer

MAGIC: Final = 0xBA55ED50
MAGIC_BYTES: Final = struct.pack("<I", MAGIC)
_HEADER: Final = struct.Struct("<IHHQ")
_ENTRY: Final = struct.Struct("<HHIQIIHHI")  # the first 32 bytes of an entry header
_FLAGS: Final = struct.Struct("<Q")
_SIZE: Final = struct.Struct("<Q")
EMPTY_CUBIN_MAX: Final = 2048
_ENTRY_MIN: Final = 64  # every entry header seen is at least 64 bytes (flags sit at 40..47)
_MAX_ENTRIES: Final = 1 << 16  # per fat binary; a guard against a corrupt loop, far above real files

KINDS: Final = {1: "ptx", 2: "sass", 8: "lto-ir"}
FLAG_COMPRESSED: Final = 0x2000 | 0x8000
FLAG_ARCH_SPECIFIC: Final = 0x100000
FLAG_FAMILY_SPECIFIC: Final = 0x200000


@dataclass(frozen=True)
class Entry:
    kind: str  # sass | ptx | lto-ir | unknown-N
    arch: int  # 86
    variant: str  # "" | "a" (arch-specific, sm_90a) | "f" (family-specific, sm_100f)
    compressed: bool
    ptx_version: str | None  # PTX ISA "9.0" for PTX entries; None otherwise
    size: int  # payload bytes as stored
    empty: bool = False  # a cubin without kernels (the device-link stub): never needed at run time

    @property
    def loadable(self) -> bool:
        """Code the CUDA runtime can run on some GPU: PTX, or SASS with kernels (not LTO-IR, not the stub)."""
        return self.kind == "ptx" or (self.kind == "sass" and not self.empty)

    @property
    def cc(self) -> str:
        """Compute capability "8.6" (10.0 for arch 100)."""
        return f"{self.arch // 10}.{self.arch % 10}"

    @property
    def name(self) -> str:
        """nvcc's spelling: sm_86 for SASS, compute_90 for PTX and LTO-IR."""
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.arch}{self.variant}"


@dataclass(frozen=True)
class Fatbin:
    offset: int  # of its header in the file
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Parsed:
    fatbins: tuple[Fatbin, ...]
    problems: tuple[str, ...]  # each says what is wrong and where; () for a sound file


def parse_region(data: Buffer, start: int, end: int) -> Parsed:
    """Every fat binary in ``data[start:end]``: found by magic, walked header to header."""
    fatbins: list[Fatbin] = []
    problems: list[str] = []
    size = len(data)
    if end > size:
        problems.append(f"a fat binary section ends at byte {end}, past the end of the file ({size} bytes):"
                        " the file is truncated")
        end = size
    pos = data.find(MAGIC_BYTES, start, end)
    while pos >= 0:
        fatbin, next_pos, problem = _one(data, pos, end)
        if problem:
            problems.append(problem)
        if fatbin is not None:
            fatbins.append(fatbin)
        pos = data.find(MAGIC_BYTES, next_pos, end)
    return Parsed(tuple(fatbins), tuple(problems))


def parse(data: Buffer) -> Parsed:
    """A standalone fat binary file (``nvcc -fatbin``), or any blob holding fat binaries."""
    return parse_region(data, 0, len(data))


def _one(data: Buffer, pos: int, end: int) -> tuple[Fatbin | None, int, str | None]:
    """The fat binary at ``pos``, where to search next, and a problem, if any."""
    if pos + _HEADER.size > end:
        return None, end, f"fat binary header at byte {pos} is cut off"
    _magic, version, header_size, fat_size = _HEADER.unpack(data[pos:pos + _HEADER.size])
    if version != 1 or header_size != _HEADER.size:
        # Not a header after all (the magic bytes occur by chance), unless it sits where one must.
        return None, pos + 4, None
    body, stop = pos + header_size, pos + header_size + fat_size
    problem = None
    if stop > end:
        problem = f"fat binary at byte {pos} declares {fat_size} bytes, but only {end - body} remain: truncated"
        stop = end
    entries: list[Entry] = []
    at = body
    while at < stop and len(entries) < _MAX_ENTRIES:
        if at + _ENTRY_MIN > stop:
            problem = problem or f"entry header at byte {at} in the fat binary at byte {pos} is cut off"
            break
        kind, _fmt, entry_header, payload, compressed_size, _opts, minor, major, arch = _ENTRY.unpack(
            data[at:at + _ENTRY.size])
        (flags,) = _FLAGS.unpack(data[at + 40:at + 48])
        if entry_header < _ENTRY_MIN or at + entry_header + payload > stop:
            problem = problem or (f"entry at byte {at} in the fat binary at byte {pos} does not fit"
                                  f" (header {entry_header} + payload {payload} bytes): corrupt or truncated")
            break
        variant = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
        name = KINDS.get(kind, f"unknown-{kind}")
        compressed = bool(flags & FLAG_COMPRESSED) or compressed_size != 0
        empty = False
        if name == "sass":
            start = at + entry_header
            if compressed:
                empty = _SIZE.unpack(data[at + 56:at + 64])[0] < EMPTY_CUBIN_MAX
            else:
                empty = not _has_kernels(data, start, start + payload)
        entries.append(Entry(
            kind=name, arch=arch, variant=variant, compressed=compressed,
            ptx_version=f"{major}.{minor}" if name == "ptx" else None,
            size=payload, empty=empty,
        ))
        at += entry_header + payload
    return Fatbin(pos, tuple(entries)), max(stop, pos + 4), problem


def _has_kernels(data: Buffer, start: int, end: int) -> bool:
    """Whether the stored cubin at data[start:end] defines a kernel; True when it cannot be told."""
    try:
        names = elf.section_names(data, start, end)
    except elf.ElfError:
        return True
    return names.startswith(b".text.") or b"\0.text." in names
