"""The pure readers on hand-built bytes: every field, every flag, and any damage (hypothesis)."""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.binaries import elf, fatbin, scan
from tests.binaries.binkit import elf64, fatbin_blob, fatbin_entry

SASS, PTX, LTO = 2, 1, 8

GOOD = elf64({
    ".text": b"\x90" * 32,
    ".nv_fatbin": fatbin_blob(fatbin_entry(SASS, 75), fatbin_entry(SASS, 86, flags=0x8011))
    + fatbin_blob(fatbin_entry(PTX, 90, flags=0x2011, ptx=(8, 4), header=80)),
})


def test_sections_and_fatbins_of_a_hand_built_library() -> None:
    parsed = elf.read(GOOD)
    assert (parsed.bits, parsed.little_endian, parsed.machine) == (64, True, 62)
    assert [s.name for s in parsed.sections] == ["", ".text", ".nv_fatbin", ".shstrtab"]
    report = scan.read_buffer(GOOD, "lib.so")
    assert report.problems == ()
    assert [[(e.kind, e.name, e.cc, e.compressed, e.ptx_version) for e in fb.entries] for fb in report.fatbins] == [
        [("sass", "sm_75", "7.5", False, None), ("sass", "sm_86", "8.6", True, None)],
        [("ptx", "compute_90", "9.0", True, "8.4")],
    ]


def test_arch_and_family_specific_flags_and_unknown_kinds() -> None:
    blob = fatbin_blob(fatbin_entry(SASS, 90, flags=0x100011), fatbin_entry(SASS, 100, flags=0x1200011),
                       fatbin_entry(LTO, 90), fatbin_entry(4, 80))
    entries = fatbin.parse(blob).fatbins[0].entries
    assert [(e.kind, e.name) for e in entries] == [("sass", "sm_90a"), ("sass", "sm_100f"), ("lto-ir", "compute_90"),
                                                  ("unknown-4", "compute_80")]


def test_a_standalone_fatbin_file_and_a_file_without_gpu_code() -> None:
    assert scan.read_buffer(fatbin_blob(fatbin_entry(PTX, 52, header=80)), "x.fatbin").archs("ptx") == ("compute_52",)
    plain = scan.read_buffer(elf64({".text": b"\xc3"}), "libc.so")
    assert (plain.fatbins, plain.problems, plain.has_gpu_code) == ((), (), False)
    assert scan.read_buffer(b"#!/bin/sh\n", "script.so").problems == ()


def test_wrappers_without_a_fatbin_section_send_the_search_to_the_data_sections() -> None:
    blob = fatbin_blob(fatbin_entry(SASS, 80))
    found = scan.read_buffer(elf64({".nvFatBinSegment": b"\0" * 24, ".rodata": b"xx" + b"\0" * 6 + blob}), "clang.so")
    assert found.archs("sass") == ("sm_80",)
    # Without wrappers, a fat binary in .rodata is data (e.g. a library's embedded test vector), not a module.
    assert scan.read_buffer(elf64({".rodata": blob}), "data.so").fatbins == ()


def test_truncation_is_a_problem_naming_where() -> None:
    cut = GOOD[: len(GOOD) - 100]  # the section table is at the end
    report = scan.read_buffer(cut, "lib.so")
    assert report.fatbins == () and len(report.problems) == 1
    assert "truncated" in report.problems[0] and report.problems[0].startswith("not a valid ELF file")


def test_an_entry_that_overruns_its_fatbin_is_reported_after_the_good_ones() -> None:
    blob = bytearray(fatbin_blob(fatbin_entry(SASS, 75), fatbin_entry(SASS, 86)))
    struct.pack_into("<Q", blob, 16 + 80 + 8, 10**9)  # second entry's payload size
    parsed = fatbin.parse(bytes(blob))
    assert [e.name for e in parsed.fatbins[0].entries] == ["sm_75"]
    assert len(parsed.problems) == 1 and "does not fit" in parsed.problems[0]


def _mutations() -> st.SearchStrategy[bytes]:
    flips = st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 255)), max_size=12)
    return st.one_of(
        st.integers(0, len(GOOD)).map(lambda n: GOOD[:n]),
        flips.map(lambda fl: _flip(GOOD, fl)),
        st.binary(max_size=512).map(lambda b: b"\x7fELF" + b),
        st.binary(max_size=512).map(lambda b: fatbin.MAGIC_BYTES + b),
        st.binary(max_size=512),
    )


def _flip(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for at, value in flips:
        out[at] = value
    return bytes(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_damaged_input_never_raises(data: bytes) -> None:
    report = scan.read_buffer(data, "fuzz.so")
    for fb in report.fatbins:
        for e in fb.entries:
            assert e.size >= 0 and e.kind
    assert all(isinstance(p, str) and p for p in report.problems)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=256), st.integers(0, 300), st.integers(0, 300))
def test_elf_reader_raises_only_elf_error_and_fatbin_reader_never(data: bytes, start: int, end: int) -> None:
    try:
        elf.read(data)
    except elf.ElfError:
        pass
    fatbin.parse_region(data, start, end)


_entries = st.lists(st.tuples(st.sampled_from([SASS, PTX, LTO]), st.integers(10, 130),
                              st.sampled_from([0x11, 0x8011, 0x2011, 0x100011, 0x208011]),
                              st.binary(min_size=0, max_size=40)), max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(_entries, min_size=1, max_size=4))
def test_what_is_written_is_read_back(modules: list[list[tuple[int, int, int, bytes]]]) -> None:
    blob = b"".join(fatbin_blob(*(fatbin_entry(k, a, flags=f, payload=p) for k, a, f, p in m)) for m in modules)
    parsed = scan.read_buffer(elf64({".nv_fatbin": blob}), "lib.so")
    assert parsed.problems == ()
    assert [[(e.kind, e.arch, e.compressed) for e in fb.entries] for fb in parsed.fatbins] == [
        [({SASS: "sass", PTX: "ptx", LTO: "lto-ir"}[k], a, bool(f & 0xA000)) for k, a, f, _ in m] for m in modules]


CUBIN_IN_FATBIN = elf64({".nv_fatbin": fatbin_blob(
    fatbin_entry(SASS, 80, payload=elf64({".nv.info": b"\0" * 8})),  # a stub: no .text.*
    fatbin_entry(SASS, 86, payload=elf64({".text.add": b"\0" * 16, ".nv.info.add": b"\0" * 8})),
)})


def test_stored_cubins_are_told_apart_by_their_kernel_sections() -> None:
    [fb] = scan.read_buffer(CUBIN_IN_FATBIN, "lib.so").fatbins
    assert [(e.name, e.empty) for e in fb.entries] == [("sm_80", True), ("sm_86", False)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(CUBIN_IN_FATBIN) - 1), st.integers(0, 255)), max_size=10))
def test_damaged_cubins_inside_a_fatbin_never_raise(flips: list[tuple[int, int]]) -> None:
    scan.read_buffer(_flip(CUBIN_IN_FATBIN, flips), "lib.so")
