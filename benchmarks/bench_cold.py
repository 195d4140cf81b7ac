"""Benchmark (issue 29 §4): a framework environment from a cold cache, against bare uv.

The whole `cuenv create RECIPE --framework-index pypi` (default torch-cu128@2.10.0: torch and
NVIDIA's CUDA 12.8 wheels, 28 packages, 3.9 GiB to download, 6.8 GB unpacked) with empty caches,
solve included, against what a uv user types for the same wheels: `uv venv --python <same
interpreter> && uv pip install --require-hashes -r <the same pins>` with an empty uv cache (the
pins come from `cuenv lock RECIPE --recipe`, made once before the runs, so the yardstick solves
nothing). Each run starts from nothing: its caches and environment are removed after it, untimed.
Download-bound, so the goal is 1.1x. Runs are interleaved pairs (A B A B ...), the figure the
median of the per-pair ratios with min and max. Needs the index and about 14 GB of free disk.

    python benchmarks/bench_cold.py [--pairs 3] [--recipe torch-cu128@2.10.0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from common import HEADER, as_users_run, paired, time_command  # benchmarks/ is the script's folder, first on sys.path


def pinned(lockfile: Path) -> str:
    """The lock's wheels as hash-pinned requirements (every platform the lock names is this one's)."""
    data = yaml.safe_load(lockfile.read_text(encoding="utf-8"))
    packages = [p for pkgs in data["packages"].values() for p in pkgs]
    return "".join(f"{p['name']} @ {p['url']} --hash=sha256:{p['sha256']}\n" for p in packages)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--recipe", default="torch-cu128@2.10.0")
    args = ap.parse_args()
    from uv import find_uv_bin

    uv = find_uv_bin()
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-cold-") as tmp:
        root = Path(tmp)
        env = dict(as_users_run(os.environ), CUENV_HOME=str(root / "home"), CUENV_CONFIG=str(root / "none.yaml"))
        cuenv = [sys.executable, "-m", "cuenv"]
        lock = root / "cuenv.lock"
        subprocess.run([*cuenv, "lock", args.recipe, "--recipe", "--framework-index", "pypi", "-o", str(lock), "-q"],
                       env=dict(env, CUENV_CACHE_DIR=str(root / "solve-cache")), check=True)
        reqs = root / "requirements.txt"
        reqs.write_text(pinned(lock), encoding="utf-8")
        wheels = len(reqs.read_text(encoding="utf-8").splitlines())
        shutil.rmtree(root / "solve-cache")

        def cold_cuenv() -> float:
            cache = root / "a-cache"
            ms = time_command([*cuenv, "create", args.recipe, "--framework-index", "pypi", "-n", "cold", "-q"],
                              dict(env, CUENV_CACHE_DIR=str(cache)))
            if not (root / "home" / "envs" / "cold" / "bin" / "python").exists():
                sys.exit(f"cuenv create {args.recipe} failed: run it by hand to see why")
            shutil.rmtree(root / "home")
            shutil.rmtree(cache)
            return ms

        def cold_uv() -> float:
            cache, target = root / "b-cache", root / "uv-env"
            ms = time_command(["sh", "-c", f'"{uv}" venv -q --python "{sys.executable}" "{target}" && "{uv}" pip install -q '
                               f'--require-hashes -r "{reqs}" --python "{target}/bin/python"'], dict(env, UV_CACHE_DIR=str(cache)))
            if not (target / "bin" / "python").exists():
                sys.exit("uv pip install failed: run it by hand to see why")
            shutil.rmtree(target)
            shutil.rmtree(cache)
            return ms

        result = paired(f"cuenv create {args.recipe}", cold_cuenv, cold_uv, pairs=args.pairs,
                        baseline="uv venv + uv pip install (pins)", warmup=0)
    print(f"{args.recipe} from cold caches ({wheels} wheels), {args.pairs} interleaved pairs:")
    print(HEADER)
    print(result.line() + f"  goal <= 1.1x: {'met' if result.ratio <= 1.1 else 'MISSED'}")


if __name__ == "__main__":
    main()
