"""The times the tests no longer assert (issue 24 §7): how fast cuenv refuses hostile input and stops on a cancel.

The tests check that each guard fires (its message, no byte read, the download cut off); how long it takes
is measured here, and reported, never a gate:

- `doctor` on this machine, against `python -c pass` (was `< 2 s` in tests/doctor/test_scenarios.py);
- `list` with a hostile config (/dev/zero, an alias bomb, 100,000 brackets) and `recipes` with a folder of
  broken files, each against the same command on ordinary input (were `< 5-20 s` in tests/trust/): refusing
  should cost about what reading costs;
- a cancel during uv's download (the TUI's cancel, tests/engines/test_cancel.py, was `< 1 s`): from the
  cancel to the install returning, uv ended, over ``--cancels`` runs.

Commands run as interleaved pairs (common.py): the median of the per-pair ratios, its min and max, the load.

Run: PYTHONPATH=. python benchmarks/bench_guards.py [--pairs N] [--cancels N]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import HEADER, load, paired_commands  # benchmarks/ is the script's folder, first on sys.path

BOMB = "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefg", "bcdefgh"))  # 9**8 nodes
HOSTILE_CONFIGS = {
    "/dev/zero": None,
    "an alias bomb": "a: &a [x, x, x, x, x, x, x, x, x]\n" + BOMB,
    "100,000 brackets": "home: " + "[" * 100_000 + "]" * 100_000 + "\n",
}


def commands(pairs: int, home: Path) -> None:
    py = sys.executable
    cuenv = [py, "-m", "cuenv"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUENV_", "FAKE_"))}
    env.update(CUENV_HOME=str(home / "home"), PATH="/usr/local/bin:/usr/bin:/bin")
    plain = home / "plain.yaml"
    plain.write_text("engine: venv\n")
    print(HEADER)
    print(paired_commands("cuenv doctor (this machine)", [*cuenv, "doctor"], [py, "-c", "pass"], pairs=pairs,
                          env=env).line())
    for name, text in HOSTILE_CONFIGS.items():
        path = Path(name) if text is None else home / f"{len(text)}.yaml"
        if text is not None:
            path.write_text(text)
        hostile = paired_commands(f"list, config {name}", ["env", f"CUENV_CONFIG={path}", *cuenv, "list"],
                                  ["env", f"CUENV_CONFIG={plain}", *cuenv, "list"], pairs=pairs, env=env,
                                  baseline="list, a plain config")
        print(hostile.line())
    broken = home / "broken recipes"
    broken.mkdir()
    (broken / "bomb.yaml").write_text(HOSTILE_CONFIGS["an alias bomb"] or "")
    (broken / "deep.yaml").write_text("[" * 100_000 + "]" * 100_000)
    (broken / "huge.yaml").write_text("# " + "x" * (2 * 1024 * 1024))
    (broken / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    print(paired_commands("recipes, a folder of broken files", [*cuenv, "--recipes", str(broken), "recipes"],
                          [*cuenv, "recipes"], pairs=pairs, env=env).line())


class _Stop(BaseException):
    """What the TUI's cancel raises from the progress callback."""


def cancels(runs: int, home: Path) -> None:
    """From the cancel (raised in the progress callback, as the TUI's) to VenvEngine.install returning."""
    from cuenv.engines import Package, Solution
    from cuenv.engines.venv import VenvEngine
    from tests.engines import slowindex  # the test's own slow index (the source tree is on sys.path)

    wheel, meta = slowindex.wheel()
    server = slowindex.index({"slowpkg": (wheel, meta)}, threading.Event())
    url = f"http://127.0.0.1:{server.server_port}/{slowindex.WHEEL}"
    pkg = Package(name="slowpkg", version="1.0", kind="pypi", url=url, sha256=hashlib.sha256(wheel).hexdigest(),
                  size=len(wheel))
    solution = Solution(engine="venv", platform="linux-64", python=None, packages=(pkg,))
    took: list[float] = []
    asked: list[float] = []

    def progress(event: str, detail: str = "", *, nbytes: int | None = None) -> None:
        if event == "download":
            time.sleep(0.5)  # uv is well into the download
            asked.append(time.perf_counter())
            raise _Stop()

    before = load()
    try:
        for i in range(runs):
            try:
                VenvEngine(dict(os.environ)).install(home / f"env{i}", solution, cache_dir=home / f"cache{i}", progress=progress)
            except _Stop:
                took.append((time.perf_counter() - asked[-1]) * 1000)
    finally:
        server.shutdown()
    if took:
        print(f"{'cancel during a download -> returned':<40} {statistics.median(took):>9.1f} ms median "
              f"[{min(took):.1f}-{max(took):.1f}]  n={len(took)} load {before} -> {load()}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=11)
    ap.add_argument("--cancels", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands(args.pairs, Path(tmp))
        cancels(args.cancels, Path(tmp))
    return 0  # a report, not a gate: timing never fails a run


if __name__ == "__main__":
    raise SystemExit(main())
