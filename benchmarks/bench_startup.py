"""CLI start-up against `python -c pass` with the same interpreter, as interleaved pairs (issue 29).

Goals: `--version`, `list` and `--help` within 3x a bare interpreter start, `check RECIPE` within 5x.
Each row runs the cuenv command and `python -c pass` as pairs (A B A B ...) and reports the median
of the per-pair ratios with its min and max, and the load average, so that a busy moment of this
machine moves both sides of a ratio together. Textual is installed (a dependency): the
`import textual.app` row shows what a command would pay if it imported it.

Run: python benchmarks/bench_startup.py [--pairs N] [--envs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import HEADER, paired_commands  # noqa: E402 - after sys.path is set above

GOALS = {"--version": 3.0, "list": 3.0, "--help": 3.0, "check cuda-12.1": 5.0, "check torch-cu121 --driver": 5.0}
ROWS = {
    "--version": ["--version"],
    "list": ["list"],
    "--help": ["--help"],
    "check cuda-12.1": ["check", "cuda-12.1"],
    "check torch-cu121 --driver": ["check", "torch-cu121", "--driver", "535.104.05", "--cc", "8.6"],
    "info": ["info"],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=21)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, CUENV_HOME=home, CUENV_CONFIG=str(Path(home) / "none.yaml"),
                   CUENV_DRIVER="550.54.14", CUENV_GPUS="8.6")
        py = sys.executable
        bare = [py, "-c", "pass"]
        print(f"CLI start-up against `python -c pass` ({args.pairs} interleaved pairs each)")
        print(HEADER)
        missed = []
        for name, argv in ROWS.items():
            result = paired_commands(f"cuenv {name}", [py, "-m", "cuenv", *argv], bare, pairs=args.pairs, env=env)
            goal = GOALS.get(name)
            verdict = "" if goal is None else (f"  goal <= {goal:g}x: " + ("met" if result.ratio <= goal else "MISSED"))
            if goal is not None and result.ratio > goal:
                missed.append(name)
            print(result.line() + verdict)
        print(paired_commands("import textual.app", [py, "-c", "import textual.app"], bare, pairs=args.pairs, env=env).line())
    if missed:
        print(f"goal missed: {', '.join(missed)}")
    return 0  # a report, not a gate: timing never fails a run (issue 29)


if __name__ == "__main__":
    raise SystemExit(main())
