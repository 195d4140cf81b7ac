"""Benchmark (issue 10): lock -> environment, warm caches, side by side in one run.

`cuenv create --from-lock cuenv.lock` (the whole CLI: contract check, hash-verified install, layout,
activation scripts) against the tools users would pick to turn a hash-pinned lock into an environment:
`python -m venv` + `pip install --require-hashes -r requirements.txt`, and `uv venv` + `uv pip sync`.
All three install the same locked wheels (the cuda-12.1 recipe: NVIDIA's cu12 runtime and nvcc wheels).

    python benchmarks/bench_lock.py [--repeat 5]
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


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
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
        runs = {
            "cuenv create --from-lock": lambda i: [*cuenv, "create", "--from-lock", str(root / "cuenv.lock"), "-n", f"c{i}"],
            "python -m venv + pip --require-hashes": lambda i: ["sh", "-c",
                f'"{sys.executable}" -m venv "{root}/p{i}" && "{root}/p{i}/bin/pip" install -q --no-deps '
                f'--require-hashes -r "{reqs}"'],
            "uv venv + uv pip sync": lambda i: ["sh", "-c",
                f'"{uv}" venv -q --python "{sys.executable}" "{root}/u{i}" && "{uv}" pip sync -q '
                f'--python "{root}/u{i}/bin/python" "{reqs}"'],
        }
        results = {}
        for label, argv in runs.items():
            timed(argv(0), env)  # warm that tool's cache
            results[label] = statistics.median(timed(argv(i), env) for i in range(1, args.repeat + 1))
    base = results["cuenv create --from-lock"]
    print(f"lock -> environment, warm caches (median of {args.repeat})")
    for label, s in results.items():
        print(f"{label:<40} {s * 1000:8.0f} ms  {s / base:5.2f}x cuenv")


if __name__ == "__main__":
    main()
