"""CLI start-up against `python -c pass` with the same interpreter (issue 2: goal within 3x).

Textual is a dependency (issue 18), so it is installed here: `cuenv --version` and `cuenv list`
must not pay for it (the `import textual.app` row shows what they would pay).

Run: python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median_ms, report  # noqa: E402 - after sys.path is set above


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=31)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, CUENV_HOME=home, CUENV_CONFIG=str(Path(home) / "none.yaml"))
        py = sys.executable
        rows = [
            ("python -c pass", median_ms([py, "-c", "pass"], runs=args.runs, env=env)),
            ("python -m cuenv --version", median_ms([py, "-m", "cuenv", "--version"], runs=args.runs, env=env)),
            ("python -m cuenv list", median_ms([py, "-m", "cuenv", "list"], runs=args.runs, env=env)),
            ("python -m cuenv --help", median_ms([py, "-m", "cuenv", "--help"], runs=args.runs, env=env)),
            ("python -c 'import textual.app'", median_ms([py, "-c", "import textual.app"], runs=args.runs, env=env)),
        ]
        import importlib.metadata

        print(f"textual {importlib.metadata.version('textual')} installed")
        print(report(f"CLI start-up (median of {args.runs} runs)", rows, "python -c pass"))


if __name__ == "__main__":
    main()
