"""Benchmark (issue 26): adding one small package to a warm environment, `cuenv add` against `uv pip install`.

Both put the same package into the same venv (a cuda-12.1 environment made by `cuenv create`, NVIDIA's
wheels) with the same warm uv cache; after each run the package is uninstalled again (not timed).
`cuenv add` does more: every installed package held as a constraint of the solve, the CUDA checks,
an install by URL and hash, the solution and meta.json recorded. The runs are paired, A B A B, so
that a machine getting busier or quieter touches both alike; the figure is the median of the per-pair
ratios, with their spread.

    python benchmarks/bench_add.py [--pairs 9] [--package six]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import as_users_run  # benchmarks/ is the script's folder, first on sys.path

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--package", default="six")
    args = ap.parse_args()
    from uv import find_uv_bin

    uv = find_uv_bin()
    cache = Path(os.environ.get("CUENV_CACHE_DIR", REPO / ".test-cache"))
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-add-") as tmp:
        env = dict(as_users_run(os.environ), CUENV_HOME=str(Path(tmp) / "home"), CUENV_CACHE_DIR=str(cache),
                   UV_CACHE_DIR=str(cache / "uv"))
        cuenv = [sys.executable, "-m", "cuenv"]
        subprocess.run([*cuenv, "create", "cuda-12.1", "--engine", "venv", "-n", "bench", "-q"], env=env, check=True)
        python = str(Path(tmp) / "home" / "envs" / "bench" / "bin" / "python")
        a = [*cuenv, "add", "-n", "bench", args.package, "-q"]
        a_undo = [*cuenv, "uninstall", "-n", "bench", args.package, "-q"]
        b = [uv, "pip", "install", "--python", python, args.package, "-q"]
        b_undo = [uv, "pip", "uninstall", "--python", python, args.package, "-q"]
        for argv, undo in ((a, a_undo), (b, b_undo)):  # warm-up: bytecode, uv's cache and index metadata
            timed(argv, env)
            timed(undo, env)
        ta, tb = [], []
        for _ in range(args.pairs):
            ta.append(timed(a, env))
            timed(a_undo, env)
            tb.append(timed(b, env))
            timed(b_undo, env)
    ratios = sorted(x / y for x, y in zip(ta, tb))
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [ratios[0], ratios[-1]]
    print(f"one package ({args.package}) into a warm cuda-12.1 venv, {args.pairs} pairs A B A B")
    print(f"  cuenv add        median {statistics.median(ta) * 1000:7.0f} ms  (min {min(ta) * 1000:.0f}, max {max(ta) * 1000:.0f})")
    print(f"  uv pip install   median {statistics.median(tb) * 1000:7.0f} ms  (min {min(tb) * 1000:.0f}, max {max(tb) * 1000:.0f})")
    print(f"  ratio (per pair) median {statistics.median(ratios):.2f}x  (quartiles {q[0]:.2f}-{q[-1]:.2f}, "
          f"range {ratios[0]:.2f}-{ratios[-1]:.2f}; goal <= 1.3x)")


if __name__ == "__main__":
    main()
