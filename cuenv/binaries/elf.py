"""The section table of an ELF file, and where CUDA fat binaries sit in it. Pure: bytes in, records out.

Only the ELF header and the section headers are read (the System V gABI layout, 32/64-bit, either
byte order), so a multi-gigabyte library costs a few kilobytes of reads through ``mmap``.
nvcc puts the fat binaries of an executable or shared object in ``.nv_fatbin``, and those of a
relocatable object (``-rdc``, ``-c``) in ``__nv_relfatbin``. ``.nvFatBinSegment`` holds the
registration wrappers that point at them; when a file has wrappers but neither section (another
compiler or linker placed the fat binaries in ``.rodata`` or ``.data``), the allocated data
sections are searched for the fat binary magic instead. Fat binaries a library keeps as data and
loads itself (cuFFT) are not registered modules and are left out, as cuobjdump leaves them out.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final, Protocol

ELF_MAGIC: Final = b"\x7fELF"
EM_CUDA: Final = 190  # e_machine of a cubin (a device ELF), as cuobjdump extracts them
SHT_NOBITS: Final = 8
FATBIN_SECTIONS: Final = (".nv_fatbin", "__nv_relfatbin")
WRAPPER_SECTION: Final = ".nvFatBinSegment"
_FALLBACK_SECTIONS: Final = (".rodata", ".data.rel.ro", ".data", ".nvFatBinSegment")
_MAX_SECTIONS: Final = 1 << 20  # far above any real file; guards against a corrupt count
# A section name is looked for at most this far (issue 31 §8: 38 MB of names without a NUL, searched from
# each of many sections, was quadratic); a longer name is read as "".
_MAX_NAME: Final = 4096
# The section name table is read only up to this size (real ones: a few KiB, 1 MiB for thousands of sections).
_MAX_NAMES: Final = 64 << 20


class Buffer(Protocol):
    """What the readers need: ``bytes`` and ``mmap.mmap`` both qualify."""

    def __len__(self) -> int: ...
    def __getitem__(self, key: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...


class ElfError(ValueError):
    """The bytes are not a well-formed ELF file; the message says what is wrong."""


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    offset: int
    size: int


@dataclass(frozen=True)
class Elf:
    bits: int  # 32 or 64
    little_endian: bool
    machine: int  # e_machine: 62 x86-64, 183 aarch64, 190 CUDA
    sections: tuple[Section, ...]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def fatbin_regions(self) -> tuple[Section, ...]:
        """The sections to search for fat binaries, in file order; () when the file has none."""
        found = tuple(s for s in self.sections if s.name in FATBIN_SECTIONS and s.type != SHT_NOBITS)
        if found or self.section(WRAPPER_SECTION) is None:
            return found
        return tuple(s for s in self.sections if s.name in _FALLBACK_SECTIONS and s.type != SHT_NOBITS)


def is_elf(data: Buffer) -> bool:
    return len(data) >= 4 and data[0:4] == ELF_MAGIC


def read(data: Buffer, base: int = 0, end: int | None = None) -> Elf:
    """Parse the ELF header and section table of ``data[base:end]`` (a whole file, or a cubin inside a
    fat binary); raise ElfError naming the first problem. Section offsets are relative to ``base``."""
    table = _Table(data, base, end)
    if table.shnum == 0:
        return Elf(table.bits, table.little, table.machine, ())
    raw = [table.header(i) for i in range(table.shnum)]
    names = table.names(raw[table.shstrndx] if 0 < table.shstrndx < table.shnum else None)
    sections = []
    for name_at, sh_type, _f, _a, offset, length, *_ in raw:
        stop = names.find(b"\0", name_at, name_at + _MAX_NAME) if name_at < len(names) else -1
        name = names[name_at:stop].decode("latin-1") if stop >= 0 else ""
        sections.append(Section(name, sh_type, offset, length))
    return Elf(table.bits, table.little, table.machine, tuple(sections))


def section_names(data: Buffer, base: int = 0, end: int | None = None) -> bytes:
    """The raw section name table (NUL-separated names) of ``data[base:end]``: two header reads, for
    questions such as "is there a .text.* section" on files with thousands of sections."""
    table = _Table(data, base, end)
    if not 0 < table.shstrndx < table.shnum:
        return b""
    return table.names(table.header(table.shstrndx))


class _Table:
    """The ELF header's view of the section table: count, name table index, one header at a time."""

    def __init__(self, data: Buffer, base: int, end: int | None) -> None:
        size = (len(data) if end is None else min(end, len(data))) - base
        if size < 16 or data[base:base + 4] != ELF_MAGIC:
            raise ElfError("not an ELF file (no \\x7fELF magic)")
        ident = data[base:base + 16]
        bits = {1: 32, 2: 64}.get(ident[4])
        order = {1: "<", 2: ">"}.get(ident[5])
        if bits is None or order is None:
            raise ElfError(f"unknown ELF class {ident[4]} or byte order {ident[5]}")
        if bits == 64:
            head = struct.Struct(order + "HHIQQQIHHHHHH")
            self.shdr = struct.Struct(order + "IIQQQQIIQQ")
        else:
            head = struct.Struct(order + "HHIIIIIHHHHHH")
            self.shdr = struct.Struct(order + "IIIIIIIIII")
        if size < 16 + head.size:
            raise ElfError(f"truncated ELF header ({size} bytes)")
        (_type, machine, _version, _entry, _phoff, shoff, _flags, _ehsize, _phentsize, _phnum,
         shentsize, shnum, shstrndx) = head.unpack(data[base + 16:base + 16 + head.size])
        self.data, self.base, self.size = data, base, size
        self.bits, self.little, self.machine = bits, order == "<", machine
        self.shoff, self.shentsize, self.shnum, self.shstrndx = shoff, shentsize, shnum, shstrndx
        if shoff == 0:
            self.shnum = 0
            return
        if shentsize < self.shdr.size:
            raise ElfError(f"section header size {shentsize} is below the {self.shdr.size} bytes of ELF{bits}")
        first = self.header(0)
        if shnum == 0:  # extended numbering: the real count is in section 0's sh_size
            self.shnum = first[5]
        if shstrndx == 0xFFFF:  # SHN_XINDEX: the real index is in section 0's sh_link
            self.shstrndx = first[6]
        if self.shnum > _MAX_SECTIONS:
            raise ElfError(f"implausible section count {self.shnum}")

    def header(self, i: int) -> tuple[int, ...]:
        at = self.shoff + i * self.shentsize
        if at + self.shdr.size > self.size:
            raise ElfError(f"section header {i} lies past the end of the file (offset {at}, file size {self.size}):"
                           " the file is truncated")
        return self.shdr.unpack(self.data[self.base + at:self.base + at + self.shdr.size])

    def names(self, header: tuple[int, ...] | None) -> bytes:
        if header is None:
            return b""
        str_off, str_size = header[4], header[5]
        if str_off + str_size > self.size:
            raise ElfError("the section name table lies past the end of the file: the file is truncated")
        if str_size > _MAX_NAMES:
            raise ElfError(f"implausible section name table of {str_size} bytes")
        return self.data[self.base + str_off:self.base + str_off + str_size]
