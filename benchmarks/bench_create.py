"""Benchmark (issue 4): a second environment of the same packages from a warm cache.

cuenv's venv engine (uv, hardlinked cache) against ``python -m venv`` + ``pip install`` of the same
locked wheels, each measured on its *second* environment, so both caches are warm. Reports the time
ratio (goal >= 10x) and the disk the second environment adds, counting hardlinked files once
(goal < 5 %).

    PYTHONPATH=. python benchmarks/bench_create.py [--json] [--repeat 3] [REQUIREMENT ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import as_users_run  # benchmarks/ is the script's folder, first on sys.path

from cuenv.engines import get_engine
from cuenv.engines.base import Request, Target
from cuenv.engines.venv import requirements_lines
from cuenv.envs.diskuse import disk_usage

DEFAULT = ("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105")


def disk(roots: list[Path]) -> int:
    seen: set[tuple[int, int]] = set()
    return sum(disk_usage(root, seen) for root in roots)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="*", default=list(DEFAULT))
    parser.add_argument("--repeat", type=int, default=3, help="second environments to time (median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="cuenv-bench-") as tmp:
        root = Path(tmp)
        cache = root / "cache"
        engine = get_engine("venv", os.environ)
        solution = engine.solve(
            Request(engine="venv", python=None, index_urls=("https://pypi.org/simple",), requirements=tuple(args.requirements)),
            target=Target(cuda=None, glibc=None), cache_dir=cache,
        )
        reqs = root / "requirements.txt"
        reqs.write_text(requirements_lines(solution.packages))

        cold_cuenv = timed(lambda: engine.install(root / "cuenv-0", solution, cache_dir=cache))
        cuenv_times = [timed(lambda i=i: engine.install(root / f"cuenv-{i}", solution, cache_dir=cache))
                       for i in range(1, args.repeat + 1)]

        pip_env = dict(os.environ, PIP_CACHE_DIR=str(root / "pip-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")

        def pip_create(name: str) -> None:
            subprocess.run([sys.executable, "-m", "venv", str(root / name)], check=True)
            subprocess.run([str(root / name / "bin" / "pip"), "install", "--isolated", "--disable-pip-version-check", "--no-deps", "--require-hashes",
                            "-q", "-r", str(reqs)], check=True, env=pip_env)

        # the whole command, as a user types it (the cuda-12.1 recipe holds the default wheels)
        cli_env = dict(as_users_run(os.environ), CUENV_HOME=str(root / "home"), CUENV_CACHE_DIR=str(cache),
                       CUENV_CONFIG=str(root / "none.yaml"))

        def cli_create(name: str) -> None:
            subprocess.run([sys.executable, "-m", "cuenv", "create", "cuda-12.1", "--engine", "venv", "-q", "-n", name],
                           check=True, env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        cli_create("cli-0")
        cli_times = [timed(lambda i=i: cli_create(f"cli-{i}")) for i in range(1, args.repeat + 1)]

        cold_pip = timed(lambda: pip_create("pip-0"))
        pip_times = [timed(lambda i=i: pip_create(f"pip-{i}")) for i in range(1, args.repeat + 1)]

        first_cuenv, first_pip = disk([root / "cuenv-0"]), disk([root / "pip-0"])
        added_cuenv = disk([root / "cuenv-0", root / "cuenv-1"]) - first_cuenv
        added_pip = disk([root / "pip-0", root / "pip-1"]) - first_pip
        result = {
            "packages": [f"{p.name}=={p.version}" for p in solution.packages],
            "cuenv_cold_s": round(cold_cuenv, 3),
            "cuenv_warm_s": round(statistics.median(cuenv_times), 3),
            "pip_cold_s": round(cold_pip, 3),
            "pip_warm_s": round(statistics.median(pip_times), 3),
            "speedup": round(statistics.median(pip_times) / statistics.median(cuenv_times), 1),
            "cli_warm_s": round(statistics.median(cli_times), 3),
            "cli_speedup": round(statistics.median(pip_times) / statistics.median(cli_times), 1),
            "env_mb": round(first_cuenv / 1e6, 1),
            "cuenv_second_env_adds_mb": round(added_cuenv / 1e6, 2),
            "cuenv_second_env_adds_pct": round(100 * added_cuenv / first_cuenv, 2),
            "pip_second_env_adds_mb": round(added_pip / 1e6, 2),
            "pip_second_env_adds_pct": round(100 * added_pip / first_pip, 2),
        }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"packages: {', '.join(result['packages'])} ({result['env_mb']} MB per environment)")
        print(f"second environment, warm cache: cuenv/uv {result['cuenv_warm_s']} s vs venv+pip {result['pip_warm_s']} s "
              f"-> {result['speedup']}x (goal >= 10x)")
        print(f"the whole `cuenv create cuda-12.1` command: {result['cli_warm_s']} s -> {result['cli_speedup']}x")
        print(f"disk it adds: cuenv {result['cuenv_second_env_adds_mb']} MB ({result['cuenv_second_env_adds_pct']} %, goal < 5 %), "
              f"pip {result['pip_second_env_adds_mb']} MB ({result['pip_second_env_adds_pct']} %)")
        print(f"cold: cuenv {result['cuenv_cold_s']} s, pip {result['pip_cold_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
