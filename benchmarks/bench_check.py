"""Wall time of `cuenv check` as a user runs it (a fresh interpreter each time), against `python -c pass`.

Usage: python benchmarks/bench_check.py [--runs N]
Goal (issue 3): well under 150 ms. Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from common import median_ms  # noqa: E402 - after sys.path is set above

CASES = {
    "check torch cu121 vs 470 driver": ["check", "torch==2.1.0+cu121", "--driver", "470.82.01", "--cc", "8.6"],
    "check torch default on B200 --json": ["check", "torch==2.5.1", "--driver", "550.54.14", "--cc", "10.0", "--json"],
    "check cuda==12.1 --gcc 13": ["check", "cuda==12.1", "--driver", "535.104.05", "--cc", "8.6", "--gcc", "13"],
    "suggest torch (all candidates)": ["suggest", "--driver", "550.54.14", "--cc", "6.1", "--cc", "8.9"],
}


def _time(argv: list[str], runs: int, env: dict[str, str]) -> float:
    return median_ms(argv, runs=runs, env=env, warmup=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    env = dict(os.environ, PYTHONPATH=str(REPO))
    base = _time([sys.executable, "-c", "pass"], runs, env)
    print(f"{'python -c pass':40s} {base:7.1f} ms")
    worst = 0.0
    for name, args in CASES.items():
        ms = _time([sys.executable, "-m", "cuenv", *args], runs, env)
        worst = max(worst, ms) if name.startswith("check") else worst
        print(f"{name:40s} {ms:7.1f} ms  ({ms / base:.1f}x python -c pass)")
    print(f"slowest check: {worst:.1f} ms (goal < 150 ms): {'ok' if worst < 150 else 'TOO SLOW'}")
    return 0 if worst < 150 else 1


if __name__ == "__main__":
    raise SystemExit(main())
