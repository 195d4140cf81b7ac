"""The section table of an ELF file, and where CUDA fat binaries sit in it. Pure: bytes in, records out.

Only the ELF header and the section headers are read (the System V gABI layout, 32/64-bit, either
byte order), so a multi-gigabyte library costs a few kilobytes of reads through ``mmap``.
nvcc puts the fat binaries of an executable or shared object in ``.nv_fatbin``, and those of a
relocatable object (``-rdc``, ``-c``) in ``__nv_relfatbin``. ``.nvFatBinSegment`` holds the
registration wrappers that point at them; when a file has wrappers but neither section (another
compiler or linker placed the fat binaries in ``.rodata`` or ``.data``), the allocated data
sections are searched for the fat binary magic instead.
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
        shdr = struct.Struct(order + "IIQQQQIIQQ")
    else:
        head = struct.Struct(order + "HHIIIIIHHHHHH")
        shdr = struct.Struct(order + "IIIIIIIIII")
    if size < 16 + head.size:
        raise ElfError(f"truncated ELF header ({size} bytes)")
    (_type, machine, _version, _entry, _phoff, shoff, _flags, _ehsize, _phentsize, _phnum,
     shentsize, shnum, shstrndx) = head.unpack(data[base + 16:base + 16 + head.size])
    if shoff == 0:
        return Elf(bits, order == "<", machine, ())
    if shentsize < shdr.size:
        raise ElfError(f"section header size {shentsize} is below the {shdr.size} bytes of ELF{bits}")

    def header(i: int) -> tuple[int, ...]:
        at = shoff + i * shentsize
        if at + shdr.size > size:
            raise ElfError(f"section header {i} lies past the end of the file (offset {at}, file size {size}):"
                           " the file is truncated")
        return shdr.unpack(data[base + at:base + at + shdr.size])

    first = header(0)
    if shnum == 0:  # extended numbering: the real count is in section 0's sh_size
        shnum = first[5]
    if shstrndx == 0xFFFF:  # SHN_XINDEX: the real index is in section 0's sh_link
        shstrndx = first[6]
    if shnum > _MAX_SECTIONS:
        raise ElfError(f"implausible section count {shnum}")
    raw = [header(i) for i in range(shnum)]
    names = b""
    if 0 < shstrndx < shnum:
        _n, _t, _f, _a, str_off, str_size, *_ = raw[shstrndx]
        if str_off + str_size > size:
            raise ElfError("the section name table lies past the end of the file: the file is truncated")
        names = data[base + str_off:base + str_off + str_size]
    sections = []
    for name_at, sh_type, _f, _a, offset, length, *_ in raw:
        end = names.find(b"\0", name_at) if name_at < len(names) else -1
        name = names[name_at:end].decode("latin-1") if end >= 0 else ""
        sections.append(Section(name, sh_type, offset, length))
    return Elf(bits, order == "<", machine, tuple(sections))
