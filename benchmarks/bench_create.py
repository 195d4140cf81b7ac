"""Benchmark (issue 29): a second environment of the same packages from a warm cache, against bare uv.

The whole `cuenv create cuda-12.1 -n NAME` command, as a user types it, against what a uv user
would type for the same wheels: `uv venv --python <same interpreter> DIR && uv pip install -r
<the same pinned requirements>`, on the same uv cache (cuenv's, so both are warm). cuenv's venvs
get pip too (issue 26): a second row compares with a yardstick that installs the same pip wheel in
its `uv pip install`. Runs are interleaved pairs (A B A B ...); the figure is the median of the
per-pair ratios, with min and max (goal: within 1.3x). Also the disk the second environment adds,
hardlinked files counted once.

    PYTHONPATH=. python benchmarks/bench_create.py [--pairs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import HEADER, Paired, as_users_run, paired, time_command, with_pip  # benchmarks/ is the script's folder, first on sys.path

from cuenv.envs.diskuse import disk_usage


def disk(roots: list[Path]) -> int:
    seen: set[tuple[int, int]] = set()
    return sum(disk_usage(root, seen) for root in roots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from uv import find_uv_bin

    uv = find_uv_bin()
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-") as tmp:
        root = Path(tmp)
        cache = root / "cache"
        env = dict(as_users_run(os.environ), CUENV_HOME=str(root / "home"), CUENV_CACHE_DIR=str(cache),
                   CUENV_CONFIG=str(root / "none.yaml"), UV_CACHE_DIR=str(cache / "uv"))
        cuenv = [sys.executable, "-m", "cuenv"]
        subprocess.run([*cuenv, "create", "cuda-12.1", "--engine", "venv", "-q", "-n", "first"], env=env, check=True)
        reqs = root / "requirements.txt"
        reqs.write_text(subprocess.run([*cuenv, "export", "first", "--format", "requirements"], env=env, check=True,
                                       capture_output=True, text=True).stdout)
        counter = iter(range(10**6))

        def cuenv_create() -> float:
            return time_command([*cuenv, "create", "cuda-12.1", "--engine", "venv", "-q", "-n", f"c{next(counter)}"], env)

        def uv_create(requirements: Path) -> float:
            target = root / f"u{next(counter)}"
            return time_command(["sh", "-c", f'"{uv}" venv -q --python "{sys.executable}" "{target}" && '
                                 f'"{uv}" pip install -q --python "{target}/bin/python" -r "{requirements}"'], env)

        result: Paired = paired("cuenv create cuda-12.1", cuenv_create, lambda: uv_create(reqs), pairs=args.pairs,
                                baseline="uv venv + uv pip install", warmup=1)
        pip_text = with_pip(reqs.read_text(), str(cache))
        seeded: Paired | None = None
        if pip_text is not None:
            reqs_pip = root / "requirements-pip.txt"
            reqs_pip.write_text(pip_text)
            seeded = paired("cuenv create, yardstick with pip", cuenv_create, lambda: uv_create(reqs_pip),
                            pairs=args.pairs, baseline="uv venv + uv pip install (with pip)", warmup=1)
        envs = root / "home" / "envs"
        first = disk([envs / "first"])
        second = sorted(p for p in envs.iterdir() if p.name != "first" and not p.name.startswith("."))[0]
        added = disk([envs / "first", second]) - first
    out = {
        "cuenv_ms_median": round(statistics.median(result.a_ms), 1),
        "uv_ms_median": round(statistics.median(result.b_ms), 1),
        "ratio_median": round(result.ratio, 2), "ratio_min": round(min(result.ratios), 2), "ratio_max": round(max(result.ratios), 2),
        "pairs": args.pairs, "load_before": result.load_before, "load_after": result.load_after,
        "ratio_with_pip_median": round(seeded.ratio, 2) if seeded else None,
        "ratio_with_pip_min": round(min(seeded.ratios), 2) if seeded else None,
        "ratio_with_pip_max": round(max(seeded.ratios), 2) if seeded else None,
        "env_mb": round(first / 1e6, 1), "second_env_adds_kb": round(added / 1e3, 1),
        "second_env_adds_pct": round(100 * added / first, 2),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"second environment of cuda-12.1 ({out['env_mb']} MB), warm cache, {args.pairs} interleaved pairs:")
        print(HEADER)
        print(result.line() + f"  goal <= 1.3x: {'met' if result.ratio <= 1.3 else 'MISSED'}")
        if seeded is not None:
            print(seeded.line() + f"  goal <= 1.3x: {'met' if seeded.ratio <= 1.3 else 'MISSED'}")
        print(f"disk the second environment adds: {out['second_env_adds_kb']} kB ({out['second_env_adds_pct']} %), "
              f"hardlinked files counted once")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
