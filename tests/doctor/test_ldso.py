"""The loader emulation against the real loader: a gcc-built library with RPATH or RUNPATH that needs
NVIDIA's real libcudart.so.12, resolved by cuenv and by ldd under the same LD_LIBRARY_PATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuenv.doctor import ldso
from tests.doctor.doctorkit import RT12, build_ld_cache, unpack

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("ldd") is None, reason="needs gcc and ldd")


@pytest.fixture
def tree(tmp_path: Path, wheels) -> Path:
    """pkg/lib/librequester.so needing libcudart.so.12 from pkg/cudart; a second copy under other/."""
    for where in ("pkg/cudart", "other"):
        unpack(wheels[RT12], "nvidia/cuda_runtime/lib/libcudart.so.12", tmp_path / where / "libcudart.so.12")
    (tmp_path / "pkg" / "lib").mkdir(parents=True)
    (tmp_path / "req.c").write_text("int cudaRuntimeGetVersion(int *v);\nint f(void) { int v; return cudaRuntimeGetVersion(&v); }\n")
    return tmp_path


def _build(tree: Path, dtags: str) -> Path:
    out = tree / "pkg" / "lib" / f"librequester-{dtags}.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(tree / "req.c"), f"-L{tree / 'pkg' / 'cudart'}",
                    "-l:libcudart.so.12", "-Wl,-rpath,$ORIGIN/../cudart", f"-Wl,--{dtags}-new-dtags"],
                   check=True, capture_output=True)
    return out


def _ldd(lib: Path, ld_library_path: str) -> str:
    env = {**os.environ, "LD_LIBRARY_PATH": ld_library_path}
    out = subprocess.run(["ldd", str(lib)], env=env, capture_output=True, text=True, check=True).stdout
    return re.search(r"libcudart\.so\.12 => (\S+)", out).group(1)


@pytest.mark.parametrize(("dtags", "tag", "winner"), [("enable", "runpath", "other"), ("disable", "rpath", "pkg")])
def test_runpath_loses_and_rpath_wins_against_ld_library_path(tree, dtags, tag, winner):
    lib = _build(tree, dtags)
    dyn = ldso.read_dynamic(lib)
    assert getattr(dyn, tag) == ("$ORIGIN/../cudart",) and "libcudart.so.12" in dyn.needed
    path, why = ldso.resolve("libcudart.so.12", ld_library_path=(str(tree / "other"),), requester=str(lib), dynamic=dyn)
    assert os.path.realpath(path) == os.path.realpath(_ldd(lib, str(tree / "other")))
    assert path.startswith(str(tree / winner))
    assert why == ("LD_LIBRARY_PATH" if winner == "other" else f"RPATH of {lib.name}")


def test_runpath_is_used_when_ld_library_path_has_nothing(tree):
    lib = _build(tree, "enable")
    path, why = ldso.resolve("libcudart.so.12", ld_library_path=(), requester=str(lib), dynamic=ldso.read_dynamic(lib))
    assert (os.path.realpath(path), why) == (os.path.realpath(_ldd(lib, "")), f"RUNPATH of {lib.name}")


def test_linker_cache_as_ldconfig_lists_it(tree):
    cache = build_ld_cache(tree / "ld.so.cache", tree / "other")
    out = subprocess.run([shutil.which("ldconfig") or "/sbin/ldconfig", "-p", "-C", str(cache)], capture_output=True,
                         text=True, check=True).stdout
    entries = ldso.parse_ldconfig_p(out, "x86_64")
    assert ("libcudart.so.12", str(tree / "other" / "libcudart.so.12")) in entries
    assert all("(" not in s and "=>" not in p for s, p in entries)
    path, why = ldso.resolve("libcudart.so.12", cache=entries)
    assert (path, why) == (str(tree / "other" / "libcudart.so.12"), "linker cache")
    assert ldso.resolve("libcudart.so.99", cache=entries, defaults=("/usr/lib",)) == (None, "not found")


def test_cache_lines_of_other_architectures_are_ignored():
    text = ("3 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/libcuda.so.1\n"
            "\tlibcuda.so.1 (libc6) => /usr/lib32/libcuda.so.1\n"
            "\tlibcudart.so.9.1 (libc6,x86-64) => /opt/cuda/lib64/libcudart.so.9.1\n")
    assert ldso.parse_ldconfig_p(text, "x86_64") == (("libcuda.so.1", "/usr/lib/libcuda.so.1"),
                                                     ("libcudart.so.9.1", "/opt/cuda/lib64/libcudart.so.9.1"))


def test_not_elf_is_none(tmp_path):
    (tmp_path / "x.so").write_text("INPUT(-lfoo)\n")  # a linker script, as some distributions ship
    assert ldso.read_dynamic(tmp_path / "x.so") is None
