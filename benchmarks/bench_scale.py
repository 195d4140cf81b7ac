"""How `cuenv list` and `cuenv check --all` grow with the number of environments (issue 29 §4): 1, 100 and 1,000.

One real environment is made with `cuenv create cuda-12.1` (venv engine); its .cuenv metadata is
copied into the other folders with the names rewritten (the packages are not copied: `list` reads
metadata and the cached verdicts only). Each size runs `cuenv list`, then `cuenv check --all`, and
`python -c pass` as interleaved pairs; the figures are the medians and the cost per environment above one.

Run: python benchmarks/bench_scale.py [--pairs N] [--sizes 1,100,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from common import HEADER, as_users_run, paired_commands  # noqa: E402 - after sys.path is set above


def grow(envs: Path, first: str, total: int) -> None:
    """Copy ``first``'s metadata until the store holds ``total`` environments."""
    src = envs / first / ".cuenv"
    have = sum(1 for _ in envs.iterdir())
    for i in range(have, total):
        name = f"env-{i:04d}"
        dest = envs / name / ".cuenv"
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("cuda"))
        meta_file = dest / "meta.json"
        meta = json.loads(meta_file.read_text().replace(str(envs / first), str(envs / name)))
        meta["name"] = name
        meta_file.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=11)
    ap.add_argument("--sizes", default="1,100,1000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-scale-") as tmp:
        home = Path(tmp) / "home"
        env = dict(as_users_run(os.environ), CUENV_HOME=str(home), CUENV_CACHE_DIR=str(Path(tmp) / "cache"),
                   CUENV_CONFIG=str(Path(tmp) / "none.yaml"), CUENV_DRIVER="550.54.14", CUENV_GPUS="8.6")
        from cuenv.cli.main import main as cuenv_main

        if cuenv_main(["create", "cuda-12.1", "-n", "env-0000", "--engine", "venv", "-q"], environ=env) != 0:
            raise SystemExit("cuenv create cuda-12.1 failed")
        py = sys.executable
        print(f"by number of environments ({args.pairs} interleaved pairs against python -c pass)")
        print(HEADER)
        medians: dict[str, dict[int, float]] = {"list": {}, "check --all": {}}
        for n in sizes:
            grow(home / "envs", "env-0000", n)
            for what in medians:
                result = paired_commands(f"cuenv {what}, {n} environments", [py, "-m", "cuenv", *what.split()],
                                         [py, "-c", "pass"], pairs=args.pairs, env=env)
                medians[what][n] = statistics.median(result.a_ms)
                print(result.line(), flush=True)
        for what, by_size in medians.items():
            base = by_size[sizes[0]]
            for n in sizes[1:]:
                print(f"{what}: per environment above {sizes[0]}: {(by_size[n] - base) / (n - sizes[0]):.2f} ms ({n} environments)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
