"""Benchmark (issues 10, 29): lock -> environment, warm caches, against bare uv as interleaved pairs.

`cuenv create --from-lock cuenv.lock` (the whole CLI: contract check, hash-verified install, layout,
activation scripts) against what a uv user types to turn the same hash-pinned wheels into an
environment: `uv venv --python <same interpreter>` + `uv pip sync requirements.txt`, on the same uv
cache. cuenv's venvs get pip too (issue 26): a second row gives the yardstick the same pip wheel in
its sync. Pairs run A B A B ...; the figure is the median per-pair ratio with min and max (goal 1.3x).

    python benchmarks/bench_lock.py [--pairs 9]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import HEADER, as_users_run, paired, time_command, with_pip  # benchmarks/ is the script's folder, first on sys.path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=9)
    args = ap.parse_args()
    from uv import find_uv_bin

    uv = find_uv_bin()
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-lock-") as tmp:
        root = Path(tmp)
        env = dict(as_users_run(os.environ), CUENV_HOME=str(root / "home"), CUENV_CACHE_DIR=str(root / "cache"),
                   CUENV_CONFIG=str(root / "none.yaml"), PIP_CACHE_DIR=str(root / "pip-cache"),
                   UV_CACHE_DIR=str(root / "uv-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
        cuenv = [sys.executable, "-m", "cuenv"]
        subprocess.run([*cuenv, "create", "cuda-12.1", "--engine", "venv", "-q"], env=env, check=True, capture_output=True)
        subprocess.run([*cuenv, "lock", "cuda-12.1", "-o", str(root / "cuenv.lock")], env=env, check=True, capture_output=True)
        reqs = root / "requirements.txt"
        reqs.write_text(subprocess.run([*cuenv, "export", "cuda-12.1", "--format", "requirements"], env=env, check=True,
                                       capture_output=True, text=True).stdout)
        uv_cache = str(root / "cache" / "uv")  # cuenv's own uv cache: both sides warm on the same wheels
        counter = iter(range(10**6))

        def from_lock() -> float:
            return time_command([*cuenv, "create", "--from-lock", str(root / "cuenv.lock"), "-n", f"c{next(counter)}", "-q"], env)

        def uv_sync(requirements: Path) -> float:
            target = root / f"u{next(counter)}"
            return time_command(["sh", "-c", f'"{uv}" venv -q --python "{sys.executable}" "{target}" && "{uv}" pip sync -q '
                                 f'--python "{target}/bin/python" "{requirements}"'], dict(env, UV_CACHE_DIR=uv_cache))

        results = [paired("cuenv create --from-lock", from_lock, lambda: uv_sync(reqs), pairs=args.pairs,
                          baseline="uv venv + uv pip sync", warmup=1)]
        pip_text = with_pip(reqs.read_text(), str(root / "cache"))
        if pip_text is not None:
            reqs_pip = root / "requirements-pip.txt"
            reqs_pip.write_text(pip_text)
            results.append(paired("--from-lock, yardstick with pip", from_lock, lambda: uv_sync(reqs_pip), pairs=args.pairs,
                                  baseline="uv venv + uv pip sync (with pip)", warmup=1))
    print(f"lock -> environment, warm caches, {args.pairs} interleaved pairs:")
    print(HEADER)
    for result in results:
        print(result.line() + f"  goal <= 1.3x: {'met' if result.ratio <= 1.3 else 'MISSED'}")


if __name__ == "__main__":
    main()
