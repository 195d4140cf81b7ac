"""Scan time of a real environment's CUDA libraries: cuenv's fat binary reader, cold and cached, vs cuobjdump.

Usage: python benchmarks/bench_fatbin.py [--runs N] [--wheels REQ ...]
The environment is a real uv venv with NVIDIA's library wheels from PyPI (downloaded once into
.test-cache/wheels, about 270 MB for the default set), built with the test suite's helpers.
"cold" scans with an empty cuenv cache, "cached" with the cache the cold scan left; both read
files the OS has already cached, as does cuobjdump (`--list-elf --list-ptx`, one process per
file, as a user would script it), so the comparison is parsing work, not disk speed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# libnvjpeg (sm_50..sm_90 + PTX), libcurand, libcufft: NVIDIA's own CUDA 12 libraries, 379 MiB unpacked.
DEFAULT_WHEELS = ("nvidia-nvjpeg-cu12==12.3.2.81", "nvidia-curand-cu12==10.3.5.147", "nvidia-cufft-cu12==11.2.1.3")


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _agrees(scan, binkit, tool: Path, path: Path) -> tuple[int, str]:
    """(our entry count, how cuobjdump's listing compares): equal, or an equal prefix where cuobjdump failed."""
    ours = binkit.as_cuobjdump_names(scan.scan_file(path).entries)
    done = subprocess.run([str(tool), "--list-elf", "--list-ptx", str(path)], capture_output=True, text=True, check=False)
    theirs = binkit.listed_by_cuobjdump(tool, path)
    same = all([a for k, a in theirs if k == kind] == [a for k, a in ours if k == kind][: sum(k == kind for k, _ in theirs)]
               for kind in ("sass", "ptx"))
    if theirs == ours or (same and len(theirs) == len(ours)):
        return len(ours), "equal"
    if same and done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["?"])[-1].split(":", 1)[-1].strip()
        return len(ours), f"{path.name}: cuobjdump stopped ({why}) after {len(theirs)} of {len(ours)} entries, all equal"
    return len(ours), f"{path.name}: DIFFERENT ({len(theirs)} vs {len(ours)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wheels", nargs="+", default=list(DEFAULT_WHEELS))
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from cuenv.binaries import scan
    from cuenv.binaries.names import looks_binary
    from tests.binaries import binkit
    from tests.shells import envbuild

    wheels = [envbuild.download(binkit.WHEELS, req) for req in args.wheels]
    tool = binkit.cuobjdump()
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-") as tmp:
        prefix = Path(tmp, "env")
        envbuild.make_venv(prefix, wheels, binkit.CACHE / "uv")
        libs = [p for p in prefix.rglob("*") if p.is_file() and not p.is_symlink() and looks_binary(p.name)]
        total = sum(p.stat().st_size for p in libs)
        for p in libs:  # page cache warm for every contender
            p.read_bytes()

        def cold():
            cache = Path(tmp, "cache")
            shutil.rmtree(cache, ignore_errors=True)
            return scan.scan(prefix, cache_dir=cache)

        report = cold()
        t_cold = _median(cold, args.runs)
        cold()
        t_warm = _median(lambda: scan.scan(prefix, cache_dir=Path(tmp, "cache")), args.runs)

        def dump() -> None:
            for p in libs:
                subprocess.run([str(tool), "--list-elf", "--list-ptx", str(p)], capture_output=True, check=False)

        t_dump = _median(dump, args.runs)
        agree = [_agrees(scan, binkit, tool, p) for p in libs]
    entries = sum(n for n, _ in agree)
    verdicts = "; ".join(sorted({v for _, v in agree}))
    print(f"environment: {len(libs)} shared objects, {total / 2**20:.0f} MiB; {len(report.files)} with GPU code,"
          f" {sum(len(f.fatbins) for f in report.files)} fat binaries, {entries} SASS/PTX entries")
    print(f"cross-check with cuobjdump, per file: {verdicts}")
    print(f"{'scanner':<34} {'median s':>9} {'vs cuobjdump':>13}")
    for label, t in (("cuenv, cold (empty cache)", t_cold), ("cuenv, cached", t_warm), ("cuobjdump --list-elf --list-ptx", t_dump)):
        print(f"{label:<34} {t:>9.4f} {t_dump / t:>12.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
