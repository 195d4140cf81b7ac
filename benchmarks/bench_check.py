"""Wall time of `cuenv check` as a user runs it (a fresh interpreter each time), against `python -c pass`.

Each case runs as interleaved pairs with `python -c pass` (A B A B ...); the figure is the median of
the per-pair ratios with its min and max (issue 29: `check RECIPE` within 5x a bare start).

Usage: python benchmarks/bench_check.py [--pairs N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from common import HEADER, paired_commands  # noqa: E402 - after sys.path is set above

GOAL = 5.0
CASES = {
    "check cuda-12.1 (a recipe)": ["check", "cuda-12.1", "--driver", "535.104.05", "--cc", "8.6"],
    "check torch cu121 vs 470 driver": ["check", "torch==2.1.0+cu121", "--driver", "470.82.01", "--cc", "8.6"],
    "check torch default on B200 --json": ["check", "torch==2.5.1", "--driver", "550.54.14", "--cc", "10.0", "--json"],
    "check cuda==12.1 --gcc 13": ["check", "cuda==12.1", "--driver", "535.104.05", "--cc", "8.6", "--gcc", "13"],
    "suggest torch (all candidates)": ["suggest", "--driver", "550.54.14", "--cc", "6.1", "--cc", "8.9"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=15)
    pairs = parser.parse_args().pairs
    env = dict(os.environ, PYTHONPATH=str(REPO))
    print(HEADER)
    worst = 0.0
    for name, args in CASES.items():
        result = paired_commands(name, [sys.executable, "-m", "cuenv", *args], [sys.executable, "-c", "pass"],
                                 pairs=pairs, env=env)
        worst = max(worst, result.ratio) if name.startswith("check") else worst
        print(result.line())
    print(f"slowest check: {worst:.2f}x python -c pass (goal <= {GOAL:g}x): {'met' if worst <= GOAL else 'MISSED'}")
    return 0  # a report, not a gate: timing never fails a run (issue 29)


if __name__ == "__main__":
    raise SystemExit(main())
