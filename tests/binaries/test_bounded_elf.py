"""The ELF/fat-binary reader bounds every count and offset by the file (issue 31 §8): a sparse file
claiming a 64 GB fat binary grew `check` to 2.9 GB, and 38 MB of section names without a NUL, searched
from every section, was quadratic. Both run in a child process under a timeout and a 1 GiB
address-space limit, so a regression fails instead of filling the machine."""

from __future__ import annotations

import resource
import struct
import subprocess
import sys
from pathlib import Path

from cuenv.binaries import elf, scan

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")


def elf64(sections: list[tuple[int, int, int, int]], names: bytes, shstrndx: int) -> bytes:
    """A little-endian ELF64 file: header, the name table, then the section headers.
    ``sections``: (name offset, type, offset, size); the name table's own header is added at ``shstrndx``."""
    names_at = EHDR.size
    shoff = names_at + len(names)
    rows = list(sections)
    rows.insert(shstrndx, (0, 3, names_at, len(names)))
    head = EHDR.pack(b"\x7fELF\x02\x01\x01" + b"\0" * 9, 3, 62, 1, 0, 0, shoff, 0, EHDR.size, 0, 0, SHDR.size,
                     len(rows), shstrndx)
    table = b"".join(SHDR.pack(n, t, 0, 0, off, size, 0, 0, 1, 0) for n, t, off, size in rows)
    return head + names + table


def _child(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, preexec_fn=limit)


def test_names_without_a_nul_are_read_in_linear_time(tmp_path: Path) -> None:
    names = b"A" * (38 << 20)  # 38 MB, no NUL anywhere
    sections = [(i * 3, 1, 0, 0) for i in range(20_000)]
    path = tmp_path / "names.so"
    path.write_bytes(elf64(sections, names, 1))
    done = _child(f"from pathlib import Path\nfrom cuenv.binaries import elf\n"
                  f"e = elf.read(Path({str(path)!r}).read_bytes())\nprint(len(e.sections), repr(e.sections[5].name))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20001", "''"]  # a name longer than the bound reads as ""


def test_real_names_still_read() -> None:
    data = elf64([(0, 0, 0, 0), (1, 1, 0, 0), (7, 1, 0, 0)], b"\0.text\0.nv_fatbin\0", 3)
    assert [s.name for s in elf.read(data).sections] == ["", ".text", ".nv_fatbin", ""]


def test_a_sparse_file_claiming_64_gb_is_not_scanned(tmp_path: Path) -> None:
    path = tmp_path / "libhuge.so"
    head = elf64([(0, 0, 0, 0), (1, 1, 4096, 64 << 30)], b"\0.nv_fatbin\0", 2)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.write(b"\x50\xed\x55\xba\x01\x00\x10\x00")  # a fat binary's magic, then holes
        fh.truncate(64 << 30)
    done = _child(f"from pathlib import Path\nfrom cuenv.binaries import scan\n"
                  f"print(scan.scan_file(Path({str(path)!r})).problems)")
    assert done.returncode == 0, done.stderr
    assert "a sparse file: it claims 68719476736 bytes" in done.stdout


def test_a_small_sparse_file_is_still_scanned(tmp_path: Path) -> None:
    path = tmp_path / "libsmall.so"
    with open(path, "wb") as fh:
        fh.write(elf64([(0, 0, 0, 0)], b"\0", 1))
        fh.truncate(scan.SPARSE_MIN - 1)
    assert not any("sparse" in p for p in scan.scan_file(path).problems)
