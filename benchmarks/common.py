"""Helpers shared by the benchmarks: median wall time of a command, run side by side."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from typing import Mapping, Sequence


def median_ms(argv: Sequence[str], *, runs: int = 21, env: Mapping[str, str] | None = None, warmup: int = 3) -> float:
    env = dict(os.environ if env is None else env)
    for _ in range(warmup):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def report(title: str, rows: Sequence[tuple[str, float]], baseline: str) -> str:
    base = dict(rows)[baseline]
    lines = [title, f"{'command':<44} {'median ms':>10} {'ratio':>7}"]
    for label, ms in rows:
        lines.append(f"{label:<44} {ms:>10.1f} {ms / base:>7.2f}x")
    return "\n".join(lines)
